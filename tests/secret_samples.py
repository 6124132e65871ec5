"""Secret samples for the masking tests, shared by every channel that shows or stores text.

``SECRET_SAMPLES``: ``(kind, text, raw_secret)`` -- ``text`` holds ``raw_secret`` exactly once and
``crabsearch.redact.find_secrets(text)`` finds exactly it (other secrets in a text are listed in
``ALSO_MASKED``); no masked output, JSON, export or index may contain ``raw_secret``.
``masked(kind, raw_secret)`` is what ``redact`` puts in its place.

``NOT_SECRETS``: texts with nothing to mask (lookalikes of the kinds above); ``redact`` returns them
unchanged.

Every secret here is fake. Each vendor-prefixed one is split across two adjacent string literals
(``"sk" "_live_..."``) so that secret scanners (GitHub push protection, gitleaks) do not flag this
file; the strings are whole at run time.
"""

from __future__ import annotations

from crabsearch.redact import MASK, mask

AWS_KEY_ID = "AKIA" "I44QH8DHBEXAMPLE"

# Built from pieces so that the source does not hold the whole strings (see above).
_SK_PROJ = "sk" "-proj-Abc123def456GHI789jkl012mno345"
_GHP = "gh" "p_1234567890abcdefghijABCDEFGHIJ123456"
_XOXB = "xo" "xb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
_AKIA_DOCS = "AKIA" "IOSFODNN7EXAMPLE"
_STRIPE_LIVE = "sk" "_live_51HxQmTKz9vWbR2cJ8nLpY4eD6fG0aS3u"
_STRIPE_RESTRICTED = "rk" "_live_51HxQmTKz9vWbR2cJ8nLpY4eD6fG0aS3u"
_STRIPE_TEST = "sk" "_test_4eC39HqLyjWDarjtT1zdp7dc"
_NPM = "np" "m_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
_SENDGRID = "S" "G.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
_SLACK_HOOK_PATH = "T0AB12CDE/B0FG34HIJ/aBcD1234eFgH5678iJkL9012"
_GOCSPX = "GOCSPX" "-PUiAMWsxZUxAS-wpWpIgb6j6arTB"
_YA29 = "ya" "29.a0AfH6SMBx3kzAbc_defGhIjKlMnOpQrStUv-wx9"
_TELEGRAM = "123456789" ":AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
_TWILIO = "SK" "0f9e8d7c6b5a40312f9e8d7c6b5a4031"
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_AWS_SECRET_2 = "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"
_AWS_SECRET_3 = "Kq3vT8xZ/Lm2Wn7Rb5Yc9Hd4Jf6Gs1Pa0EXAMPLE"
_TWILIO_AUTH = "5d2f8a9c1e7b4036af2c9d8e1b7a4c63"
_UUID_KEY = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
_UUID_TOKEN = "b81c4e2a-95f0-4d37-8a6e-2c19f7d3b054"
_UUID_SESSION = "c4d7e2a1-6b3f-4e98-a250-9d8f1b7c3e62"
_UUID_OPENAI = "9f86d081-884c-4d63-9f3e-1a2b3c4d5e6f"
_UUID_PROD = "e3b0c442-98fc-4c14-9afb-f4c8996fb924"
_UUID_DB = "7d5a1f3c-2e9b-4c80-b6a4-0f1e2d3c4b5a"
_HEX_DEPLOY = "a4f9c2e17b3d5860f1e2d3c4b5a69788"

SECRET_SAMPLES: list[tuple[str, str, str]] = [
    # --- kinds masked before issue 16 ------------------------------------------------------------
    ("openai", f"export OPENAI_API_KEY={_SK_PROJ}", _SK_PROJ),
    ("github", f"git remote set-url origin https://x:{_GHP}@github.com/o/r", _GHP),
    ("slack_token", f"SLACK_BOT_TOKEN is {_XOXB}", _XOXB),
    ("aws_key_id", f"the key id {_AKIA_DOCS} is in ~/.aws", _AKIA_DOCS),
    ("bearer", "curl -H 'Authorization: Bearer 8f3kq0zmXcV7pL2wT9rB' https://api.example.com",
     "8f3kq0zmXcV7pL2wT9rB"),
    ("env_password", "export DB_PASSWORD='hunter2blue'", "hunter2blue"),
    ("url_password", "postgres://admin:s3cretPgPw@db.example.com:5432/app", "s3cretPgPw"),
    # --- issue 16 ---------------------------------------------------------------------------------
    ("stripe_live", f"charge with {_STRIPE_LIVE} and retry", _STRIPE_LIVE),
    ("stripe_restricted", f"STRIPE_RESTRICTED={_STRIPE_RESTRICTED}", _STRIPE_RESTRICTED),
    ("stripe_test", f"curl https://api.stripe.com/v1/charges -u {_STRIPE_TEST}:", _STRIPE_TEST),
    ("npm", f"Publish token: {_NPM} (automation)", _NPM),
    ("sendgrid", f'sg = SendGridAPIClient("{_SENDGRID}")', _SENDGRID),
    ("slack_webhook", f"post to https://hooks.slack.com/services/{_SLACK_HOOK_PATH} now",
     _SLACK_HOOK_PATH),
    ("google_oauth_secret", f"OAuth client 1234-abc.apps.googleusercontent.com, secret {_GOCSPX}",
     _GOCSPX),
    ("google_access_token", f"gcloud auth print-access-token gave {_YA29}", _YA29),
    ("telegram", f"curl https://api.telegram.org/bot{_TELEGRAM}/getMe", _TELEGRAM),
    ("twilio", f"Twilio API key {_TWILIO} (secret in the vault)", _TWILIO),
    ("aws_secret_next_to_id", f"bob,,{AWS_KEY_ID},{_AWS_SECRET_2},https://console", _AWS_SECRET_2),
    ("aws_secret_prompt", f"AWS Secret Access Key [None]: {_AWS_SECRET}", _AWS_SECRET),
    ("aws_secret_assignment", f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET),
    ("curl_user", "curl -s --user developer:yqDVtkqPECriaLRi https://localhost:9200/_cat",
     "yqDVtkqPECriaLRi"),
    ("curl_user_continued",
     "curl -X POST https://infinispan:11222/rest \\\n  -d 'world' \\\n  -u 'developer:Pq7mZx2Lr9'",
     "Pq7mZx2Lr9"),
    ("prose_password", "The admin password is Zq9vKp2Lm. Change it later.", "Zq9vKp2Lm"),
    ("prose_password_quoted", 'my wifi password was "correct horse battery"',
     "correct horse battery"),
    ("prose_password_colon", "Password: h4ckm3Now", "h4ckm3Now"),
    # --- a secret's name in prose, then an opaque value (gitleaks generic-api-key) ------------------
    ("uuid_api_key_prose", f"Your API key is {_UUID_KEY}, keep it out of the repo", _UUID_KEY),
    ("uuid_token_quoted", f"I put the token `{_UUID_TOKEN}` in .env for you", _UUID_TOKEN),
    ("api_key_spaced_assignment", f"API key: {_UUID_TOKEN}", _UUID_TOKEN),
    ("aws_secret_prose", f"the aws secret is {_AWS_SECRET_3} (rotate it)", _AWS_SECRET_3),
    ("twilio_auth_token", f"twilio auth token {_TWILIO_AUTH} for the SMS test", _TWILIO_AUTH),
    # ... with a few words between the name and the value (gitleaks allows 20 characters there)
    ("api_key_for_vendor", f"the API key for openai {_UUID_OPENAI} works again", _UUID_OPENAI),
    ("secret_for_env_is", f"the secret for prod is {_UUID_PROD}, the staging one is older",
     _UUID_PROD),
    ("password_for_the_db_is", f"the password for the db is {_UUID_DB}", _UUID_DB),
    ("token_for_words_colon", f"Token for the deploy bot: {_HEX_DEPLOY}", _HEX_DEPLOY),
]

# Kinds whose text holds a second secret, and that secret.
ALSO_MASKED = {"aws_secret_next_to_id": AWS_KEY_ID}

# Kinds masked as a value (``***`` under 24 characters); the others keep 6 + 4 characters.
VALUE_KINDS = frozenset({"bearer", "env_password", "url_password", "curl_user",
                         "curl_user_continued", "prose_password", "prose_password_quoted",
                         "prose_password_colon"})


def masked(kind: str, raw: str) -> str:
    """What ``redact`` shows in place of ``raw``."""
    return MASK if kind in VALUE_KINDS and len(raw) < 24 else mask(raw)


NOT_SECRETS: list[str] = [
    # passwords in code and prose
    "def connect(host: str, user: str, password: str = None) -> Conn:",
    "The password is stored hashed with bcrypt; the password is required.",
    "The password is 8-64 characters, the password is 12 characters, the password is SHA256-hashed",
    "If the password is incorrect, the password was changed or the password is expired: retry",
    "password is None, password was `str`, password is ${DB_PASSWORD}, password is not None",
    "the password is os.environ['DB_PASSWORD'], the password is https://vault.example.com/db",
    # sk_/rk_ in identifiers
    "sk" "_test_connectionpooling = True; def sk" "_live_mode(): return is_live",
    "task" "_test_4eC39HqLyjWDarjtT1zdp7dc, mask" "_live_Abc123456789, de" "sk_prod_settings",
    "sk" "_live_ (your live secret key) and rk" "_test_xxxxxxxxxxxxxxxxxxxxxxxx",
    # npm
    "npm_config_registry=https://registry.npmjs.org and NPM_TOKEN=${NPM_TOKEN}",
    # SendGrid
    "S" "G.com, S" "G.foo.bar and SendGrid keys start with S" "G.",
    # Slack webhooks: Slack's documentation example and a placeholder
    "https://hooks.slack" ".com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "set SLACK_WEBHOOK to https://hooks.slack" ".com/services/YOUR/WEBHOOK/URL",
    # Google
    "Google client secrets start with GOCSPX" "- and access tokens with ya" "29. (short-lived)",
    # Telegram-like: times, ports, digests, an XML type
    "12:34:56, localhost:8080, 1700000000:Done, sha256:9f86d081884c7d659a2feaa0c55ad015",
    '<xsd:element type="clm12345:AgencyIdentificationCodeContentType"/>',
    # Twilio-like
    "SKU 12345, TASK" "0f9e8d7c6b5a40312f9e8d7c6b5a4031",
    "SK" "abcdefabcdefabcdefabcdefabcdefab (no digit), SK" "0f9e8d7c6b5a40312f9e8d7c6b5a40312",
    # -u that is not curl's, and curl -u without a password
    "docker run -u 1000:1000 img; git push -u origin main:main; docker exec -u root:wheel c",
    "curl x && docker run -u 1000:1000 img",
    "curl -u user:password https://x; curl -u $USER:$PASS https://x; curl -u myuser https://x",
    'curl -u "${U}:${P}" https://x; curl --user <user:password> https://x; curl -u test:test x',
    # AWS: a git SHA next to a key-id-like word, and the label in prose
    "the secret access key is stored in ~/.aws/credentials (aws configure)",
    "AWS_ACCESS_KEY_ID and commit 3f786850e387550fdab836ed7e6dc881de23001b",
    # ids in prose stay searchable: no secret's name right before them
    f"session {_UUID_SESSION} crashed; resume it with claude --resume {_UUID_SESSION}",
    f"the token count for session {_UUID_SESSION} is 12,000; request id {_UUID_SESSION}",
    f"the primary key {_UUID_SESSION}, tokens {_UUID_SESSION}, the key {_UUID_SESSION}",
    "the token 00000000-0000-4000-8000-000000000000 in the test, token 12345678901234567890",
    "the secret is out, the token getUserByIdAndNameForTheWin, secret sauce v1.2.3-beta.4+build.567",
    "the API key is required, the token is expired, the secret was rotated yesterday",
    # words between a secret's name and an id that is not a secret: an id's noun right before it,
    # no preposition after the name, too many words, a value that is a word
    f"the token for session {_UUID_SESSION}, the API key for user {_UUID_SESSION}",
    f"the secret for request id {_UUID_SESSION}; the password for account {_UUID_SESSION}",
    f"the token usage of session {_UUID_SESSION}, the secret sauce {_UUID_SESSION}",
    f"a token for each of the many sessions {_UUID_SESSION}",
    "the API key for openai is getUserByIdAndNameForTheWin, the token for prod is expired",
    f"the primary key for the table is {_UUID_SESSION}",
]
