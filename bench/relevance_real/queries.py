"""The labelled queries on real transcripts: ``{"id", "type", "query", "expect": [session id, ...]}``.

Written from reading the sessions, before any ranking change was measured on them (issue 11),
and kept as written: a label is changed only when it breaks a labelling rule (``run.py`` checks
them), never to make a ranking pass. ``expect`` lists the session(s) a person would accept at the
top; rank 1 for any of them is top-1. Several labels list two sessions where the corpus really has
two sessions on the same thing (the same bug asked about twice, one spec written and then
implemented). ``python bench/relevance_real/queries.py`` prints them as JSON.

Types (issue 11, "A relevance set on real transcripts"):

* ``prose``: a description of the session in the searcher's own words, *not* the transcript's
  (checked: no three consecutive query words occur together in the session, and at least one
  query word occurs nowhere in it);
* ``assistant``: words the assistant said (all in one assistant message; not all in one user
  message of that session);
* ``user``: words the user said (all in one user message), in any order, not a quote;
* ``phrase``: a run of words copied from one message, typed as is (sometimes in quotes);
* ``title``: words of the session's title (all in the title);
* ``identifier``: an identifier, file name or path as written in the session;
* ``typo``: a query with a misspelled word (it occurs nowhere in the session);
* ``cjk``: Japanese (the corpus has one real session with Japanese text);
* ``cyrillic``: Russian (two real Aider sessions are in Russian): inflected forms, no stemming;
* ``vague``: two words someone remembers, where the session is the one mainly about them.

Sessions are named by their crabsearch session id (``SESSIONS``: short name -> id, with what each
one is about); Aider sessions by ``<header time>@<repo dir>`` (``corpus.label_id``).
"""

from __future__ import annotations

import json

SESSIONS = {
    # Claude Code, HillviewCap/Personal_AI_Infrastructure (PAI)
    "pai-skills": "155715ec-f4e9-47ea-859c-2e4cfcceab6f",     # lists 12 PAI skills, then the observability dashboard
    "pai-hooks": "5eac5945-4cf4-4f5c-a46a-1f8dacb407aa",      # SessionStart hook errors: PAI_DIR left as __HOME__
    "pai-explore-1": "agent-a4e3ca2",                          # Warmup subagent: explores the repo
    "pai-explore-2": "agent-af374ee",                          # Warmup subagent: globs every file
    # Claude Code, d-kimuson/claude-code-viewer (real captured sessions)
    "dk-init": "1af7fc5e-8455-4414-9ccd-011d40f70b2a",        # /init on an empty repository
    "dk-orchestrator": "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",  # update CLAUDE.md (Japanese), Next.js todo app
    # Codex CLI, Monotoba/OpenPrintKit: one 925-message session
    "opk": "c61729d4-da6d-46a4-9a29-ec2c614e5e23",            # 3D-printer profile toolkit: CLI, Qt GUI, G-code hooks, NFC tags
    # SpecStory (Claude Code), ChrisGVE/MunsellSpace
    "munsell": "0c56ec44-573e-4087-9413-650d54e1f1b3",         # future development of a Munsell color crate
    # SpecStory (Claude Code, Codex, Gemini), DanCard/cal-date-widget: seven sessions on one widget
    "cal-vertical": "019aebe7-63f9-77b2-90a3-04e223a7eb33",    # today's events truncated, use vertical space, ellipses
    "cal-familiarize": "019aec0d-4f26-79b2-8523-e639515303e0", # refactor, adb setup, header centering, equitable lines
    "cal-past-one-row": "019aec28-aac2-7d03-922e-a6d3b2a790fe",  # past events today limited to one row
    "cal-equitable": "669df92f-33be-42a4-a830-a92095bb5cfb",   # clipping equitable: 4 rows vs 1.75 rows
    "cal-start-times": "89615b49-9cd2-42ff-b27b-c784e68ab457", # show start times when a day has room
    "cal-text-size": "bcdf8baf-c84d-4a67-93c1-99e4b68ea353",   # double text size, timezone bug, duplicates, blue times
    "cal-acquainted": "dba26df5-537e-4bf5-9fb2-d6f6801b4862",  # hide start times when a day is clipped
    # SpecStory (Cursor), edobry/minsky: a CLI written over many short sessions
    "m-bun": "2025-04-26_20-30-setting-up-minsky-cli-with-bun",
    "m-tasks-cmd": "2025-04-26_22-29-task-management-command-design",
    "m-changelog": "2025-04-26_23-34-fixing-changelog-duplicates-and-references",
    "m-task-id": "2025-04-27_19-26-enhancing-minsky-cli-task-id-for-session-start",
    "m-session-cd": "2025-04-27_20-11-enhancing-session-commands-for-directory-management",
    "m-statuses": "2025-04-27_21-26-add-task-statuses-in-progress-and-in-review",
    "m-backlog": "2025-04-28_16-22-backlog-task-inquiry",
    "m-avail-1": "2025-04-28_18-34-available-tasks-inquiry",
    "m-create-cmd": "2025-04-28_18-34-create-minsky-task-command",
    "m-avail-2": "2025-04-28_18-51-available-tasks-inquiry",
    "m-004": "2025-04-28_19-10-starting-work-on-project-#004",
    "m-avail-3": "2025-04-29_16-45-available-tasks-inquiry",
    "m-001": "2025-04-29_19-23-continuing-task-001",
    "m-delete": "2025-04-29_20-08-task-creation-for-session-delete-command",
    "m-008": "2025-04-29_20-13-session-start-error-for-task-008",
    "m-002-a": "2025-04-30_01-14-task-002-progress-and-updates",
    "m-002-b": "2025-04-30_17-43-task-002-progress-and-updates",
    "m-avail-6": "2025-04-30_21-54-available-tasks-inquiry",
    "m-rules": "2025-05-01_20-45-existing-guidelines-for-cursor-rules",
    "m-mcp": "2025-05-21_improve-mcp-error-handling",
    # Aider, Aquaticat/Monochromatic: CONVENTIONS.md and a TypeScript utility library
    "mono-comment": "20250602-130214@Aquaticat__Monochromatic",
    "mono-lint": "20250602-130834@Aquaticat__Monochromatic",
    "mono-markdown": "20250602-133213@Aquaticat__Monochromatic",
    "mono-undo": "20250602-141520@Aquaticat__Monochromatic",
    "mono-reorder": "20250602-142921@Aquaticat__Monochromatic",
    "mono-whats-this": "20250602-125522@Aquaticat__Monochromatic",
    # Aider, AlexShchuka/mozgoslav (Russian)
    "mozg-hi": "20260422-224047@AlexShchuka__mozgoslav",                      # what the project is, RAG, push-to-talk bug
    "mozg-task": "20260422-231303@AlexShchuka__mozgoslav",                    # the same bug again, a report file written
}

_Q = [
    # -- prose: the searcher's own words ---------------------------------------------------------
    ("prose", "claude code launch scripts broken because a config path variable was never substituted", ["pai-hooks"]),
    ("prose", "which abilities does my personal assistant setup offer", ["pai-skills"]),
    ("prose", "remove the three dots after cut off calendar entries", ["cal-vertical"]),
    ("prose", "hide the hour an appointment begins when a day column overflows", ["cal-acquainted", "cal-start-times"]),
    ("prose", "all day appointment shows up one weekday early after time zone conversion", ["cal-text-size"]),
    ("prose", "make appointment clock labels vivid blue and add a glow behind them", ["cal-text-size"]),
    ("prose", "put android debug bridge on the mac shell path so the app can be pushed to the phone", ["cal-familiarize"]),
    ("prose", "roadmap for the paint color system crate: a warmth axis and combining two shades", ["munsell"]),
    ("prose", "desktop window of the 3d printer toolkit quits right away when launched", ["opk"]),
    ("prose", "scaffold a new command line program on the bun runtime", ["m-bun"]),
    ("prose", "release notes listed the same entries twice", ["m-changelog"]),
    ("prose", "command that wipes a workspace clone and its database record", ["m-delete"]),
    ("prose", "test runner freezes because of module stubs so pass fake services into the function", ["m-backlog"]),
    ("prose", "a meta guideline on authoring editor rules", ["m-rules"]),
    ("prose", "stop asking me for permission before the obvious next step", ["m-backlog", "m-avail-1"]),
    ("prose", "pull request summary pulled in commits from outside the branch", ["m-004"]),
    ("prose", "electron notes app dictation keeps pasting identical text", ["mozg-hi", "mozg-task"]),
    ("prose", "sort the bullet points in the style guide but leave every item untouched", ["mono-reorder", "mono-undo"]),
    ("prose", "suggest extra helpers for the functional utilities package", ["mono-markdown"]),
    ("prose", "model explains the find and replace edit format it has to use", ["mono-whats-this"]),
    ("prose", "spool chip tags: scan, edit and upload to community filament catalogs", ["opk"]),
    ("prose", "the documentation listed an older framework version and the wrong port for local development", ["dk-orchestrator"]),
    # -- assistant: words the assistant said -----------------------------------------------------
    ("assistant", "placeholder replaced during setup", ["pai-hooks"]),
    ("assistant", "skills categories security research", ["pai-skills"]),
    ("assistant", "dual structure duplicated components types", ["dk-orchestrator"]),
    ("assistant", "directory appears empty new repository", ["dk-init"]),
    ("assistant", "greedily allocate remaining vertical space", ["cal-vertical"]),
    ("assistant", "partial-line draw rely on the existing clipRect", ["cal-vertical"]),
    ("assistant", "resizing listener force a redraw", ["cal-text-size"]),
    ("assistant", "actualLines maxLines Pick up Sophia", ["cal-equitable"]),
    ("assistant", "semantic overlays fuchsia teal chartreuse", ["munsell"]),
    ("assistant", "QAction must be imported from QtGui", ["opk"]),
    ("assistant", "your entry points weren't installed pip install", ["opk"]),
    ("assistant", "cannot change the parent shell working directory", ["m-session-cd"]),
    ("assistant", "dependency injection instead of mock.module hangs", ["m-backlog"]),
    ("assistant", "Airbnb style not reflected in your ESLint setup", ["mono-lint"]),
    ("assistant", "generator versions appending Gen to the function names", ["mono-markdown"]),
    ("assistant", "collect items into a temporary array no-await-in-loop", ["mono-undo"]),
    ("assistant", "4-character marker spacing", ["mono-reorder"]),
    ("assistant", "Electron Obsidian vaultPath", ["mozg-hi"]),
    # -- user: words the user said, in any order -------------------------------------------------
    ("user", "Julia parent week Saturday", ["cal-text-size"]),
    ("user", "duplicate events Volunteer monday", ["cal-text-size"]),
    ("user", "brightest blue hard time seeing", ["cal-text-size"]),
    ("user", "header row centered vertically", ["cal-familiarize"]),
    ("user", "one event 4 rows clipped 1.75 rows", ["cal-equitable"]),
    ("user", "Sat Sun empty vertical space start time", ["cal-start-times"]),
    ("user", "Monday Tuesday columns clipped", ["cal-acquainted"]),
    ("user", "remember context between sessions", ["cal-acquainted"]),
    ("user", "Ubuntu not headless typing terminal", ["opk"]),
    ("user", "LinuxCNC mills lathes", ["opk"]),
    ("user", "Cura IdeaMaker other slicer", ["opk"]),
    ("user", "session cd actually run cd", ["m-session-cd"]),
    ("user", "YAML frontmatter description pair", ["m-avail-3"]),
    ("user", "removed too much changelog", ["m-avail-6"]),
    ("user", "do not reinit task-master lose history", ["munsell"]),
    ("user", "add or substract two colors", ["munsell"]),
    ("user", "worklog remaining work errors", ["m-002-b"]),
    ("user", "eslint config oxlint config", ["mono-lint"]),
    # -- phrase: words copied from one message ---------------------------------------------------
    ("phrase", "Welcome to Opus 4.5", ["pai-hooks"]),
    ("phrase", "draw normally and rely on a clipped canvas", ["cal-vertical"]),
    ("phrase", "hiding DONE behind a cli option", ["m-avail-2"]),
    ("phrase", '"never ask me questions like"', ["m-backlog"]),
    ("phrase", "Is there a gradle task for this", ["cal-familiarize"]),
    ("phrase", "each sentence or long phrase is on its own line", ["mono-markdown"]),
    ("phrase", "I think you broke something", ["opk"]),
    ("phrase", "comprehensive, canonical list of every event", ["opk"]),
    ("phrase", "Session 'task#008' not found", ["m-008"]),
    ("phrase", "rename session cd to dir", ["m-session-cd"]),
    ("phrase", "Save context and suggest git commit message", ["cal-equitable"]),
    ("phrase", '"exit the session first"', ["m-004"]),
    ("phrase", "the neighbor in a given direction could be a different polygon", ["munsell"]),
    ("phrase", "extract wisdom", ["pai-skills"]),
    # -- title -----------------------------------------------------------------------------------
    ("title", "Minsky CLI with Bun", ["m-bun"]),
    ("title", "Task Management Command Design", ["m-tasks-cmd"]),
    ("title", "Fixing Changelog Duplicates", ["m-changelog"]),
    ("title", "Session Commands for Directory Management", ["m-session-cd"]),
    ("title", "Task Statuses IN PROGRESS IN REVIEW", ["m-statuses"]),
    ("title", "Backlog Task Inquiry", ["m-backlog"]),
    ("title", "Create Minsky Task Command", ["m-create-cmd"]),
    ("title", "Starting Work on Project #004", ["m-004"]),
    ("title", "Session Start Error for Task 008", ["m-008"]),
    ("title", "Existing Guidelines for Cursor Rules", ["m-rules"]),
    ("title", "Improve MCP Error Handling", ["m-mcp"]),
    ("title", "double-row-text-size", ["cal-text-size"]),
    ("title", "Task Creation for Session Delete Command", ["m-delete"]),
    ("title", "Continuing Task 001", ["m-001"]),
    ("title", "Comment on my CONVENTIONS.md", ["mono-comment"]),
    ("title", "Task 002 Progress and Updates", ["m-002-a", "m-002-b"]),
    # -- identifier: identifiers, file names, paths ----------------------------------------------
    ("identifier", "PAI_DIR", ["pai-hooks"]),
    ("identifier", "AlexHormoziPitch", ["pai-skills"]),
    ("identifier", "maxLinesForEvent", ["cal-familiarize"]),
    ("identifier", "EventFilterTest", ["cal-text-size"]),
    ("identifier", "startTimeColor", ["cal-text-size"]),
    ("identifier", "QT_QPA_PLATFORM", ["opk"]),
    ("identifier", "opk/ui/main_window.py", ["opk"]),
    ("identifier", "schemas/pdl.schema.json", ["opk"]),
    ("identifier", "extractSessionName", ["m-002-b"]),
    ("identifier", "rule-creation-guidelines.mdc", ["m-rules"]),
    ("identifier", "task-interpretation.mdc", ["m-create-cmd"]),
    ("identifier", "intersectionIterablesAsync", ["mono-reorder"]),
    ("identifier", "iterable.filter.ts", ["mono-markdown"]),
    ("identifier", "applyCustomHotkeyFromSettings", ["mozg-hi"]),
    ("identifier", "analyzer-d7f3a9b2.md", ["mozg-task"]),
    ("identifier", "future_development.md", ["munsell"]),
    ("identifier", "DictationOrchestrator", ["mozg-hi"]),
    ("identifier", "docs/system_notes.md", ["opk"]),
    # -- typo: a misspelled word -----------------------------------------------------------------
    ("typo", "obervability dashboard", ["pai-skills"]),
    ("typo", "elipses truncated events", ["cal-vertical"]),
    ("typo", "timezone fix scrunchd display", ["cal-text-size"]),
    ("typo", "Munsel polygon neighbor", ["munsell"]),
    ("typo", "chartruese overlay", ["munsell"]),
    ("typo", "Spoolmann TigerTag", ["opk"]),
    ("typo", "changlog duplicate items", ["m-changelog"]),
    ("typo", "YAML fronmatter description", ["m-avail-3", "m-rules"]),
    ("typo", "intersectionIterablesAsnyc", ["mono-reorder"]),
    ("typo", "oxlnt configuration", ["mono-lint"]),
    ("typo", "dependancy injection startSession", ["m-backlog"]),
    ("typo", "LinuxCMC lathes", ["opk"]),
    ("typo", "equitible distribution clipping", ["cal-familiarize", "cal-equitable"]),
    # -- cjk -------------------------------------------------------------------------------------
    ("cjk", "最新の状態にアップデート", ["dk-orchestrator"]),
    ("cjk", "技術スタック", ["dk-orchestrator"]),
    ("cjk", "デフォルトポート", ["dk-orchestrator"]),
    ("cjk", "重複したコンポーネント", ["dk-orchestrator"]),
    ("cjk", "開発コマンド", ["dk-orchestrator"]),
    ("cjk", "プロジェクト構造の修正", ["dk-orchestrator"]),
    # -- cyrillic --------------------------------------------------------------------------------
    ("cyrillic", "проект мозгослав RAG", ["mozg-hi"]),
    ("cyrillic", "залипание текста", ["mozg-hi"]),
    ("cyrillic", "корневой папке мозгослава", ["mozg-task"]),
    ("cyrillic", "куда ты создал файл", ["mozg-task"]),
    ("cyrillic", "Ты зациклился", ["mozg-hi"]),
    ("cyrillic", "хоткей push-to-talk баг", ["mozg-hi", "mozg-task"]),
    # -- vague: two remembered words -------------------------------------------------------------
    ("vague", "hook error", ["pai-hooks"]),
    ("vague", "available skills", ["pai-skills"]),
    ("vague", "text size", ["cal-text-size"]),
    ("vague", "adb path", ["cal-familiarize"]),
    ("vague", "printer profiles", ["opk"]),
    ("vague", "gcode hooks", ["opk"]),
    ("vague", "duplicate changelog", ["m-changelog"]),
    ("vague", "session delete", ["m-delete"]),
    ("vague", "cursor rules", ["m-rules"]),
    ("vague", "future development", ["munsell"]),
    ("vague", "markdown conventions", ["mono-markdown"]),
    ("vague", "reorder lists", ["mono-reorder", "mono-undo"]),
    ("vague", "timezone bug", ["cal-text-size"]),
    ("vague", "nfc tag", ["opk"]),
    ("vague", "todo app", ["dk-orchestrator"]),
    ("vague", "task statuses", ["m-statuses"]),
]

TYPES = ["prose", "assistant", "user", "phrase", "title", "identifier", "typo", "cjk", "cyrillic", "vague"]

QUERIES = []
for _n, (_type, _query, _names) in enumerate(_Q):
    QUERIES.append({"id": f"{_type}-{sum(t == _type for t, _, _ in _Q[:_n]) + 1:02d}", "type": _type,
                    "query": _query, "expect": [SESSIONS[x] for x in _names], "expect_keys": list(_names)})

assert {q["type"] for q in QUERIES} == set(TYPES)

if __name__ == "__main__":
    print(json.dumps(QUERIES, indent=1, ensure_ascii=False))
