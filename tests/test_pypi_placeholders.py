"""PyPI's placeholders under ROCm's names (issue 22, point 4): the pip-config preflight reads pip's
configuration at every level and stops a plan whose venv would let PyPI answer beside the ROCm index, naming
the file and the line; the install itself reads no pip configuration; detect and diagnose recognise the
placeholders once installed. The placeholder names and versions are PyPI's own, from recorded copies of its
JSON API (tests/fixtures/pypi, each with its URL and date)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runner_helpers import calls, wizard

from wizard import preflight
from wizard.diagnose import diagnose
from wizard.host import BundleHost
from wizard.probes.python_envs import env_from_prefix, pypi_placeholder

pytestmark = pytest.mark.integration

PYPI = Path(__file__).parent / "fixtures" / "pypi"
INDEX = "https://download.pytorch.org/whl/rocm7.2"


def _recorded() -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(p.read_text()) for p in sorted(PYPI.glob("*.json"))]


def test_the_recorded_pypi_projects_are_the_placeholders_the_probe_knows() -> None:
    got = _recorded()
    assert {d["info"]["name"] for d in got} >= {"rocm", "rocm-sdk", "rocm-sdk-core", "rocm-sdk-libraries",
                                                 "rocm-sdk-device-gfx1201", "amd-torch-device-gfx1201"}
    for d in got:
        assert d["source"] == f"https://pypi.org/pypi/{d['info']['name']}/json" and d["recorded"]
        # one release each, a few hundred bytes to a few KB: nothing of ROCm is in them
        assert list(d["releases"]) == [d["info"]["version"]]
        assert all(f["size"] < 4096 for f in d["releases"][d["info"]["version"]])
        assert "placeholder" in (d["info"]["description"] + str(d["info"]["summary"])).lower()
        assert pypi_placeholder(d["info"]["name"], d["info"]["version"]), d["info"]["name"]
    # the names at AMD's versions are not placeholders
    assert not pypi_placeholder("rocm", "7.10.0")
    assert not pypi_placeholder("rocm-sdk-device-gfx1201", "7.10.0")
    assert not pypi_placeholder("torch", "0.1.0")


def _pip_config(tmp: Path, files: list[Path], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", preflight.PIP_CONFIG, INDEX, *map(str, files)], capture_output=True,
                          text=True, env=e, timeout=60)


def _levels(tmp: Path) -> list[Path]:
    return [tmp / "etc/xdg/pip/pip.conf", tmp / "etc/pip.conf", tmp / "home/.pip/pip.conf",
            tmp / "home/.config/pip/pip.conf", tmp / "venv/pip.conf"]


@pytest.mark.parametrize("level", range(5))
def test_pypi_as_an_extra_index_at_any_level_stops_with_the_file_and_line(tmp_path: Path, level: int) -> None:
    files = _levels(tmp_path)
    f = files[level]
    f.parent.mkdir(parents=True)
    f.write_text("[global]\ntimeout = 60\n\nextra-index-url =\n    https://example.org/simple\n"
                 "    https://pypi.org/simple\n")
    res = _pip_config(tmp_path, files, {})
    assert res.returncode == 1
    assert f"{f} line 6: https://pypi.org/simple puts PyPI beside https://example.org/simple" in res.stderr
    assert "rocm 0.1.0" in res.stderr


def test_a_later_level_overrides_an_earlier_one_as_pip_does(tmp_path: Path) -> None:
    files = _levels(tmp_path)
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
    files[1].write_text("[global]\nextra-index-url = https://pypi.org/simple\n")
    files[4].write_text("[install]\nextra-index-url = https://mirror.example/simple\n")  # the venv's wins
    res = _pip_config(tmp_path, files, {})
    assert res.returncode == 0, res.stderr
    # PyPI's default index beside a ROCm wheel index: the classic --extra-index-url trap
    files[4].write_text("[global]\nextra_index_url = https://download.pytorch.org/whl/rocm6.2\n")
    res = _pip_config(tmp_path, files, {})
    assert res.returncode == 1
    assert res.stderr.startswith("pip's default index: https://pypi.org/simple puts PyPI beside "
                                 f"https://download.pytorch.org/whl/rocm6.2 ({files[4]} line 2)")


def test_the_environment_and_pip_config_file(tmp_path: Path) -> None:
    files = _levels(tmp_path)
    res = _pip_config(tmp_path, files, {"PIP_EXTRA_INDEX_URL": "https://pypi.org/simple"})
    assert res.returncode == 1 and res.stderr.startswith("the environment's PIP_EXTRA_INDEX_URL: ")
    res = _pip_config(tmp_path, files, {"PIP_INDEX_URL": "https://pypi.python.org/simple",
                                        "PIP_EXTRA_INDEX_URL": "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/"})
    assert res.returncode == 1 and res.stderr.startswith("the environment's PIP_INDEX_URL: ")
    chosen = tmp_path / "chosen.conf"
    chosen.write_text("[global]\nextra-index-url = https://pypi.org/simple/\n")
    res = _pip_config(tmp_path, files, {"PIP_CONFIG_FILE": str(chosen)})
    assert res.returncode == 1 and res.stderr.startswith(f"{chosen} line 2: ")
    res = _pip_config(tmp_path, files, {"PIP_CONFIG_FILE": os.devnull, "PIP_EXTRA_INDEX_URL": ""})
    assert res.returncode == 0 and res.stdout.startswith("pip configuration: PyPI is not beside a ROCm index")


def test_pypi_in_pip_conf_stops_the_pip_only_plan_at_preflight(tmp_path: Path) -> None:
    """The proof: a pip.conf with PyPI as an extra index stops pip-only before anything changes."""
    box = tmp_path / "box"
    clean = {k: "" for k in os.environ if k.startswith("PIP_")}
    made = wizard(["--sandbox", str(box), "--profile", "seed-7900xt", "plans", "--json"], env=clean)
    assert made.returncode == 0, made.stderr
    conf = box / "etc/pip.conf"
    conf.write_text("[global]\nindex-url = https://download.pytorch.org/whl/rocm6.2\n"
                    "extra-index-url = https://pypi.org/simple\n")
    res = wizard(["--sandbox", str(box), "--plan", "pip-only", "--yes"], env=clean)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-2000:]
    out = res.stdout + res.stderr
    assert f"{conf} line 3: https://pypi.org/simple puts PyPI beside https://download.pytorch.org/whl/rocm6.2" \
        f" ({conf} line 2)" in out, out[-3000:]
    assert "FAILED preflight check" in out
    assert calls(box, "pip") == [] and not [c for c in calls(box, "venv-python") if "install" in c]
    # without the line the plan's own install is isolated from pip's configuration
    conf.write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
    script = wizard(["--sandbox", str(box), "--plan", "pip-only", "--dry-run"], env=clean)
    assert script.returncode == 0, script.stderr
    assert "env PIP_CONFIG_FILE=/dev/null /home/user/" in script.stdout
    assert "-m pip install --isolated --no-input --index-url" in script.stdout


def _venv_with(tmp_path: Path, dists: dict[str, str]) -> BundleHost:
    site = tmp_path / "root/home/user/venv/lib/python3.12/site-packages"
    for name, version in dists.items():
        d = site / f"{name}-{version}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return BundleHost(tmp_path)


def test_detect_and_diagnose_name_installed_placeholders(tmp_path: Path) -> None:
    recorded = {d["info"]["name"].replace("-", "_"): d["info"]["version"] for d in _recorded()
                if d["info"]["name"] in ("rocm", "rocm-sdk-core", "rocm-sdk-device-gfx1201")}
    host = _venv_with(tmp_path, {**recorded, "numpy": "2.1.0"})
    env = env_from_prefix(host, "/home/user/venv", "venv")
    assert env is not None
    assert env.placeholders == ("rocm 0.1.0", "rocm-sdk-core 0.1.0", "rocm-sdk-device-gfx1201 0.0.1.dev0")
    from wizard.model import Facts

    findings = diagnose(Facts(python_envs=(env,)))
    hit = next(f for f in findings if f.id == "pypi-rocm-placeholder")
    assert any("rocm 0.1.0" in e for e in hit.evidence), hit.evidence
    assert findings.index(hit) < next((i for i, f in enumerate(findings) if f.id == "therock-missing-device-package"),
                                      len(findings))
    assert "https://pypi.org/project/rocm/" in hit.sources


def test_amds_packages_under_the_same_names_are_no_finding(tmp_path: Path) -> None:
    """The near miss: the same names at AMD's versions (from AMD's index) are ROCm, not placeholders."""
    host = _venv_with(tmp_path, {"rocm": "7.10.0", "rocm_sdk_core": "7.10.0", "rocm_sdk_device_gfx1201": "7.10.0"})
    env = env_from_prefix(host, "/home/user/venv", "venv")
    assert env is not None and env.placeholders == () and env.rocm_sdk == "7.10.0"
    from wizard.model import Facts

    assert "pypi-rocm-placeholder" not in [f.id for f in diagnose(Facts(python_envs=(env,)))]
