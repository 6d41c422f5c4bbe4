"""The Host: timeouts that cannot hang, reads confined to the root, recordings that never run anything."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from wizard.host import BundleHost, LiveHost

pytestmark = pytest.mark.unit


def test_a_hung_command_returns_within_its_timeout() -> None:
    host = LiveHost()
    t = time.monotonic()
    res = host.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)  # a child that keeps the pipes open too
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - t < 15  # not the 30 s its children sleep (generous under load)


def test_commands_run_with_c_locale_and_capture_output() -> None:
    res = LiveHost().run(["sh", "-c", "echo $LC_ALL; echo err >&2; exit 3"])
    assert (res.returncode, res.stdout.strip(), res.stderr.strip()) == (3, "C", "err")


def test_a_missing_program_is_a_result_not_an_exception() -> None:
    res = LiveHost(environ={"PATH": "/nonexistent"}).run(["rocminfo"])
    assert res.returncode is None and "not found" in res.stderr


def test_reads_stay_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text("ID=test\n")
    os.symlink("/etc/os-release", tmp_path / "etc" / "link")  # absolute link: resolved inside the root
    host = LiveHost(tmp_path)
    assert host.read_text("/etc/os-release") == "ID=test\n"
    assert host.read_text("/../../etc/os-release") == "ID=test\n"
    assert host.realpath("/etc/link") == "/etc/os-release"
    assert host.glob("/e*/os-*") == ["/etc/os-release"]


def test_a_recording_never_runs_anything(tmp_path: Path) -> None:
    (tmp_path / "rocminfo.txt").write_text("Agent 1\n")
    host = BundleHost(tmp_path)
    assert host.captured("rocminfo.txt") == "Agent 1\n"
    assert host.run(["true"]).returncode is None
    assert host.which("sh") is None and host.environ == {}


def test_the_acting_user_is_sudos_caller_only_for_a_wizard_run_as_root() -> None:
    from wizard.host import acting_user

    admin_became_user = {"SUDO_USER": "ops", "USER": "user", "LOGNAME": "user"}  # Ansible: become_user as an admin
    assert acting_user(admin_became_user, euid=1000) == "user"
    assert acting_user({"SUDO_USER": "ops", "USER": "root"}, euid=0) == "ops"  # sudo rocm-wizard: the caller
    assert acting_user({"SUDO_USER": "root", "USER": "root"}, euid=0) == "root"
    assert acting_user({"LOGNAME": "me"}, euid=1000) == "me" and acting_user({}, euid=1000) is None


def test_the_session_groups_are_this_processs_own_and_only_on_the_running_machine(tmp_path: Path) -> None:
    import grp

    own = LiveHost(environ={"PATH": "/usr/bin:/bin"}).session_groups()
    gids = dict.fromkeys([os.getgid(), *os.getgroups()])
    assert own is not None and set(own) == {grp.getgrgid(g).gr_name for g in gids if _named(g)}
    assert LiveHost(tmp_path).session_groups() is None  # a sandbox root: not its user's session
    assert LiveHost(environ={"SUDO_USER": "ann", "PATH": "/usr/bin"}).session_groups() is None  # root's groups
    (tmp_path / "lspci.txt").write_text("")
    assert BundleHost(tmp_path).session_groups() is None  # a recording: nobody's session


def _named(gid: int) -> bool:
    import grp

    try:
        grp.getgrgid(gid)
    except KeyError:
        return False
    return True
