"""Second security review, B9 (the half that can be fixed without inventing hashes): the legacy install's pinned
AMD key check passed a keyring holding the pinned key and another one (membership, ``grep -q``), and apt's
``signed-by`` then trusts both. Now it holds exactly like the Core SDK's ``KEY_IS``. Real gpg, two fresh keys."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from steps.rocm_install import KEY_CHECK

pytestmark = [pytest.mark.integration, pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")]


def _gpg(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["gpg", "--batch", "--homedir", str(home), *args], capture_output=True, timeout=120,
                          check=True)


def _fingerprint(home: Path, uid: str) -> str:
    out = _gpg(home, "--with-colons", "--list-keys", uid).stdout.decode()
    return next(line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:"))


@pytest.fixture
def gnupg_home(tmp_path: Path) -> Iterator[Path]:
    """A GNUPGHOME whose gpg-agent (gpg starts one for key generation) is stopped when the test ends."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    yield home
    subprocess.run(["gpgconf", "--kill", "all"], env={**os.environ, "GNUPGHOME": str(home)}, capture_output=True,
                   timeout=60)


def test_a_keyring_with_the_pinned_key_and_another_is_refused(tmp_path: Path, gnupg_home: Path) -> None:
    home = gnupg_home
    for uid in ("amd <amd@example.invalid>", "evil <evil@example.invalid>"):
        _gpg(home, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
    amd, evil = _fingerprint(home, "amd@example.invalid"), _fingerprint(home, "evil@example.invalid")
    only = tmp_path / "only.gpg"
    only.write_bytes(_gpg(home, "--export", amd).stdout)
    both = tmp_path / "both.gpg"
    both.write_bytes(_gpg(home, "--export", amd, evil).stdout)
    env = {**os.environ, "GNUPGHOME": str(home)}

    def check(keyring: Path, fpr: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", KEY_CHECK, "sh", str(keyring), fpr], capture_output=True, text=True,
                              timeout=60, env=env)

    assert check(only, amd).returncode == 0
    res = check(both, amd)
    assert res.returncode == 1 and "not only the AMD ROCm key" in res.stderr and evil in res.stderr
    assert check(only, evil).returncode == 1
