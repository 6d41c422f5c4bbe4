"""A task whose command may exit 1 or 4 itself (an accepted answer) does not take the lock wrapper's refusal for that
answer (C11's finding: `systemctl disable` of the resume unit accepts 0 and 1, so a play refused over an unfinished
wizard run, exit 1, went on as if the unit had been disabled, and its step could be marked done)."""

from __future__ import annotations

import re

import pytest

from wizard.fleet.lock import REFUSED, refused
from wizard.script import held_line, unfinished_line

pytestmark = pytest.mark.unit


def _cond(expr: str, rc: int, stderr: str) -> bool:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    t = Templar(loader=DataLoader(), variables={"r": {"rc": rc, "stderr": stderr}})
    return bool(t.evaluate_conditional(trust_as_template(expr)))


def test_every_refusal_line_of_the_wrapper_is_recognised() -> None:
    for line in (held_line("pid 7, started T: rocm-wizard --plan x", "/var/lib/rocm-wizard/lock", "again"),
                 unfinished_line("20261201-000000-abcd", "again"),
                 "rocm-wizard: cannot take the wizard's lock /var/lib/rocm-wizard/lock: refusing it: x is a symlink"):
        assert re.match(REFUSED, line), line
        assert _cond(f"r.rc not in [0, 1] or {refused('r')}", 1, line + "\n")


def test_near_miss_the_commands_own_accepted_answer_is_not_a_refusal() -> None:
    for stderr in ("", "Removed /etc/systemd/system/multi-user.target.wants/rocm-wizard-resume.service.\n",
                   "Failed to disable unit: Unit file rocm-wizard-resume.service does not exist.\n",
                   "note: rocm-wizard: another rocm-wizard run holds the lock\n"):  # not at the start: the command's
        assert not _cond(f"r.rc not in [0, 1] or {refused('r')}", 1, stderr), stderr
    assert _cond(f"r.rc not in [0, 1] or {refused('r')}", 5, "")


def test_the_exported_role_and_the_collection_fail_a_refused_task_that_accepts_1() -> None:
    from wizard.fleet import collection, export

    src = (export.__file__, collection.__file__)
    for path in src:
        text = open(path, encoding="utf-8").read()
        assert "refused(" in text, path
