"""A site mirror given with a key fingerprint is trusted only as given for the Core SDK key too (AMD's key
has no fingerprint in the knowledge base, so the plan takes whatever its URL serves): right after the key
goes into its keyring, an action stops the run unless the keyring holds exactly that key. Checked with the
real gpg against the rehearsal mirror's own key and a key it is not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .test_mirror_core_sdk import DEBIAN12

import pytest

from wizard.mirror.apply import KEY_IS, apply
from wizard.mirror.build import MirrorManifest
from wizard.mirror.config import Mirror, MirrorConfig
from wizard.planner import resolve_plan
from wizard.steps.core_sdk_install import KEYRING

pytestmark = pytest.mark.integration


def _pins(mirrors: MirrorConfig) -> list[tuple[str, ...]]:
    rp = apply(resolve_plan("core-sdk", DEBIAN12, state_dir="/var/lib/rocm-wizard", wizard_python="python3"),
               mirrors)
    step = next(s for s in rp.steps if s.kind == "core_sdk_install")
    argvs = [a.argv for a in step.actions]
    at = next(i for i, a in enumerate(argvs) if a[:3] == ("sh", "-c", KEYRING))
    return [a for a in argvs[at + 1:at + 2] if a[:3] == ("sh", "-c", KEY_IS)]


def test_core_sdk_key_from_a_mirror_is_trusted_only_as_given(mirror: MirrorManifest, tmp_path: Path) -> None:
    base = mirror.base_url
    given = MirrorConfig((Mirror("stable.repo.amd.com", f"{base}/stable.repo.amd.com", "test",
                                 key_fingerprint=mirror.key_fingerprint),))
    pins = _pins(given)
    assert len(pins) == 1 and pins[0][-2:] == ("/etc/apt/keyrings/amdrocm.gpg", mirror.key_fingerprint)
    # without a fingerprint nothing is pinned (the knowledge base has none for AMD's key)
    assert _pins(MirrorConfig((Mirror("stable.repo.amd.com", f"{base}/stable.repo.amd.com", "test"),))) == []

    def check(keyring: Path, fpr: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", KEY_IS, "sh", str(keyring), fpr], capture_output=True, text=True,
                              timeout=60)

    ok = check(mirror.keyring, mirror.key_fingerprint)
    assert ok.returncode == 0, ok.stderr
    other = "0123456789ABCDEF0123456789ABCDEF01234567"
    bad = check(mirror.keyring, other)
    assert bad.returncode == 1
    assert bad.stderr.splitlines() == [f"{mirror.keyring} holds key(s) {mirror.key_fingerprint}, not the mirror key "
                                       f"{other} that was given"]
    empty = tmp_path / "empty.gpg"
    empty.write_bytes(b"")
    none = check(empty, mirror.key_fingerprint)
    assert none.returncode == 1 and none.stderr.strip(), none.stderr  # says why, whatever gpg's wording
