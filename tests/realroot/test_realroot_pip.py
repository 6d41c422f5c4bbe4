"""Real pip in a venv of the real root, from the mirror's wheel indexes; and which local version
``pip install --upgrade`` picks between ``+rocm7.2`` and ``+rocm10.0.0`` (TheRock issue 7183)."""

from __future__ import annotations

from typing import Callable

from packaging.version import Version

import pytest

from wizard.mirror.build import MirrorManifest
from wizard.mirror.server import MirrorServer
from wizard.mirror.simple_index import write_index
from wizard.mirror.wheels import WheelSpec, build_wheel
from wizard.realroot.machine import RealRoot

pytestmark = [pytest.mark.system, pytest.mark.realroot]

PIP = ["--disable-pip-version-check", "--no-input"]


def test_pip_installs_the_mirrors_wheels_into_a_venv(seeded: Callable[[str], RealRoot],
                                                      rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    _, m = rehearsal
    r = seeded("rx9070xt-noble")
    assert r.run(["python3", "-m", "venv", "--clear", "/home/user/venv"], as_user=True).returncode == 0
    index = m.url("https://download.pytorch.org/whl/rocm7.2")
    got = r.run(["/home/user/venv/bin/pip", "install", *PIP, "--index-url", index, "torch==2.11.0",
                 "torchvision==0.26.0", "torchaudio==2.11.0"], as_user=True)
    assert got.returncode == 0, got.stderr[-800:]
    assert "Successfully installed torch-2.11.0+rocm7.2 torchaudio-2.11.0+rocm7.2 torchvision-0.26.0+rocm7.2" \
        in got.stdout
    frozen = r.run(["/home/user/venv/bin/pip", "freeze", *PIP], as_user=True).stdout.split()
    assert frozen == ["torch==2.11.0+rocm7.2", "torchaudio==2.11.0+rocm7.2", "torchvision==0.26.0+rocm7.2"]
    lib = r.path / "home/user/venv/lib/python3.11/site-packages/torch/lib/rocblas/library"
    assert (lib / "TensileLibrary_lazy_gfx1201.dat").is_file()
    imp = r.run(["/home/user/venv/bin/python", "-c", "import torch"], as_user=True)
    assert imp.returncode == 1 and "rehearsal mirror is a placeholder" in imp.stderr
    assert (r.path / "home/user/venv/lib/python3.11/site-packages/torch").stat().st_uid == 1000


def test_pip_upgrade_picks_between_rocm_local_versions(seeded: Callable[[str], RealRoot],
                                                       rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    """Two builds of one torch that differ only in their local label, on one index (as a site mirror
    merging indexes would serve them): pip orders local labels segment by segment, and 'rocm7' sorts
    after 'rocm10' as text, so --upgrade moves a +rocm10.0.0 install to +rocm7.2."""
    _, m = rehearsal
    index = m.root / "test-local-versions"
    for local in ("rocm7.2", "rocm10.0.0"):
        v = f"2.13.0+{local}"
        build_wheel(WheelSpec("torch", v, ("cp311-cp311-linux_x86_64",),
                              (("torch/version.py", f"__version__ = {v!r}\n".encode()),), f"test torch {v}"),
                    "cp311-cp311-linux_x86_64", index)
    write_index(index)
    assert Version("2.13.0+rocm7.2") > Version("2.13.0+rocm10.0.0")  # PEP 440, as packaging implements it
    r = seeded("rx9070xt-noble")
    url = f"{m.base_url}/test-local-versions"
    assert r.run(["python3", "-m", "venv", "--clear", "/home/user/upgrade-venv"], as_user=True).returncode == 0
    pip = ["/home/user/upgrade-venv/bin/pip", "install", *PIP, "--index-url", url]
    first = r.run([*pip, "torch==2.13.0+rocm10.0.0"], as_user=True)
    assert "Successfully installed torch-2.13.0+rocm10.0.0" in first.stdout, first.stderr
    upgraded = r.run([*pip, "--upgrade", "torch"], as_user=True)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "Successfully installed torch-2.13.0+rocm7.2" in upgraded.stdout  # what real pip picked
    pinned = r.run([*pip, "--upgrade", "torch==2.13.0"], as_user=True)  # a public-version pin does not help
    assert "Requirement already satisfied: torch==2.13.0 " in pinned.stdout and "+rocm7.2" in pinned.stdout
