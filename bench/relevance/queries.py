"""The labelled queries: ``{"id", "query", "type", "expect": [session_id, ...]}``.

``expect`` lists the session(s) that should rank first (any of them at rank 1 counts as top-1);
ids are ``corpus.sid(name)`` of the hand-written sessions in ``targets.py``, so they are stable.
``python bench/relevance/queries.py`` prints them as JSON.

Types:

* ``identifier``: a code identifier (camelCase, snake_case, issue id), sometimes only part of it;
* ``phrase``: words the user typed, half-remembered (other order, other word forms);
* ``prose``: a natural description of what happened in the session;
* ``typo``: a query with a misspelled word (the session has the correct spelling);
* ``cjk``: Chinese or Japanese;
* ``path``: a file path, or its last part;
* ``error``: an error / stack-trace line the user pasted into a prompt;
* ``title``: words from the session's title only (Claude custom/ai title, Codex thread name);
* ``summary``: words only in a compaction summary;
* ``repeated-topic``: a specific query among several sessions about the same topic.
"""

from __future__ import annotations

import json

from corpus import sid

_Q = [
    # identifier
    ("identifier", "getUserById", "id-getuserbyid"),
    ("identifier", "resolve_dirs", "id-resolve-dirs"),
    ("identifier", "bd-q3fy", "id-bd-q3fy"),
    ("identifier", "HTTPServerError", "id-httpservererror"),
    ("identifier", "parseDurationMs", "id-parsedurationms"),
    ("identifier", "TokenRefreshScheduler", "id-tokenrefreshscheduler"),
    ("identifier", "useInfiniteScroll", "id-useinfinitescroll"),
    ("identifier", "MAX_POOL_OVERFLOW", "id-max-pool-overflow"),
    ("identifier", "reconcile_ledger_entries", "id-reconcile-ledger"),
    ("identifier", "fetchInvoices", "id-fetchinvoices"),  # a prefix of fetchInvoicesForAccount
    ("identifier", "reconcile ledger entries", "id-reconcile-ledger"),  # the parts, spaced
    ("identifier", "resolve dirs", "id-resolve-dirs"),
    # path
    ("path", "src/auth/token-store.ts", "path-token-store"),
    ("path", "token-store.ts", "path-token-store"),
    ("path", "token store", "path-token-store"),
    ("path", "internal/scheduler/cron.go", "path-cron-go"),
    ("path", "crates/indexer/src/lib.rs", "path-lib-rs"),
    ("path", "nvim/lua/plugins/lsp.lua", "path-nvim-lsp"),
    ("path", "docker/compose.override.yml", "path-compose-override"),
    ("path", "0042_add_tenant_id.sql", "path-migration-0042"),
    ("path", ".github/workflows/release.yml", "path-release-yml"),
    ("path", "app/models/invoice.rb", "path-invoice-rb"),
    # error
    ("error", "KeyError: 'tenant_id'", "err-keyerror-tenant"),
    ("error", "TypeError: Cannot read properties of undefined (reading 'organizationId')", "err-js-orgid"),
    ("error", "panic: assignment to entry in nil map", "err-go-nilmap"),
    ("error", "thread 'main' panicked at src/config.rs:42:10", "err-rust-unwrap"),
    ("error", "error[E0502]: cannot borrow `self.buffer` as mutable", "err-e0502"),
    ("error", "DeadlockDetected: deadlock detected", "err-pg-deadlock"),
    ("error", "QueuePool limit of size 5 overflow 10 reached", "err-queuepool"),
    ("error", "Error: listen EADDRINUSE: address already in use :::5173", "err-eaddrinuse"),
    ("error", "java.lang.OutOfMemoryError: Metaspace", "err-oom-metaspace"),
    ("error", "--- FAIL: TestRateLimiter/burst_refill", "err-go-test-fail"),
    # cjk
    ("cjk", "数据库连接池", "cjk-pool"),
    ("cjk", "连接池耗尽", "cjk-pool"),  # typed: 连接池经常耗尽
    ("cjk", "logrotate 没有生效", "cjk-logrotate"),
    ("cjk", "每到月底就失败", "cjk-monthend"),
    ("cjk", "部署回滚 数据库迁移", "cjk-rollback"),
    ("cjk", "缓存击穿", "cjk-redis"),
    ("cjk", "日付のフォーマット", "cjk-date-format"),
    ("cjk", "Excel 文字化け", "cjk-mojibake"),
    ("cjk", "ワーカー メモリリーク", "cjk-memleak"),
    ("cjk", "メモリリークの原因", "cjk-memleak"),
    ("cjk", "キャッシュの無効化", "cjk-cache"),
    ("cjk", "テストが不安定", "cjk-flaky-jp"),
    # title
    ("title", "invoice pdf gremlins", "title-pdf"),
    ("title", "plugin loader sandbox escape", "title-sandbox"),
    ("title", "quarterly tax export", "title-tax"),
    ("title", "hermes relay cutover", "title-hermes"),
    ("title", "snowplow release train", "title-snowplow"),
    ("title", "presigned url expiry", "title-presigned"),
    ("title", "bisect latency regression", "title-bisect"),
    ("title", "onboarding doc contractors", "title-onboarding"),
    ("title", "kafka consumer lag", "title-kafka"),
    # summary
    ("summary", "idempotency keys ledger double-posting", "sum-idempotency"),
    ("summary", "launchdarkly flags.yaml", "sum-launchdarkly"),
    ("summary", "websocket heartbeat proxy_read_timeout", "sum-websocket"),
    ("summary", "buf generate vendored protobuf", "sum-buf"),
    ("summary", "terraform state lock dynamodb", "sum-tfstate"),
    ("summary", "base64url pagination cursor", "sum-cursor"),
    ("summary", "CVE-2024-5535", "sum-cve"),
    ("summary", "gdpr account deletion", "sum-gdpr"),
    # repeated-topic
    ("repeated-topic", "postgres migration not null default lock orders", "pg-notnull"),
    ("repeated-topic", "migration create index concurrently alembic", "pg-concurrently"),
    ("repeated-topic", "postgres pg_upgrade postgis", "pg-upgrade"),
    ("repeated-topic", "down migration enum view", "pg-enum"),
    ("repeated-topic", "flaky test midnight utc", "fl-timezone"),
    ("repeated-topic", "flaky test jest port", "fl-ports"),
    ("repeated-topic", "flaky test goroutine leak", "fl-goleak"),
    ("repeated-topic", "flaky playwright checkout", "fl-playwright"),
    ("repeated-topic", "cron runs twice replicas", "cr-twice"),
    ("repeated-topic", "cron daylight saving", "cr-dst"),
    ("repeated-topic", "crontab PATH /usr/local/bin", "cr-path"),
    ("repeated-topic", "docker build npm ci cache", "db-cache"),
    ("repeated-topic", "docker build exec format error", "db-arm64"),
    ("repeated-topic", "docker build npm token secret", "db-secret"),
    # phrase (what the user typed is in targets.py; these are recalled with other word forms)
    ("phrase", "sidebar flickering when resizing in safari", "ph-sidebar"),
    ("phrase", "retry should give up after 5 attempts", "ph-retry"),
    ("phrase", "staging bucket is public anyone can list every file", "ph-bucket"),
    ("phrase", "rename acct variables to account", "ph-rename-acct"),
    ("phrase", "search box loses focus when results refresh", "ph-focus"),
    ("phrase", "dedupe contacts csv by email", "ph-dedupe"),
    ("phrase", "upload progress bar jumps back to 0", "ph-progress"),
    ("phrase", "webhook signature check uses the wrong secret", "ph-webhook-secret"),
    ("phrase", "eslint complaining about unused imports in generated code", "ph-lint"),
    # prose (a description in the searcher's words, sharing only some with the session)
    ("prose", "the thumbnail worker that kept eating memory overnight", "pr-thumbnail"),
    ("prose", "throttling requests per api key", "pr-ratelimit"),
    ("prose", "switching our bundler from webpack to vite", "pr-vite"),
    ("prose", "remember the user's light or dark theme preference", "pr-darkmode"),
    ("prose", "mail ending up in gmail spam after the dns move", "pr-spf"),
    ("prose", "pulling the users code out of the monolith into a separate service", "pr-split-service"),
    ("prose", "ci should not need a config file, read settings from env vars", "pr-cli-env"),
    ("prose", "shrinking the nightly backups with better compression", "pr-zstd"),
    ("prose", "route loaders broken after upgrading react router", "pr-router"),
    # typo
    ("typo", "postgress pg_upgrade postgis", "pg-upgrade"),
    ("typo", "kubernetes cronjob concurency policy", "cr-twice"),
    ("typo", "sidebar flickers safarri", "ph-sidebar"),
    ("typo", "webhook signiture wrong secret", "ph-webhook-secret"),
    ("typo", "thumbnail worker memroy", "pr-thumbnail"),
    ("typo", "docker biuld exec format error", "db-arm64"),
    ("typo", "flakey playwright checkout", "fl-playwright"),
    ("typo", "HTTPServerEror retry", "id-httpservererror"),
    ("typo", "dedupes contacts csv by emial", "ph-dedupe"),
    ("typo", "useInfinteScroll", "id-useinfinitescroll"),
]

_SLUG = {"repeated-topic": "rt"}
QUERIES: list[dict] = []
for _n, (_type, _query, _key) in enumerate(_Q):
    _keys = [_key] if isinstance(_key, str) else list(_key)
    QUERIES.append({"id": f"{_SLUG.get(_type, _type)}-{sum(q['type'] == _type for q in QUERIES) + 1:02d}",
                    "query": _query, "type": _type, "expect": [sid(k) for k in _keys], "expect_keys": _keys})

TYPES = list(dict.fromkeys(q["type"] for q in QUERIES))

if __name__ == "__main__":
    print(json.dumps(QUERIES, indent=1, ensure_ascii=False))
