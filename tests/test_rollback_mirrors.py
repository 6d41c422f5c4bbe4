"""A rollback fetches through the mirrors its plan was resolved with (the plan's own record), also on a host whose
own configuration names no mirror: a fleet host whose plan the controller resolved against a site or rehearsal
mirror reinstalls the removed release from that mirror, not from upstream."""

from __future__ import annotations

import pytest

from wizard.mirror.apply import apply, plan_mirrors, through
from wizard.mirror.config import Mirror, MirrorConfig
from wizard.model import Action, ResolvedPlan, StepPlan

pytestmark = pytest.mark.unit

FP = "73F0F8B0E4A1D4C9B1B2C3D4E5F60718293A4B5C"
MIRRORS = MirrorConfig((Mirror("repo.radeon.com", "http://127.0.0.1:8080/repo.radeon.com", "--mirror", FP,
                               insecure=True),
                        Mirror("download.pytorch.org/whl", "https://user:secret@mirror.example/pt", "mirrors.toml")))


def test_a_plan_resolved_with_mirrors_gives_them_back_without_logins() -> None:
    plan = apply(ResolvedPlan("p", "p", "why", (("rocm", "6.4.4"),), (StepPlan("purge", "purge", ()),)), MIRRORS)
    got = {m.origin: m for m in plan_mirrors(plan).mirrors}
    assert got["repo.radeon.com"].url == "http://127.0.0.1:8080/repo.radeon.com"
    assert got["repo.radeon.com"].key_fingerprint == FP and got["repo.radeon.com"].insecure
    assert got["download.pytorch.org/whl"].url == "https://mirror.example/pt"  # the login stays out of the plan
    assert plan_mirrors(ResolvedPlan("p", "p", "why", (), ())) == MirrorConfig()


def test_an_undo_made_at_rollback_time_goes_through_the_plans_mirrors() -> None:
    url = "https://repo.radeon.com/amdgpu-install/6.2/ubuntu/jammy/amdgpu-install_6.2.60200-1_all.deb"
    undo = Action(("wget", "-O", "/var/lib/rocm-wizard/backup/x.deb", url), "download amdgpu-install", root=True)
    got = through(undo, MIRRORS)
    assert got.argv[-1] == "http://127.0.0.1:8080/repo.radeon.com/amdgpu-install/6.2/ubuntu/jammy/" \
                           "amdgpu-install_6.2.60200-1_all.deb"
    assert got.root and through(undo, MirrorConfig()) is undo


def test_the_purge_undo_reads_the_restored_lists_before_reinstalling_from_them() -> None:
    from wizard.kb import load_kb
    from wizard.steps._common import UndoContext
    from wizard.steps.purge import undo

    step = StepPlan("purge", "remove ROCm", (Action(("apt-get", "-y", "purge", "rocm"), "purge", root=True,
                                                    destructive=True),))
    manifest = {"rocm": {"version": "6.2.0"}, "packages": {"manager": "apt"}, "backup_dir": "/b",
                "machine": {"os": "ubuntu", "version": "22.04", "codename": "jammy"}, "driver": {"kind": "dkms"}}
    u = UndoContext(step=step, index=2, ran=(0,), manifest=manifest, read_text=lambda p: None, glob=lambda p: [],
                    kb=load_kb())
    argvs = [a.argv for _, a in undo(u).actions]
    assert argvs[0][:2] == ("tar", "-xzf") and argvs[1][0] == "wget"
    assert argvs[2][:3] == ("apt-get", "-y", "install") and argvs[3] == ("apt-get", "update")
    assert argvs[4] == ("amdgpu-install", "-y", "--usecase=rocm")
