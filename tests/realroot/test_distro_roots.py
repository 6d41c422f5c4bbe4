"""Real distributions as starting points (issue 22): roots whose ROCm (and PyTorch) are Debian's own packages,
installed by real apt from Debian's archive when the base is made (cached like every base), built through the
CLI as a user builds them (``--sandbox DIR --profile NAME --root debian12|debian13``), and read by ``detect``
as they are: the facts are compared with what the root's dpkg status and files say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.profiles import DISTRO_PROFILES

pytestmark = [pytest.mark.system, pytest.mark.realroot]


def _dpkg(root: Path) -> dict[str, str]:
    """name -> version of every installed package, from the root's own dpkg status."""
    out: dict[str, str] = {}
    for stanza in (root / "var/lib/dpkg/status").read_text().split("\n\n"):
        f = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, re.M))
        if f.get("Status", "").endswith(" installed"):
            out[f["Package"]] = f["Version"]
    return out


def _short(version: str) -> str:
    mo = re.match(r"^(?:\d+:)?(\d+\.\d+(?:\.\d+)?)", version)
    assert mo, version
    return mo.group(1)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:  # type: ignore[type-arg]
    """Each distro profile's root, built once for the module, and its ``detect --json``."""
    out = {}
    for name, kind in (("debian12-distro-rocm", "debian12"), ("debian13-distro-rocm", "debian13"),
                       ("debian13-mixed", "debian13")):
        d = tmp_path_factory.mktemp(name) / "root"
        res = wizard_cli("--sandbox", str(d), "--profile", name, "--root", kind, "detect", "--json", timeout=3600)
        assert res.returncode == 0, f"{name}: {res.stderr[-2000:]}"
        out[name] = (d, json.loads(res.stdout))
    return out


@pytest.mark.parametrize("name", ["debian12-distro-rocm", "debian13-distro-rocm"])
def test_detect_reads_debians_own_rocm_as_it_is(built: dict, name: str) -> None:  # type: ignore[type-arg]
    root, facts = built[name]
    prof = DISTRO_PROFILES[name]
    dpkg = _dpkg(root)
    assert set(prof.distro_packages) <= set(dpkg), sorted(set(prof.distro_packages) - set(dpkg))
    # Debian's layout: no /opt/rocm, rocminfo in /usr/bin, the HIP runtime in the multiarch directory
    assert not (root / "opt/rocm").exists() and (root / "usr/bin/rocminfo").is_file()
    assert list((root / "usr/lib/x86_64-linux-gnu").glob("libamdhip64.so.5*"))
    os_release = dict(re.findall(r'^([A-Z_]+)="?([^"\n]*)"?$', (root / "etc/os-release").read_text(), re.M))
    assert (facts["os"]["id"], facts["os"]["version"]) == ("debian", os_release["VERSION_ID"])
    assert facts["os"]["version"] == ("12" if prof.suite == "bookworm" else "13")
    rocm = facts["rocm"]
    assert [i["stream"] for i in rocm["installs"]] == ["distro"], rocm["installs"]
    inst = rocm["installs"][0]
    assert inst["version"] == _short(dpkg["rocminfo"]) and inst["path"] is None
    assert (rocm["version"], rocm["stream"]) == (_short(dpkg["rocminfo"]), "distro")
    debian_rocm = {p for p in dpkg if p in prof.distro_packages and p != "python3-torch"}
    assert debian_rocm <= set(inst["packages"]), sorted(debian_rocm - set(inst["packages"]))
    assert not rocm["apt_sources"]  # Debian's archive lines are gone from the rehearsal root
    if "python3-torch" in prof.distro_packages:
        system = [e for e in facts["python_envs"] if e["kind"] == "system" and e["torch"]]
        # Debian's python3-torch, read from its files: "2.6.0+debian", a CPU build (not a ROCm one)
        assert [e["torch"].split("+")[0] for e in system] == [_short(dpkg["python3-torch"])], facts["python_envs"]
        assert (system[0]["path"], system[0]["build"]) == ("/usr", "cpu")


@pytest.mark.parametrize("name", ["debian12-distro-rocm", "debian13-distro-rocm"])
def test_debians_rocminfo_and_rocm_smi_run_without_a_gpu(built: dict, name: str) -> None:  # type: ignore[type-arg]
    """The real binaries inside the root: no GPU and no kernel driver there, so they fail, with their own
    error text and an exit code, never a crash (a signal)."""
    from wizard.realroot.machine import open_root

    root = open_root(built[name][0])
    info = root.run(["/usr/bin/rocminfo"], timeout=120)
    assert info.returncode == 1, (info.returncode, info.stdout[-500:], info.stderr[-500:])
    assert "ROCk module is NOT loaded, possibly no GPU devices" in info.stdout + info.stderr
    smi = root.run(["/usr/bin/rocm-smi"], timeout=120)  # Debian's rocm-smi says so and exits 0
    assert smi.returncode >= 0 and "Driver not initialized (amdgpu not found in modules)" in smi.stdout + smi.stderr, \
        (smi.returncode, smi.stdout[-500:], smi.stderr[-500:])


def test_the_mixed_root_holds_both_streams(built: dict) -> None:  # type: ignore[type-arg]
    root, facts = built["debian13-mixed"]
    dpkg = _dpkg(root)
    assert "libamdhip64-5" in dpkg and "amdgpu-install" in dpkg
    # AMD's rocminfo has the same name as Debian's: apt replaced Debian's with AMD's (AMD's build number)
    assert ".60204" in dpkg["rocminfo"], dpkg["rocminfo"]
    streams = {i["stream"]: i for i in facts["rocm"]["installs"]}
    assert set(streams) == {"legacy", "distro"}, facts["rocm"]["installs"]
    assert streams["distro"]["version"] == _short(dpkg["libhsa-runtime64-1"])
    assert {"libamdhip64-5", "librocblas0"} <= set(streams["distro"]["packages"])
    assert streams["legacy"]["version"] == "6.2.4" and streams["legacy"]["path"] == "/opt/rocm-6.2.4"
    assert (root / "opt/rocm-6.2.4").is_dir()
    assert facts["rocm"]["version"] == "6.2.4"  # AMD's is the one in use; Debian's is reported beside it


def test_distro_roots_are_real_roots_only(tmp_path: Path) -> None:
    res = wizard_cli("--sandbox", str(tmp_path / "box"), "--profile", "debian13-distro-rocm", "detect")
    assert res.returncode != 0
    assert "exists only as a real root (Debian's own packages): add --root debian13" in res.stderr
    res = wizard_cli("--sandbox", str(tmp_path / "r"), "--profile", "debian13-distro-rocm", "--root", "debian12",
                     "detect")
    assert res.returncode != 0 and "--root debian12 cannot hold it" in res.stderr, res.stderr[-500:]
