#!/usr/bin/env python3
"""Deterministic generator of realistic Claude Code and Codex CLI transcript trees (benchmarks).

    python bench/gen.py OUT_HOME --mb 100 [--seed 1]
        Claude Code sessions  OUT_HOME/.claude/projects/<slug>/<uuid>.jsonl
        Codex CLI rollouts    OUT_HOME/.codex/sessions/YYYY/MM/DD/rollout-<stamp>-<uuid>.jsonl
        totalling about 100 MB, plus OUT_HOME/bench-corpus.json (statistics and query words).

    python bench/gen.py OUT_HOME --single-mb 200 [--seed 1]
        ONE Claude Code session of about 200 MB (most bytes in tool results); a user message among
        its last ~50 messages contains the marker word ``zyzzyvaendmarker``.

What the corpus looks like (the same seed gives byte-identical files):

* sessions of 5 to 3,000 messages (log-normal, median ~60), about 2/3 Claude Code, 1/3 Codex;
* message lengths long-tailed (log-normal); prose from a 20,000-word vocabulary with Zipf(1.05)
  weights, sprinkled with identifiers (``getUserById``, ``resolve_dirs``,
  ``src/auth/token-store.ts``, ...), code blocks and pasted stack traces;
* 80-95 % of the bytes are tool output (file reads, shell/test/build logs, grep hits, minified
  JSON, diffs), including Claude's ``toolUseResult`` duplicate of the output;
* some sessions in Chinese (CJK, no spaces), a few base64 image blocks (user pastes),
  thinking blocks, Codex reasoning with ``encrypted_content``, titles;
* long Claude sessions are compacted (a ``system`` ``compact_boundary`` line, then a ``user`` line
  with ``isCompactSummary: true``), long Codex sessions get ``compacted`` lines.

The words the benchmark queries for are planted or known by rank; they are listed in
``bench-corpus.json`` under ``queries``.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import math
import os
import random
import sys
import time
import uuid as _uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

try:
    import orjson

    def dumps(obj) -> bytes:
        return orjson.dumps(obj) + b"\n"
except ImportError:  # pragma: no cover
    def dumps(obj) -> bytes:
        return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

MB = 1_000_000
END_MARKER = "zyzzyvaendmarker"
SMALL_MARKER = "zyzzyvasmallmarker"
LONGLINE_MARKER = "zyzzyvalonglinemarker"
RARE_WORD = "quillonbrack"          # planted in the first prompt of sessions 3, 17, 41, 97, 211
RARE_SESSIONS = (3, 17, 41, 97, 211)
CJK_PHRASE = "连接池超时"             # planted as its own clause (one token for a \w+ tokenizer)
CJK_SUBWORD = "数据库"                # occurs only inside longer CJK runs
FIXED_IDENTIFIERS = ["getUserById", "resolve_dirs", "src/auth/token-store.ts", "TokenStore",
                     "refreshAccessToken", "parse_config", "src/lib/http-client.ts", "UserRepository"]
T_BASE = datetime(2025, 6, 2, 8, 0, 0, tzinfo=timezone.utc)

# ---------------------------------------------------------------------------------------------
# vocabulary

FUNCTION_WORDS = """the to a and of is in it that this for we i you be on with not are can
as if but so have was at by from or do it's will an there what all my just should now then
here when they one which would use also need let me more no out up get about how see like
it's some only make into than other because don't into been our any has its first new same
where want why need still check run look way these over after back before again well try""".split()

CONTENT_WORDS = """file test error function code change fix update build config value type
data user server request response token session index search query result list string number
call return module import package version path directory line output input message log issue
problem case option default field method class object array key name time date load save read
write open close start stop send receive parse format handle create delete remove add set
cache memory disk network connection database table column row schema migration commit branch
merge deploy release environment variable secret password auth login logout permission role
admin client api endpoint route handler middleware service worker queue job task thread process
lock timeout retry backoff limit rate page offset cursor scroll render view component state
props hook effect context store reducer action event listener callback promise async await
loop iterate map filter reduce sort order group count sum average metric trace span debug
warning failure success status code header body payload json yaml toml csv html css script
shell command terminal prompt argument flag help usage docs readme changelog license issue
review comment approve reject feature bug regression performance benchmark profile latency
throughput memory leak crash panic exception stack frame line column character byte buffer
stream pipe socket port host domain certificate proxy gateway cluster node pod container image
volume mount docker kubernetes helm terraform ansible nginx postgres redis kafka sqlite mongo
python rust typescript javascript golang java kotlin swift ruby react vue svelte django flask
fastapi express nextjs webpack vite eslint prettier pytest jest cargo npm pip poetry venv
refresh authentication authorization validation serialization deserialization encoding
decoding compression encryption signature hash checksum random seed fixture mock stub spy
snapshot coverage lint format typecheck compile link bundle minify transpile polyfill
dependency upgrade downgrade pin lockfile workspace monorepo submodule rebase squash cherry
conflict resolve revert reset stash tag remote origin upstream fork pull push fetch clone
endpoint pagination webhook cron schedule interval debounce throttle idempotent atomic
transaction rollback isolation deadlock replica shard partition consistency availability
""".split()


def _zipf_cum(n: int, s: float = 1.05) -> list[float]:
    return list(itertools.accumulate(1.0 / (k ** s) for k in range(1, n + 1)))


def _synthetic_words(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    onset = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr sk sl st tr th sh ch".split()
    vowel = "a e i o u ai ea ee oa ou io".split()
    coda = "n r l s t x m k nd rt st ng ck".split() + [""] * 4
    out: list[str] = []
    while len(out) < n:
        w = "".join(rng.choice(onset) + rng.choice(vowel) for _ in range(rng.choice((1, 2, 2, 3))))
        w += rng.choice(coda)
        if len(w) >= 4 and w not in taken:
            taken.add(w)
            out.append(w)
    return out


CJK_WORDS = """数据库 连接 请求 用户 错误 问题 修复 测试 文件 配置 服务器 接口 函数 变量 缓存 内存
日志 性能 索引 查询 结果 会话 令牌 认证 权限 部署 版本 依赖 构建 编译 代码 提交 分支 合并 迁移
超时 重试 队列 线程 进程 异步 回调 参数 返回 字符串 数组 对象 类型 模块 组件 页面 渲染 状态
请 帮我 看一下 为什么 这个 那个 已经 还是 没有 可以 需要 应该 现在 然后 因为 所以 但是 如果
我们 一下 一直 总是 突然 大概 所有 每次 第一次 这里 那里 怎么 如何 报错 失败 成功 正常 异常
""".split()


class Vocab:
    """Words (Zipf weights), identifiers (Zipf weights), CJK words, and pools of tool-output lines."""

    def __init__(self, rng: random.Random, size: int = 20_000):
        self.rng = rng
        base = list(dict.fromkeys(FUNCTION_WORDS + CONTENT_WORDS))
        taken = set(base) | {RARE_WORD, END_MARKER, SMALL_MARKER, LONGLINE_MARKER}
        self.words = base + _synthetic_words(rng, size - len(base), taken)
        self.cum = _zipf_cum(len(self.words))
        self.idents = FIXED_IDENTIFIERS + self._make_identifiers(3000)
        # fixed identifiers get ranks 3, 5, 7, ... so they are frequent but not top
        for i, ident in enumerate(FIXED_IDENTIFIERS):
            self.idents.remove(ident)
            self.idents.insert(2 + 2 * i, ident)
        self.icum = _zipf_cum(len(self.idents), 0.9)
        self.pools = self._make_pools()

    # -- words and identifiers ------------------------------------------------------------------

    def w(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def ident(self) -> str:
        return self.rng.choices(self.idents, cum_weights=self.icum)[0]

    def _make_identifiers(self, n: int) -> list[str]:
        rng = self.rng
        verbs = "get set fetch load save parse build resolve create update delete find list make " \
                "handle validate render compute normalize encode decode refresh ensure read write".split()
        nouns = "user token session config dirs path file cache index query result item order " \
                "account record entry message client request response schema route store page " \
                "node tree graph event queue job worker stream buffer key value".split()
        dirs = "auth lib api core utils models services components hooks server db cli tui index".split()
        exts = "ts tsx js py rs go json yaml toml md".split()
        out: list[str] = []
        seen = set(FIXED_IDENTIFIERS)
        while len(out) < n:
            kind = rng.random()
            v, a, b = rng.choice(verbs), rng.choice(nouns), rng.choice(nouns)
            if kind < 0.3:
                s = v + a.capitalize() + (("By" + b.capitalize()) if rng.random() < 0.4 else "")
            elif kind < 0.55:
                s = f"{v}_{a}" + (f"_{b}" if rng.random() < 0.4 else "")
            elif kind < 0.7:
                s = a.capitalize() + b.capitalize() + rng.choice(("", "Service", "Error", "Manager", "Props"))
            elif kind < 0.8:
                s = f"{a.upper()}_{b.upper()}"
            else:
                s = f"src/{rng.choice(dirs)}/{a}-{b}.{rng.choice(exts)}"
            if s not in seen:
                seen.add(s)
                out.append(s)
        return out

    def prose(self, n_words: int, ident_rate: float = 0.06) -> str:
        """Sentences of Zipf words with identifiers in backticks."""
        rng = self.rng
        words = self.w(n_words)
        for i in range(n_words):
            if rng.random() < ident_rate:
                words[i] = "`" + self.ident() + "`"
        out, i = [], 0
        while i < n_words:
            k = rng.randint(5, 18)
            sent = words[i:i + k]
            sent[0] = sent[0][:1].upper() + sent[0][1:]
            out.append(" ".join(sent) + rng.choice(".....?:"))
            i += k
        return " ".join(out)

    def cjk(self, n_words: int) -> str:
        """Chinese text (no spaces), clauses split by full-width punctuation; sometimes an
        identifier, sometimes the planted phrase as its own clause."""
        rng = self.rng
        clauses = []
        words = rng.choices(CJK_WORDS, k=n_words)
        i = 0
        while i < n_words:
            k = rng.randint(3, 8)
            c = "".join(words[i:i + k])
            if rng.random() < 0.15:
                c += " `" + self.ident() + "` "
            clauses.append(c)
            if rng.random() < 0.12:
                clauses.append(CJK_PHRASE)
            i += k
        text = ""
        for n, c in enumerate(clauses):
            text += c + ("。" if n % 3 == 2 else "，")
        return text

    # -- tool-output pools ----------------------------------------------------------------------

    def _make_pools(self) -> dict[str, list[str]]:
        rng = self.rng
        P = self.prose

        def I():
            return self.ident()

        def snake():
            return "_".join(self.w(2)).replace("'", "")

        def path():
            return rng.choice(("src", "lib", "tests", "app", "pkg")) + "/" + "/".join(
                w.replace("'", "") for w in self.w(rng.randint(1, 3))) + rng.choice((".py", ".ts", ".rs", ".go", ".tsx"))

        code_t = [
            lambda: f"import {{ {I()} }} from '{path()}';",
            lambda: f"export async function {I()}(req: Request, opts?: Options): Promise<Result> {{",
            lambda: f"  const {snake()} = await {I()}(req.{snake()}, {{ retries: {rng.randint(0, 9)} }});",
            lambda: f"  if (!{snake()}) throw new Error('{P(rng.randint(3, 9), 0)}');",
            lambda: f"  return {{ ...state, {snake()}: {rng.randint(0, 999)} }};",
            lambda: "}",
            lambda: "",
            lambda: f"def {snake()}(self, {snake()}, {snake()}=None):",
            lambda: f"    \"\"\"{P(rng.randint(4, 14), 0)}\"\"\"",
            lambda: f"    {snake()} = self.{snake()}({snake()}, timeout={rng.randint(1, 60)})",
            lambda: f"    if {snake()} is None:",
            lambda: f"        raise ValueError(f\"{P(rng.randint(3, 8), 0)}: {{key!r}}\")",
            lambda: f"    return {I()}",
            lambda: f"class {I()}(BaseModel):",
            lambda: f"    # {P(rng.randint(4, 16), 0.1)}",
            lambda: f"fn {snake()}(&mut self, {snake()}: &str) -> Result<(), Error> {{",
            lambda: f"    let {snake()} = self.{snake()}.get(&key).ok_or(Error::NotFound)?;",
            lambda: f"func ({snake()[:1]} *Server) {I()}(ctx context.Context) error {{",
            lambda: f"  // TODO: {P(rng.randint(3, 12), 0.1)}",
        ]
        ts = lambda: f"2026-0{rng.randint(1, 3)}-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(100, 999)}Z"
        log_t = [
            lambda: f"{ts()} INFO  [{rng.choice(('api', 'worker-3', 'scheduler', 'db'))}] {P(rng.randint(4, 16), 0.1)}",
            lambda: f"{ts()} DEBUG [{rng.choice(('http', 'cache', 'auth'))}] {I()} took {rng.randint(1, 900)}ms",
            lambda: f"{ts()} WARN  [{rng.choice(('api', 'pool'))}] {P(rng.randint(4, 10), 0.1)} ({I()})",
            lambda: f"{ts()} ERROR [{rng.choice(('api', 'worker-1'))}] {P(rng.randint(4, 10), 0)}: ConnectionResetError",
            lambda: f"tests/{path()}::test_{snake()} PASSED{' ' * rng.randint(1, 20)}[ {rng.randint(1, 100)}%]",
            lambda: f"FAILED tests/{path()}::test_{snake()} - AssertionError: {P(rng.randint(3, 9), 0)}",
            lambda: f"  ✓ {P(rng.randint(3, 9), 0)} ({rng.randint(1, 400)} ms)",
            lambda: f"   Compiling {snake().replace('_', '-')} v0.{rng.randint(1, 30)}.{rng.randint(0, 9)}",
            lambda: f"{path()}:{rng.randint(1, 900)}:{rng.randint(1, 80)} - error TS2345: Argument of type '{I()}' is not assignable to parameter of type '{I()}'.",
            lambda: f"npm warn deprecated {snake().replace('_', '-')}@{rng.randint(1, 9)}.{rng.randint(0, 20)}.0: {P(rng.randint(3, 8), 0)}",
            lambda: f"-rw-r--r--  1 dev dev {rng.randint(100, 99999):>6} Mar {rng.randint(1, 28):>2} 10:{rng.randint(10, 59)} {path()}",
        ]
        trace_t = [
            lambda: "Traceback (most recent call last):\n" + "".join(
                f"  File \"/home/dev/app/{path()}\", line {rng.randint(1, 800)}, in {snake()}\n    {snake()} = {I()}({snake()})\n"
                for _ in range(rng.randint(2, 9))) + f"KeyError: '{snake()}'",
            lambda: f"TypeError: Cannot read properties of undefined (reading '{snake()}')\n" + "\n".join(
                f"    at {I()} ({path()}:{rng.randint(1, 500)}:{rng.randint(1, 80)})" for _ in range(rng.randint(3, 12))),
            lambda: f"thread 'main' panicked at src/{snake()}.rs:{rng.randint(1, 400)}:{rng.randint(1, 60)}:\ncalled `Result::unwrap()` on an `Err` value: {I()}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ]
        grep_t = [lambda: f"{path()}:{rng.randint(1, 2000)}:{rng.choice(code_t)()}"]
        diff_t = [
            lambda: f"@@ -{rng.randint(1, 500)},{rng.randint(3, 20)} +{rng.randint(1, 500)},{rng.randint(3, 20)} @@ {I()}",
            lambda: "-" + rng.choice(code_t)(),
            lambda: "+" + rng.choice(code_t)(),
            lambda: " " + rng.choice(code_t)(),
            lambda: " " + rng.choice(code_t)(),
        ]
        pools = {
            "code": [rng.choice(code_t)() for _ in range(4000)],
            "log": [rng.choice(log_t)() for _ in range(4000)],
            "trace": [rng.choice(trace_t)() for _ in range(300)],
            "grep": [grep_t[0]() for _ in range(2000)],
            "diff": [rng.choice(diff_t)() for _ in range(2000)],
            "json": [json.dumps({"id": rng.randint(1, 10 ** 6), "name": I(), "status": rng.choice(("open", "closed", "merged")),
                                 "title": P(rng.randint(3, 10), 0.1), "labels": self.w(rng.randint(0, 4)),
                                 "updated_at": ts()}, ensure_ascii=False, separators=(",", ":")) for _ in range(1500)],
        }
        self.avg = {k: sum(map(len, v)) / len(v) + 1 for k, v in pools.items()}
        return pools

    def lines(self, pool: str, target: int) -> list[str]:
        n = max(1, int(target / self.avg[pool]))
        return self.rng.choices(self.pools[pool], k=n)

    def tool_output(self, kind: str, target: int) -> str:
        """A tool output of about ``target`` characters."""
        rng = self.rng
        if kind == "read":
            start = rng.randint(1, 50)
            return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(self.lines("code", target * 0.9), start))
        if kind == "grep":
            return "\n".join(self.lines("grep", target))
        if kind == "diff":
            return "\n".join(self.lines("diff", target))
        if kind == "json":  # minified: one long line
            return "[" + ",".join(self.lines("json", target)) + "]"
        out = self.lines("log", target)
        if rng.random() < 0.25:
            out.insert(rng.randint(0, len(out)), rng.choice(self.pools["trace"]))
        return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# sessions


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def lognorm_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))


TOOLS = [("Bash", "log", 0.38), ("Read", "read", 0.30), ("Grep", "grep", 0.10), ("Edit", "diff", 0.10),
         ("mcp__github__list_issues", "json", 0.04), ("Glob", "grep", 0.04), ("TodoWrite", "log", 0.04)]
_TOOL_CUM = list(itertools.accumulate(t[2] for t in TOOLS))


class Stats:
    def __init__(self):
        self.files = self.lines = self.messages = self.bytes = self.tool_bytes = 0
        self.images = self.compactions = 0
        self.by_agent: dict[str, dict[str, int]] = {}

    def add(self, agent: str, s: "Stats") -> None:
        for k in ("files", "lines", "messages", "bytes", "tool_bytes", "images", "compactions"):
            setattr(self, k, getattr(self, k) + getattr(s, k))
        a = self.by_agent.setdefault(agent, {"files": 0, "messages": 0, "bytes": 0})
        a["files"] += s.files
        a["messages"] += s.messages
        a["bytes"] += s.bytes


class Writer:
    """Buffered line writer that counts bytes."""

    def __init__(self, path: Path, stats: Stats):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "wb")
        self.buf: list[bytes] = []
        self.size = 0
        self.stats = stats

    def line(self, obj: dict, messages: int = 0, tool: bool = False) -> None:
        """Write one line; ``tool`` marks a line that carries a tool result (its bytes count as
        tool output)."""
        b = dumps(obj)
        self.buf.append(b)
        self.size += len(b)
        self.stats.lines += 1
        self.stats.messages += messages
        if tool:
            self.stats.tool_bytes += len(b)
        if len(self.buf) >= 256:
            self.flush()

    def flush(self) -> None:
        self.f.write(b"".join(self.buf))
        self.buf.clear()

    def close(self) -> None:
        self.flush()
        self.f.close()
        self.stats.bytes += self.size
        self.stats.files += 1


class Gen:
    """Session writers over one seeded RNG."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.v = Vocab(self.rng)
        projects = "webapp api billing infra mobile crabsearch dotfiles ml-pipeline docs gateway " \
                   "scheduler etl frontend backend cli sdk notebooks payments search auth-service".split()
        self.projects = [f"/home/dev/{p}" for p in projects]

    def uuid4(self) -> str:
        return str(_uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def image_b64(self, lo: int = 20_000, hi: int = 300_000) -> str:
        return base64.b64encode(self.rng.randbytes(self.rng.randint(lo, hi) * 3 // 4)).decode("ascii")

    # -- prose ------------------------------------------------------------------------------------

    def user_prompt(self, cjk: bool, extra: str = "") -> str:
        rng, v = self.rng, self.v
        n = lognorm_int(rng, 28, 1.0, 3, 1500)
        text = v.cjk(n) if cjk else v.prose(n)
        r = rng.random()
        if r < 0.10:
            text += "\n\n```\n" + rng.choice(v.pools["trace"]) + "\n```"
        elif r < 0.16:
            text += "\n\n```\n" + "\n".join(v.lines("code", rng.randint(200, 2500))) + "\n```"
        return (text + " " + extra).strip() if extra else text

    def assistant_text(self, cjk: bool, median: int = 60) -> str:
        rng, v = self.rng, self.v
        n = lognorm_int(rng, median, 1.1, 3, 4000)
        paras = []
        while n > 0:
            k = min(n, rng.randint(15, 90))
            paras.append(v.cjk(k) if cjk and rng.random() < 0.7 else v.prose(k))
            n -= k
            if rng.random() < 0.2:
                lang = rng.choice(("python", "ts", "rust", "bash", ""))
                paras.append(f"```{lang}\n" + "\n".join(v.lines("code", rng.randint(100, 1500))) + "\n```")
            elif rng.random() < 0.15:
                paras.append("\n".join(f"- {v.prose(rng.randint(4, 14))}" for _ in range(rng.randint(2, 6))))
        return "\n\n".join(paras)

    def tool_call(self, name: str, cwd: str) -> dict:
        rng, v = self.rng, self.v
        if name == "Bash":
            cmd = rng.choice(("npm test", "pytest -q", "cargo build", "git status", "make lint",
                              f"rg -n {v.ident()}", "ls -la", f"python -m {v.w(1)[0]}"))
            return {"command": cmd, "description": v.prose(rng.randint(3, 8), 0)}
        if name in ("Read", "Edit"):
            d = {"file_path": f"{cwd}/{v.ident() if rng.random() < 0.5 else 'src/main.py'}"}
            if name == "Edit":
                d["old_string"] = "\n".join(v.lines("code", rng.randint(40, 600)))
                d["new_string"] = "\n".join(v.lines("code", rng.randint(40, 600)))
            return d
        if name in ("Grep", "Glob"):
            return {"pattern": v.ident(), "path": cwd}
        if name == "TodoWrite":
            return {"todos": [{"content": v.prose(rng.randint(3, 9), 0.2), "status": rng.choice(("pending", "completed")),
                               "activeForm": v.prose(3, 0)} for _ in range(rng.randint(1, 5))]}
        return {"owner": "dev", "repo": v.w(1)[0], "state": "open"}

    # -- Claude Code --------------------------------------------------------------------------------

    def claude_session(self, home: Path, stats: Stats, n_target: int, *, cwd: str, start: datetime,
                       cjk: bool = False, rare: bool = False, tool_median: int = 3000,
                       tool_sigma: float = 1.5, tool_cap: int = 300_000, target_bytes: int | None = None,
                       marker: str | None = None, title: str | None = None) -> tuple[Path, str]:
        """Write one Claude Code session; returns (path, session id). With ``target_bytes`` the
        session grows until that size, then ends with ~50 messages, a user message among them
        carrying ``marker``."""
        rng, v = self.rng, self.v
        sid = self.uuid4()
        slug = "".join(c if c.isalnum() else "-" for c in cwd)
        path = home / ".claude" / "projects" / slug / f"{sid}.jsonl"
        w = Writer(path, stats)
        t = start
        parent = None
        branch = rng.choice(("main", "main", "dev", f"feat/{v.w(1)[0]}", ""))
        version = rng.choice(("1.0.98", "2.0.14", "2.1.3"))

        def base(kind: str) -> dict:
            nonlocal t, parent
            t += timedelta(seconds=rng.randint(1, 90))
            uid = self.uuid4()
            d = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                 "sessionId": sid, "version": version, "gitBranch": branch, "type": kind,
                 "uuid": uid, "timestamp": _ts(t)}
            parent = uid
            return d

        def assistant_line(mid: str, block: dict, msgs: int = 1) -> None:
            d = base("assistant")
            d["message"] = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                            "content": [block], "stop_reason": None, "stop_sequence": None,
                            "usage": {"input_tokens": rng.randint(1, 9), "cache_creation_input_tokens": rng.randint(0, 5000),
                                      "cache_read_input_tokens": rng.randint(1000, 150000), "output_tokens": rng.randint(1, 900),
                                      "service_tier": "standard"}}
            d["requestId"] = f"req_{rng.getrandbits(64):016x}"
            w.line(d, msgs)

        def user_line(text: str, image: bool = False) -> None:
            d = base("user")
            if image:
                d["message"] = {"role": "user", "content": [
                    {"type": "text", "text": text},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": self.image_b64()}}]}
                stats.images += 1
            else:
                d["message"] = {"role": "user", "content": text}
            w.line(d, 1)

        def tool_cycle(mid: str) -> None:
            name, kind, _ = rng.choices(TOOLS, cum_weights=_TOOL_CUM)[0]
            tid = f"toolu_01{rng.getrandbits(80):020x}"
            assistant_line(mid, {"type": "tool_use", "id": tid, "name": name, "input": self.tool_call(name, cwd)})
            out = v.tool_output(kind, lognorm_int(rng, tool_median, tool_sigma, 20, tool_cap))
            d = base("user")
            d["message"] = {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": out,
                                                          "is_error": rng.random() < 0.05}]}
            if name == "Bash":
                d["toolUseResult"] = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            elif name == "Read":
                d["toolUseResult"] = {"type": "text", "file": {"filePath": f"{cwd}/src/main.py", "content": out,
                                                               "numLines": out.count("\n") + 1, "startLine": 1,
                                                               "totalLines": out.count("\n") + 1}}
            w.line(d, 1, tool=True)

        def compaction() -> None:
            nonlocal parent
            t_ = parent
            parent = None
            d = base("system")
            d.update(subtype="compact_boundary", content="Conversation compacted", isMeta=False, level="info",
                     logicalParentUuid=t_, compactMetadata={"trigger": rng.choice(("auto", "manual")),
                                                            "preTokens": rng.randint(120000, 170000)})
            w.line(d, 1)
            d = base("user")
            summary = ("This session is being continued from a previous conversation that ran out of context. "
                       "The conversation is summarized below:\n" + self.assistant_text(cjk, 400))
            d["message"] = {"role": "user", "content": summary}
            d["isCompactSummary"] = True
            d["isVisibleInTranscriptOnly"] = True
            w.line(d, 1)
            stats.compactions += 1

        if rng.random() < 0.3:
            w.line({"type": "file-history-snapshot", "messageId": self.uuid4(),
                    "snapshot": {"messageId": self.uuid4(), "trackedFileBackups": {}, "timestamp": _ts(t)},
                    "isSnapshotUpdate": False})
        msgs0 = stats.messages
        next_compact = rng.randint(350, 900)
        first = True

        def done() -> bool:
            if target_bytes is not None:
                return w.size >= target_bytes
            return stats.messages - msgs0 >= n_target

        while not done():
            user_line(self.user_prompt(cjk, RARE_WORD if (rare and first) else ""),
                      image=rng.random() < 0.008)
            first = False
            mid = f"msg_01{rng.getrandbits(80):020x}"
            if rng.random() < 0.35:
                assistant_line(mid, {"type": "thinking", "thinking": v.prose(lognorm_int(rng, 50, 1.0, 5, 2000), 0.05),
                                     "signature": base64.b64encode(rng.randbytes(240)).decode()})
            for _ in range(lognorm_int(rng, 3, 0.9, 0, 40)):
                if rng.random() < 0.35:
                    assistant_line(mid, {"type": "text", "text": self.assistant_text(cjk, 25)})
                tool_cycle(mid)
                mid = f"msg_01{rng.getrandbits(80):020x}"
                if done():
                    break
            assistant_line(mid, {"type": "text", "text": self.assistant_text(cjk)})
            if stats.messages - msgs0 >= next_compact:
                compaction()
                next_compact += rng.randint(350, 900)
        if marker:  # the tail: ~50 ordinary messages, the marker in a user message ~25 from the end
            for k in range(8):
                extra = marker if k == 4 else ""
                user_line(self.user_prompt(cjk, extra))
                mid = f"msg_01{rng.getrandbits(80):020x}"
                for _ in range(2):
                    tool_cycle(mid)
                    mid = f"msg_01{rng.getrandbits(80):020x}"
                assistant_line(mid, {"type": "text", "text": self.assistant_text(cjk)})
        if title or rng.random() < 0.3:
            w.line({"type": "custom-title" if title else "ai-title",
                    ("customTitle" if title else "aiTitle"): title or v.prose(rng.randint(3, 7), 0.2).rstrip(".?:"),
                    "sessionId": sid})
        w.close()
        ts_end = t.timestamp()
        os.utime(path, (ts_end, ts_end))
        return path, sid

    # -- Codex CLI -----------------------------------------------------------------------------------

    def codex_session(self, home: Path, stats: Stats, n_target: int, *, cwd: str, start: datetime,
                      cjk: bool = False, rare: bool = False) -> tuple[Path, str]:
        rng, v = self.rng, self.v
        sid = self.uuid4()
        path = (home / ".codex" / "sessions" / f"{start:%Y}" / f"{start:%m}" / f"{start:%d}"
                / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl")
        w = Writer(path, stats)
        t = start

        def env(kind: str, payload: dict, msgs: int = 0, tool: bool = False) -> None:
            nonlocal t
            t += timedelta(seconds=rng.randint(1, 60))
            w.line({"timestamp": _ts(t), "type": kind, "payload": payload}, msgs, tool)

        env("session_meta", {"id": sid, "timestamp": _ts(start), "cwd": cwd, "originator": "codex_cli_rs",
                             "cli_version": rng.choice(("0.39.0", "0.46.0", "0.50.0")), "source": "cli",
                             "model_provider": "openai", "instructions": None,
                             "base_instructions": {"text": "You are Codex, a coding agent. " + v.prose(600, 0)},
                             "git": {"commit_hash": f"{rng.getrandbits(160):040x}", "branch": rng.choice(("main", "dev")),
                                     "repository_url": f"git@github.com:dev/{Path(cwd).name}.git"}})
        msgs0 = stats.messages
        first = True
        n_call = 0
        next_compact = rng.randint(350, 900)
        while stats.messages - msgs0 < n_target:
            env("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex",
                                 "effort": "medium", "summary": "auto",
                                 "sandbox_policy": {"mode": "workspace-write", "network_access": False}})
            prompt = self.user_prompt(cjk, RARE_WORD if (rare and first) else "")
            first = False
            image = rng.random() < 0.006
            content = [{"type": "input_text", "text": prompt}]
            if image:
                content.append({"type": "input_image", "image_url": "data:image/png;base64," + self.image_b64()})
                stats.images += 1
            env("response_item", {"type": "message", "role": "user", "content": content})
            env("event_msg", {"type": "user_message", "message": prompt, "images": [], "kind": "plain"}, 1)
            for _ in range(lognorm_int(rng, 3, 0.9, 0, 40)):
                if rng.random() < 0.5:
                    env("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                          "text": "**" + v.prose(rng.randint(2, 6), 0).rstrip(".?:") + "**\n\n" + v.prose(lognorm_int(rng, 40, 0.8, 5, 600))}],
                                          "content": None, "encrypted_content": base64.b64encode(rng.randbytes(rng.randint(600, 3000))).decode()}, 1)
                n_call += 1
                cid = f"call_{rng.getrandbits(96):024x}"
                _, kind, _ = rng.choices(TOOLS, cum_weights=_TOOL_CUM)[0]
                cmd = rng.choice((f"rg -n {v.ident()}", "cargo test", "npm run build", "sed -n 1,200p src/main.rs",
                                  "git diff", "pytest -x -q", "ls -R"))
                env("response_item", {"type": "function_call", "name": "shell",
                                      "arguments": json.dumps({"command": ["bash", "-lc", cmd], "workdir": cwd,
                                                               "timeout_ms": 120000}), "call_id": cid}, 1)
                out = v.tool_output(kind, lognorm_int(rng, 4500, 1.4, 20, 300_000))
                if rng.random() < 0.5:
                    payload_out = json.dumps({"output": out, "metadata": {"exit_code": rng.choice((0, 0, 0, 1)),
                                                                          "duration_seconds": round(rng.random() * 9, 1)}},
                                             ensure_ascii=False)
                else:
                    payload_out = out
                env("response_item", {"type": "function_call_output", "call_id": cid, "output": payload_out}, 1, tool=True)
                env("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": rng.randint(1000, 200000),
                                                                                        "output_tokens": rng.randint(10, 9000)}},
                                  "rate_limits": None})
                if stats.messages - msgs0 >= n_target:
                    break
            text = self.assistant_text(cjk)
            env("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}, 1)
            env("event_msg", {"type": "agent_message", "message": text})
            if stats.messages - msgs0 >= next_compact:
                env("compacted", {"message": self.assistant_text(cjk, 400), "replacement_history": []}, 1)
                stats.compactions += 1
                next_compact += rng.randint(350, 900)
        w.close()
        os.utime(path, (t.timestamp(), t.timestamp()))
        return path, sid


# ---------------------------------------------------------------------------------------------
# whole trees


def write_corpus(home: Path, mb: float, seed: int = 1) -> dict:
    """Sessions of both agents until about ``mb`` MB are written; returns the statistics."""
    g = Gen(seed)
    rng = g.rng
    total = Stats()
    target = int(mb * MB)
    n = 0
    sessions = []
    while total.bytes < target:
        n += 1
        s = Stats()
        agent = "codex" if rng.random() < 0.35 else "claude"
        cjk = n == 2 or rng.random() < 0.05
        rare = n in RARE_SESSIONS
        n_msgs = lognorm_int(rng, 60, 1.3, 5, 3000)
        # cap by what is left, so a small corpus is not one giant session
        left = target - total.bytes
        n_msgs = max(5, min(n_msgs, int(left / 4500) + 5))
        start = T_BASE + timedelta(minutes=rng.randint(0, 60 * 24 * 280))
        cwd = rng.choice(g.projects)
        if agent == "claude":
            path, sid = g.claude_session(home, s, n_msgs, cwd=cwd, start=start, cjk=cjk, rare=rare)
        else:
            path, sid = g.codex_session(home, s, n_msgs, cwd=cwd, start=start, cjk=cjk, rare=rare)
        total.add(agent, s)
        sessions.append({"agent": agent, "session_id": sid, "path": str(path), "messages": s.messages, "bytes": s.bytes})
    return _meta(home, seed, total, sessions, mode="corpus")


def write_single(home: Path, mb: float, seed: int = 1, marker: str = END_MARKER) -> dict:
    """One Claude Code session of about ``mb`` MB whose last ~50 messages contain ``marker``."""
    g = Gen(seed)
    s = Stats()
    target = int(mb * MB)
    tail = min(1_000_000, target // 5)  # rough size of the ~50-message tail
    path, sid = g.claude_session(home, s, 0, cwd="/home/dev/bigrepo", start=T_BASE, tool_median=12_000,
                                 tool_sigma=1.2, tool_cap=2_000_000, target_bytes=max(1, target - tail),
                                 marker=marker, title="Very long migration session")
    total = Stats()
    total.add("claude", s)
    meta = _meta(home, seed, total, [{"agent": "claude", "session_id": sid, "path": str(path),
                                      "messages": s.messages, "bytes": s.bytes}], mode="single")
    meta["marker"] = marker
    return meta


def write_small_probe(home: Path, seed: int = 7, marker: str = SMALL_MARKER) -> dict:
    """A small Claude Code session (~100 messages) with ``marker`` in a user message near the end
    (the small-session baseline for the session-open timings)."""
    g = Gen(seed)
    s = Stats()
    path, sid = g.claude_session(home, s, 90, cwd="/home/dev/smallrepo", start=T_BASE + timedelta(days=1),
                                 marker=marker, title="Small probe session")
    return {"session_id": sid, "path": str(path), "messages": s.messages, "bytes": s.bytes, "marker": marker}


def write_longline_probe(home: Path, seed: int = 11, marker: str = LONGLINE_MARKER) -> dict:
    """A worst case for the session view: ~120 messages where every 5th tool result is ~700 kB of
    minified JSON on ONE line (an MCP/API response); ``marker`` is in the last user message."""
    g = Gen(seed)
    v, rng = g.v, g.rng
    sid = g.uuid4()
    cwd = "/home/dev/longlines"
    path = home / ".claude" / "projects" / "-home-dev-longlines" / f"{sid}.jsonl"
    s = Stats()
    w = Writer(path, s)
    t = T_BASE + timedelta(days=2)
    parent = None
    blob = "[" + ",".join(v.lines("json", 700_000)) + "]"

    def line(kind: str, message: dict, msgs: int = 1, tool: bool = False) -> None:
        nonlocal t, parent
        t += timedelta(seconds=20)
        uid = g.uuid4()
        w.line({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
                "version": "2.1.3", "gitBranch": "main", "type": kind, "uuid": uid, "timestamp": _ts(t),
                "message": message}, msgs, tool)
        parent = uid

    for i in range(30):
        line("user", {"role": "user", "content": (v.prose(20) + " " + marker) if i == 29 else v.prose(20)})
        tid = f"toolu_01{rng.getrandbits(80):020x}"
        line("assistant", {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": "claude-x",
                           "content": [{"type": "tool_use", "id": tid, "name": "mcp__github__list_issues",
                                        "input": {"repo": "x"}}]})
        out = blob if i % 5 == 4 else v.tool_output("log", 800)
        line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": out}]}, tool=True)
        line("assistant", {"id": f"msg_{i}b", "type": "message", "role": "assistant", "model": "claude-x",
                           "content": [{"type": "text", "text": v.prose(30)}]})
    w.close()
    return {"session_id": sid, "path": str(path), "messages": s.messages, "bytes": s.bytes, "marker": marker,
            "line_bytes": len(blob)}


def append_lines(path: Path, n: int, seed: int, word: str = "") -> int:
    """Append ``n`` complete lines (user, assistant, user, ...) to a Claude Code transcript,
    continuing its session; returns the bytes appended. ``word`` is put in the first line's
    text (a marker to search for)."""
    rng = random.Random(seed)
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - 4 * MB))
        tail = f.read().split(b"\n")
    last = None
    for raw in reversed(tail):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("uuid") and obj.get("sessionId"):
            last = obj
            break
    if last is None:
        raise ValueError(f"no conversation line in {path}")
    parent = last["uuid"]
    t = datetime.strptime(last["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    out = b""
    for i in range(n):
        t += timedelta(seconds=30)
        uid = str(_uuid.UUID(int=rng.getrandbits(128), version=4))
        d = {k: last.get(k) for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")}
        d.update(parentUuid=parent, uuid=uid, timestamp=_ts(t))
        if i % 2 == 0:
            d["type"] = "user"
            d["message"] = {"role": "user", "content": f"appended question {seed}-{i}: does the refresh pick "
                                                       f"this up?{' ' + word if word and i == 0 else ''}"}
        else:
            d["type"] = "assistant"
            d["message"] = {"id": f"msg_app{seed}_{i}", "type": "message", "role": "assistant", "model": "claude-x",
                            "content": [{"type": "text", "text": f"appended answer {seed}-{i}: yes it does."}]}
        parent = uid
        out += dumps(d)
    with open(path, "ab") as f:
        f.write(out)
    return len(out)


def _meta(home: Path, seed: int, total: Stats, sessions: list[dict], mode: str) -> dict:
    meta = {
        "mode": mode, "seed": seed, "home": str(home),
        "files": total.files, "lines": total.lines, "messages": total.messages, "bytes": total.bytes,
        "tool_output_bytes": total.tool_bytes,
        "tool_output_fraction": round(total.tool_bytes / total.bytes, 3) if total.bytes else 0,
        "images": total.images, "compactions": total.compactions, "by_agent": total.by_agent,
        "queries": {"common": "the", "rare": RARE_WORD, "prose2": "token refresh", "identifier": "getUserById",
                    "path": "src/auth/token-store.ts", "typo": "authentcation", "codex_filtered": "database",
                    "cjk": CJK_PHRASE, "cjk_subword": CJK_SUBWORD},
        "sessions": sessions,
    }
    (home / "bench-corpus.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), "utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("home", type=Path, help="the home directory to write (.claude, .codex)")
    ap.add_argument("--mb", type=float, default=100, help="corpus size in MB (default 100)")
    ap.add_argument("--single-mb", type=float, help="write ONE Claude session of this many MB instead")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    args.home.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.single_mb:
        meta = write_single(args.home, args.single_mb, args.seed)
    else:
        meta = write_corpus(args.home, args.mb, args.seed)
    dt = time.perf_counter() - t0
    print(f"{meta['files']} files, {meta['messages']} messages, {meta['bytes'] / MB:.1f} MB "
          f"({meta['tool_output_fraction']:.0%} tool output, {meta['images']} images, "
          f"{meta['compactions']} compactions) in {dt:.1f}s -> {args.home}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
