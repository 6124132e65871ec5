"""The hand-written, labelled sessions of the relevance set (the ones queries point at).

Each session is a ``Spec`` built with ``C`` (Claude Code) or ``X`` (Codex CLI). Messages:

* ``"u: ..."`` a user prompt, ``"a: ..."`` assistant text;
* ``(TOOL, ARG, OUTPUT)`` a tool call and its result (``Bash``/``Read``/``Grep``/``Edit``; tool
  output is never indexed, so words that only appear there must not make a session findable);
* ``("compact", TEXT)`` a compaction summary (Claude: ``compact_boundary`` + ``isCompactSummary``
  line; Codex: a ``compacted`` line);
* ``("pad", N)`` N generated tool-heavy turns (long sessions; see ``corpus.pad_turns``).

Grouped by the query type that mainly uses them; ``queries.py`` refers to them by key.
Rules the label check in ``run.py`` enforces on every run: ``title`` and ``summary`` query words do not
occur in the session's messages, ``error`` queries are in a user message, ``typo`` queries contain
a word that occurs nowhere in the expected session.
"""

from __future__ import annotations

from corpus import Spec

WEB, API, BILL, SCHED, IDX, INFRA, SHOP = ("/home/dev/webapp", "/home/dev/api", "/home/dev/billing",
                                           "/home/dev/scheduler", "/home/dev/indexer", "/home/dev/infra",
                                           "/home/dev/shop")


def C(key, project, *messages, title=None, ai=False, topic=""):
    """A Claude Code session; ``ai=True`` writes the title as an ``ai-title`` line."""
    return Spec(key, "claude", project, list(messages), title, "ai" if ai else "custom", topic, target=True)


def X(key, project, *messages, title=None, topic=""):
    """A Codex CLI session; its title goes to ``session_index.jsonl`` as the thread name."""
    return Spec(key, "codex", project, list(messages), title, "thread", topic, target=True)


IDENTIFIER = [
    C("id-getuserbyid", WEB,
      "u: getUserById returns undefined for users who signed up through SSO, even though the row is "
      "definitely in the users table. Can you look at src/users/repository.ts?",
      ("Read", "src/users/repository.ts", "export async function getUserById(id: string) {\n"
       "  const row = await db.users.findFirst({ where: { id: id.toLowerCase() } });\n  return row ?? undefined;\n}"),
      "a: getUserById lowercases the id before the lookup. SSO users get ids from the identity provider "
      "that keep their original casing (`00uA3xK...`), so the lookup misses them. Password signups get "
      "lowercase UUIDs, which is why only SSO accounts are affected.",
      "u: ok so just drop the toLowerCase? will that break anything else that calls getUserById?",
      ("Grep", "getUserById(", "src/routes/me.ts:14\nsrc/routes/admin/users.ts:31\nsrc/jobs/digest.ts:58"),
      "a: Three callers, none of them normalises the id, and ids are compared case-sensitively everywhere "
      "else, so removing the toLowerCase() is safe. I'll add a test with a mixed-case IdP id.",
      ("Edit", "src/users/repository.ts", "ok"),
      ("Bash", "npm test -- users", "PASS src/users/repository.test.ts\n  getUserById\n    ✓ finds a password user\n"
       "    ✓ finds an SSO user with a mixed-case id"),
      "a: Fixed: getUserById no longer lowercases ids; the new test covers a mixed-case SSO id."),
    X("id-resolve-dirs", "/home/dev/crabsearch",
      "u: resolve_dirs ignores CLAUDE_CONFIG_DIR when it has a trailing comma, e.g. `CLAUDE_CONFIG_DIR=~/.claude,` "
      "gives an empty list. fix it and add a test",
      ("Bash", "rg -n 'def resolve_dirs' -A12 crabsearch/paths.py", "41:def resolve_dirs(value: str) -> list[Path]:\n"
       "42:    dirs = [Path(v) for v in value.split(',')]\n43:    return [d for d in dirs if (d / 'projects').is_dir()]"),
      "a: resolve_dirs splits on commas and calls Path() on every piece, including the empty string after the "
      "trailing comma, which becomes `.`; `~` is never expanded either, so `~/.claude` fails the is_dir() "
      "check and the list ends up empty. I'll skip empty pieces and expand `~` per entry.",
      ("Edit", "crabsearch/paths.py", "ok"),
      ("Bash", "pytest -q tests/test_paths.py", ".......                                   [100%]\n7 passed in 0.12s"),
      "a: resolve_dirs now skips empty entries; test_resolve_dirs_trailing_comma covers `~/.claude,` and `,~/.claude`.",
      "u: what happens with spaces around the comma?",
      "a: They are stripped too: `resolve_dirs(' ~/.claude , /tmp/x ')` returns both directories."),
    C("id-bd-q3fy", API,
      "u: pick up bd-q3fy (\"CSV export drops archived projects\"). The export endpoint is in api/export/projects.py.",
      ("Bash", "bd show bd-q3fy", "bd-q3fy  CSV export drops archived projects\nstatus: open   priority: P2\n"
       "reported by: support  (customer 4411 cannot find archived work in the export)"),
      "a: The export reuses the dashboard's listing query, which filters `archived_at IS NULL`. I'll add an "
      "`include_archived` flag to the query helper and pass it from the export only.",
      ("Edit", "api/export/projects.py", "ok"),
      "u: yes, and add an `archived` column to the csv. close bd-q3fy when done and link the commit",
      ("Bash", "bd close bd-q3fy --reason 'fixed in 8c1d2e4'", "closed bd-q3fy"),
      "a: Done: the export includes archived projects with an `archived` yes/no column, and bd-q3fy is "
      "closed with the commit hash in the note."),
    X("id-httpservererror", API,
      "u: Our http client raises HTTPServerError on 503s but the retry decorator only catches HTTPClientError "
      "and ConnectionError, so nothing is retried while the upstream deploys. Where is that decided?",
      ("Bash", "rg -n '@retry' api/clients", "api/clients/base.py:27:@retry(on=(HTTPClientError, ConnectionError), tries=4)"),
      "a: In api/clients/base.py: `@retry(on=(HTTPClientError, ConnectionError))`. HTTPServerError subclasses "
      "HTTPError directly, not HTTPClientError, so 5xx responses skip the retry entirely.",
      "u: add HTTPServerError to the retry list but only for 502/503/504, a 500 should fail fast",
      ("Edit", "api/clients/base.py", "ok"),
      "a: Added a `retry_if` predicate: HTTPServerError is retried when `status in (502, 503, 504)`, with the "
      "same exponential backoff; a plain 500 is raised immediately. Tests cover both."),
    C("id-parsedurationms", WEB,
      "u: parseDurationMs(\"1h30m\") returns NaN but parseDurationMs(\"90s\") works. It's in src/lib/time.ts",
      ("Read", "src/lib/time.ts", "const RE = /^(\\d+)(ms|s|m|h)$/;\nexport function parseDurationMs(s: string) {\n"
       "  const m = RE.exec(s.trim());\n  return m ? Number(m[1]) * UNITS[m[2]] : NaN;\n}"),
      "a: The regex is anchored and matches exactly one number-unit pair, so compound values fail. I'll "
      "match all pairs with a global regex and sum them, and reject leftovers so `1h30` still returns NaN.",
      ("Edit", "src/lib/time.ts", "ok"),
      "a: parseDurationMs now accepts `1h30m`, `2m15s` and `1h`, and still returns NaN for garbage like `1h30`."),
    X("id-tokenrefreshscheduler", "/home/dev/android",
      "u: TokenRefreshScheduler fires twice after the app comes back from the background, and the second "
      "refresh uses the already-rotated refresh token so the user gets logged out.",
      ("Bash", "rg -n 'class TokenRefreshScheduler' -A30 app/src/main", "TokenRefreshScheduler.kt:12: class "
       "TokenRefreshScheduler(private val clock: Clock) {\n  fun onResume() { schedule() }\n  fun onStart() { schedule() }"),
      "a: TokenRefreshScheduler schedules from both onStart and onResume, and both fire when the activity "
      "returns from the background. The second job doesn't see the first one's result. I'll keep a single "
      "pending job and make schedule() a no-op while one is queued.",
      ("Edit", "app/src/main/java/com/acme/auth/TokenRefreshScheduler.kt", "ok"),
      "a: Done. A unit test drives onStart+onResume with a fake clock and asserts one refresh."),
    C("id-useinfinitescroll", WEB,
      "u: useInfiniteScroll keeps fetching page 2, 3, 4... forever when the list is shorter than the viewport. "
      "The hook is in src/hooks/useInfiniteScroll.ts",
      ("Read", "src/hooks/useInfiniteScroll.ts", "const observer = new IntersectionObserver(([e]) => {\n"
       "  if (e.isIntersecting) loadMore();\n});"),
      "a: When the first page doesn't fill the viewport the sentinel stays visible, so useInfiniteScroll calls "
      "loadMore() after every render until the API returns an empty page. It never checks `hasMore` or "
      "whether a request is in flight.",
      "u: add both checks",
      ("Edit", "src/hooks/useInfiniteScroll.ts", "ok"),
      "a: useInfiniteScroll now skips loadMore() while `isFetching` is true or `hasMore` is false."),
    X("id-max-pool-overflow", API,
      "u: what does MAX_POOL_OVERFLOW actually do in our settings, and is 40 too much for the db.t3.medium RDS instance?",
      ("Bash", "rg -n 'MAX_POOL' api/settings.py", "api/settings.py:88:MAX_POOL_SIZE = env.int('MAX_POOL_SIZE', 10)\n"
       "api/settings.py:89:MAX_POOL_OVERFLOW = env.int('MAX_POOL_OVERFLOW', 40)"),
      "a: MAX_POOL_OVERFLOW is passed to SQLAlchemy's QueuePool as `max_overflow`: extra connections opened "
      "beyond the pool size when all pooled ones are busy, closed again when returned. With 8 gunicorn "
      "workers that is up to 8 x (10 + 40) = 400 connections, and a db.t3.medium allows about 400, "
      "so a burst could exhaust the server.",
      "u: so what should it be?",
      "a: Set MAX_POOL_OVERFLOW to 5 and keep the pool at 10: 120 connections worst case, leaving room for "
      "migrations and psql sessions."),
    C("id-reconcile-ledger", BILL,
      "u: reconcile_ledger_entries takes 40 minutes for March. Profile it, I suspect it's quadratic.",
      ("Bash", "python -m cProfile -s cumtime scripts/reconcile.py --month 2026-03 | head -20",
       "   ncalls  tottime  cumtime  filename:lineno(function)\n   1  0.01  2391.2  ledger.py:140(reconcile_ledger_entries)\n"
       "   182311  2280.4  2280.4  ledger.py:171(<listcomp>)"),
      "a: It is quadratic: reconcile_ledger_entries looks up the matching bank line for every ledger line with "
      "a list comprehension over all bank lines. I'll index the bank lines by (amount, value_date) in a dict.",
      ("Edit", "billing/ledger.py", "ok"),
      ("Bash", "time python scripts/reconcile.py --month 2026-03", "matched 182311, unmatched 14\nreal 0m21.4s"),
      "a: reconcile_ledger_entries now runs in 21 s for March, with the same 14 unmatched lines as before."),
    C("id-fetchinvoices", BILL,
      "u: fetchInvoicesForAccount is called once per row on the accounts page, that's 200 requests. Can we batch it?",
      "a: Yes: I'll add a batched variant that takes a list of account ids, backed by one "
      "`WHERE account_id = ANY(%s)` query, and make fetchInvoicesForAccount a thin wrapper over it.",
      ("Edit", "billing/invoices/api.py", "ok"),
      "a: The accounts page now makes a single request for all invoices; fetchInvoicesForAccount keeps its "
      "signature for the other callers."),
]

PATH = [
    C("path-token-store", WEB,
      "u: There's a race in src/auth/token-store.ts: two tabs refresh the access token at the same time and one "
      "of them ends up holding a revoked refresh token. Can we serialize the refresh?",
      ("Read", "src/auth/token-store.ts", "export async function refresh() {\n  const rt = localStorage.getItem('rt');\n"
       "  const res = await fetch('/oauth/token', { method: 'POST', body: form(rt) });"),
      "a: Each tab calls refresh() on its own timer. The server rotates refresh tokens, so whichever tab is second "
      "sends a token that was just revoked. I'll wrap refresh() in `navigator.locks.request('token-refresh')` "
      "and re-read the stored token inside the lock.",
      "u: does Safari support navigator.locks?",
      "a: Yes, since 15.4. For older browsers I'll fall back to a BroadcastChannel leader so only one tab refreshes.",
      ("Edit", "src/auth/token-store.ts", "ok")),
    C("dist-session-store", WEB,  # a distractor for the token-store path queries
      "u: src/auth/session-store.ts keeps the access token in localStorage. Move the token to an httpOnly "
      "cookie and have the store only remember the expiry.",
      "a: I'll change the login handler to set the cookie and strip the token from the store; the store keeps "
      "`expiresAt` so the UI can warn before the session ends.",
      ("Edit", "src/auth/session-store.ts", "ok"),
      "a: Done; src/auth/session-store.ts no longer touches the token itself."),
    X("path-cron-go", SCHED,
      "u: add support for `@every` durations in internal/scheduler/cron.go, right now `@every 5m` is rejected as "
      "an invalid spec",
      ("Bash", "sed -n '30,70p' internal/scheduler/cron.go", "func Parse(spec string) (Schedule, error) {\n"
       "\tfields := strings.Fields(spec)\n\tif len(fields) != 5 {\n\t\treturn nil, ErrInvalidSpec"),
      "a: Parse only accepts five-field specs. I'll special-case the `@every <duration>` descriptor with "
      "time.ParseDuration and return a ConstantDelay schedule, rejecting durations under one second.",
      ("Edit", "internal/scheduler/cron.go", "ok"),
      ("Bash", "go test ./internal/scheduler/...", "ok  \tgithub.com/acme/scheduler/internal/scheduler\t0.41s"),
      "a: internal/scheduler/cron.go now parses `@every 5m` and `@every 90s`; tests added."),
    C("path-lib-rs", IDX,
      "u: crates/indexer/src/lib.rs is 3000 lines. Split the tokenizer and the segment writer out into modules.",
      "a: I'll move the tokenizer into crates/indexer/src/tokenize.rs and the segment writer into "
      "crates/indexer/src/segment.rs, keeping the public re-exports in lib.rs so callers don't change.",
      ("Bash", "cargo build -p indexer", "   Compiling indexer v0.4.0\n    Finished dev [unoptimized] target(s) in 6.2s"),
      "a: lib.rs is down to 420 lines; `cargo test -p indexer` passes."),
    C("path-nvim-lsp", "/home/dev/dotfiles",
      "u: in ~/.config/nvim/lua/plugins/lsp.lua pyright attaches twice to every python buffer, I get duplicate diagnostics",
      ("Read", ".config/nvim/lua/plugins/lsp.lua", "require('lspconfig').pyright.setup({})\n-- ...\n"
       "require('mason-lspconfig').setup_handlers({ function(s) require('lspconfig')[s].setup({}) end })"),
      "a: pyright is set up once explicitly and once more by the mason-lspconfig default handler. Remove the "
      "explicit setup or exclude pyright from the handler.",
      "u: exclude it from the handler, I want my settings",
      ("Edit", ".config/nvim/lua/plugins/lsp.lua", "ok"),
      "a: Done, the handler now skips pyright and your explicit setup keeps its settings."),
    X("path-compose-override", INFRA,
      "u: docker/compose.override.yml mounts ./data over the postgres volume and it wiped my local database. why "
      "does the override even exist?",
      ("Bash", "git log --oneline -- docker/compose.override.yml", "4e1a9b0 dev: mount fixtures for the seed script"),
      "a: It was added to mount seed fixtures, but it mounts ./data at /var/lib/postgresql/data instead of "
      "/fixtures, so the container starts on an empty directory. I'll point it at /fixtures and add a named volume.",
      ("Edit", "docker/compose.override.yml", "ok"),
      "a: Fixed. Your old data is still in the `pgdata` named volume if you need it."),
    C("path-migration-0042", API,
      "u: migrations/0042_add_tenant_id.sql fails on staging because some rows have a NULL org, so the "
      "NOT NULL constraint on tenant_id can't be added.",
      ("Bash", "psql staging -c 'select count(*) from projects where org_id is null'", " count\n-------\n    37"),
      "a: 37 projects have no org. I'll split 0042_add_tenant_id.sql into add-nullable, backfill from org_id "
      "with a fallback tenant for orphans, then set NOT NULL in a follow-up migration.",
      ("Edit", "migrations/0042_add_tenant_id.sql", "ok")),
    X("path-release-yml", WEB,
      "u: .github/workflows/release.yml publishes to npm twice when we push a tag and then create the release from it",
      ("Bash", "sed -n 1,20p .github/workflows/release.yml", "on:\n  push:\n    tags: ['v*']\n  release:\n    types: [published]"),
      "a: The workflow triggers on both the tag push and the release event. The second run fails on "
      "`npm publish` (version exists) and shows up red. I'll keep only `release: published`.",
      ("Edit", ".github/workflows/release.yml", "ok"),
      "a: Done, .github/workflows/release.yml now has a single trigger."),
    C("path-invoice-rb", SHOP,
      "u: app/models/invoice.rb: the due_date callback runs before the customer's payment terms are loaded, so "
      "every invoice is due immediately",
      ("Read", "app/models/invoice.rb", "class Invoice < ApplicationRecord\n  belongs_to :customer\n"
       "  before_validation :set_due_date\n  def set_due_date\n    self.due_date = issued_on + customer&.terms.to_i.days"),
      "a: `customer` is nil when the invoice is built through `Invoice.new(customer_id: ...)` without "
      "reloading, so terms.to_i is 0. I'll load the customer explicitly in set_due_date.",
      ("Edit", "app/models/invoice.rb", "ok"),
      "a: Fixed in app/models/invoice.rb with a spec for net-30 terms."),
]

ERROR = [
    C("err-keyerror-tenant", API,
      "u: The worker crashes on every job from the new tenants:\n\nTraceback (most recent call last):\n"
      "  File \"/app/worker/tasks.py\", line 88, in process_job\n"
      "    tenant = settings.TENANTS[job.payload['tenant_id']]\nKeyError: 'tenant_id'\n",
      "a: The new signup flow enqueues jobs whose payload has `tenant` instead of the id key, so the lookup raises "
      "KeyError. Old tenants' jobs go through the legacy producer which still sets it.",
      ("Grep", "payload=", "api/signup/jobs.py:19:    enqueue('provision', payload={'tenant': t.id})"),
      "a: I fixed the producer and made the worker fail with a clear message when the key is missing."),
    X("err-js-orgid", WEB,
      "u: the invoices page is blank in prod, console says\n\nTypeError: Cannot read properties of undefined "
      "(reading 'organizationId')\n    at InvoiceTable (InvoiceTable.tsx:41:37)\n    at renderWithHooks (react-dom.development.js:16305:18)",
      "a: InvoiceTable reads `user.membership.organizationId` before the membership request resolves. I'll "
      "render the skeleton until membership is loaded and use optional chaining in the selector.",
      ("Edit", "src/components/InvoiceTable.tsx", "ok"),
      "a: Fixed; the table waits for the membership and the error is gone in the preview deploy."),
    C("err-go-nilmap", SCHED,
      "u: got this in prod overnight:\n\npanic: assignment to entry in nil map\n\ngoroutine 37 [running]:\n"
      "github.com/acme/scheduler/internal/cache.(*LRU).Put(0xc0001b2000, {0xc00012a0f0, 0x9}, ...)\n"
      "\t/src/internal/cache/lru.go:64 +0x1c4",
      ("Read", "internal/cache/lru.go", "func (c *LRU) Put(k string, v []byte) {\n\tc.items[k] = v"),
      "a: `LRU.items` is only initialised in NewLRU, but the config reload path builds `&LRU{}` directly, so the "
      "map is nil. I'll add a constructor check and initialise lazily in Put.",
      ("Edit", "internal/cache/lru.go", "ok"),
      "a: Done, with a test that builds the zero value and calls Put."),
    X("err-rust-unwrap", IDX,
      "u: the indexer dies on startup on the new box:\n\nthread 'main' panicked at src/config.rs:42:10:\n"
      "called `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
      ("Read", "src/config.rs", "    let home = std::env::var_os(\"INDEXER_HOME\").map(PathBuf::from).unwrap();"),
      "a: Line 42 unwraps INDEXER_HOME, which the new box's unit file doesn't set. I'll fall back to "
      "$XDG_DATA_HOME/indexer and return a proper error instead of panicking.",
      ("Edit", "src/config.rs", "ok")),
    C("err-e0502", IDX,
      "u: can't get this to compile:\n\nerror[E0502]: cannot borrow `self.buffer` as mutable because it is also "
      "borrowed as immutable\n  --> crates/indexer/src/segment.rs:118:9\n"
      "    |\n116 |         let last = self.buffer.last();\n118 |         self.buffer.push(doc);",
      "a: `last` is a reference into the buffer that is still used after the push. Copy what you need out of "
      "it first (`let last_id = self.buffer.last().map(|d| d.id);`) so the borrow ends before the push.",
      ("Edit", "crates/indexer/src/segment.rs", "ok"),
      ("Bash", "cargo check", "    Checking indexer v0.4.0\n    Finished dev [unoptimized] target(s) in 1.9s"),
      "a: It compiles now."),
    X("err-pg-deadlock", BILL,
      "u: the nightly settlement job failed with\n\npsycopg.errors.DeadlockDetected: deadlock detected\n"
      "DETAIL:  Process 4121 waits for ShareLock on transaction 99812; blocked by process 4188.\n"
      "Process 4188 waits for ShareLock on transaction 99790; blocked by process 4121.",
      "a: Two settlement workers update the same accounts in different orders. I'll sort the account ids "
      "before locking them with SELECT ... FOR UPDATE so every worker takes the locks in the same order.",
      ("Edit", "billing/settlement/run.py", "ok"),
      "a: Done, and the job retries a transaction once on this error."),
    C("err-queuepool", API,
      "u: under load test the API starts failing with\n\nsqlalchemy.exc.TimeoutError: QueuePool limit of size 5 "
      "overflow 10 reached, connection timed out, timeout 30.00 (Background on this error at: https://sqlalche.me/e/20/3o7r)",
      ("Grep", "Session\\(", "api/deps.py:12:    db = Session()\napi/deps.py:13:    return db"),
      "a: get_db() returns the session without closing it, so connections are only returned when the garbage "
      "collector runs. I'll turn it into a generator dependency with try/finally.",
      ("Edit", "api/deps.py", "ok"),
      "a: Re-ran the load test: 0 errors at 400 rps."),
    X("err-eaddrinuse", WEB,
      "u: npm run dev fails every other time:\n\nError: listen EADDRINUSE: address already in use :::5173\n"
      "    at Server.setupListenHandle [as _listen2] (node:net:1872:16)",
      "a: The previous dev server is still running because the watcher script spawns vite detached and "
      "Ctrl+C only kills the wrapper. I'll spawn it attached and forward SIGINT.",
      ("Edit", "scripts/dev.mjs", "ok"),
      "a: Done; Ctrl+C now stops vite too."),
    C("err-oom-metaspace", "/home/dev/android",
      "u: gradle build on CI dies with\n\njava.lang.OutOfMemoryError: Metaspace\n"
      "> Task :app:kaptDebugKotlin FAILED",
      "a: kapt loads many annotation processors into the daemon's metaspace; the default cap is too low "
      "for this module. I'll raise `-XX:MaxMetaspaceSize=1g` in gradle.properties and enable the kapt worker API.",
      ("Edit", "gradle.properties", "ok"),
      "a: CI is green again."),
    X("err-go-test-fail", SCHED,
      "u: this fails on CI only:\n\n--- FAIL: TestRateLimiter/burst_refill (0.02s)\n"
      "    limiter_test.go:88: expected 10 tokens, got 9",
      "a: The test sleeps 100ms and expects exactly 10 refilled tokens, but the CI runners are slower to "
      "wake up. I'll inject a fake clock into the limiter so the test advances time explicitly.",
      ("Edit", "internal/ratelimit/limiter_test.go", "ok"),
      "a: Done, the test no longer sleeps."),
]

CJK = [
    X("cjk-pool", API,
      "u: 生产环境的数据库连接池经常耗尽，高峰期接口超时。帮我看看 db/pool.go 的配置是不是有问题。",
      ("Bash", "sed -n 1,40p db/pool.go", "db.SetMaxOpenConns(10)\ndb.SetConnMaxLifetime(0)"),
      "a: 我看了 db/pool.go：MaxOpenConns 只有 10，而且每个请求在事务里面调用了外部支付接口，连接被长时间占用。"
      "建议把外部调用移到事务外面，并把 MaxOpenConns 提高到 50。",
      "u: 事务外面调用的话，失败了怎么回滚？",
      "a: 先写一条 pending 记录，外部接口成功后再更新状态；失败的时候由补偿任务处理。"),
    C("cjk-logrotate", INFRA,
      "u: 服务器上的日志文件一天就涨到 20G，logrotate 的配置好像没有生效，帮我查一下。",
      ("Bash", "cat /etc/logrotate.d/app", "/var/log/app/*.log {\n  daily\n  rotate 7\n}"),
      "a: 配置本身是对的，但是应用一直持有旧文件的句柄，轮转之后还在往被删除的文件里写。可以加上 copytruncate，"
      "或者在 postrotate 里给应用发 SIGHUP 让它重新打开日志文件。",
      "u: 用 copytruncate 吧",
      "a: 已经加上了 copytruncate 和 compress，明天早上可以确认一下磁盘占用。"),
    C("cjk-monthend", BILL,
      "u: 这个单元测试依赖当前时间，每到月底就失败，能不能把时间固定住？文件是 tests/test_invoice_period.py",
      "a: 测试里用了 date.today() 计算下个月的账单日期，31 号的时候下个月没有 31 号就会出错。我用 freezegun "
      "把时间固定在 2026-01-15，另外加了一个 1 月 31 日的用例。",
      ("Edit", "tests/test_invoice_period.py", "ok"),
      "a: 改好了，本地跑了所有日期的用例都通过。"),
    X("cjk-rollback", API,
      "u: 昨天的版本有问题需要部署回滚，但是数据库迁移已经执行了，直接回滚代码会不会出问题？",
      "a: 这次迁移只是新增了两个可空字段，旧代码不会读写它们，所以可以直接回滚代码，迁移先保留。"
      "以后建议迁移和代码分开发布，保证每次迁移都向后兼容。",
      "u: 好，那就先回滚代码",
      ("Bash", "kubectl rollout undo deployment/api", "deployment.apps/api rolled back"),
      "a: 已经回滚到上一个版本，健康检查正常。"),
    C("cjk-date-format", WEB,
      "u: 日付のフォーマットがユーザーのタイムゾーンによって一日ずれます。date-fns の format を使っています。",
      ("Read", "src/lib/date.ts", "export const show = (iso: string) => format(new Date(iso), 'yyyy/MM/dd');"),
      "a: サーバーは日付だけの文字列（2026-03-01）を返していて、new Date() が UTC の深夜として解釈するため、"
      "UTC より西のタイムゾーンでは前日になります。parseISO ではなく日付として扱う parse を使うように直します。",
      ("Edit", "src/lib/date.ts", "ok"),
      "a: 修正しました。ニューヨークと東京のタイムゾーンでテストを追加しています。"),
    X("cjk-mojibake", SHOP,
      "u: 注文一覧の CSV をエクスポートして Excel で開くと文字化けします。UTF-8 で出力しているはずなんですが。",
      "a: Excel は BOM のない UTF-8 の CSV を Shift_JIS として読みます。先頭に BOM を付けて出力するように変更します。",
      ("Edit", "app/services/order_csv.rb", "ok"),
      "a: BOM 付きで出力するようにしました。Excel で正しく表示されることを確認しました。"),
    C("cjk-memleak", WEB,
      "u: 画像処理のワーカーでメモリリークが発生していて、数時間で 2GB を超えます。原因を調べてもらえますか。",
      ("Bash", "node --inspect worker.js & sleep 600; curl localhost:9229/json", "[{\"type\": \"node\"}]"),
      "a: ヒープスナップショットを比較すると、処理済みジョブのバッファが Map に残り続けていました。"
      "ジョブ完了時に削除するように修正します。",
      ("Edit", "src/worker/jobs.ts", "ok"),
      "a: 修正後、6 時間動かしてもメモリ使用量は 300MB 前後で安定しています。"),
    X("cjk-cache", API,
      "u: 商品の価格を更新してもキャッシュの無効化がうまくいかず、古い価格が表示されます。",
      "a: 価格更新の処理は商品詳細のキーだけを削除していて、一覧用のキーが残っています。"
      "キーにバージョン番号を含めて、更新時にバージョンを上げる方式に変えます。",
      ("Edit", "api/catalog/cache.py", "ok"),
      "a: 変更しました。更新直後に一覧と詳細の両方で新しい価格が表示されます。"),
    C("cjk-flaky-jp", WEB,
      "u: CI でだけテストが不安定です。ローカルでは毎回通ります。checkout.spec.ts です。",
      "a: CI ではワーカーが 4 つ並列で動いていて、同じテスト用ユーザーを共有しているため、"
      "カートの中身が他のテストに上書きされていました。テストごとにユーザーを作成するようにします。",
      ("Edit", "e2e/checkout.spec.ts", "ok"),
      "a: 20 回連続で CI を回して、すべて成功しました。"),
    C("cjk-redis", API,
      "u: 热门商品的 Redis 缓存过期之后，大量请求同时打到数据库，这种缓存击穿怎么处理比较好？",
      "a: 可以对热点 key 加互斥锁，只让一个请求去数据库加载并回填缓存，其他请求等待或者返回旧值；"
      "也可以给过期时间加随机抖动，避免大量 key 同时过期。",
      "u: 用互斥锁的方案，帮我写在 api/catalog/cache.py 里",
      ("Edit", "api/catalog/cache.py", "ok"),
      "a: 已经实现，用的是 Redis 的 SET NX 加 5 秒过期时间。"),
]

TITLE = [
    C("title-pdf", SHOP,
      "u: the receipts export produces blank pages with wkhtmltopdf when a line item contains an emoji",
      "a: wkhtmltopdf can't render color emoji glyphs and aborts the page. I'll strip or replace emoji in line "
      "item names before rendering and log which items were changed.",
      ("Edit", "app/services/receipt_export.rb", "ok"),
      "a: Receipts with emoji render now; the emoji become a plain square.",
      title="Gremlins in the invoice PDF renderer"),
    C("title-sandbox", "/home/dev/editor",
      "u: check whether extensions can read files outside their own directory, e.g. via symlinks or ../ in manifest paths",
      ("Bash", "rg -n 'realpath|resolve' src/extensions", "src/extensions/host.ts:88: const p = path.join(root, rel)"),
      "a: They can: paths from the manifest are joined but never resolved, so `../../.ssh/id_rsa` and symlinks "
      "get out of the extension root. I'll resolve with fs.realpath and reject anything outside the root.",
      ("Edit", "src/extensions/host.ts", "ok"),
      title="Sandbox escape audit for the plugin loader", ai=True),
    X("title-tax", BILL,
      "u: the VAT report for the accountants takes an hour to generate; rewrite it as a streaming query instead "
      "of loading every order into memory",
      "a: I'll replace the ORM loop with a server-side cursor that aggregates per country and rate in SQL and "
      "streams rows to the CSV writer.",
      ("Edit", "billing/reports/vat.py", "ok"),
      "a: The report now takes 40 seconds and peaks at 80 MB of memory.",
      title="Quarterly tax export rewrite"),
    X("title-hermes", INFRA,
      "u: switch outgoing mail from the old postfix box to the new mail service, keep postfix as a fallback for a week",
      "a: I'll add the new SMTP service as primary in the mailer config with postfix as the fallback transport, "
      "and alert when the fallback is used.",
      ("Edit", "ansible/roles/mailer/templates/main.cf.j2", "ok"),
      "a: Done; the fallback has not been used in the first hour.",
      title="Hermes relay cutover"),
    C("title-snowplow", WEB,
      "u: 4.2 can't ship because three e2e specs fail on the checkout page. Find out whether it's the specs or the app.",
      "a: Two specs rely on the old coupon field id; the third is a real bug: the total ignores the shipping "
      "discount. I'll update the selectors and fix the total.",
      ("Edit", "src/checkout/total.ts", "ok"),
      "a: All three specs pass; 4.2 is unblocked.",
      title="snowplow: unblock the release train"),
    C("title-presigned", API,
      "u: download links we email to customers stay valid for seven days. Shorten them to 15 minutes and "
      "regenerate the link when the customer clicks it.",
      "a: I'll send a link to our own /downloads/<id> endpoint instead, which checks the session and redirects to a "
      "freshly signed link valid for 15 minutes.",
      ("Edit", "api/downloads/views.py", "ok"),
      title="Harden S3 presigned URL expiry", ai=True),
    X("title-bisect", API,
      "u: requests got slower after Tuesday's deploy, find which commit did it",
      ("Bash", "git bisect run ./scripts/bench-p99.sh", "a91c3e2 is the first bad commit\n    serializers: include owner"),
      "a: a91c3e2 added the owner to every serialized project, which triggers one extra query per row. I'll "
      "prefetch owners in the list view.",
      ("Edit", "api/projects/views.py", "ok"),
      title="Bisect the p99 latency regression"),
    C("title-onboarding", WEB,
      "u: write a getting-started guide for the two people joining next week: machine setup, access requests, "
      "first tasks",
      "a: I drafted docs/getting-started.md with setup steps, the accounts to request on day one and three "
      "starter issues.",
      ("Write", "docs/getting-started.md", "ok"),
      title="Onboarding doc for new contractors"),
    X("title-kafka", "/home/dev/orders",
      "u: the order-events queue is falling behind by 2 million messages since noon",
      "a: The worker group has 12 partitions but only 3 instances, and each processes messages one by "
      "one with a database round trip. I'll batch inserts per poll and scale to 6 instances.",
      ("Edit", "orders/events/worker.py", "ok"),
      "a: The backlog is draining at about 40k messages per minute.",
      title="Kafka consumer lag triage"),
]

_PRE = "Summary:\n1. Primary Request and Intent:\n   "
SUMMARY = [
    C("sum-idempotency", BILL,
      ("compact", _PRE + "The user asked to stop duplicate charges when the payment worker retries.\n"
       "2. Key Technical Concepts:\n   - idempotency keys on the Stripe PaymentIntent create call\n"
       "   - ledger double-posting caused by at-least-once delivery from SQS\n3. Files and Code Sections:\n"
       "   - billing/payments/charge.py: passes idempotency_key=f'charge-{order.id}'\n"
       "4. Pending Tasks:\n   - a cleanup script for the 37 duplicated rows from March"),
      "u: ok, let's finish that cleanup script for the duplicated rows from March",
      "a: I'll write scripts/cleanup_march_dupes.py: it finds pairs with the same order and amount within 5 "
      "minutes, keeps the first and writes a reversing entry for the second, dry-run by default.",
      ("Write", "scripts/cleanup_march_dupes.py", "ok"),
      ("Bash", "python scripts/cleanup_march_dupes.py --dry-run", "would reverse 37 rows, total 4,212.90 EUR"),
      "a: The dry run finds exactly the 37 rows. Run it with --apply when finance has signed off."),
    X("sum-launchdarkly", WEB,
      "u: get rid of the third-party feature toggle service, we pay too much for it for five toggles",
      "a: I'll list every toggle, where it is read and its current value per environment first.",
      ("compact", "We replaced LaunchDarkly with a flags.yaml file loaded at startup (one section per "
       "environment), removed the SDK and the client-side bootstrap, and kept the same flag names. "
       "Remaining: delete the LaunchDarkly project after one week."),
      "u: add a CI check that every toggle in the code exists in the file",
      "a: Added scripts/check_toggles.py, which greps for toggle(\"...\") calls and fails on unknown names."),
    C("sum-websocket", WEB,
      ("compact", _PRE + "Fix dashboards disconnecting after about a minute behind the load balancer.\n"
       "2. Key Technical Concepts:\n   - websocket heartbeat: server ping every 25s, client pong\n"
       "   - nginx proxy_read_timeout raised from 60s to 300s on the /live location\n"
       "3. Pending Tasks:\n   - verify on the office network"),
      "u: dashboards still drop on the office wifi after a few minutes, but only there",
      "a: The office firewall closes idle TCP connections after 120 seconds regardless of traffic above it? "
      "Let me check the captured disconnect times.",
      ("Bash", "grep disconnect logs/client.log | tail -3", "10:02:14 disconnect code=1006\n10:04:16 disconnect code=1006"),
      "a: Exactly every 122 seconds: the office proxy caps connection lifetime. Reconnecting with backoff is "
      "the only fix on our side; I added it with state resync."),
    X("sum-buf", API,
      ("compact", "Progress so far: moved the vendored protobuf definitions to third_party/proto, switched code "
       "generation to `buf generate` with local plugins (remote plugins removed so CI works offline), and "
       "regenerated the Python stubs."),
      "u: CI still fails on the generated files check",
      ("Bash", "git diff --stat", " api/gen/orders_pb2.py | 4 ++--"),
      "a: The stubs differ only in the header comment with the plugin version; CI has an older plugin. I "
      "pinned the plugin version in the generation config and regenerated."),
    C("sum-tfstate", INFRA,
      ("compact", _PRE + "Recover the infrastructure pipeline after a cancelled CI job.\n2. Key Technical "
       "Concepts:\n   - Terraform state lock stuck in the DynamoDB table tf-locks\n   - force-unlock with the "
       "lock id from the error message\n3. Pending Tasks:\n   - stop cancelled jobs from leaving it behind"),
      "u: now make the pipeline not leave that behind when someone cancels a job",
      "a: GitLab sends SIGTERM and then SIGKILL after the timeout. I'll trap SIGTERM in the apply script so it "
      "interrupts the plan cleanly, and add a manual 'unlock' job for the rare hard kill.",
      ("Edit", ".gitlab-ci.yml", "ok")),
    C("sum-cursor", API,
      ("compact", _PRE + "Replace offset pagination on the activity feed.\n2. Key Technical Concepts:\n"
       "   - the pagination cursor is base64url-encoded JSON {id, created_at}\n   - keyset query ordered by "
       "(created_at, id)\n3. Pending: clients"),
      "u: update the web client and the mobile docs to use next_cursor",
      "a: The web client now follows `next_cursor` until it is null; the API docs show the new flow.",
      ("Edit", "src/feed/useFeed.ts", "ok")),
    X("sum-cve", INFRA,
      "u: the security scanner flags our worker image, fix whatever it finds",
      ("Bash", "trivy image worker:latest --severity HIGH,CRITICAL", "openssl 3.1.4-r5  CVE-2024-5535  HIGH"),
      ("compact", "Bumped openssl in the alpine base image to fix CVE-2024-5535 (rebuilt from alpine 3.20.3), "
       "pinned the base by digest, and added the scanner to CI with --exit-code 1 for HIGH and CRITICAL."),
      "u: make the scan job run nightly too",
      "a: Added a scheduled pipeline that rebuilds and scans every night at 03:00."),
    C("sum-gdpr", API,
      ("compact", _PRE + "GDPR data export job that runs before account deletion.\n2. Key Technical Concepts:"
       "\n   - zip with JSON per table, emailed as a signed link\n   - deletion waits for the export to finish"),
      "u: the zip is missing the uploaded files",
      "a: The job only dumps tables. I'll add the user's uploads from object storage into a files/ folder "
      "inside the archive, streaming so large files don't load into memory.",
      ("Edit", "api/privacy/archive.py", "ok")),
]

REPEATED = [
    C("pg-notnull", BILL,
      "u: the postgres migration that adds a NOT NULL column with a default to `orders` held an ACCESS EXCLUSIVE "
      "lock for 9 minutes in prod, checkout was down. postgres 10.",
      "a: On Postgres 10 adding a column with a default rewrites the whole table under that lock (11+ only "
      "stores the default in the catalog). Split it: add the column nullable, backfill in batches, then set "
      "the default and NOT NULL with a NOT VALID check constraint validated separately.",
      ("Write", "migrations/0107_orders_channel.py", "ok"),
      "a: The new migration holds the lock for milliseconds on staging."),
    X("pg-concurrently", API,
      "u: postgres migration fails in alembic with 'CREATE INDEX CONCURRENTLY cannot run inside a transaction block'",
      "a: Alembic wraps each migration in a transaction. Use `with op.get_context().autocommit_block():` around "
      "the index creation so it runs outside the transaction.",
      ("Edit", "alembic/versions/3f2a_events_index.py", "ok"),
      "a: The migration runs and the index is built without blocking writes."),
    C("pg-upgrade", INFRA,
      "u: postgres migration from 13 to 16 with pg_upgrade fails the check: the postgis extension version in the "
      "old cluster isn't installed in the new one",
      ("Bash", "pg_upgrade --check -b /usr/lib/postgresql/13/bin -B /usr/lib/postgresql/16/bin",
       "Your installation references loadable libraries that are missing from the new installation:\n  postgis-3"),
      "a: Install the same postgis major for 16 (postgresql-16-postgis-3) before running pg_upgrade, then run "
      "ALTER EXTENSION postgis UPDATE after the upgrade.",
      "a: Check passes now; the upgrade itself took 4 minutes with --link."),
    X("pg-enum", BILL,
      "u: the down migration drops the enum type payment_status but the reporting view still uses it, so the "
      "rollback on staging failed halfway. postgres left things in a weird state.",
      "a: Postgres can't drop a type a view depends on. The down migration must drop and recreate the view "
      "around the type change; and since the migration ran without a transaction, I'll make each step idempotent.",
      ("Edit", "migrations/0093_payment_status.py", "ok")),
    C("fl-timezone", API,
      "u: test_daily_digest is a flaky test: it fails on CI but only for runs between 00:00 and 01:00 UTC",
      "a: The test builds 'today' with date.today() (local time on CI is UTC+1 in the runner image) while the "
      "code uses UTC, so for one hour after midnight they disagree. I'll freeze time with freezegun and use UTC in both.",
      ("Edit", "tests/test_digest.py", "ok"),
      "a: Ran it with the clock frozen at 00:30 UTC: passes."),
    X("fl-ports", WEB,
      "u: flaky test in the api suite: jest workers sometimes fail with 'port 4000 already in use'",
      "a: Every worker starts the test server on the fixed port 4000. I'll listen on port 0 and read the assigned "
      "port from server.address() in the test setup.",
      ("Edit", "test/setup-server.ts", "ok"),
      "a: 30 runs with --maxWorkers=8, no failures."),
    C("fl-goleak", SCHED,
      "u: the scheduler package has a flaky test, TestShutdown sometimes hangs for 10 minutes on CI",
      ("pad", 60),
      "a: The worker goroutines started in TestDispatch are never stopped, so sometimes they are still holding "
      "the queue when TestShutdown runs. That's a goroutine leak; I'll add goleak.VerifyTestMain to catch it "
      "and stop the workers with t.Cleanup.",
      ("Edit", "internal/scheduler/main_test.go", "ok"),
      ("pad", 20),
      "a: `go test -race -count=50 ./internal/scheduler` passes and goleak reports nothing."),
    C("fl-playwright", WEB,
      "u: the playwright checkout test is flaky, it clicks 'Pay' while the drawer is still animating",
      "a: It uses page.waitForTimeout(300) before the click. I'll wait for the drawer's `data-state=open` "
      "attribute and use toBeVisible() on the button instead.",
      ("Edit", "e2e/checkout.spec.ts", "ok"),
      "a: Passed 50 repeats with --repeat-each."),
    X("cr-twice", SCHED,
      "u: the invoice cron runs twice every night since we scaled the worker deployment to two replicas",
      "a: Each replica runs the in-process scheduler, so both fire. Move the job to a Kubernetes CronJob with "
      "concurrency policy Forbid (`concurrencyPolicy: Forbid`), or elect a leader; the CronJob is simpler.",
      ("Write", "k8s/invoice-cron.yaml", "ok"),
      "a: Added the CronJob and disabled the in-process schedule for that job."),
    C("cr-dst", SCHED,
      "u: our cron at 02:30 didn't run on Sunday. daylight saving time?",
      "a: Yes: on the spring-forward day 02:00-03:00 doesn't exist in Europe/Berlin, so a 02:30 schedule is "
      "skipped. Either run it in UTC or at a time outside the gap, like 03:30.",
      "u: switch it to UTC",
      ("Edit", "config/schedules.yaml", "ok")),
    C("cr-path", INFRA,
      "u: backup.sh works when I run it by hand but does nothing from the crontab",
      ("Bash", "grep CRON /var/log/syslog | tail -2", "CRON[2211]: (deploy) CMD (/opt/backup/backup.sh)\n"
       "CRON[2211]: (CRON) info (No MTA installed, discarding output)"),
      "a: Cron runs with a minimal PATH (/usr/bin:/bin), and the script calls `aws` from /usr/local/bin. Set "
      "PATH at the top of the crontab or use absolute paths, and redirect output to a log so errors aren't discarded.",
      ("Edit", "/etc/cron.d/backup", "ok")),
    C("db-cache", WEB,
      "u: docker build reinstalls all node modules on every code change, it takes 6 minutes",
      ("Read", "Dockerfile", "FROM node:20-slim\nWORKDIR /app\nCOPY . .\nRUN npm ci\nRUN npm run build"),
      "a: `COPY . .` comes before `RUN npm ci`, so any file change invalidates the layer cache for the install. "
      "Copy package.json and package-lock.json first, run npm ci, then copy the rest.",
      ("Edit", "Dockerfile", "ok"),
      "a: A code-only change now rebuilds in 40 seconds."),
    X("db-arm64", INFRA,
      "u: docker build works on my M1 but the image crashes on the server with 'exec format error'",
      "a: The image was built for arm64 and the server is amd64. Build with "
      "`docker buildx build --platform linux/amd64` (or both platforms) and push a multi-arch manifest.",
      ("Edit", "Makefile", "ok"),
      "a: `make image` now builds linux/amd64 and linux/arm64."),
    C("db-secret", WEB,
      "u: the docker build passes the npm token as a build ARG and I'm pretty sure it ends up in the image history",
      "a: It does: `docker history` shows it. Use a BuildKit secret instead: "
      "`RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci` and `docker build --secret id=npmrc,src=.npmrc`.",
      ("Edit", "Dockerfile", "ok"),
      "a: The token no longer appears in the history or any layer."),
]

PHRASE = [
    C("ph-sidebar", WEB,
      "u: the sidebar flickers whenever I resize the browser window in Safari, Chrome is fine",
      "a: The ResizeObserver callback sets state that changes the sidebar width, which triggers the observer "
      "again. I'll debounce it with requestAnimationFrame and compare widths before setting state.",
      ("Edit", "src/layout/Sidebar.tsx", "ok")),
    X("ph-retry", API,
      "u: make the retry logic give up after five attempts and log a warning instead of raising",
      "a: The webhook sender now stops after five attempts, logs a warning with the last status code and "
      "marks the delivery as failed.",
      ("Edit", "api/webhooks/sender.py", "ok")),
    C("ph-bucket", INFRA,
      "u: why is the staging bucket public?? anyone can list every file in it",
      ("Bash", "aws s3api get-bucket-policy --bucket acme-staging-assets", "{\"Principal\": \"*\", \"Action\": \"s3:ListBucket\"}"),
      "a: The bucket policy grants ListBucket to everyone; it was meant to allow GetObject for public assets "
      "only. I'll remove ListBucket and enable Block Public Access for listing.",
      ("Edit", "terraform/staging/buckets.tf", "ok")),
    C("ph-rename-acct", BILL,
      "u: rename all the acct variables to account, it's driving me nuts",
      ("Grep", "\\bacct\\b", "billing/charge.py:12\nbilling/refund.py:40\n... 57 matches"),
      "a: Renamed 57 occurrences in 9 files, including the `acct_id` keyword argument (with a deprecation "
      "shim for callers outside the package).",
      ("Bash", "pytest -q", "312 passed in 14.2s")),
    X("ph-focus", WEB,
      "u: the search box loses focus every time the results refresh",
      "a: The results list is keyed on the query, so the whole panel including the input remounts on each "
      "refresh. I'll move the input out of the keyed subtree.",
      ("Edit", "src/search/SearchPanel.tsx", "ok")),
    C("ph-dedupe", API,
      "u: write me a small script that dedupes the contacts csv by email, keep the newest row",
      "a: scripts/dedupe_contacts.py reads the CSV, normalises emails (lowercase, trimmed), keeps the row with "
      "the latest updated_at per email and writes contacts.deduped.csv.",
      ("Write", "scripts/dedupe_contacts.py", "ok"),
      ("Bash", "python scripts/dedupe_contacts.py contacts.csv", "read 18204 rows, wrote 16911")),
    X("ph-progress", WEB,
      "u: the upload progress bar jumps back to zero at 99% and then finishes",
      "a: The bar tracks each chunk's progress instead of the total; the last chunk resets it. I'll compute "
      "loaded bytes over the whole file.",
      ("Edit", "src/upload/useUpload.ts", "ok")),
    C("ph-webhook-secret", BILL,
      "u: I think the webhook signature check is using the wrong secret in prod, every event gets a 400",
      ("Bash", "kubectl get secret billing-env -o json | jq '.data|keys'", "[\"STRIPE_SECRET_KEY\", \"STRIPE_WH_SECRET_TEST\"]"),
      "a: Prod has only the test-mode signing secret. The code reads STRIPE_WH_SECRET, which falls back to the "
      "test one. I'll add the live secret and remove the fallback."),
    X("ph-lint", WEB,
      "u: stop eslint from complaining about unused imports in the generated files under src/gen",
      "a: Added src/gen/** to the ignore patterns in eslint.config.js; the generator's output is not linted anymore.",
      ("Edit", "eslint.config.js", "ok")),
]

PROSE = [
    C("pr-thumbnail", WEB,
      "u: the thumbnail worker's memory grows to 3GB overnight until it's OOM killed",
      ("Bash", "node --expose-gc scripts/heap-growth.js", "after 5000 jobs: rss 1.9GB, heapUsed 210MB"),
      "a: The heap is flat, RSS is growing: native memory from sharp. With the default glibc allocator sharp "
      "fragments memory; setting `sharp.cache(false)` and running with jemalloc fixes it.",
      ("Edit", "src/worker/thumbnail.ts", "ok"),
      "a: After the change the worker stays at 400MB after 20k jobs. The leak is fixed."),
    X("pr-ratelimit", API,
      "u: add rate limiting per API key on the public endpoints, 100 requests per minute",
      "a: I'll implement a token bucket per key in Redis with a Lua script, return 429 with Retry-After, and "
      "exempt the health check.",
      ("Edit", "api/middleware/ratelimit.py", "ok"),
      "a: Added, with per-key overrides in the api_keys table."),
    C("pr-vite", WEB,
      "u: webpack builds take 90 seconds, let's migrate the frontend to vite",
      "a: I'll replace the webpack config with vite.config.ts, move index.html to the root, switch env vars to "
      "import.meta.env and replace the svg loader with vite-plugin-svgr.",
      ("Bash", "npx vite build", "✓ built in 7.84s"),
      "a: Production build takes 8 seconds now and the dev server starts instantly."),
    X("pr-darkmode", WEB,
      "u: add a dark mode toggle in the settings menu that remembers what the user picked",
      "a: The toggle stores 'light' | 'dark' | 'system' in localStorage and sets a data-theme attribute on "
      "<html>; 'system' follows prefers-color-scheme.",
      ("Edit", "src/settings/ThemeToggle.tsx", "ok")),
    C("pr-spf", INFRA,
      "u: since we moved DNS to the new provider our emails land in spam at gmail",
      ("Bash", "dig +short TXT acme.com", "\"v=spf1 include:_spf.google.com ~all\""),
      "a: The SPF record lost the include for the transactional mail provider, and the DKIM selector record "
      "was not copied. I'll add both and a DMARC record in report-only mode."),
    C("pr-split-service", API,
      "u: let's extract the users module into its own service and repository, the monolith deploys are too slow",
      "a: Plan: copy users/ with its history using git filter-repo, expose the internal calls as a small HTTP "
      "API, and keep a client shim in the monolith while the callers move over.",
      ("Bash", "git filter-repo --path users/ --force", "Parsed 4120 commits"),
      "a: The new repository builds and its tests pass."),
    X("pr-cli-env", "/home/dev/deploytool",
      "u: the deploy CLI should read its config from environment variables too, like DEPLOY_REGION, so CI doesn't "
      "need a config file",
      "a: Settings now load from defaults, then the config file, then DEPLOY_* environment variables, then "
      "flags; `deploy config show` prints where each value came from.",
      ("Edit", "deploytool/config.py", "ok")),
    C("pr-zstd", INFRA,
      "u: the nightly backup archives are 80 GB and the bucket costs are climbing. what can we do?",
      ("pad", 90),
      "a: The backups are gzip -6 over pg_dump plain format. Switching to `pg_dump -Fc` with zstd compression "
      "(`zstd -T0 -19 --long`) gets them to 19 GB in my test, restore time unchanged.",
      ("Edit", "backup/nightly.sh", "ok"),
      ("pad", 30),
      "a: The first compressed nightly backup finished: 18.7 GB."),
    X("pr-router", WEB,
      "u: after upgrading react-router to v7 the route loaders don't run anymore",
      "a: In v7 loaders run only for routes created with createBrowserRouter; our app still uses <BrowserRouter> "
      "with <Routes>. I'll move the route tree to createBrowserRouter and RouterProvider.",
      ("Edit", "src/main.tsx", "ok")),
]

# Near misses: same topic, file, identifier family or error family as a target, other specifics.
DISTRACTORS = [
    C("dist-getusers", WEB,
      "u: getUsersByIds returns the users in a different order than the ids I pass in",
      "a: The batch loader uses `WHERE id IN (...)`, which has no order. Unlike getUserById it returns a list, so I'll "
      "re-sort the rows by the position of their id in the input.",
      ("Edit", "src/users/repository.ts", "ok")),
    C("dist-crate-main", IDX,
      "u: crates/indexer/src/main.rs parses the arguments by hand. Switch it to clap; leave lib.rs alone.",
      "a: main.rs now uses a clap derive struct; `--help` output is generated and lib.rs is untouched.",
      ("Edit", "crates/indexer/src/main.rs", "ok")),
    X("dist-ci-yml", WEB,
      "u: .github/workflows/ci.yml builds the release bundle on every push, only do that for tags",
      "a: The release build step now has `if: startsWith(github.ref, 'refs/tags/')`.",
      ("Edit", ".github/workflows/ci.yml", "ok")),
    X("dist-keyerror-user", API,
      "u: another worker crash:\n\nTraceback (most recent call last):\n  File \"/app/worker/tasks.py\", line 61, in "
      "send_digest\n    user = users[job.payload['user_id']]\nKeyError: 'user_id'",
      "a: Digest jobs for deleted users still sit in the queue. I'll skip jobs whose user no longer exists.",
      ("Edit", "worker/tasks.py", "ok")),
    C("dist-go-nilptr", SCHED,
      "u: new panic in the cache:\n\npanic: runtime error: invalid memory address or nil pointer dereference\n"
      "[signal SIGSEGV: segmentation violation]\ngithub.com/acme/scheduler/internal/cache.(*LRU).Get(...)",
      "a: This is a different one from the 'assignment to entry in nil map' panic in Put: here `c.clock` is nil "
      "because the zero-value LRU never got a clock. The lazy init now sets both.",
      ("Edit", "internal/cache/lru.go", "ok")),
    C("dist-js-map", WEB,
      "u: TypeError: Cannot read properties of undefined (reading 'map')\n    at InvoiceTable (InvoiceTable.tsx:18:22)",
      "a: `invoices` is undefined until the query resolves; default it to an empty array.",
      ("Edit", "src/components/InvoiceTable.tsx", "ok")),
    X("dist-invoice-pdf", SHOP,
      "u: the invoice PDF shows our old VAT number in the footer",
      "a: The footer reads the number from a hard-coded partial; it now comes from the company settings.",
      ("Edit", "app/views/invoices/_footer.html.erb", "ok")),
    C("dist-sqs-lag", INFRA,
      "u: the SQS consumer lag alarm fires every night at 2am and then clears itself",
      "a: That's the nightly import enqueueing 300k messages at once; the alarm threshold is below the normal "
      "peak. I'll alarm on the age of the oldest message instead of the count.",
      ("Edit", "terraform/alarms.tf", "ok")),
    C("dist-flaky-jest-tz", WEB,
      "u: the jest snapshot test for the invoice list is flaky: dates render in the runner's timezone, CI is UTC",
      "a: I set process.env.TZ = 'UTC' in the jest globalSetup and format dates with an explicit time zone.",
      ("Edit", "jest.global-setup.ts", "ok")),
    C("dist-cron-dup", INFRA,
      "u: the cleanup cron runs twice at midnight, there are two identical lines in the crontab",
      "a: The deploy script appends the entry on every deploy. I removed the duplicate and made the script check "
      "with `crontab -l | grep -F` before adding it.",
      ("Edit", "deploy/install.sh", "ok")),
    X("dist-docker-gha-cache", WEB,
      "u: docker build in CI never uses the layer cache, every run starts from scratch",
      "a: Each runner is fresh, so there is no local cache. I switched to buildx with "
      "`--cache-from type=gha --cache-to type=gha,mode=max`.",
      ("Edit", ".github/workflows/image.yml", "ok")),
    X("dist-pg-fk", BILL,
      "u: our postgres migration adding a foreign key from payments to orders locked both tables for minutes",
      "a: Add the constraint with NOT VALID, then run VALIDATE CONSTRAINT in a separate migration; validation "
      "takes a weaker lock that doesn't block writes.",
      ("Edit", "migrations/0111_payments_fk.py", "ok")),
    C("dist-ratelimit-login", API,
      "u: we get credential stuffing on /login, add rate limiting in nginx by IP",
      "a: Added a limit_req zone of 10 requests per minute per IP on /login with a burst of 5.",
      ("Edit", "nginx/sites/api.conf", "ok")),
]

TARGETS = IDENTIFIER + PATH + ERROR + CJK + TITLE + SUMMARY + REPEATED + PHRASE + PROSE + DISTRACTORS
