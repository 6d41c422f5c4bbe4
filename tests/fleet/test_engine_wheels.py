"""The wheels ``fleet run --engine`` installs on every host: the running wizard's own wheel (built from the checkout,
or packed from an installed wizard) and its pure-Python dependencies, packed again from their installed files; real
pip installs them offline into a fresh venv, where the wizard runs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# tiers per test: the slow real-tool runs are system (python -m pytest -m system)
pytestmark = pytest.mark.timeout(900)


@pytest.mark.system
def test_the_wheel_set_installs_offline_into_a_fresh_venv_and_packs_the_same_bytes_again(tmp_path: Path) -> None:
    from wizard.fleet.wheels import wheel_set

    ws = wheel_set(tmp_path / "cache")
    assert wheel_set(tmp_path / "cache") == ws  # packed again from the same files: the same build id
    own = next(f for f in ws.files if f.startswith("rocm_wizard-"))
    with zipfile.ZipFile(ws.directory / own) as z:
        assert "wizard/fleet/engine.py" in z.namelist() and "wizard/plans/upgrade-6.4.toml" in z.namelist()
    assert {f.split("-")[0].lower() for f in ws.files} >= {"rocm_wizard", "textual", "rich", "sh", "packaging"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    res = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--no-index", "--find-links", str(ws.directory), f"rocm-wizard=={ws.version}"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert subprocess.run([str(venv / "bin/pip"), "check"], capture_output=True, timeout=120).returncode == 0
    out = subprocess.run([str(venv / "bin/rocm-wizard"), "--version"], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == f"rocm-wizard {ws.version}"
    st = subprocess.run([str(venv / "bin/python"), "-m", "wizard", "--state-dir", str(tmp_path / "state"), "status",
                         "--json"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert st.returncode == 0 and '"state": "none"' in st.stdout, st.stderr


@pytest.mark.integration
def test_a_dependency_with_compiled_files_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.fleet import FleetError, wheels

    real = wheels._installed

    class Compiled:
        version = "1.0"
        metadata = {"Name": "fastthing"}

        def read_text(self, name: str) -> str | None:
            return "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n" if name == "WHEEL" else None

    monkeypatch.setattr(wheels, "_installed", lambda n: Compiled() if n == "fastthing" else real(n))
    with pytest.raises(FleetError, match="fastthing 1.0 is not a pure-Python wheel .*cp311-cp311-linux_x86_64"):
        wheels._pack_installed("fastthing", tmp_path)


@pytest.mark.integration
def test_an_egg_info_of_the_checkout_does_not_shadow_the_installed_wizard(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Started from a source checkout, ``sys.path`` holds the checkout's build-time ``rocm_wizard.egg-info`` first:
    the wheel set is made from the distribution pip installed (its ``.dist-info`` with a RECORD)."""
    from wizard.fleet import wheels

    egg = tmp_path / "rocm_wizard.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: rocm-wizard\nVersion: 0.1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = wheels._installed("rocm-wizard")
    assert found.read_text("RECORD") is not None
    assert not str(getattr(found, "_path", "")).startswith(str(tmp_path))
