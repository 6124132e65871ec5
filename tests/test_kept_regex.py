"""Compiled regex programs kept on disk between processes (``crabsearch.kept_regex``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from secret_samples import NOT_SECRETS, SECRET_SAMPLES

ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[str]:
    return [text for _, text, _ in SECRET_SAMPLES] + list(NOT_SECRETS)


def test_a_kept_program_matches_as_re_compiles_it(tmp_path, monkeypatch):
    import crabsearch.redact as r
    from crabsearch import kept_regex

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "crabsearch").mkdir()
    pattern = r._compile(r._BRANCHES).pattern
    first = kept_regex.compile_kept(pattern)
    assert list((tmp_path / "crabsearch" / kept_regex.FOLDER).glob("*.marshal"))
    again = kept_regex.compile_kept(pattern)  # from the file
    plain = re.compile(pattern)
    for got in (first, again):
        assert (got.pattern, got.flags, got.groups, got.groupindex) == (
            plain.pattern, plain.flags, plain.groups, plain.groupindex)
        for text in _texts():
            assert [(m.span(), m.lastgroup) for m in got.finditer(text)] == [
                (m.span(), m.lastgroup) for m in plain.finditer(text)]


def test_the_next_process_does_not_compile_the_masking_pattern(tmp_path):
    """A second process masks with the program the first kept: ``re``'s parser is never run
    for it (it is made to fail there), and the masking is the same."""
    code = ("import sys, re._parser as p\n"
            "from crabsearch.redact import redact\n"
            "if sys.argv[1] == 'kept':\n"
            "    parse = p.parse\n"
            "    def refuse(s, *a, **k):\n"
            "        assert len(s) < 2000, 'the masking pattern parsed again'\n"
            "        return parse(s, *a, **k)\n"
            "    p.parse = refuse\n"
            "print(redact(sys.argv[2]))\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    (tmp_path / "crabsearch").mkdir()
    text = SECRET_SAMPLES[0][1]
    first = subprocess.run([sys.executable, "-c", code, "first", text], env=env, capture_output=True, text=True)
    kept = subprocess.run([sys.executable, "-c", code, "kept", text], env=env, capture_output=True, text=True)
    assert first.returncode == 0 and kept.returncode == 0, kept.stderr
    assert kept.stdout == first.stdout and SECRET_SAMPLES[0][2] not in kept.stdout


def test_a_damaged_file_is_compiled_again(tmp_path, monkeypatch):
    from crabsearch import kept_regex

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "crabsearch").mkdir()
    kept_regex.compile_kept(r"(?P<word>ab+c)|x")
    (path,) = (tmp_path / "crabsearch" / kept_regex.FOLDER).glob("*.marshal")
    path.write_bytes(b"\x00garbage")
    got = kept_regex.compile_kept(r"(?P<word>ab+c)|x")
    assert got.fullmatch("abbc").lastgroup == "word"
    assert path.read_bytes() != b"\x00garbage"  # written again


def test_an_unwritable_cache_still_compiles(tmp_path, monkeypatch):
    from crabsearch import kept_regex

    (tmp_path / "crabsearch").write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert kept_regex.compile_kept(r"a(b)c").fullmatch("abc").group(1) == "b"


def test_nothing_is_kept_where_crabsearch_has_no_cache_directory(tmp_path, monkeypatch):
    """A run whose index lives elsewhere (``--index-dir``) creates nothing in the home's cache."""
    from crabsearch import kept_regex

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert kept_regex.compile_kept(r"a(b)c").fullmatch("abc").group(1) == "b"
    assert list(tmp_path.iterdir()) == []
