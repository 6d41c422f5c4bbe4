"""The wheel ships one top-level package, with steps/, plans/, the KB and the examples inside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                          "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    (whl,) = out.glob("rocm_wizard-*.whl")
    with zipfile.ZipFile(whl) as zf:
        return zf.namelist()


def test_one_top_level_name(wheel_names: list[str]) -> None:
    tops = {n.split("/", 1)[0] for n in wheel_names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"wizard"}


def test_steps_plans_kb_and_examples_ship_inside_wizard(wheel_names: list[str]) -> None:
    names = set(wheel_names)
    for step in (ROOT / "steps").glob("*.py"):
        assert f"wizard/steps/{step.name}" in names
    plans = sorted(p.name for p in (ROOT / "plans").glob("*.toml"))
    assert plans and all(f"wizard/plans/{p}" in names for p in plans)
    for kb in (ROOT / "wizard" / "kb").glob("*.json"):
        assert f"wizard/kb/{kb.name}" in names
    for snap in (ROOT / "wizard" / "kb" / "upstream").rglob("*"):  # the snapshots derived tables come from
        if snap.is_file():
            assert f"wizard/{snap.relative_to(ROOT / 'wizard')}" in names
    assert "wizard/verify/suite.py" in names
    for example in ("seed-7900xt", "seed-5600xt"):
        assert f"wizard/examples/{example}/rocminfo.txt" in names


def test_steps_and_plans_are_the_top_level_folders_without_symlinks() -> None:
    import wizard.plans
    import wizard.steps

    assert Path(wizard.steps.__file__).resolve().parent == ROOT / "steps"
    assert Path(next(iter(wizard.plans.__path__))).resolve() == ROOT / "plans"
    assert not any(p.is_symlink() for p in (ROOT / "wizard").iterdir())  # (examples hold recorded links)


def test_every_package_under_wizard_is_listed_for_the_wheel() -> None:
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "wizard").rglob("__init__.py")}
    assert found | {"wizard.steps", "wizard.plans"} == listed
