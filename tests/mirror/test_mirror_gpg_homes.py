"""The throwaway signing key's GNUPGHOME never outlives its build, even a build killed outright: each home names
the process that made it, and the next one made sweeps away the homes of processes that are gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from wizard.mirror import keys

pytestmark = pytest.mark.integration


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary directory with a short path: gpg-agent puts its sockets in the home, and a Unix socket's address
    holds at most 107 bytes (pytest-xdist's tmp_path, /tmp/pytest-of-root/pytest-N/popen-gwN/<test name>/, leaves
    too few for rw-gpg-<pid>-<random>/S.gpg-agent.browser: "No agent running")."""
    d = Path(tempfile.mkdtemp(prefix="rwg-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_killed_builds_home_is_swept_by_the_next_key_and_a_live_ones_is_kept(
        short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = short_tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # a process that has exited (its pid not reused within this test)
    dead = tmp_path / f"rw-gpg-{dead_pid}-abcd1234"
    live = tmp_path / f"rw-gpg-{os.getpid()}-efgh5678"
    unrelated = tmp_path / "rw-gpg-notapid-x"
    for d in (dead, live, unrelated):
        d.mkdir(mode=0o700)
        (d / "pubring.kbx").write_bytes(b"")
    with keys.signing_key("sweep test <sweep@localhost>") as key:
        assert key.gnupghome.parent == tmp_path and key.gnupghome.name.startswith(f"rw-gpg-{os.getpid()}-")
        assert not dead.exists()
        assert live.is_dir() and unrelated.is_dir()
    assert not key.gnupghome.exists()  # its own home is removed on exit, as before
