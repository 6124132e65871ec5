"""The real-transcript corpus: where it is, how crabsearch is pointed at it, and what each session
says (for the BM25 baseline and the label checks).

The transcripts are **not** in this repository: they are read at run time from the shared corpus
(``../shared/corpus`` next to the repository, or ``--corpus DIR``, or ``$CRABSEARCH_REAL_CORPUS``),
whose ``real/SOURCES.md`` records each file's repository, commit and licence (MIT or Apache-2.0).
Used here:

* ``real/``: every session of every agent kept there (Claude Code, Codex CLI, Aider, SpecStory);
* ``claude/d-kimuson_real_*.jsonl``: two real captured Claude Code sessions of
  ``d-kimuson/claude-code-viewer`` (listed in ``../shared/corpus/SOURCES.md``); one of them is the
  only real session with Japanese text, which the ``cjk`` queries need.

Nothing is copied: crabsearch reads the corpus through its ``[sources]`` extra directories; the
two loose Claude Code files are symlinked into a ``projects/<slug>/`` layout in a temporary
directory (the layout Claude Code uses), and nothing is ever written into the corpus.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from baseline import fold, tokens  # noqa: F401  (words as the labels and the baseline count them)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT.parent / "shared" / "corpus"
ENV_VAR = "CRABSEARCH_REAL_CORPUS"
LOOSE_CLAUDE = {  # file in <corpus>/claude -> session id (its file name in ~/.claude/projects/<slug>/)
    "d-kimuson_real_v1.0.98_1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
    "d-kimuson_real_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
}


def grams(seq: list[str], n: int) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive items of ``seq`` (the labelling rules' "words in a row")."""
    return {tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)}


def locate(arg: str | None = None) -> Path | None:
    """The shared corpus directory (``arg``, else ``$CRABSEARCH_REAL_CORPUS``, else
    ``../shared/corpus``), or None when it has no ``real/SOURCES.md``."""
    path = Path(arg or os.environ.get(ENV_VAR) or DEFAULT).expanduser()
    return path if (path / "real" / "SOURCES.md").is_file() else None


def extra_dirs(corpus: Path, work: Path) -> dict[str, list[str]]:
    """Config ``[sources]`` directories that point crabsearch at the corpus: ``{agent: [dir]}``.
    Each ``real/<agent>/<owner>__<repo>/`` is laid out like that agent's own directory; the loose
    Claude Code files are symlinked under ``work/claude/projects/sample-project/``."""
    real = corpus / "real"
    out = {agent: sorted(str(d) for d in (real / agent).iterdir() if d.is_dir())
           for agent in ("claude", "codex", "aider", "specstory") if (real / agent).is_dir()}
    loose = work / "claude" / "projects" / "sample-project"
    loose.mkdir(parents=True, exist_ok=True)
    for name, sid in LOOSE_CLAUDE.items():
        src = corpus / "claude" / name
        if src.is_file():
            link = loose / f"{sid}.jsonl"
            if not link.exists():
                link.symlink_to(src)
    out.setdefault("claude", []).append(str(work / "claude"))
    return out


@dataclass
class SessionText:
    """What one session says, as crabsearch reads it: ``user`` and ``assistant`` are the texts of
    the messages that crabsearch indexes in those roles (assistant text of acting turns included;
    thinking, tool calls and tool output left out), in order; ``title`` is the session's title;
    ``tools`` the names of the tools its calls and results name, in order (what crabsearch puts in
    the ``tool`` field; the hard set's ``tool_action`` rule needs a session that called one)."""

    session_id: str
    agent: str
    title: str
    user: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    updated: float = 0.0
    tools: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        """Every indexed user and assistant text."""
        return self.user + self.assistant


def label_id(session) -> str:
    """The id that the labels name ``session`` by (a crabsearch ``Session``): its session id,
    except for Aider, whose ids hash the history file's absolute path (``sources/aider.py``) and so
    change with where the corpus lies; an Aider session is named ``<header time>@<repo dir>``
    (e.g. ``20250602-142921@Aquaticat__Monochromatic``)."""
    if session.agent != "aider":
        return session.session_id
    stamp = session.session_id.rsplit("-", 1)[0]
    return f"{stamp}@{os.path.basename(session.project or '')}"


def read_sessions(corpus: Path, work: Path) -> list[SessionText]:
    """Every session of the corpus, read with crabsearch's own sources (the same messages its
    index gets: ``index.documents.index_text_fields``), empty sessions left out."""
    from crabsearch.index.documents import acting_flags, index_text_fields  # noqa: PLC0415
    from crabsearch.index.writer import Indexer  # noqa: PLC0415

    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    indexer = Indexer(work / "unused-index", env={"HOME": str(home)}, extra_dirs=extra_dirs(corpus, work))
    out = []
    for src, path in indexer.discover():
        read = src.read(Path(path))
        s = read.session
        st = SessionText(label_id(s), s.agent, s.title or "",
                         updated=s.updated.timestamp() if s.updated else 0.0)
        for m, acting in zip(read.messages, acting_flags(read.messages)):
            fields = index_text_fields(m, acting=acting)
            for name in ("user",):
                if fields.get(name):
                    st.user.append(fields[name])
            for name in ("assistant", "acting"):
                if fields.get(name):
                    st.assistant.append(fields[name])
            if fields.get("tool"):
                st.tools.append(fields["tool"])
        if st.messages or st.title:
            out.append(st)
    return out
