"""The fixes to Whoosh (``crabsearch.index.whoosh_fixes``) bind only to the Whoosh they were
written for: a changed or missing target stops ``install`` with a message naming the version."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import whoosh

from crabsearch.index import whoosh_fixes as wf


class Target:
    def method(self, docnum, fieldname):
        return "original"

    def uses_state(self):
        return self._seen


def fix(self, docnum, fieldname):
    return "fixed"


def test_every_fix_fits_the_installed_whoosh_and_pyproject_pins_it():
    assert wf.check() == []
    assert whoosh.versionstring() == wf.WHOOSH_VERSION
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert re.search(rf'"whoosh-reloaded=={re.escape(wf.WHOOSH_VERSION)}"', pyproject)


def test_a_changed_signature_or_a_missing_target_is_named():
    problems = wf.check(patches=[(Target, "method", fix, "self, docnum, fieldname, default=0"),
                                 (Target, "gone", fix, "self")])
    assert len(problems) == 2
    assert "Target.method(self, docnum, fieldname) is not (self, docnum, fieldname, default=0)" in problems[0]
    assert "Target.gone is missing" in problems[1]
    assert wf.check(patches=[(Target, "method", fix, "self, docnum, fieldname")]) == []


def test_a_private_attribute_no_longer_named_is_a_problem(monkeypatch):
    monkeypatch.setattr(wf, "_PRIVATE_STATE", ((Target, ("_seen", "_gone"), "fix 99"),))
    assert wf.check(patches=()) == [f"{__name__}.Target no longer names ._gone (fix 99)"]


def test_install_refuses_a_whoosh_that_changed_and_replaces_nothing(monkeypatch):
    monkeypatch.setattr(wf, "_PATCHES", ((Target, "method", fix, "self, docnum"),) + wf._PATCHES)
    with pytest.raises(wf.WhooshMismatch, match=rf"needs whoosh-reloaded {re.escape(wf.WHOOSH_VERSION)}; "
                                                 rf"the installed {re.escape(whoosh.versionstring())} differs"):
        wf.install()
    assert Target().method(1, "f") == "original"


def test_install_again_is_harmless():
    wf.install()
    wf.install()
    assert wf.check() == []
