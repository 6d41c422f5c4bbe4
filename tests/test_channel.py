"""Issue 25, point 4: ``--channel nightly`` lets the plans use AMD's nightly indexes (with a warning that they
are not releases); the TUI's Choose offers the same choice (c), with the same warning.

Since the KB ingest of TheRock's publishing manifest (audit T2) the stable whl-next index serves the RX 5600
XT's gfx1010, so the nightly-only case is a Radeon VII / MI50 (gfx906, a recorded machine), and the 5600 XT
rehearsal on nightly keeps the stable index (stable ranks first) and runs to the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.cli import main
from tests.tui.helpers import sync

GFX906 = str(Path(__file__).parent / "fixtures" / "machines" / "vega-gfx906-debian12")  # nightly-only device extras

pytestmark = pytest.mark.integration


def plans_json(capsys: pytest.CaptureFixture[str], *args: str, machine: str = GFX906
               ) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["--from", machine, "plans", "--json", *args]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["plans"]}


def test_nightly_channel_opens_therock_pip_where_only_nightly_serves(capsys: pytest.CaptureFixture[str]) -> None:
    stable = plans_json(capsys)
    assert not stable["therock-pip"]["applicable"]
    assert "nightly" in " ".join(stable["therock-pip"]["reasons"])  # says which way forward exists
    nightly = plans_json(capsys, "--channel", "nightly")
    assert nightly["therock-pip"]["applicable"]
    assert "nightly" in str(nightly["therock-pip"]["target"].get("channel"))
    rx5600 = plans_json(capsys, machine="seed-5600xt")["therock-pip"]  # served by stable whl-next now
    assert rx5600["applicable"] and rx5600["target"].get("index") == "amd-whl-next"


def test_channel_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--from", "seed-5600xt", "plans", "--channel", "weekly"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_nightly_rehearsal_keeps_a_stable_index_that_serves_and_runs_to_the_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sb = tmp_path / "sb"
    capsys.readouterr()
    code = main(["--sandbox", str(sb), "--profile", "seed-5600xt", "--plan", "therock-pip", "--channel", "nightly",
                 "--yes"])
    captured = capsys.readouterr()
    assert code == 0, captured.out[-3000:] + captured.err[-2000:]
    assert "not releases" not in captured.err  # nightly is allowed, not preferred: stable whl-next serves gfx1010
    assert "done" in captured.out
    site = next((sb / "home/user/pytorch_venv-therock-pip/lib").glob("python*/site-packages"))
    names = {p.name for p in site.glob("*.dist-info")}
    assert {"torch-2.13.0+rocm10.0.0.dist-info", "amd_torch_device_gfx1010-2.13.0+rocm10.0.0.dist-info",
            "rocm_sdk_device_gfx1010-10.0.0.dist-info"} <= names
    assert not any("rocmnightly" in n for n in names)


@sync
async def test_choose_offers_the_nightly_channel_with_its_warning(tmp_path: Path) -> None:
    from wizard.host import open_recorded
    from wizard.machine_session import MachineSession
    from wizard.session import Stage
    from wizard.tui.app import make_app
    from wizard.tui.services import Services

    svc = Services(MachineSession(host=open_recorded(GFX906), read_only=True), export_dir=tmp_path)
    app = make_app(svc)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert app.session.stage == Stage.CHOOSE
        rows = {o.name: o for o in app.session.options}
        assert not rows["therock-pip"].applicable
        await pilot.press("c")
        await pilot.pause()
        rows = {o.name: o for o in app.plan_options()}
        assert rows["therock-pip"].applicable and svc.channel == "nightly"
        banner = app.screen.query_one("#nightly")
        assert "not releases" in str(banner.content)
        await pilot.press("c")
        await pilot.pause()
        assert svc.channel is None and not app.screen.query("#nightly")
