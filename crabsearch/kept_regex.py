"""Regular expressions whose compiled program is kept on disk from one process to the next.

``re`` compiles in Python (``re._parser.parse``, then ``re._compiler._code``) and keeps the result
for its own process only. crabsearch's secret-masking pattern (``redact.secret_patterns``, a few
hundred branches) takes longer to compile than a whole ``crabsearch search`` takes otherwise to
search, and every command that shows text compiles it. :func:`compile_kept` does what
``re._compiler.compile`` does (CPython 3.11-3.13: the program, the group names both ways, then
``_sre.compile``) and stores the arguments it gives ``_sre.compile`` (integers, the group names)
with ``marshal`` in ``regex/`` of crabsearch's cache directory, named by a SHA-256 of the Python
version, ``_sre.MAGIC``, the flags and the pattern; the next process hands them to
``_sre.compile`` directly (which checks the program). Any failure (another Python whose private
API differs, a damaged or unwritable file) falls back to ``re.compile``: the same pattern, only
slower. The files hold nothing from transcripts (the pattern is crabsearch's source). They are
written only where crabsearch's cache directory already exists (the default index, the app's last
copy live there): a run with its index elsewhere (``--index-dir``) creates nothing in the home.
"""

from __future__ import annotations

import os
import re
import sys

from .paths import cache_dir, write_atomically

FOLDER = "regex"


def compile_kept(pattern: str, flags: int = 0) -> re.Pattern:
    """``re.compile(pattern, flags)``, from the program kept by an earlier process when there is
    one (see the module docstring). Raises ``re.error`` for a bad pattern, as ``re.compile``."""
    try:
        import _sre
        import hashlib
        import marshal
        from re import _compiler, _parser
    except ImportError:  # pragma: no cover - not CPython
        return re.compile(pattern, flags)
    try:
        key = hashlib.sha256(f"{sys.version}\0{_sre.MAGIC}\0{flags}\0{pattern}".encode("utf-8", "surrogatepass"))
        path = cache_dir() / FOLDER / f"{key.hexdigest()[:32]}.marshal"
    except Exception:  # noqa: BLE001 - no cache directory: compiled here only
        return re.compile(pattern, flags)
    try:
        return _sre.compile(pattern, *marshal.loads(path.read_bytes()))
    except Exception:  # noqa: BLE001 - none yet, damaged, or another API: compiled again below
        pass
    try:
        parsed = _parser.parse(pattern, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        args = (flags | parsed.state.flags, [int(c) for c in _compiler._code(parsed, flags)],
                parsed.state.groups - 1, groupindex, tuple(indexgroup))
        compiled = _sre.compile(pattern, *args)
    except re.error:
        raise
    except Exception:  # noqa: BLE001 - re's private API differs here
        return re.compile(pattern, flags)
    if not path.parent.parent.is_dir():  # crabsearch keeps nothing in the cache: nor does this
        return compiled
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        write_atomically(path, [marshal.dumps(args)], sync=False)
    except Exception:  # noqa: BLE001 - kept for this process only
        pass
    return compiled
