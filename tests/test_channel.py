"""Issue 25, point 4: a way forward for the RX 5600 XT that can be rehearsed. ``--channel nightly`` lets the
plans use AMD's nightly indexes (with a warning that they are not releases), the sandbox's index model knows
them, and the seed-5600xt rehearsal of therock-pip on nightly runs to the end. The TUI's Choose offers the
same choice (c), with the same warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.cli import main
from tests.tui.helpers import sync

pytestmark = pytest.mark.integration


def plans_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["--from", "seed-5600xt", "plans", "--json", *args]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["plans"]}


def test_nightly_channel_opens_therock_pip_for_the_5600xt(capsys: pytest.CaptureFixture[str]) -> None:
    stable = plans_json(capsys)
    assert not stable["therock-pip"]["applicable"]
    assert "nightly" in " ".join(stable["therock-pip"]["reasons"])  # says which way forward exists
    nightly = plans_json(capsys, "--channel", "nightly")
    assert nightly["therock-pip"]["applicable"]
    assert "nightly" in str(nightly["therock-pip"]["target"].get("channel"))


def test_channel_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--from", "seed-5600xt", "plans", "--channel", "weekly"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_nightly_rehearsal_runs_to_the_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sb = tmp_path / "sb"
    capsys.readouterr()
    code = main(["--sandbox", str(sb), "--profile", "seed-5600xt", "--plan", "therock-pip", "--channel", "nightly",
                 "--yes"])
    captured = capsys.readouterr()
    assert code == 0, captured.out[-3000:] + captured.err[-2000:]
    assert "not releases" in captured.err
    assert "done" in captured.out
    site = next((sb / "home/user/pytorch_venv-therock-pip/lib").glob("python*/site-packages"))
    names = {p.name for p in site.glob("*.dist-info")}
    # the sandbox's stand-in for a nightly build the knowledge base does not record (never a real number)
    assert {"torch-0+rocmnightly.dist-info", "amd_torch_device_gfx1010-0+rocmnightly.dist-info",
            "rocm_sdk_device_gfx1010-0+rocmnightly.dist-info"} <= names


@sync
async def test_choose_offers_the_nightly_channel_with_its_warning(tmp_path: Path) -> None:
    from wizard.host import open_recorded
    from wizard.session import Stage
    from wizard.tui.app import make_app
    from wizard.tui.services import Services

    svc = Services(host=open_recorded("seed-5600xt"), read_only=True, export_dir=tmp_path)
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
