"""The sandbox's pip installs wheels offline as pip does (``--no-index --find-links DIR``), which
``fleet run --engine`` rehearses on sandbox hosts: the requirement and what its metadata requires, each from its
wheel in DIR, unpacked into the venv; a requirement no wheel there satisfies fails before anything changes."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from wizard.sandbox import open_sandbox

pytestmark = pytest.mark.integration


def wheel(d: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(d / f"{name}-{version}-py3-none-any.whl", "w") as z:
        z.writestr(f"{name}/__init__.py", f"__version__ = {version!r}\n")
        z.writestr(f"{info}/METADATA", meta)
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")


def test_pip_installs_a_requirement_and_its_dependencies_from_the_wheels_of_a_directory(tmp_path: Path) -> None:
    root = tmp_path / "m"
    host = open_sandbox(root, "rx9070xt-noble")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        exe = str(root) + argv[0] if argv[0].startswith("/") else host.which(argv[0])
        assert exe
        return subprocess.run([exe, *argv[1:]], capture_output=True, text=True, env=dict(host.environ),
                              stdin=subprocess.DEVNULL, timeout=120)

    wheels = root / "opt/w"
    wheels.mkdir(parents=True)
    wheel(wheels, "alpha", "1.0", ("beta>=2", "gamma; extra == 'docs'"))
    wheel(wheels, "beta", "2.1")
    assert run("python3", "-m", "venv", "/opt/v").returncode == 0
    (site,) = (root / "opt/v/lib").glob("python*/site-packages")
    missing = run("/opt/v/bin/python", "-m", "pip", "install", "--no-index", "--find-links", "/opt/w", "alpha==2.0")
    assert missing.returncode == 1 and "No matching distribution found for alpha" in missing.stderr
    assert not list(site.glob("*.dist-info"))
    res = run("/opt/v/bin/python", "-m", "pip", "install", "--no-index", "--find-links", "/opt/w", "--force-reinstall",
              "alpha==1.0")
    assert res.returncode == 0, res.stderr
    assert "Successfully installed alpha-1.0 beta-2.1" in res.stdout
    assert (site / "alpha/__init__.py").read_text() == "__version__ = '1.0'\n"
    assert (site / "beta-2.1.dist-info/INSTALLER").read_text() == "pip\n"
    freeze = run("/opt/v/bin/pip", "freeze")
    assert freeze.stdout.split() == ["alpha==1.0", "beta==2.1"]
    (wheels / "beta-2.1-py3-none-any.whl").unlink()
    gone = run("/opt/v/bin/pip", "install", "--no-index", "--find-links", "/opt/w", "alpha")
    assert gone.returncode == 1 and "No matching distribution found for beta" in gone.stderr
