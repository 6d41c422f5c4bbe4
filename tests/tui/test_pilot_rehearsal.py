"""Pilot tests of the rehearsal offer on a machine without an AMD GPU: a real Debian 12 root where mmdebstrap
is available (key d), otherwise the line saying what to install, and the stand-in sandbox (key r, or d
when no real root can be built)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.tui.helpers import FakeAuth, choose, rehearse_first_profile, sync, wait_for
from tests.tui.test_pilot import SIZE, screen_text
from wizard.machine_session import MachineSession, MachineSpec
from wizard.cli import build_parser
from wizard.commands import Context, resolve_plan_or_fail
from wizard.runner import planfile
from wizard.runner.records import RunState
from wizard.session import Stage
from wizard.tui.app import make_app
from wizard.tui.services import Services, real_root_unavailable


def notifications(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.message for n in app._notifications]


@pytest.mark.integration
@sync
async def test_without_mmdebstrap_it_says_what_to_install_and_rehearses_in_the_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import wizard.realroot.base as rb

    monkeypatch.setattr(rb, "mmdebstrap", lambda: None)
    svc = Services(MachineSession(MachineSpec(verify_python=sys.executable)), rehearsal_root=tmp_path / "rehearsal",
                   authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        if app.session.has_amd_gpu:
            pytest.skip("this machine has an AMD GPU")
        text = " ".join(screen_text(app).split())
        why = "apt-get install mmdebstrap" if os.geteuid() == 0 else "needs root on the host"
        assert "A rehearsal on a real Debian 12 root (real apt, dpkg, pip) is not available here" in text
        assert why in text and "Press d" not in text
        await pilot.press("d")
        await pilot.pause()
        assert type(app.screen).__name__ == "RehearsalModal"  # which machine; the first is seed-7900xt
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.machine.startswith("sandbox:") and app.session.stage == Stage.DETECT
        assert any(why in n and "rehearsing in the stand-in sandbox" in n for n in notifications(app))
        assert (tmp_path / "rehearsal" / "seed-7900xt").is_dir()
        assert not (tmp_path / "rehearsal" / "seed-7900xt-debian12").exists()


@pytest.mark.system
@pytest.mark.realroot
@pytest.mark.skipif(os.environ.get("ROCM_WIZARD_REALROOT_ALL") != "1",
                    reason="slow real-root test: ROCM_WIZARD_REALROOT_ALL=1")
@sync
async def test_with_mmdebstrap_it_offers_opens_and_runs_a_real_debian_12_root(tmp_path: Path) -> None:
    why = real_root_unavailable()
    if why:
        pytest.skip(why)
    svc = Services(MachineSession(), rehearsal_root=tmp_path / "rehearsal", authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        if app.session.has_amd_gpu:
            pytest.skip("this machine has an AMD GPU")
        assert "Press d to rehearse on a real Debian 12 root" in " ".join(screen_text(app).split())
        await pilot.press("d")
        await pilot.pause()
        assert type(app.screen).__name__ == "RehearsalModal"
        await pilot.press("enter")  # seed-7900xt
        await pilot.pause()
        assert any("building a real Debian 12 root" in n for n in notifications(app))
        await wait_for(pilot, lambda: app.session.machine.startswith("realroot:"), timeout=1200)
        root = tmp_path / "rehearsal" / "seed-7900xt-debian12"
        assert app.session.machine == f"realroot:{root}"
        assert app.session.has_amd_gpu and app.session.stage == Stage.DETECT
        facts = app.session.facts
        assert facts.rocm.version == "6.2.0" and [g.gfx for g in facts.gpus] == ["gfx1100", "gfx1100"]
        assert app.services.relaunch_hint == f"rocm-wizard --sandbox {root} --root debian12"
        assert (root / "var/lib/dpkg/status").read_text().count("Package: rocm-core") == 1  # real dpkg's database
        assert any(o.name == "downgrade-6.2" and o.applicable for o in app.plan_options())
        # the TUI plans with the root's own mirror (issue 20: it planned for upstream hosts, and every plan failed
        # its preflight at step 1): the CLI's plan for the same root, byte for byte
        await choose(app, pilot, "downgrade-6.2")
        assert app.session.stage == Stage.REVIEW and app.session.resolved is not None, app.session.resolve_error
        text = planfile.dumps(app.session.resolved)
        assert "http://127.0.0.1:" in text  # the root's mirror
        assert "https://repo.radeon.com" not in text and "https://download.pytorch.org" not in text
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None)
    argv = ["--sandbox", str(root), "--root", "debian12"]
    ctx = Context(build_parser(argv).parse_args(argv))  # `rocm-wizard --sandbox ROOT --root debian12 --plan ...`
    try:
        assert planfile.dumps(resolve_plan_or_fail("downgrade-6.2", ctx)) == text
    finally:
        ctx.close()
    # the next start on the rehearsal machine runs downgrade-6.2 to the reboot
    app = make_app(svc.rehearsal("seed-7900xt", real=True))
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "downgrade-6.2")
        assert app.session.resolved is not None and planfile.dumps(app.session.resolved) == text
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RebootModal" or app.session.stage == Stage.FAILED,
                       timeout=1200)
        assert app.session.stage != Stage.FAILED, failure_text(app)
        await pilot.press("n")  # reboot now: the root's reboot gives it a new boot id
        await wait_for(pilot, lambda: app.return_code is not None, timeout=300)
    assert app.return_code == 3
    again = svc.rehearsal("seed-7900xt", real=True)  # the next start on the rehearsal machine resumes and finishes
    app2 = make_app(again)
    async with app2.run_test(size=SIZE) as pilot:
        assert app2.session.stage == Stage.RESUME
        await pilot.press("r")
        await wait_for(pilot, lambda: app2.session.stage in (Stage.REPORT, Stage.FAILED), timeout=1200)
        assert app2.session.stage == Stage.REPORT, failure_text(app2)
        assert app2.session.run.state is RunState.DONE


def failure_text(app) -> str:  # type: ignore[no-untyped-def]
    f = app.session.run.failure
    return f"{f.message}: {' | '.join(f.tail)}" if f is not None else str(app.session.run.error)


@pytest.mark.integration
@sync
async def test_without_a_cpu_torch_the_rehearsal_offers_to_make_one_or_says_it_is_not_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --verify-python, no $ROCM_WIZARD_TEST_TORCH_PYTHON, none made before: the offer (what it would run),
    and declined, a loud "skipped: no torch to verify with". The making itself is never run here."""
    from wizard.tui.services import CPU_TORCH_INDEX, NO_TORCH, TORCH_PYTHON_ENV

    monkeypatch.delenv(TORCH_PYTHON_ENV, raising=False)
    svc = Services(MachineSession(), rehearsal_root=tmp_path / "rehearsal", authenticator=FakeAuth())
    assert svc.find_cpu_torch() is None
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await rehearse_first_profile(app, pilot)
        await wait_for(pilot, lambda: type(app.screen).__name__ == "VerifyTorchModal")
        text = " ".join(screen_text(app).split())
        assert "No torch to verify with" in text and "NOT verified" in text
        assert f"-m venv {tmp_path / 'rehearsal' / 'cpu-torch'}" in text and CPU_TORCH_INDEX in text
        await pilot.press("escape")  # cancel: no rehearsal, nothing made
        await pilot.pause()
        assert not app.session.machine.startswith("sandbox:")
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "VerifyTorchModal")
        await pilot.press("s")  # rehearse without verifying: said loudly
        await wait_for(pilot, lambda: app.session.machine.startswith("sandbox:"))
        loud = [n for n in app._notifications if NO_TORCH in n.message]
        assert loud and loud[0].severity == "warning" and loud[0].title == "NOT verified"
        assert app.services.verify_python is None
        assert not (tmp_path / "rehearsal" / "cpu-torch").exists()


@pytest.mark.integration
@sync
async def test_a_cpu_torch_found_is_used_without_asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.tui.services import TORCH_PYTHON_ENV

    fake = tmp_path / "torch-python"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv(TORCH_PYTHON_ENV, str(fake))
    svc = Services(MachineSession(), rehearsal_root=tmp_path / "rehearsal", authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await rehearse_first_profile(app, pilot)
        await wait_for(pilot, lambda: app.session.machine.startswith("sandbox:"))
        assert app.services.verify_python == str(fake)  # the rehearsal's Verify step runs with it
        assert not any("no torch to verify with" in n.message for n in app._notifications)
