"""The relevance corpus: ~300 realistic sessions (Claude Code and Codex CLI) written into a HOME.

    python bench/relevance/corpus.py OUT_HOME      # write the corpus, print counts

Deterministic: the same bytes every time (session ids are uuid5 of a name, times are fixed, the
filler comes from ``random.Random(SEED)``). Two kinds of sessions:

* **targets** (``targets.py``): hand-written sessions that the labelled queries (``queries.py``)
  point at, including distractors written to compete with them;
* **filler** (below): sessions generated from topic templates with a seeded random combination of
  slots: the same topics as the targets (postgres migration, flaky test, cron, docker build, ...)
  with other specifics, Chinese and Japanese conversations, titles, compactions, and a few long
  tool-heavy sessions (hundreds of messages). Tool output everywhere is drawn from ``NOISE``, which
  deliberately repeats the targets' query words: tool output is not indexed, so it must not make
  those sessions findable.

On disk: Claude Code ``HOME/.claude/projects/<slug>/<uuid>.jsonl`` (``custom-title``/``ai-title``
lines, ``compact_boundary`` + ``isCompactSummary`` compaction); Codex CLI
``HOME/.codex/sessions/YYYY/MM/DD/rollout-<stamp>-<uuid>.jsonl`` (``compacted`` lines) and
``HOME/.codex/session_index.jsonl`` (thread names).
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 20260314
NAMESPACE = uuid.UUID("6f0b7a52-4c1e-5d0a-9b8e-2f4c6d8e0a13")
T0 = datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc)
CLAUDE_SUMMARY_PREAMBLE = ("This session is being continued from a previous conversation that ran out of "
                           "context. The conversation is summarized below:\n")


def sid(name: str) -> str:
    """The stable session id of the session called ``name``."""
    return str(uuid.uuid5(NAMESPACE, "crabsearch-relevance/" + name))


@dataclass
class Spec:
    """One session. ``messages`` as in ``targets.py`` (``"u: ..."``, ``"a: ..."``, tool tuples,
    ``("compact", text)``, ``("pad", n)``); ``title_kind`` is ``custom``/``ai`` (Claude) or
    ``thread`` (Codex ``session_index.jsonl``)."""

    key: str
    agent: str
    project: str
    messages: list
    title: str | None = None
    title_kind: str = "custom"
    topic: str = ""
    target: bool = False
    items: list = field(default_factory=list)  # expanded messages: (kind, ...) tuples

    @property
    def session_id(self) -> str:
        return sid(self.key)


# -- slot values ---------------------------------------------------------------------------------

WEB, API, BILL, SCHED, IDX, INFRA = ("/home/dev/webapp", "/home/dev/api", "/home/dev/billing",
                                     "/home/dev/scheduler", "/home/dev/indexer", "/home/dev/infra")
SLOTS = {
    "svc": ["billing", "orders", "search", "notifications", "gateway", "catalog", "reports", "accounts"],
    "table": ["orders", "users", "invoices", "subscriptions", "events", "audit_log", "payments", "sessions"],
    "col": ["created_by", "archived_at", "plan_id", "locale", "last_seen_at", "external_ref", "currency"],
    "col2": ["author_id", "deleted_at", "tier_id", "language", "seen_at", "partner_ref", "currency_code"],
    "mig": ["0031_add_plan", "0058_user_locale", "0077_events_ref", "0102_audit_split", "0119_currency"],
    "job": ["nightly-report", "cleanup-uploads", "sync-crm", "expire-trials", "send-digest", "rebuild-sitemap"],
    "cronexpr": ["0 4 * * *", "*/15 * * * *", "30 6 * * 1-5", "0 */2 * * *"],
    "calendar": ["*-*-* 04:00:00", "Mon..Fri 06:30", "hourly"],
    "test": ["test_checkout_total", "test_refund_partial", "TestWorkerPool", "test_sync_contacts",
             "test_export_csv", "TestCacheEviction", "test_invite_expiry"],
    "testfile": ["tests/test_checkout.py", "tests/test_refunds.py", "internal/pool/pool_test.go",
                 "tests/test_sync.py", "src/search/search.test.ts"],
    "file": ["api/orders/views.py", "api/users/service.py", "billing/invoices/models.py", "worker/tasks.py",
             "src/components/OrderList.tsx", "src/api/client.ts", "src/store/cart.ts",
             "internal/scheduler/jobs.go", "internal/queue/consumer.go", "crates/query/src/lib.rs",
             "crates/indexer/src/main.rs", "src/auth/session.ts"],
    "resource": ["projects", "invoices", "members", "events", "webhooks", "reports"],
    "component": ["settings", "checkout", "profile", "invoice", "onboarding", "team"],
    "pkg": ["django 5.1", "react 19", "pydantic 2.9", "sqlalchemy 2.0", "tokio 1.40", "typescript 5.6",
            "eslint 9", "celery 5.4"],
    "ident": ["loadConfig", "parse_args", "UserService", "build_query", "renderRow", "OrderRepository",
              "send_email", "retryWithBackoff", "normalize_phone", "InvoiceSerializer"],
    "ident2": ["readConfig", "parse_cli_args", "AccountService", "compile_query", "renderTableRow",
               "OrderStore", "deliver_email", "withRetry", "format_phone", "InvoiceSchema"],
    "topic": ["order-created", "invoice-paid", "user-signup", "stock-changed"],
    "n": ["3", "4", "7", "12", "18", "25", "40"],
}


class Topic:
    """Templates for filler sessions about one subject (``{slot}`` placeholders from SLOTS)."""

    def __init__(self, name, projects, openers, replies, follow, tools, titles):
        self.name, self.projects, self.openers, self.replies = name, projects, openers, replies
        self.follow, self.tools, self.titles = follow, tools, titles


TOPICS = [
    Topic("postgres migration", [API, BILL], [
        "I need a postgres migration that adds a nullable {col} column to {table}; we'll backfill it later.",
        "Write the postgres migration to rename {table}.{col} to {col2}. The app has to read both names during the deploy.",
        "Review the postgres migration in migrations/{mig}.py, I'm not sure the downgrade is right.",
        "The backfill in our postgres migration for {table} is slow on staging ({n} million rows). Can we batch it?",
        "Squash the migrations before {mig}, setting up a local postgres takes forever for new people.",
        "Add a postgres migration that creates {table}_archive with the same columns as {table}.",
    ], [
        "I added migrations/{mig}.py: the column is nullable with no default, so it's a catalog-only change.",
        "The downgrade drops the column while the previous release still reads it. I'll make the downgrade a "
        "no-op and drop the column in a later migration.",
        "I'll backfill in chunks of 5,000 rows ordered by primary key and commit after each chunk, so it can resume.",
        "The migration applies cleanly on a fresh database: `make db-reset && make migrate` takes {n} seconds.",
        "Squashed {n} migrations into one baseline; existing databases are stamped as already at the baseline.",
        "Both names are readable through a view now; the rename itself happens in the next release.",
    ], ["looks fine, also add an index on {col}", "run it against the local db and show me the table afterwards",
        "can we make the backfill resumable?", "ok ship it", "what does the downgrade do exactly?"],
        [("Bash", "alembic upgrade head"), ("Read", "migrations/{mig}.py"), ("Bash", "psql -c '\\d {table}'"),
         ("Edit", "migrations/{mig}.py")],
        ["Add {col} to {table}", "Backfill {table}.{col}", "Squash old migrations", "Rename a {table} column"]),
    Topic("flaky test", [API, WEB, SCHED], [
        "{test} is flaky again, it failed twice on main today. Can you take a look?",
        "The {svc} suite has a flaky test that only fails together with the rest of the suite. Shared state?",
        "Add a retry to the flaky test {test} for now and open a ticket to fix it properly.",
        "Quarantine {test}, it's a flaky test and it blocks merges.",
        "Is {test} really flaky or is it a real bug? It failed 3 times this week.",
    ], [
        "The test depends on set iteration order; I sorted the result before asserting.",
        "It writes to a shared temp directory that another test cleans up. I switched it to a per-test directory.",
        "I ran it 200 times in a loop and it failed 4 times, always on the same assertion.",
        "A fixture leaves a row behind; I wrapped the test in a transaction that rolls back.",
        "It's a real bug: the code returns early when the queue is briefly empty. I fixed the code, not the test.",
        "Marked it with the quarantine marker and opened a ticket with the failure logs.",
    ], ["run it in a loop to be sure", "why does it only fail in the pipeline?", "ok remove the retry again",
        "can we detect this kind of thing automatically?"],
        [("Bash", "pytest -x -p no:randomly {testfile} --count 200"), ("Read", "{testfile}"),
         ("Bash", "gh run view --log-failed")],
        ["Flaky {test}", "Fix a flaky test in {svc}", "Quarantine {test}"]),
    Topic("cron", [SCHED, INFRA], [
        "Move the {job} cron from 2am to 4am, it overlaps with the database backup.",
        "The {job} cron job didn't send anything this morning, can you check the logs?",
        "Add a cron entry that runs {job} every 15 minutes on the worker box.",
        "Convert the {job} cron to a systemd timer so we get logs in journald.",
        "How do I write a cron schedule for 'every weekday at 7:45'?",
    ], [
        "The crontab line is now `{cronexpr} /opt/jobs/{job}.sh`, and I reloaded cron.",
        "The job ran but exited with status 1 because its output directory was removed by the disk cleanup.",
        "I wrapped it in flock so overlapping runs are skipped instead of piling up.",
        "Created {job}.service and {job}.timer with OnCalendar={calendar}; `systemctl list-timers` shows the next run.",
        "`45 7 * * 1-5`: minute 45, hour 7, Monday to Friday.",
    ], ["and make it email me when it fails", "ok", "check that it actually ran", "also log how long it takes"],
        [("Bash", "crontab -l"), ("Bash", "journalctl -u {job} --since today"), ("Edit", "deploy/cron/{job}")],
        ["Reschedule the {job} cron", "Cron for {job}", "{job} timer"]),
    Topic("docker build", [WEB, INFRA, API], [
        "The docker build image for {svc} is 1.8 GB, can we shrink it?",
        "Switch the {svc} Dockerfile to a multi-stage docker build.",
        "docker build for {svc} takes {n} minutes in the pipeline, what's slow?",
        "Pin the base image in the {svc} Dockerfile, the latest tag broke us yesterday.",
        "Add a healthcheck to the {svc} image and make it run as a non-root user.",
    ], [
        "Most of the size is the compiler toolchain. With a multi-stage build only the built artefacts go into "
        "the slim runtime image, {n}0 MB in total.",
        "I pinned python:3.12-slim by digest and added a comment on how to bump it.",
        "The slow step is apt-get; I merged the install lines, added --no-install-recommends and removed the apt lists.",
        "Added a HEALTHCHECK against /healthz and a `USER app` line; the entrypoint no longer needs root.",
    ], ["build it and show me the size", "does it still work with docker compose?", "push it to the registry"],
        [("Bash", "docker build -t {svc}:dev ."), ("Read", "Dockerfile"), ("Bash", "docker images {svc}")],
        ["Slim down the {svc} image", "Multi-stage Dockerfile for {svc}", "Pin {svc} base image"]),
    Topic("auth", [WEB, API], [
        "Users get logged out after 15 minutes even with 'remember me' checked.",
        "Add refresh token rotation to the login flow of {svc}.",
        "The JWT audience check fails for tokens issued to the mobile app.",
        "Add TOTP two-factor authentication to the account settings.",
        "Password reset links should expire after one hour.",
    ], [
        "The session cookie has no Max-Age, so 'remember me' only changes the server-side TTL. It's 30 days now.",
        "Each refresh now issues a new refresh token and revokes the old one; reusing a revoked one revokes the family.",
        "Mobile tokens carry aud=acme-mobile and the API only accepted acme-web. Accepted audiences are a list now.",
        "Added TOTP enrolment with a QR code, recovery codes, and a check on login when it's enabled.",
        "Reset tokens now store their creation time and are rejected after 60 minutes.",
    ], ["add tests for that", "what about existing sessions?", "ok"],
        [("Read", "{file}"), ("Bash", "pytest tests/auth -q"), ("Edit", "{file}")],
        ["Remember-me logout bug", "Refresh token rotation", "Two-factor auth"]),
    Topic("api", [API], [
        "Add pagination to GET /api/{resource}, it returns everything right now.",
        "The /api/{resource} endpoint returns 500 when the filter is empty.",
        "Add an endpoint to download {resource} as CSV.",
        "Document the {resource} endpoints in the OpenAPI spec.",
    ], [
        "GET /api/{resource} now takes limit (default 50, max 200) and offset, and returns the total count.",
        "An empty filter string was parsed into an empty list and the ORM built `IN ()`. Empty filters are ignored now.",
        "Added /api/{resource}.csv streaming rows with the same filters as the JSON endpoint.",
        "The OpenAPI spec now covers the {resource} endpoints with examples, and CI validates it.",
    ], ["also add it to the client", "write a test for the empty case", "ok"],
        [("Read", "{file}"), ("Bash", "curl -s localhost:8000/api/{resource} | head"), ("Edit", "{file}")],
        ["Paginate {resource}", "Fix 500 on {resource}", "{resource} CSV download"]),
    Topic("frontend", [WEB], [
        "The {component} modal overflows on small screens.",
        "Make the table header sticky on the {component} page.",
        "The sidebar overlaps the footer on mobile.",
        "Buttons on the {component} page have no visible focus outline.",
        "Add a loading skeleton to the {component} page.",
    ], [
        "The modal had a fixed width of 640px; it's now `min(640px, 100vw - 32px)` with an internal scroll.",
        "Added `position: sticky; top: 0` to the header cells and a background so rows don't show through.",
        "The sidebar used `height: 100vh` with absolute positioning; I switched the layout to a grid.",
        "Restored the outline with `:focus-visible` so mouse clicks don't show it but keyboard focus does.",
        "Added a skeleton with the same layout as the loaded page to avoid layout shift.",
    ], ["check it on mobile", "looks good", "also in dark mode"],
        [("Read", "src/pages/{component}.tsx"), ("Edit", "src/pages/{component}.tsx"), ("Bash", "npm run lint")],
        ["{component} modal overflow", "Sticky header on {component}", "Sidebar layout fix"]),
    Topic("ci", [WEB, API], [
        "The GitHub Actions cache never hits for the {svc} job.",
        "Split the test job into 4 shards, it takes 25 minutes.",
        "Fail the PR when the lockfile changes without package.json changing.",
        "Run the e2e tests only when files under src/ change.",
    ], [
        "The cache key includes the run id, so it never matches. I changed .github/workflows/ci.yml to key on the lockfile hash.",
        "The test job now runs as a matrix of 4 shards; the slowest shard takes 7 minutes.",
        "Added a step that compares the changed files and fails with an explanation.",
        "Added a paths filter to the e2e job in .github/workflows/ci.yml.",
    ], ["does it work for forks?", "ok merge it", "how much time does that save?"],
        [("Read", ".github/workflows/ci.yml"), ("Bash", "gh run list --limit 5"), ("Edit", ".github/workflows/ci.yml")],
        ["CI cache misses", "Shard the test job", "Lockfile check"]),
    Topic("deps", [WEB, API, IDX], [
        "Upgrade {pkg} and fix whatever breaks.",
        "Dependabot opened 14 PRs, can you batch the minor updates into one?",
        "{pkg} floods our logs with deprecation warnings, clean them up.",
    ], [
        "Upgraded; two call sites used a removed API and one test relied on the old default. All green now.",
        "Batched 11 minor updates into one branch; the 3 majors stay separate because they need code changes.",
        "Replaced the deprecated calls in 6 files; the warnings are gone from the test run.",
    ], ["run the full test suite", "anything risky in there?", "ok"],
        [("Bash", "npm outdated"), ("Bash", "pip list --outdated"), ("Edit", "{file}")],
        ["Upgrade {pkg}", "Batch dependency updates"]),
    Topic("logging", [API, SCHED], [
        "Add request ids to every log line in {svc}.",
        "Our logs are way too noisy at INFO, half of it is health checks.",
        "Switch {svc} to structured JSON logging.",
        "Send {svc} errors to Sentry with the user id attached.",
    ], [
        "A middleware now sets a request id (or reuses X-Request-ID) and a logging filter adds it to every record.",
        "Health check requests are logged at DEBUG now; INFO volume dropped by about 60%.",
        "{svc} logs JSON with timestamp, level, logger, message and request id; local dev keeps the pretty format.",
        "Sentry is initialised at startup and the user id is set per request in the scope.",
    ], ["show me a sample line", "does that work in the workers too?", "ok"],
        [("Read", "{file}"), ("Bash", "tail -n 20 logs/{svc}.log"), ("Edit", "{file}")],
        ["Request ids in logs", "Quieter logs", "JSON logging for {svc}"]),
    Topic("refactor", [API, WEB, SCHED, IDX], [
        "Rename {ident} to {ident2} everywhere.",
        "{file} is 1,200 lines, split it into smaller modules.",
        "Replace the hand-rolled retry loops with one shared helper.",
        "Remove the dead code behind the old_checkout flag.",
    ], [
        "Renamed in 14 files and kept a deprecated alias for one release.",
        "Split it into three modules by responsibility; the public imports are unchanged.",
        "Added a retry helper with exponential backoff and replaced 7 loops; behaviour is the same.",
        "The flag has been on for everyone since November; removed the flag and 400 lines behind it.",
    ], ["run the tests", "anything else still using it?", "ok commit"],
        [("Grep", "{ident}"), ("Edit", "{file}"), ("Bash", "git diff --stat")],
        ["Rename {ident}", "Split {file}", "Shared retry helper"]),
    Topic("perf", [API, WEB], [
        "The {resource} page takes 4 seconds to load, profile it.",
        "The {svc} service uses 100% CPU at night, find out why.",
        "Speed up the {svc} test suite, it takes 12 minutes.",
    ], [
        "Most of the time is an N+1 query loading the owner of each row; prefetching brings it to 300 ms.",
        "A retry loop spins without sleeping when the upstream is down; added backoff.",
        "The tests recreate the database schema per test; using transactions per test brings it to 3 minutes.",
    ], ["how did you measure that?", "ok, commit it", "anything else slow?"],
        [("Bash", "py-spy top --pid 4242"), ("Read", "{file}"), ("Bash", "pytest --durations=10 -q")],
        ["Slow {resource} page", "{svc} CPU at night", "Faster test suite"]),
    Topic("kafka", ["/home/dev/orders", API], [
        "Add a consumer for the {topic} topic in {svc}.",
        "Partitions rebalance constantly whenever we deploy the {svc} consumers.",
        "Messages in the dead letter queue for {topic} have no error reason, add it.",
    ], [
        "The Kafka consumer joins the {svc}-workers group, commits offsets after each processed batch and sends "
        "poison messages to the dead letter topic.",
        "Deploys restart all pods at once and each restart triggers a rebalance. Static membership "
        "(group.instance.id) plus a cooperative assignor stops that.",
        "The dead letter producer now adds the exception type and message as headers.",
    ], ["test it against the local broker", "ok"],
        [("Bash", "kcat -b localhost:9092 -L"), ("Edit", "{file}")],
        ["{topic} consumer", "Stop rebalance storms", "DLQ error reasons"]),
    Topic("zh", [API, BILL, WEB], [
        "帮我给 {svc} 服务加一个健康检查接口。",
        "这个测试在 CI 上偶尔失败，帮我看看是什么原因。",
        "{table} 表有几千万行，数据库迁移脚本执行太慢了。",
        "部署之后日志里一直报超时错误，帮我查一下。",
        "帮我把这个函数重构一下，太长了，不好测试。",
        "接口返回的时间格式不统一，有的是时间戳，有的是字符串。",
    ], [
        "我加了 /healthz 接口，会检查数据库和缓存的连接状态。",
        "原因是两个测试共享了一个全局变量，我改成了每个测试单独初始化。",
        "建议分批执行，每批一万行，在业务低峰期运行，并且先在预发环境验证。",
        "超时是因为调用下游服务的时候没有复用连接，我加了 HTTP 连接池。",
        "我把函数拆成了三个小函数，分别负责校验、计算和保存，并补充了单元测试。",
        "统一改成了 ISO 8601 字符串，旧的字段保留一个版本再删除。",
    ], ["好的，谢谢", "再加一个测试用例", "这个改动会影响线上吗？", "先在测试环境试一下"],
        [("Read", "{file}"), ("Bash", "make test"), ("Edit", "{file}")],
        ["健康检查接口", "修复偶发失败的测试", "优化数据库迁移"]),
    Topic("ja", [WEB, API], [
        "{svc} のテストが CI で時々失敗します。原因を調べてください。",
        "デプロイ後にログにタイムアウトのエラーが出続けています。",
        "この関数が長すぎるのでリファクタリングしてください。",
        "日付の表示を ISO 8601 にそろえたいです。",
        "{table} テーブルにインデックスを追加したいです。",
        "README に開発環境の構築手順を追記してください。",
    ], [
        "テスト同士でグローバルな状態を共有していたのが原因でした。テストごとに初期化するようにしました。",
        "外部 API の接続を使い回していなかったため、タイムアウトが発生していました。接続プールを追加しました。",
        "関数を検証・計算・保存の三つに分割し、それぞれにテストを追加しました。",
        "表示用の関数を一つにまとめ、すべて ISO 8601 で出力するようにしました。",
        "マイグレーションを追加しました。本番では CONCURRENTLY で作成します。",
        "手順を追記しました。Docker を使う方法とローカルに直接入れる方法の両方を書いています。",
    ], ["ありがとうございます", "テストも追加してください", "本番への影響はありますか？"],
        [("Read", "{file}"), ("Bash", "npm test"), ("Edit", "{file}")],
        ["テストの修正", "タイムアウトの調査", "リファクタリング"]),
]

# Peripheral mentions of target identifiers in filler assistant text (a session that merely
# mentions an identifier should rank below the one about it).
ASIDES = [
    "While I was in there: getUserById is called twice per request on this path; not related, but worth a ticket.",
    "HTTPServerError is already handled by the client wrapper here, so nothing to change for it.",
    "Side note: the same pattern exists in resolve_dirs, but that one already handles it.",
]

# Everyday remarks that reuse the targets' vocabulary in other contexts (in a real history, words like
# "safari", "webpack" or "monolith" recur in unrelated sessions; one rare word must not decide).
CROSSTALK_USER = [
    "also check it in Safari, the last release broke there", "can we drop the webpack-specific bits from this file?",
    "the vite dev server shows the old version until a hard refresh", "does this need a DNS change or just config?",
    "the monolith still calls this directly, keep the old endpoint for now", "make sure the nightly backup job isn't affected",
    "memory usage went up a bit after this, is that expected?", "use the api key from the vault, not the env file",
    "the staging deploy is broken again, ignore it", "the sidebar link should point to the new page",
    "add the new setting to the config file and the docs", "this should read environment variables like everything else",
    "what's the retry policy here?", "is compression on by default?", "the upload endpoint has the same problem",
    "the search page needs the same change", "don't touch the generated files", "the dark theme looks off on this page",
    "gmail users complained about how this email renders", "use UTC everywhere please", "the postgres version in prod is 15",
    "keep the lock as short as possible", "the worker restarts on deploy anyway", "run the flaky tests separately",
    "the token goes in the header, not the cookie", "the progress of this is tracked in the release checklist",
]
CROSSTALK_ASSISTANT = [
    "I tested it in Chrome, Firefox and Safari.", "No webpack or vite config changes were needed.",
    "Memory stays flat in a quick local run.", "This doesn't touch the DNS or mail settings.",
    "The worker picks up the change after its next restart.", "Environment variables still override the config file.",
    "The backup job is unaffected; it reads a different schema.", "Nothing in the monolith calls this code path anymore.",
    "Compression stays on for responses above 1 KB.", "The API key check runs before this handler.",
    "Times are UTC end to end now.", "It runs inside the existing transaction, so the lock is short.",
    "The generated client needed regenerating after this; I ran the generator.", "The sidebar and header are unchanged.",
    "I added a warning log for the fallback path.", "The route is registered in the same router as before.",
]

# Tool output: not indexed. It repeats the targets' words on purpose.
NOISE = [
    "src/auth/token-store.ts:41:  const user = await getUserById(session.userId)",
    "Traceback (most recent call last):\n  File \"/app/worker/tasks.py\", line 88, in process_job\nKeyError: 'tenant_id'",
    "WARNING pg_upgrade: postgis-3 referenced by the old cluster", "advisory lock 4412 acquired by pid 931",
    "panic: assignment to entry in nil map", "TypeError: Cannot read properties of undefined (reading 'organizationId')",
    "error[E0502]: cannot borrow `self.buffer` as mutable because it is also borrowed as immutable",
    "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached",
    "Error: listen EADDRINUSE: address already in use :::5173", "LaunchDarkly client initialized in 212ms",
    "openssl 3.1.4-r5  CVE-2024-5535  HIGH", "proxy_read_timeout 60s;  # websocket heartbeat",
    "bd-q3fy  P2  CSV export drops archived projects", "bd-7k2m  P1  flaky test in TestRateLimiter",
    "resolve_dirs(['~/.claude']) -> []", "HTTPServerError: 503 Service Unavailable (retry 1/4)",
    "parseDurationMs('1h30m') = NaN", "TokenRefreshScheduler: scheduled refresh in 840s",
    "useInfiniteScroll: loadMore page=7", "MAX_POOL_OVERFLOW=40", "reconcile_ledger_entries: 182311 lines",
    "fetchInvoicesForAccount(4411) 200 OK 84ms", "gremlins.js: 1000 random clicks ok", "presigned URL expires=604800",
    "snowplow-collector: 200", "consumer lag: 1204331 (topic order-events)", "terraform state lock: ConditionalCheckFailedException dynamodb",
    "idempotency_key reused", "zstd -T0 -19 --long backup.dump", "wkhtmltopdf 0.12.6 (with patched qt)",
    "internal/scheduler/cron.go:48: invalid spec \"@every 5m\"", "crates/indexer/src/lib.rs:2201: warning: unused variable",
    "~/.config/nvim/lua/plugins/lsp.lua:12: pyright attached", "docker/compose.override.yml: volume ./data",
    "migrations/0042_add_tenant_id.sql: ERROR: column \"tenant_id\" contains null values",
    ".github/workflows/release.yml: npm publish 403", "app/models/invoice.rb:14:in `set_due_date'",
    "--- FAIL: TestRateLimiter/burst_refill (0.02s)", "java.lang.OutOfMemoryError: Metaspace",
    "thread 'main' panicked at src/config.rs:42:10", "psycopg.errors.DeadlockDetected: deadlock detected",
    "数据库连接池 已耗尽 (active=10 idle=0)", "日付のフォーマット: yyyy/MM/dd", "キャッシュの無効化: 3 keys", "文字化け detected in row 4",
    "缓存击穿 hot key product:8812", "メモリリーク suspected: rss=2.1GB", "テストが不安定: retry 3",
    "flaky test detected: test_daily_digest (midnight utc)", "jest: port 4000 already in use", "goleak: found unexpected goroutines",
    "playwright: waiting for animation on checkout drawer", "cron: two replicas both ran invoice job", "DST: 02:30 skipped",
    "PATH=/usr/bin:/bin", "COPY . . invalidated cache, npm ci re-run", "exec format error (arm64 image on amd64)",
    "--mount=type=secret,id=npmrc", "sidebar flickers on resize (Safari 17.4)", "give up after five attempts",
    "s3:ListBucket Principal *", "acct_id -> account_id", "search box focus lost", "dedupes contacts csv by email",
    "progress bar 99% -> 0%", "webhook signature mismatch: wrong secret", "eslint: 'x' is defined but never used (src/gen)",
    "thumbnail worker memory leak rss=3.1GB", "rate limiting per api key 429", "webpack 5.90 -> vite 5.4", "dark mode toggle",
    "emails land in spam: SPF softfail", "user service split to own repo", "DEPLOY_REGION=eu-west-1", "react-router v7 loaders",
    "  PASS  src/utils/format.test.ts (1.2 s)", "  ✓ renders the empty state (12 ms)", "collected 214 items",
    "======================== 212 passed, 2 skipped in 9.81s ========================", "ok  \tgithub.com/acme/app/internal/queue\t0.31s",
    "   Compiling serde v1.0.210", "    Finished `release` profile [optimized] target(s) in 41.08s",
    " 14 files changed, 212 insertions(+), 97 deletions(-)", "commit 8c1d2e4b7f0a91c3e2d5f6a7b8c9d0e1f2a3b4c5",
    "Author: Dana Ruiz <dana@acme.dev>", "diff --git a/api/orders/views.py b/api/orders/views.py",
    "@@ -41,7 +41,9 @@ def list_orders(request):", "-    qs = Order.objects.all()", "+    qs = Order.objects.select_related('owner')",
    "2026-03-02T04:00:01Z INFO  worker started pid=931", "2026-03-02T04:00:07Z WARN  slow query 2.3s", "GET /api/projects 200 41ms",
    "node_modules/.bin/tsc --noEmit", "Found 0 errors. Watching for file changes.", "drwxr-xr-x  5 dev dev 4096 Mar  2 09:14 src",
    "-rw-r--r--  1 dev dev  812 Mar  2 09:14 package.json", "{\"level\":\"info\",\"msg\":\"request done\",\"status\":200}",
]

PAD_USER = ["continue", "ok, next one", "run the tests again", "keep going", "looks good, do the same for the next module",
            "show me the diff", "what's left?", "go on"]
PAD_ASSISTANT = ["Reading the next module.", "Tests pass ({n}0 passed).", "Two failures left, both in the same helper; fixing them.",
                 "Here's the diff: three files changed.", "Remaining: two modules and the docs.", "Done with this one, moving on.",
                 "That module had no changes needed.", "Checked the callers; they don't need changes."]


def fill(text: str, slots: dict) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: slots.get(m.group(1), m.group(0)), text)


def noise(rng: random.Random, lines: int) -> str:
    return "\n".join(rng.choice(NOISE) for _ in range(lines))


def pad_turns(rng: random.Random, n: int, project: str) -> list:
    """``n`` generic tool-heavy turns (neutral words in the indexed text, noise in tool output)."""
    out: list = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append("u: " + rng.choice(PAD_USER))
        for _ in range(rng.randint(1, 3)):
            tool = rng.choice(["Bash", "Read", "Grep", "Edit"])
            arg = {"Bash": "make test", "Read": rng.choice(SLOTS["file"]), "Grep": "TODO",
                   "Edit": rng.choice(SLOTS["file"])}[tool]
            out.append((tool, arg, noise(rng, rng.randint(4, 40)) if tool != "Edit" else "ok"))
        out.append("a: " + rng.choice(PAD_ASSISTANT).replace("{n}", str(rng.randint(2, 40))))
    return out


def filler_specs(rng: random.Random) -> list[Spec]:
    """The generated sessions: ~14 per topic, some long and tool-heavy, some titled or compacted."""
    specs = []
    plan = [(t, i) for t in TOPICS for i in range(14 if t.name not in ("zh", "ja") else 9)]
    plan += [(rng.choice(TOPICS[:4]), 100 + i) for i in range(10)]  # the long ones
    for n, (topic, i) in enumerate(plan):
        long = i >= 100
        slots = {k: rng.choice(v) for k, v in SLOTS.items()}
        agent = "codex" if rng.random() < 0.4 else "claude"
        msgs: list = []
        if agent == "claude" and not long and rng.random() < 0.08:  # a continued, compacted session
            msgs.append(("compact", f"Summary:\n1. Primary Request and Intent:\n   {fill(rng.choice(topic.openers), slots)}"
                                    f"\n2. Progress:\n   {fill(rng.choice(topic.replies), slots)}"))
        msgs.append("u: " + fill(rng.choice(topic.openers), slots))
        rounds = rng.randint(40, 90) if long else rng.randint(1, 4)
        aside = rng.random() < 0.06
        latin = topic.name not in ("zh", "ja")
        for r in range(rounds):
            if long and r % 4:
                msgs += pad_turns(rng, 1, "")
                if r == rounds // 2:
                    msgs.append(("compact", "Summary:\n1. Primary Request and Intent:\n   "
                                 + fill(rng.choice(topic.openers), slots) + "\n2. Work so far:\n   "
                                 + fill(rng.choice(topic.replies), slots)))
                continue
            for _ in range(rng.randint(0, 3)):
                tool, arg = rng.choice(topic.tools)
                msgs.append((tool, fill(arg, slots), "ok" if tool == "Edit" else noise(rng, rng.randint(3, 30))))
            reply = fill(rng.choice(topic.replies), slots)
            if aside and r == 0:
                reply += " " + rng.choice(ASIDES)
            if latin and rng.random() < 0.35:
                reply += " " + rng.choice(CROSSTALK_ASSISTANT)
            msgs.append("a: " + reply)
            if r < rounds - 1:
                pool = topic.follow + topic.openers[:1]
                ask = rng.choice(CROSSTALK_USER) if latin and rng.random() < 0.3 else fill(rng.choice(pool), slots)
                msgs.append("u: " + ask)
        if latin and rounds == 1 and rng.random() < 0.5:
            msgs += ["u: " + rng.choice(CROSSTALK_USER), "a: " + rng.choice(CROSSTALK_ASSISTANT)]
        title, kind = None, "thread" if agent == "codex" else "ai"
        roll = rng.random()
        if roll < (0.3 if agent == "codex" else 0.45):
            title = fill(rng.choice(topic.titles), slots)
        elif agent == "claude" and roll < 0.55:
            title, kind = fill(rng.choice(topic.titles), slots), "custom"
        specs.append(Spec(f"filler-{n:03d}-{topic.name.replace(' ', '-')}", agent, rng.choice(topic.projects),
                          msgs, title, kind, topic.name))
    return specs


def all_specs() -> list[Spec]:
    """Every session of the corpus, targets first, with ``items`` expanded."""
    from targets import TARGETS  # noqa: PLC0415  (targets imports Spec from here)

    rng = random.Random(SEED)
    specs = list(TARGETS) + filler_specs(rng)
    for s in specs:
        srng = random.Random(zlib.crc32(s.key.encode()))
        s.items = []
        for m in s.messages:
            s.items += [_item(x) for x in pad_turns(srng, m[1], s.project)] if m[0] == "pad" else [_item(m)]
    return specs


def _item(m) -> tuple:
    """``"u: .."``/``"a: .."`` -> ``(user|assistant, text)``; ``("compact", t)`` kept; a tool tuple ->
    ``("tool", name, arg, output)``."""
    if isinstance(m, str):
        return ("user" if m.startswith("u:") else "assistant", m[2:].strip())
    return m if m[0] == "compact" else ("tool", *m)


# -- on-disk formats -----------------------------------------------------------------------------


def _ts(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _start(key: str) -> datetime:
    h = zlib.crc32(key.encode())
    return T0 + timedelta(days=h % 80, minutes=(h >> 8) % 600)


def _dump(lines: list[dict]) -> str:
    return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines)


def write_claude(home: Path, s: Spec) -> Path:
    sid_, cwd, t = s.session_id, s.project, _start(s.key)
    lines: list[dict] = []
    state = {"parent": None, "n": 0, "t": t}

    def line(kind: str, **extra) -> dict:
        state["n"] += 1
        state["t"] += timedelta(seconds=7 + (state["n"] * 37) % 53)
        uid = str(uuid.uuid5(NAMESPACE, f"{sid_}/{state['n']}"))
        d = {"parentUuid": state["parent"], "isSidechain": False, "userType": "external", "cwd": cwd,
             "sessionId": sid_, "version": "2.1.14", "gitBranch": "main", "type": kind, "uuid": uid,
             "timestamp": _ts(state["t"])}
        d.update(extra)
        state["parent"] = uid
        lines.append(d)
        return d

    def reply(content: list) -> None:
        n = state["n"] + 1
        line("assistant", requestId=f"req_{sid_[:8]}{n:05d}", message={
            "id": f"msg_{sid_[:8]}{n:05d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "usage": {"input_tokens": 1200 + n, "output_tokens": 80 + n % 400}})

    for item in s.items:
        kind = item[0]
        if kind == "user":
            line("user", message={"role": "user", "content": item[1]})
        elif kind == "assistant":
            reply([{"type": "text", "text": item[1]}])
        elif kind == "compact":
            prev = state["parent"]
            state["parent"] = None
            line("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False, level="info",
                 logicalParentUuid=prev, compactMetadata={"trigger": "auto", "preTokens": 167000})
            line("user", isCompactSummary=True, isVisibleInTranscriptOnly=True,
                 message={"role": "user", "content": CLAUDE_SUMMARY_PREAMBLE + item[1]})
        else:
            _, name, arg, output = item
            tid = "toolu_" + uuid.uuid5(NAMESPACE, f"{sid_}/t{state['n']}").hex[:24]
            path = arg if arg.startswith(("/", "~")) else f"{cwd}/{arg}"
            tool_input = {"Bash": {"command": arg, "description": "Run " + arg.split()[0]},
                          "Grep": {"pattern": arg, "path": cwd, "output_mode": "content"},
                          "Edit": {"file_path": path, "old_string": "…", "new_string": "…"},
                          "Write": {"file_path": path, "content": "…"}}.get(name, {"file_path": path})
            if name == "Read":
                output = "\n".join(f"{i:>6}\t{x}" for i, x in enumerate(output.split("\n"), 1))
            reply([{"type": "tool_use", "id": tid, "name": name, "input": tool_input}])
            line("user", toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
                 message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": output}]})
    if s.title:
        key = "customTitle" if s.title_kind == "custom" else "aiTitle"
        lines.append({"type": "custom-title" if s.title_kind == "custom" else "ai-title", key: s.title,
                      "sessionId": sid_})
    slug = "".join(c if c.isalnum() else "-" for c in cwd)
    path = home / ".claude" / "projects" / slug / f"{sid_}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dump(lines), "utf-8")
    return path


def write_codex(home: Path, s: Spec) -> Path:
    sid_, cwd, start = s.session_id, s.project, _start(s.key)
    lines: list[dict] = []
    clock = {"t": start, "call": 0}

    def env(kind: str, payload: dict) -> None:
        clock["t"] += timedelta(seconds=3 + (len(lines) * 29) % 41)
        lines.append({"timestamp": _ts(clock["t"]), "type": kind, "payload": payload})

    repo = cwd.rstrip("/").rsplit("/", 1)[-1]
    env("session_meta", {"id": sid_, "timestamp": _ts(start), "cwd": cwd, "originator": "codex_cli_rs",
                         "cli_version": "0.58.0", "instructions": None, "source": "cli", "model_provider": "openai",
                         "git": {"commit_hash": uuid.uuid5(NAMESPACE, sid_).hex + "0" * 8, "branch": "main",
                                 "repository_url": f"git@github.com:acme/{repo}.git"}})
    env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
        f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
        "  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>bash</shell>\n</environment_context>"}]})
    for item in s.items:
        kind = item[0]
        if kind == "user":
            env("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex",
                                 "sandbox_policy": {"mode": "workspace-write"}, "summary": "auto"})
            env("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": item[1]}]})
            env("event_msg", {"type": "user_message", "message": item[1], "images": []})
        elif kind == "assistant":
            env("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": item[1]}]})
            env("event_msg", {"type": "agent_message", "message": item[1]})
        elif kind == "compact":
            env("compacted", {"message": item[1], "replacement_history": []})
            env("event_msg", {"type": "context_compacted"})
        else:
            _, name, arg, output = item
            clock["call"] += 1
            cid = "call_" + uuid.uuid5(NAMESPACE, f"{sid_}/{clock['call']}").hex[:24]
            if name in ("Edit", "Write"):
                env("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": cid,
                                      "name": "apply_patch", "input": f"*** Begin Patch\n*** Update File: {arg}\n"
                                      "@@\n-…\n+…\n*** End Patch\n"})
                env("response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": json.dumps(
                    {"output": f"Success. Updated the following files:\nM {arg}\n", "metadata": {"exit_code": 0}})})
                continue
            cmd = {"Read": f"sed -n '1,200p' {arg}", "Grep": f"rg -n '{arg}'"}.get(name, arg)
            env("response_item", {"type": "function_call", "name": "shell", "call_id": cid, "arguments": json.dumps(
                {"command": ["bash", "-lc", cmd], "workdir": cwd, "timeout_ms": 120000})})
            env("response_item", {"type": "function_call_output", "call_id": cid, "output": json.dumps(
                {"output": output, "metadata": {"exit_code": 0, "duration_seconds": 0.4}})})
    path = (home / ".codex" / "sessions" / f"{start:%Y}" / f"{start:%m}" / f"{start:%d}"
            / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{sid_}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dump(lines), "utf-8")
    return path


def build(home: Path) -> list[Spec]:
    """Write the whole corpus into ``home``; returns the specs (``items`` expanded)."""
    home = Path(home)
    specs = all_specs()
    names = []
    for s in specs:
        if s.agent == "claude":
            write_claude(home, s)
        else:
            write_codex(home, s)
            if s.title:
                names.append({"id": s.session_id, "thread_name": s.title, "updated_at": _ts(_start(s.key))})
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "session_index.jsonl").write_text(_dump(names), "utf-8")
    return specs


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: corpus.py OUT_HOME")
    out = build(Path(sys.argv[1]))
    msgs = sum(len(s.items) + sum(1 for i in s.items if i[0] == "tool") for s in out)
    print(f"{len(out)} sessions ({sum(s.target for s in out)} hand-written, "
          f"{sum(s.agent == 'claude' for s in out)} Claude Code, {sum(s.agent == 'codex' for s in out)} Codex), "
          f"~{msgs} messages, longest {max(len(s.items) for s in out)} items")
