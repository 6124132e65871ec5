"""crabsearch.redact: every secret shape masked, the mask format, false positives left alone,
spans, idempotence, speed."""

from __future__ import annotations

import time

import pytest

from crabsearch.redact import find_secrets, mask, redact

from secret_samples import ALSO_MASKED, AWS_KEY_ID, NOT_SECRETS, SECRET_SAMPLES, masked

# Fake secrets of the real shapes (none of these is a live credential).
SK = "sk-live-FAKEFAKEFAKE1234567890"
SK_PROJ = "sk-proj-Abc123def456GHI789jkl012mno345"
SK_ANT = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefAA"
GHP = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"
SLACK = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
AWS = "AKIAIOSFODNN7EXAMPLE"
GOOGLE = "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"
GITLAB = "glpat-AbCdEf0123456789xYz_"
HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_BODY = ("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2oZ1HbDvOxCkDyKH0mQ1xqRrnN7L\n"
            "xkDe6B2b0k2QeFX8Z2XJ3vGv0sC9cWqRkyNnD1a4iK8fU7t4lnPqQ0Zc5VbK7vEw\n"
            "kR9u4Wc3qkVQ6Q==")
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"

VENDOR_KEYS = [SK, SK_PROJ, SK_ANT, GHP, GITHUB_PAT, SLACK, AWS, GOOGLE, GITLAB, HF, JWT]


def masked_pieces(text: str) -> list[str]:
    return [text[a:b] for a, b in find_secrets(text)]


# --- mask ---------------------------------------------------------------------------------------


def test_mask_format():
    assert mask(SK) == "sk-liv***7890"
    assert mask("abcdefghijklmn") == "abcdef***klmn"  # 14 characters: the shortest kept in part
    assert mask("abcdefghijklm") == "***"  # 13
    assert mask("hunter2") == "***"
    assert mask("x") == "***"


# --- each pattern -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", VENDOR_KEYS)
def test_vendor_keys_masked_whole(key):
    text = f"the key is {key} (do not share)"
    assert masked_pieces(text) == [key]
    assert redact(text) == f"the key is {mask(key)} (do not share)"
    assert key[6:-4] not in redact(text)


def test_vendor_keys_exact_output():
    assert redact(f"use {SK} now") == "use sk-liv***7890 now"
    assert redact(f"token {GHP}.") == "token ghp_12***3456."
    assert redact(f"aws {AWS}") == "aws AKIAIO***MPLE"
    assert redact(f'"{JWT}"') == '"eyJhbG***sw5c"'
    assert redact(f"export X={SLACK}") == "export X=xoxb-1***UvWx"


@pytest.mark.parametrize("prefix", ["gho_", "ghu_", "ghs_", "ghr_"])
def test_other_github_token_kinds(prefix):
    key = prefix + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    assert masked_pieces(f"x {key} y") == [key]


@pytest.mark.parametrize("kind", "abprs")
def test_slack_token_kinds(kind):
    key = f"xox{kind}-2222222222-3333333333333-abcdefabcdefabcdef"
    assert masked_pieces(f"SLACK {key}") == [key]


def test_aws_session_key_and_exact_length():
    assert masked_pieces("ASIAY34FZKBOKMUTVV7A rest") == ["ASIAY34FZKBOKMUTVV7A"]
    assert find_secrets("AKIAIOSFODNN7EXAMPL") == []  # 15 after the prefix
    assert find_secrets("AKIAIOSFODNN7EXAMPLEX") == []  # 17: not an access key id
    assert find_secrets("akiaiosfodnn7example") == []


def test_google_key_needs_exactly_35_after_prefix():
    assert find_secrets(GOOGLE[:-1]) == []
    assert find_secrets(GOOGLE + "x") == []


def test_authorization_header_masks_credentials_only():
    assert redact("Authorization: Bearer abc.def") == "Authorization: Bearer ***"
    assert (redact('curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA=="')
            == 'curl -H "Authorization: Basic ***"')
    assert redact(f"authorization: token {GHP}") == f"authorization: token {mask(GHP)}"
    assert redact('{"Authorization": "Bearer tok_12345"}') == '{"Authorization": "Bearer ***"}'
    assert redact("Proxy-Authorization: Basic Zm9vOmJhcg==") == "Proxy-Authorization: Basic ***"
    # JSON-escaped (a tool input shown raw)
    assert (redact('{\\"Authorization\\": \\"Bearer s3cr3t\\"}')
            == '{\\"Authorization\\": \\"Bearer ***\\"}')
    # no scheme: the value itself must look like a token
    assert redact("Authorization: 0123456789abcdef") == "Authorization: ***"
    assert redact("Authorization: Bearer .") == "Authorization: Bearer ."


def test_bearer_token_keeps_the_word():
    assert (redact("curl -H 'Bearer abcdef0123456789abcdef' https://api")
            == "curl -H 'Bearer ***' https://api")
    assert redact("bearer Zm9vYmFyYmF6cXV4MTIzNDU2.") == "bearer Zm9vYm***NDU2."
    # a JWT after Bearer is one secret, masked once
    assert masked_pieces(f"Bearer {JWT}") == [JWT]


def test_assignments_mask_the_value_only():
    assert redact(f"OPENAI_API_KEY={SK_PROJ}") == "OPENAI_API_KEY=sk-pro***o345"
    assert redact("export DB_PASSWORD='hunter2'") == "export DB_PASSWORD='***'"
    assert redact("GITHUB_TOKEN=abc123") == "GITHUB_TOKEN=***"
    assert redact("MY_SECRET: s3cr3t-value-123456") == "MY_SECRET: ***"
    assert redact('{"client_secret": "topsecretvalue42"}') == '{"client_secret": "***"}'
    assert redact("passwd: hunter2") == "passwd: ***"
    assert redact('api_key = "abcdef"') == 'api_key = "***"'
    assert redact("apiKey: 'xyz-123'") == "apiKey: '***'"
    assert redact("X-API-Key: abc123def") == "X-API-Key: ***"
    assert (redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
            == "aws_secret_access_key = wJalrX***EKEY")
    assert redact('password := "p4ss"') == 'password := "***"'
    assert redact("Password=Tr0ub4dor#3!") == "Password=***"
    assert redact("mysql --password=secretpass") == "mysql --password=***"
    assert redact("GET /api?token=abcdef&page=2") == "GET /api?token=***&page=2"
    assert redact("SECRET_KEY=django-insecure-abc") == "SECRET_KEY=***"


def test_assignment_case_insensitive_names():
    for name in ["password", "PASSWORD", "Password", "db_Password", "PASSWD", "Api_Key", "apikey",
                 "ACCESS_TOKEN", "accessToken", "client_SECRET"]:
        assert masked_pieces(f"{name}=h4ck3r-value") == ["h4ck3r-value"], name


def test_pem_private_key_block():
    text = f"key:\n{PEM}\nafter"
    assert redact(text) == (
        "key:\n-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----\nafter")
    assert masked_pieces(text) == [PEM]


def test_pem_variants():
    for label in ["PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
                  "PGP PRIVATE KEY BLOCK"]:
        block = f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"
        assert redact(block) == f"-----BEGIN {label}----- *** -----END {label}-----"
    # JSON-escaped newlines, as in a raw tool input
    escaped = PEM.replace("\n", "\\n")
    assert redact(f'{{"key": "{escaped}"}}') == (
        '{"key": "-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----"}')
    # encrypted key with headers
    enc = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
           "DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n"
           f"{PEM_BODY}\n-----END RSA PRIVATE KEY-----")
    assert redact(enc) == "-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----"


def test_pem_cut_off_before_its_end_line():
    # a context window that ends inside the key
    text = "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY.split("\n")[0] + "\n"
    assert redact(text) == "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY----- ***\n"
    # ... and prose after a cut-off key stays
    text = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n\nThe key above is fake."
    assert redact(text) == "-----BEGIN PRIVATE KEY----- ***\n\nThe key above is fake."


def test_url_credentials_mask_the_password_only():
    assert (redact("postgres://admin:s3cretpw@db.example.com:5432/app")
            == "postgres://admin:***@db.example.com:5432/app")
    assert (redact(f"git clone https://me:{GHP}@github.com/o/r.git")
            == f"git clone https://me:{mask(GHP)}@github.com/o/r.git")
    assert (redact("redis://:averylongredispassword@cache:6379")
            == "redis://:***@cache:6379")


# --- false positives ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Use the task-list and a sketch; ask-me-anything-about-the-long-running-job later.",
    "risk-assessment-for-the-new-deployment-plan-v2",
    "pip install sk-learn; sk-some-long-kebab-case-identifier-name",
    "I am the bearer of bad news, the Bearer Internationalization and bearer tokens.",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and sha 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "https://example.com/path?q=1 and http://localhost:8080/x and ssh git@github.com:o/r.git",
    "def f(token=None, password: str = None, api_key: Optional[str] = None): ...",
    "client = Client(api_key=api_key, token=self.token, password=args.password)",
    "password = getpass()  # token = get_token()",
    "sort_key=name, primary_key=True, cache_key: str, key=lambda x: x, monkey=1",
    "max_tokens=1000, max_token=512, token_count: 12, token_type: Bearer",
    '{"token_type": "Bearer", "expires_in": 3600, "key": "value"}',
    "API_KEY=$API_KEY TOKEN=${TOKEN} password: <your password> secret='{{ secret }}'",
    "headers['Authorization'] = f'Bearer {token}'",
    "Authorization: required. The secret: always test first. Enter the key: press enter.",
    "from huggingface_hub import hf_hub_download; hf_token = os.environ['HF_TOKEN']",
    "AKIA is the prefix of an AWS key id; eyJ starts a JWT; xoxb- starts a Slack bot token.",
    'if pem.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    raise ValueError',
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
    "-----END PUBLIC KEY-----",
    "password_hash, passwords, tokenizer, secrets.token_hex(16), keyboard",
    "The 日本語 text with 🦀 crabs and ask-me café.",
    "",
])
def test_false_positives_left_alone(text):
    assert find_secrets(text) == []
    assert redact(text) is text


def test_no_secret_returns_the_same_object():
    text = "nothing to see here " * 100
    assert redact(text) is text


# --- issue 16: the kinds that were never masked ---------------------------------------------------


@pytest.mark.parametrize("kind,text,raw", SECRET_SAMPLES, ids=[k for k, _, _ in SECRET_SAMPLES])
def test_secret_sample_masked(kind, text, raw):
    assert text.count(raw) == 1
    pieces = masked_pieces(text)
    assert raw in pieces
    assert sorted(pieces) == sorted([raw] + ([ALSO_MASKED[kind]] if kind in ALSO_MASKED else []))
    out = redact(text)
    assert raw not in out
    expected = text.replace(raw, masked(kind, raw))
    if kind in ALSO_MASKED:
        expected = expected.replace(ALSO_MASKED[kind], mask(ALSO_MASKED[kind]))
    assert out == expected
    assert redact(out) == out  # idempotent


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_lookalikes_left_alone(text):
    assert find_secrets(text) == []
    assert redact(text) is text


def test_stripe_keys():
    live = "sk" "_live_4eC39HqLyjWDarjtT1zdp7dc"
    assert redact(f"key {live}.") == "key sk_liv***p7dc."
    for prefix in ["sk" "_live_", "rk" "_live_", "sk" "_test_", "rk" "_test_", "sk" "_prod_"]:
        assert masked_pieces(f"x {prefix}51HxQmTKz9vWbR2c y") == [f"{prefix}51HxQmTKz9vWbR2c"]
    # gitleaks stripe-access-token: 10+ characters; a word run into the key is not a key
    assert find_secrets("sk" "_live_Ab12") == []
    assert find_secrets("sk" "_live_4eC39HqLyjWDarjtT1zdp7dc_extra") == []


def test_npm_token_exact_length_and_npmrc():
    tok = "np" "m_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert redact(tok) == "npm_a1***q7R8"
    assert find_secrets(tok + "9") == []  # 37 characters
    assert find_secrets(tok[:-1]) == []  # 35
    # .npmrc with a legacy (UUID) token: the _authToken assignment
    npmrc = "//registry.npmjs.org/:_authToken=3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
    assert masked_pieces(npmrc) == ["3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"]
    assert redact(f"//registry.npmjs.org/:_authToken={tok}") == (
        "//registry.npmjs.org/:_authToken=npm_a1***q7R8")


def test_sendgrid_needs_both_parts():
    key = "S" "G.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
    assert redact(f"SENDGRID_KEY {key}") == "SENDGRID_KEY SG.nge***s5cr"
    assert find_secrets(key[:-1]) == []
    assert find_secrets(key.replace(".Tw", "Tw")) == []


def test_slack_webhook_masks_the_path_only():
    url = "https://hooks.slack" ".com/services/T0AB12CDE/B0FG34HIJ/aBcD1234eFgH5678iJkL9012"
    assert redact(f"webhook: {url}") == (
        "webhook: https://hooks.slack.com/services/T0AB12***9012")
    # without a scheme, workflow and trigger webhooks
    path = "T0AB12CDE/B0FG34HIJ/aBcD1234eFgH5678iJkL9012"
    assert masked_pieces(f"hooks.slack.com/services/{path}") == [path]
    for path in ["workflows/T0AB12CDE/A0FG34HIJ/123456789012345678/aBcD1234eFgH5678iJkL9012",
                 "triggers/T0AB12CDE/1234567890123/0123456789abcdef0123456789abcdef"]:
        kind, rest = path.split("/", 1)
        assert masked_pieces(f"https://hooks.slack" f".com/{path}") == [rest]
    # the URL must carry the secret segment
    assert find_secrets("https://hooks.slack" ".com/services/T0AB12CDE/B0FG34HIJ") == []


def test_google_oauth_secret_and_access_token():
    secret = "GOCSPX" "-PUiAMWsxZUxAS-wpWpIgb6j6arTB"
    assert redact(f'"{secret}"') == '"GOCSPX***arTB"'
    assert find_secrets(secret + "x") == []  # noseyparker np.google.2: exactly 28 after GOCSPX-
    # service-account tokens have dots inside; a sentence's final dot is not part of the token
    sa = "ya" "29.c.b0Aaek7Xyz12-abcDEFghiJKLmnoPQRstuVWX"
    assert redact(f"token {sa}.") == "token ya29.c***uVWX."
    assert find_secrets("ya" "29.short") == []
    assert find_secrets("ya" "29.abcdefghijklmnopqrstuvwxyz") == []  # no digit nor capital: a word


def test_telegram_bot_token():
    tok = "123456789" ":AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
    assert redact(f"TELEGRAM_BOT_TOKEN {tok}") == "TELEGRAM_BOT_TOKEN 123456***saw0"
    assert masked_pieces(f"https://api.telegram.org/bot{tok}/sendMessage") == [tok]
    assert masked_pieces(f"12345:{tok.split(':')[1]}") == [f"12345:{tok.split(':')[1]}"]
    # gitleaks telegram-bot-api-token: 5-16 digits, A + 34 characters, nothing run into it
    assert find_secrets("1234:" + tok.split(":")[1]) == []
    assert find_secrets("12345678901234567:" + tok.split(":")[1]) == []
    assert find_secrets(tok + "x") == []
    assert find_secrets("x" + tok) == []


def test_twilio_api_key():
    key = "SK" "0f9e8d7c6b5a40312f9e8d7c6b5a4031"
    assert redact(f"TWILIO_KEY_SID={key}") == "TWILIO_KEY_SID=SK0f9e***4031"
    assert find_secrets(key + "0") == []  # 33 hex
    assert find_secrets(key[:-1]) == []


def test_aws_secret_next_to_the_key_id():
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    # boto3.client("s3", "<id>", "<secret>"), a credentials CSV row, a space
    for sep in ['", "', ",", " "]:
        text = f'{AWS_KEY_ID}{sep}{secret}'
        assert masked_pieces(text) == [AWS_KEY_ID, secret], sep
        assert redact(text) == f"{mask(AWS_KEY_ID)}{sep}{mask(secret)}"
    # on the next line: only with a label (aws configure, ~/.aws/credentials)
    assert masked_pieces(f"{AWS_KEY_ID}\n{secret}") == [AWS_KEY_ID]
    assert redact(f"AWS Access Key ID [None]: {AWS_KEY_ID}\n"
                  f"AWS Secret Access Key [None]: {secret}\n"
                  "Default region name [None]: us-east-1") == (
        f"AWS Access Key ID [None]: {mask(AWS_KEY_ID)}\n"
        "AWS Secret Access Key [None]: wJalrX***EKEY\n"
        "Default region name [None]: us-east-1")
    assert masked_pieces(f"Secret access key: {secret}") == [secret]
    assert masked_pieces(f'"SecretAccessKey": "{secret}"') == [secret]
    # a 40-character hex digest next to a key id is not a secret (no capital letter)
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    assert masked_pieces(f"{AWS_KEY_ID} commit {sha}") == [AWS_KEY_ID]
    # nor a longer base64 run, nor one too far away
    assert masked_pieces(f"{AWS_KEY_ID} {secret}Ab") == [AWS_KEY_ID]
    assert masked_pieces(f"{AWS_KEY_ID} {'word ' * 20}{secret}") == [AWS_KEY_ID]


def test_curl_user_password():
    assert redact("curl -u admin:s3cret https://x") == "curl -u admin:*** https://x"
    assert redact("curl --user=admin:pw12 -X GET x") == "curl --user=admin:*** -X GET x"
    assert redact('curl -u "admin:pa ss 1" https://x') == 'curl -u "admin:***" https://x'
    assert redact('curl -u ":d2LkV78zLx!t" https://x') == 'curl -u ":***" https://x'
    # JSON-escaped quotes (a raw tool input)
    assert (redact('{"command": "curl -u \\"admin:s3cret\\" https://x"}')
            == '{"command": "curl -u \\"admin:***\\" https://x"}')
    # continued lines (real or JSON-escaped newlines), and the end of a sentence
    assert redact("curl https://x \\\n  -u bob:hunter2z") == "curl https://x \\\n  -u bob:***"
    assert redact("curl https://x \\\\\\n  -u bob:hunter2z") == "curl https://x \\\\\\n  -u bob:***"
    assert redact("Try curl -u bob:hunter2z.") == "Try curl -u bob:***."
    # a shell operator ends the password
    assert redact("curl -u bob:hunter2z|jq .") == "curl -u bob:***|jq ."
    assert redact("curl -u bob:hunter2z; echo done") == "curl -u bob:***; echo done"
    # another command's -u (a line not continued, after && or |) is not curl's
    assert find_secrets("curl https://x\ndocker run -u bob:hunter2z img") == []
    assert find_secrets("curl https://x && docker run -u bob:hunter2z img") == []
    assert find_secrets("curl https://x | sudo -u bob:hunter2z tee") == []
    assert find_secrets("libcurl -u bob:hunter2z; curly -u bob:hunter2z") == []
    # -u uid:gid after a curl on the same line (a ; does not end the search: headers hold them)
    assert find_secrets("curl https://x; docker run -u 1000:1000 img") == []


def test_prose_password():
    assert redact("the password is hunter2.") == "the password is ***."
    assert redact("Password was: Tr0ub4dor&3") == "Password was: ***"
    assert redact("the db passwd is `s3cr3t!`") == "the db passwd is `***`"
    assert redact("root password is 20240117") == "root password is ***"
    assert redact("The password is 'swordfish'") == "The password is '***'"
    # an unquoted plain word reads as prose: left alone
    assert find_secrets("The password is swordfish") == []


# --- several secrets, spans, idempotence -------------------------------------------------------


def test_multiple_secrets_in_one_text():
    text = (f"export OPENAI_API_KEY={SK_PROJ}\n"
            f"curl -H 'Authorization: Bearer {GHP}' https://u:pa55word@h/x\n"
            f"aws {AWS} / {AWS}\n{PEM}\nDB_PASSWORD=hunter2 done")
    assert masked_pieces(text) == [SK_PROJ, GHP, "pa55word", AWS, AWS, PEM, "hunter2"]
    assert redact(text) == (
        "export OPENAI_API_KEY=sk-pro***o345\n"
        "curl -H 'Authorization: Bearer ghp_12***3456' https://u:***@h/x\n"
        "aws AKIAIO***MPLE / AKIAIO***MPLE\n"
        "-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----\n"
        "DB_PASSWORD=*** done")


def test_spans_are_sorted_and_disjoint_and_unicode_safe():
    text = f"🦀 日本 {SK} é {GHP}\n" * 3
    spans = find_secrets(text)
    assert len(spans) == 6
    assert spans == sorted(spans)
    assert all(a < b <= c for (a, b), (c, _) in zip(spans, spans[1:]))
    assert [text[a:b] for a, b in spans] == [SK, GHP] * 3


IDEMPOTENCE_CASES = [
    f"use {key} here" for key in VENDOR_KEYS
] + [
    "Authorization: Bearer abc.def",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Bearer abcdef0123456789abcdef",
    f"OPENAI_API_KEY={SK_PROJ}",
    "PASSWORD=hunter2",
    'password = "correct horse battery staple"',
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    PEM,
    "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY,
    "postgres://admin:s3cretpw@db/app",
    "https://me:averyveryverylongpassword@host",
]


@pytest.mark.parametrize("text", IDEMPOTENCE_CASES)
def test_idempotent(text):
    once = redact(text)
    assert once != text
    assert redact(once) == once
    assert find_secrets(once) == []


def test_key_inside_a_rejected_assignment_is_still_found():
    # "key=" and "sort_key:" are not secret names, but the vendor key in the value is found
    assert masked_pieces(f"key={GHP}") == [GHP]
    assert masked_pieces(f"sort_key: {JWT}") == [JWT]
    assert masked_pieces(f"token=self.token or {GHP}") == [GHP]


# --- speed -------------------------------------------------------------------------------------


def test_no_pathological_backtracking():
    """Prose with no secret comes back as the same object; hostile repetitions finish (a
    catastrophic backtracking pattern would take minutes, not the second allowed here). Speed
    itself is measured in bench/, not here."""
    prose = ("The indexer reads each session file, splits it into messages and stores the text; "
             "def get_user(key, token=None): return self.cache[key]  # see https://x.io/a\n")
    text = (prose * (100_000 // len(prose) + 1))[:100_000]
    assert redact(text) is text
    for bad in ["key=" * 25_000, "password: " * 10_000, "-----BEGIN PRIVATE KEY-----\n" * 4_000,
                "Authorization: " * 7_000, "a://b:" * 20_000, "sk-" * 30_000,
                'password="' * 10_000, "Bearer " * 15_000,
                "curl -u a:" * 10_000, "curl " * 20_000, "curl -u " * 12_000, "ya29." * 20_000,
                "123456:A" * 12_000, "hooks.slack.com/services/T/B/" * 3_000,
                "password is " * 8_000, 'password is "' * 7_000, "access key: " * 8_000,
                "AKIAIOSFODNN7EXAMPLE " * 5_000, "sk_live_" * 12_000, "SK" * 50_000,
                "npm_" * 25_000, "SG." * 30_000, "GOCSPX-" * 14_000]:
        start = time.perf_counter()
        redact(bad)
        assert time.perf_counter() - start < 1.0, bad[:20]


def test_a_json_escaped_newline_ends_an_unquoted_value():
    """A tool call's arguments are JSON: a line break in an edit is a literal ``\\n``. It ends an
    unquoted value as a real line break does: ``self.api_key = api_key`` stays code (and the
    lines after it stay on their own lines), an env var's value is masked up to the break."""
    import json

    edit = json.dumps({"new_string": "def __init__(self, api_key):\n        self.api_key = api_key\n"
                                     "        self.base = base\n"})
    assert redact(edit) == edit
    env = json.dumps({"content": "OPENAI_API_KEY=abcdefghijklmnopqrstu\nDEBUG=1\n"})
    out = redact(env)
    assert "abcdefghijklmnopqrstu" not in out and "\\nDEBUG=1\\n" in out
    assert redact("OPENAI_API_KEY=abcdefghijklmnopqrstu\nDEBUG=1") == json.loads(out)["content"].rstrip("\n")


def test_the_same_text_again_is_masked_the_same_from_the_memo(monkeypatch):
    """``redact_kept`` (search results) keeps its answers (a search masks the rows of the
    keystroke before again); the memo gives the same masked text, holds at most ``KEPT_CHARS``
    characters, and a text seen before is not scanned again."""
    import crabsearch.redact as r

    monkeypatch.setattr(r, "KEPT_CHARS", 4096)
    monkeypatch.setattr(r, "_kept", {})
    monkeypatch.setattr(r, "_kept_chars", 0)
    text = f"export OPENAI_API_KEY={SK} and carry on"
    first = r.redact_kept(text)
    assert SK not in first and "carry on" in first
    scans = []
    monkeypatch.setattr(r, "_scan", lambda t: scans.append(t) or [])
    assert r.redact_kept("".join(text)) == first and not scans  # an equal string: from the memo
    for i in range(200):
        r.redact_kept(f"plain text number {i} " * 4)
    assert r._kept_chars <= 4096 and sum(map(len, r._kept)) == r._kept_chars
    assert len(scans) == 200
