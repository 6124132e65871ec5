"""The hard set on real transcripts: what people paste and ask, ``{"id", "type", "query", "expect": [...]}``.

Written from reading the sessions, before any ranking change was measured on them, and kept as
written: a label changes only when it breaks a labelling rule (hard_rules.py; ``run.py --set
hard`` checks them), never to make a ranking pass. ``expect`` lists the session(s) a person would
accept at the top, by crabsearch session id (``SESSIONS``, shared with the typed set in
queries.py): for a pasted error every session where that error was hit (printed), not the sessions
that only hold the code printing it; both sessions of one bug. Queries are typed as a person
would: errors and code pasted across several lines stay on several lines.

Only what crabsearch indexes by default is used: an error that appears only in tool output (not
indexed unless ``index_tool_output`` is on, and not in the baseline's documents) is left out. The
corpus has no Claude Code ``!`` shell output; the Cursor and Aider sessions show terminal output
inside assistant text, which is where most pasted errors come from.

Types (``TYPES``; the rules in hard_rules.py):

* ``pasted_error``: an error line (or two or three) from the session, pasted as it would come out
  today: a path, line number, temporary directory, user, hash or id changed;
* ``pasted_code``: code or a command pasted as written, quotes included;
* ``cross_language``: another language than the session's: English for the Russian Aider sessions
  and the Japanese parts of a Claude Code session, Russian, Japanese, Chinese or Spanish for the
  English ones (``lang``);
* ``recall``: what the searcher remembers, in their own words;
* ``outcome``: which thing was picked, what the cause or the fix was;
* ``tool_action``: what the agent did with its tools ("when the agent ...");
* ``long``: a long description, mixing remembered details and own words;
* ``lookalike``: one of several sessions of one project that look alike (the seven cal-date-widget
  sessions, the minsky sessions), where a detail decides; ``decoys`` names the look-alikes.

``python bench/relevance_real/hard_queries.py`` prints them as JSON.
"""

from __future__ import annotations

import json

from queries import SESSIONS as TYPED_SESSIONS

SESSIONS = {
    **TYPED_SESSIONS,
    "m-avail-4": "2025-04-29_20-13-available-tasks-inquiry",   # lists tasks, creates task #007 spec
    "m-avail-5": "2025-04-30_17-43-available-tasks-inquiry",   # session start --task fails: paths[0]
}

GROUPS = {
    "cal": ["cal-vertical", "cal-familiarize", "cal-past-one-row", "cal-equitable", "cal-start-times",
            "cal-text-size", "cal-acquainted"],
    "minsky": ["m-bun", "m-tasks-cmd", "m-changelog", "m-task-id", "m-session-cd", "m-statuses", "m-backlog",
               "m-avail-1", "m-create-cmd", "m-avail-2", "m-004", "m-avail-3", "m-001", "m-delete", "m-avail-4",
               "m-008", "m-002-a", "m-avail-5", "m-002-b", "m-avail-6", "m-rules", "m-mcp"],
}
"""Sessions of one project that look alike (a ``lookalike`` query's target and decoys are in one)."""

_Q = [
    # -- pasted_error: an error as pasted today, something volatile changed ---------------------
    ("pasted_error", 'error: Test "should generate PR diff against main branch" timed out after 5087ms (killed 1 dangling process)',
     ["m-001"]),
    ("pasted_error", "fatal: cannot change to '/tmp/minsky-git-test-Xk29pQ': No such file or directory", ["m-001"]),
    ("pasted_error", "error: Cannot find package 'commander' from '/Users/dana/.local/state/minsky/git/local/minsky/task#017/src/cli.ts'",
     ["m-001", "m-004"]),
    ("pasted_error", "TypeError: new SessionDB().deleteSession is not a function. (In 'new SessionDB().deleteSession(\"test-session-1714482211\")', "
     "'new SessionDB().deleteSession' is undefined)", ["m-002-b"]),
    ("pasted_error", "error: Entry 'src/domain/session.ts' not uptodate. Cannot merge.\n"
     "fatal: Could not reset index file to revision '4f1c9a07d2e35b6e8a90c1d47f2b5e3a6c8d9e01'.", ["m-002-b"]),
    ("pasted_error", "error: Command failed: git clone minsky /home/dana/.local/state/minsky/git/#004\n"
     "fatal: repository 'minsky' does not exist", ["m-backlog"]),
    ("pasted_error", "fatal: destination path '/Users/dana/.local/state/minsky/git/local/minsky/task#011' already exists and "
     "is not an empty directory.", ["m-008"]),
    ("pasted_error", "Error starting session: Session 'task#027' not found.", ["m-008"]),
    ("pasted_error", "dana@laptop minsky % minsky session start --task 019\n"
     'Error starting session: The "paths[0]" property must be of type string, got undefined',
     ["m-002-a", "m-avail-5"]),
    ("pasted_error", "Error reading tasks file: ENOENT: no such file or directory, open 'file:/Users/dana/code/minsky/process/tasks.md'",
     ["m-002-b"]),
    ("pasted_error", "ImportError: cannot import name 'QAction' from 'PySide6.QtWidgets' "
     "(/home/sam/src/OpenPrintKit/.venv/lib/python3.12/site-packages/PySide6/QtWidgets.abi3.so)", ["opk"]),
    ("pasted_error", '  File "/home/sam/src/OpenPrintKit/opk/ui/pdl_editor.py", line 331, in set_defaults\n'
     '    self.g_start.setPlainText("")\n'
     "    ^^^^^^^^^^^^\n"
     "AttributeError: 'PDLForm' object has no attribute 'g_start'", ["opk"]),
    ("pasted_error", "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in packages\\module\\es\\src\\promise.retry.ts",
     ["mono-markdown", "mono-reorder"]),
    ("pasted_error", "Welcome to Opus 4.6\n  ⎿  SessionStart:startup hook error", ["pai-hooks"]),
    ("pasted_error", "Task with ID '023' not found.", ["m-001", "m-002-b"]),
    # -- pasted_code: code or a command as written, quotes included ------------------------------
    ("pasted_code", "QT_QPA_PLATFORM=xcb OPK_DEBUG=1 opk-gui", ["opk"]),
    ("pasted_code", 'a=QApplication(sys.argv); print("platform:", a.platformName(),', ["opk"]),
    ("pasted_code", 'export PATH="$ANDROID_HOME/platform-tools:$PATH"', ["cal-familiarize"]),
    ("pasted_code", "adb exec-out screencap -p > weekly.png", ["cal-vertical"]),
    ("pasted_code", "i == todayIndex && event.endTime < currentTime -> 1", ["cal-equitable"]),
    ("pasted_code", ".setEllipsize(TextUtils.TruncateAt.END)", ["cal-equitable"]),
    ("pasted_code", "data class DedupeKey(val t: String, val s: Long, val e: Long, val a: Boolean)", ["cal-text-size"]),
    ("pasted_code", "dayEvents.size * estimatedHeightPerEvent <= availableHeight", ["cal-acquainted"]),
    ("pasted_code", "resolveRepoPath: async () => { throw new Error('not in git repo'); }", ["m-backlog"]),
    ("pasted_code", "expect(file).toMatch(/- \\[\\+\\] Third Task \\[#003\\]/);", ["m-statuses"]),
    ("pasted_code", '"eslint/func-names": ["warn", "as-needed"]', ["mono-lint"]),
    ("pasted_code", 'message.result?.event === "hotkey"', ["mozg-task"]),
    ("pasted_code", "move(5Y 6/4, Δhue=+5, Δvalue=+2, Δchroma=-2) → 10Y 8/2", ["munsell"]),
    ("pasted_code", "cd $(minsky session cd foo)", ["m-session-cd"]),
    # -- cross_language: another language than the session's --------------------------------------
    ("cross_language", "what is mozgoslav about, and how far along is its RAG pipeline", ["mozg-hi"], "en"),
    ("cross_language", "push-to-talk inserts one identical phrase repeatedly, something broken?", ["mozg-hi", "mozg-task"], "en"),
    ("cross_language", "you got stuck repeating yourself; managed to understand the cause?", ["mozg-hi"], "en"),
    ("cross_language", "ask for access to those files yourself", ["mozg-hi"], "en"),
    ("cross_language", "please update CLAUDE.md so it reflects today's state", ["dk-orchestrator"], "en"),
    ("cross_language", "refreshed CLAUDE.md, removed nonexistent type-check, fixed port to 3000", ["dk-orchestrator"], "en"),
    ("cross_language", "виджет календаря: убрать многоточие у обрезанных событий", ["cal-vertical"], "ru"),
    ("cross_language", "почему в субботу показывается событие, которое запланировано на воскресенье", ["cal-text-size"], "ru"),
    ("cross_language", "ошибка хуков при запуске Claude Code, переменная PAI_DIR", ["pai-hooks"], "ru"),
    ("cross_language", "3Dプリンター用プロファイルツールのGUIが起動直後に落ちる", ["opk"], "ja"),
    ("cross_language", "カラーライブラリの今後の開発計画はありますか", ["munsell"], "ja"),
    ("cross_language", "变更日志里有重复的条目", ["m-changelog"], "zh"),
    ("cross_language", "怎么把 adb 加到 PATH 里", ["cal-familiarize"], "zh"),
    ("cross_language", "¿qué habilidades están disponibles en mi asistente?", ["pai-skills"], "es"),
    ("cross_language", "eventos duplicados de voluntariado el lunes en el widget", ["cal-text-size"], "es"),
    # -- recall: the searcher's memory, in their own words ----------------------------------------
    ("recall", "the agent kept claiming the dots were gone yet I still saw them on my phone", ["cal-vertical"]),
    ("recall", "we wrote a doc so the assistant would know the project next time around", ["cal-acquainted"]),
    ("recall", "adb was missing from my terminal so it edited my shell profile for me", ["cal-familiarize"]),
    ("recall", "an appointment for a parent weekend landed a day early because of utc conversion", ["cal-text-size"]),
    ("recall", "desktop app blew up on launch since a form never created its start gcode box", ["opk"]),
    ("recall", "tests froze forever after stubbing modules so we passed fakes in instead", ["m-backlog"]),
    ("recall", "I had to point out that the worklog edit landed in my primary checkout rather than the session copy", ["m-002-b"]),
    ("recall", "claude almost wiped my task tracker history while fixing its broken json", ["munsell"]),
    ("recall", "subagents noticed the components and type definitions exist twice: once at top level, once within the next app",
     ["dk-orchestrator"]),
    ("recall", "my agent monitoring web page was down so I asked for it to be launched", ["pai-skills"]),
    ("recall", "aider edits kept failing because numbered list markers were padded with extra spaces", ["mono-reorder"]),
    ("recall", "it ignored the cli so I made it reword the yaml header summary of that rule by hand", ["m-avail-3"]),
    # -- outcome: which thing was picked, what the cause or the fix was ---------------------------
    ("outcome", "which mocking library repaired the jvm tests that blew up on parseColor", ["cal-vertical"]),
    ("outcome", "what hex value did we settle on as the default for appointment times", ["cal-text-size"]),
    ("outcome", "which port is the observability ui served on", ["pai-skills"]),
    ("outcome", "what did the cd subcommand of session get renamed to", ["m-session-cd"]),
    ("outcome", "which checkbox marks did we choose for tasks being worked on or awaiting review", ["m-statuses"]),
    ("outcome", "what was the root cause of the startup hook errors", ["pai-hooks"]),
    ("outcome", "how did we get StaticLayout to respect the max line limit", ["cal-equitable"]),
    ("outcome", "which Qt module is QAction imported from now", ["opk"]),
    ("outcome", "what was actually wrong with that task-master json", ["munsell"]),
    ("outcome", "what naming did we settle on for sessions started from a task number", ["m-task-id"]),
    ("outcome", "which lint setting made us soften the rule about naming every function", ["mono-lint"]),
    ("outcome", "which Next.js release did the docs get bumped to?", ["dk-orchestrator"]),
    ("outcome", "what environment variable finally made the gui window show up on ubuntu", ["opk"]),
    # -- tool_action: what the agent did with its tools -------------------------------------------
    ("tool_action", "when the agent restarted the home screen launcher so the widget would redraw", ["cal-equitable"]),
    ("tool_action", "when the agent appended the android sdk folder to my zshrc", ["cal-familiarize"]),
    ("tool_action", "when the agent edited settings.json to replace the __HOME__ placeholder", ["pai-hooks"]),
    ("tool_action", "when the agent launched the monitoring server with its manage script", ["pai-skills"]),
    ("tool_action", "when the agent wrote the two tasks straight into tasks.json by hand", ["munsell"]),
    ("tool_action", "when the agent watched logcat to learn why max lines was ignored", ["cal-equitable"]),
    ("tool_action", "when the agent created CLAUDE.md for a folder with nothing in it and was refused write permission",
     ["dk-init"]),
    ("tool_action", "when the agent sent subagents to compare package.json and the folder tree with the docs",
     ["dk-orchestrator"]),
    ("tool_action", "when the agent committed and pushed the refactor with the shared color picker to main", ["cal-familiarize"]),
    ("tool_action", "when the agent could not reach the network to look up Cura's printers and wrote a converter instead",
     ["opk"]),
    ("tool_action", "when the agent took a phone screenshot and saw Thursday's start times were hidden", ["cal-acquainted"]),
    ("tool_action", "when aider committed the union generator fix and I undid it", ["mono-undo"]),
    # -- long: a long description -------------------------------------------------------------
    ("long", "I was working on the weekly calendar widget and today's column had lots of empty room at the bottom while "
     "events got cut short; I wanted half visible lines instead of dots, and the assistant kept saying it was fixed",
     ["cal-vertical"]),
    ("long", "we designed how starting a work session could take a task number instead of a name, the session record "
     "keeps the repository, and clones live under one folder per repository in the local state directory",
     ["m-task-id"]),
    ("long", "an enormous codex conversation building a toolkit for 3d printer profiles: a cli, a qt desktop app with "
     "tabs for filaments and peripherals, custom gcode hooks and m-code settings", ["opk"]),
    ("long", "claude code showed three hook failures right after launching on the new opus model and it turned out "
     "the settings file still had a placeholder where my home directory should be", ["pai-hooks"]),
    ("long", "I asked whether we had any guidance on writing cursor rules themselves, then had the assistant draft a "
     "meta rule for mdc files stressing short descriptions that say exactly when a rule applies", ["m-rules"]),
    ("long", "for my rust color science crate I asked about the roadmap, then we talked about warm and cool bias, "
     "named overlays like teal, stepping to neighbours in hue value chroma and doing vector math on colors",
     ["munsell"]),
    ("long", "I asked the model to compare my coding conventions document with my eslint, oxlint, dprint setup and "
     "suggest edits, with every sentence on a line of its own", ["mono-lint"]),
    ("long", "gemini made today's font twice as big in the weekly widget, then we chased an all-day appointment "
     "appearing a day early, removed repeated volunteer entries and tried several blues for start times",
     ["cal-text-size"]),
    ("long", "the changelog had repeated entries, so I asked to remove them and link each group of changes to the "
     "specstory conversation it came from, then to write that process into the changelog rule",
     ["m-changelog"]),
    ("long", "asked in japanese to refresh the project memory file; helpers compared the package manifest and the "
     "folder layout with the docs and found newer next and react versions and another dev server port",
     ["dk-orchestrator"]),
    ("long", "while starting task one the repo flag turned out to be mandatory, we made it optional by detecting the "
     "git repository, then the tests of the domain function hung because module mocking in bun froze",
     ["m-backlog"]),
    ("long", "after reading the code the assistant proposed refactors such as one shared color picker dialog and "
     "splitting the big drawing function, then it set up adb on my mac and centred the header row",
     ["cal-familiarize"]),
    # -- lookalike: one of several sessions that look alike, a detail decides --------------------
    ("lookalike", "past events today limited to one line, fixed by adding ellipsize to StaticLayout",
     ["cal-equitable"], ["cal-past-one-row", "cal-familiarize", "cal-start-times"]),
    ("lookalike", "past events today limited to one line with a maxLinesForEvent helper and its own test class",
     ["cal-familiarize"], ["cal-equitable", "cal-past-one-row", "cal-start-times"]),
    ("lookalike", "past events on the current day one row, change made without running tests, then installDebug",
     ["cal-past-one-row"], ["cal-equitable", "cal-familiarize"]),
    ("lookalike", "hide start times when a day is clipped, first guess of 1.5 lines per event was too optimistic",
     ["cal-acquainted"], ["cal-start-times"]),
    ("lookalike", "show start times on Saturday and Sunday when there is room, with a shouldShowStartTimes test",
     ["cal-start-times"], ["cal-acquainted"]),
    ("lookalike", "unused vertical space for the current day, draw partial lines and rely on clipRect",
     ["cal-vertical"], ["cal-text-size", "cal-equitable"]),
    ("lookalike", "first event today takes 4 rows and the next is not seen, equitable lines, 37 tests pass",
     ["cal-familiarize"], ["cal-equitable"]),
    ("lookalike", "save context to .claude/context and suggest a commit message for the start time display logic",
     ["cal-start-times"], ["cal-equitable"]),
    ("lookalike", "available tasks, then a task to keep DONE ones behind a cli flag",
     ["m-avail-2"], ["m-avail-1", "m-avail-3", "m-avail-6"]),
    ("lookalike", "available tasks, then the changelog lost too many entries",
     ["m-avail-6"], ["m-avail-1", "m-avail-3"]),
    ("lookalike", "available tasks inquiry ending with the YAML frontmatter description of the workflow rule edited by hand",
     ["m-avail-3"], ["m-avail-1", "m-avail-2", "m-avail-6"]),
    ("lookalike", "available tasks, and how will you remember the user preferences rule if you do not record it",
     ["m-avail-1"], ["m-avail-3", "m-avail-2", "m-avail-6"]),
    ("lookalike", "task 002 progress, drop the in-flight cherry-pick and reimplement the sessions subdirectory change",
     ["m-002-a"], ["m-002-b"]),
    ("lookalike", "task 002 progress where the worklog and remaining work went into the spec",
     ["m-002-b"], ["m-002-a"]),
    ("lookalike", "create a task for a session delete command that removes the repo and the db record",
     ["m-delete"], ["m-create-cmd"]),
]

TYPES = ["pasted_error", "pasted_code", "cross_language", "recall", "outcome", "tool_action", "long", "lookalike"]

QUERIES = []
for _n, _entry in enumerate(_Q):
    _type, _query, _names = _entry[:3]
    _q = {"id": f"{_type}-{sum(e[0] == _type for e in _Q[:_n]) + 1:02d}", "type": _type, "query": _query,
          "expect": [SESSIONS[x] for x in _names], "expect_keys": list(_names)}
    if _type == "cross_language":
        _q["lang"] = _entry[3]
    if _type == "lookalike":
        _q["decoys"], _q["decoy_keys"] = [SESSIONS[x] for x in _entry[3]], list(_entry[3])
    QUERIES.append(_q)

assert [t for t in TYPES if t in {q["type"] for q in QUERIES}] == TYPES

if __name__ == "__main__":
    print(json.dumps(QUERIES, indent=1, ensure_ascii=False))
