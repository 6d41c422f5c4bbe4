"""Second security review, B4: a sandbox directory someone else owns (the README's ``--sandbox /tmp/rw`` flow,
pre-created by a local user who swaps ``.sandbox/bin`` while root rehearses) is refused with one line, and a
sandbox root built stays root's: the other user cannot swap its stand-ins."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from runner_helpers import wizard

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the attack is another user's directory used by root")]

NOBODY = pwd.getpwnam("nobody")


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={NOBODY.pw_uid}", f"--regid={NOBODY.pw_gid}", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=60)


def refused(r: subprocess.CompletedProcess[str], what: str) -> None:
    assert r.returncode != 0, r.stdout[-1000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing the sandbox" in lines[0] and what in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable sticky directory, as /tmp (in /tmp: the other user must reach it)."""
    d = Path(tempfile.mkdtemp(prefix="rw-shared-", dir="/tmp"))
    d.chmod(0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_directory_another_user_created_is_refused_and_nothing_runs(shared: Path) -> None:
    rw = shared / "rw"
    assert as_nobody("mkdir", str(rw)).returncode == 0
    r = wizard(["--sandbox", str(rw), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    refused(r, f"owned by uid {NOBODY.pw_uid}")
    assert list(rw.iterdir()) == []  # nothing built, nothing run


def test_a_sandbox_handed_to_another_user_is_refused(shared: Path) -> None:
    sb = shared / "sb"
    assert wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"]).returncode == 0
    subprocess.run(["chown", "-R", f"{NOBODY.pw_uid}", str(sb / ".sandbox")], check=True, timeout=60)
    refused(wizard(["--sandbox", str(sb), "detect"]), f"owned by uid {NOBODY.pw_uid}")
    subprocess.run(["chown", "-R", "0", str(sb / ".sandbox")], check=True, timeout=60)
    (sb / ".sandbox/bin/dpkg-query").chmod(0o777)
    refused(wizard(["--sandbox", str(sb), "detect"]), "writable by group or others")


def test_a_directory_above_that_another_user_owns_is_refused(shared: Path) -> None:
    theirs = shared / "theirs"
    assert as_nobody("mkdir", "-m", "0755", str(theirs)).returncode == 0
    refused(wizard(["--sandbox", str(theirs / "rw"), "--profile", "seed-7900xt", "detect"]),
            f"{theirs} is owned by uid {NOBODY.pw_uid}")
    assert not (theirs / "rw").exists()


def test_in_a_shared_directory_the_sandbox_root_builds_cannot_be_swapped(shared: Path) -> None:
    """The review's race: the other user renames .sandbox and puts their own stand-ins in its place. In a
    sandbox root built, that fails (root owns DIR, 0755), and the rehearsal runs root's stand-ins."""
    sb = shared / "rw"
    r = wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"])
    assert r.returncode == 0, r.stderr
    assert as_nobody("mv", str(sb / ".sandbox"), str(sb / ".sandbox.orig")).returncode != 0
    assert as_nobody("sh", "-c", f"echo 'id > {shared}/marker' > {sb}/.sandbox/bin/dpkg-query").returncode != 0
    r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert not (shared / "marker").exists()
