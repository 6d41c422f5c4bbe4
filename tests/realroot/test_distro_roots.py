"""Real distributions as starting points (issue 22): roots whose ROCm (and PyTorch) are Debian's own packages,
installed by real apt from Debian's archive when the base is made (cached like every base), built through the
CLI as a user builds them (``--sandbox DIR --profile NAME --root debian12|debian13``), and read by ``detect``
as they are: the facts are compared with what the root's dpkg status and files say."""

from __future__ import annotations

import json
import re
import shutil
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


def test_debians_python3_torch_is_reported_with_what_it_shadows(built: dict) -> None:  # type: ignore[type-arg]
    """In the Debian 13 root: a venv made by the root's own python3 with --system-site-packages (no torch of its
    own: the real interpreter imports Debian's), a PYTHONPATH line in the user's ~/.bashrc, and python3 on PATH
    being Debian's: detect names all three under ``system_torch`` and in one line, diagnose in a finding."""
    from wizard.realroot.machine import open_root

    d = built["debian13-distro-rocm"][0]
    root = open_root(d)
    venv, bashrc = "/home/user/sees-debian", d / "home/user/.bashrc"
    before = bashrc.read_text()
    try:
        made = root.run(["python3", "-m", "venv", "--system-site-packages", "--without-pip", venv], as_user=True)
        assert made.returncode == 0, made.stderr[-1000:]
        where = root.run([f"{venv}/bin/python", "-c", "import importlib.util as u; print(u.find_spec('torch').origin)"],
                         as_user=True)
        assert where.stdout.strip() == "/usr/lib/python3/dist-packages/torch/__init__.py", where
        bashrc.write_text(before + "export PYTHONPATH=/usr/lib/python3/dist-packages\n")
        line = len((before + "x").splitlines())
        facts = json.loads(wizard_cli("--sandbox", str(d), "detect", "--json").stdout)
        doc = facts["system_torch"]
        assert (doc["torch"].split("+")[0], doc["path"]) == (_short(_dpkg(d)["python3-torch"]), "/usr"), doc
        assert [(s["how"], s["where"]) for s in doc["shadows"]] == [
            ("venv", venv), ("PYTHONPATH", f"~/.bashrc:{line}"), ("python3", "/usr/bin/python3")], doc
        text = wizard_cli("--sandbox", str(d), "detect").stdout
        assert f"is what `import torch` loads for: venv {venv}; PYTHONPATH ~/.bashrc:{line}; python3 " \
               "/usr/bin/python3" in " ".join(text.split()), text[-3000:]
        found = json.loads(wizard_cli("--sandbox", str(d), "diagnose", "--json").stdout)
        ours = [f for f in found["findings"] + found["to_check"] if f["id"] == "system-torch-shadows"]
        assert ours and any(f"{venv}/pyvenv.cfg line 2" in e for e in ours[0]["evidence"]), ours
    finally:
        bashrc.write_text(before)
        shutil.rmtree(d / venv.lstrip("/"), ignore_errors=True)


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


def test_core_sdk_replaces_debians_rocm_and_runs_again_with_no_change(tmp_path: Path) -> None:
    """Debian 12 with Debian's ROCm 5.2: core-sdk purges Debian's packages (nothing else depends on them
    there), installs AMD's Core SDK and its torch; one stream remains. Run again: nothing changes."""
    d = tmp_path / "root"
    made = wizard_cli("--sandbox", str(d), "--profile", "debian12-distro-rocm", "--root", "debian12", "detect",
                      timeout=3600)
    assert made.returncode == 0, made.stderr[-2000:]
    debian = {p for p in _dpkg(d) if p in DISTRO_PROFILES["debian12-distro-rocm"].distro_packages}
    assert debian
    venv = "/home/user/rocm-wizard-venv"
    first = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--venv", venv, "--yes")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    after = _dpkg(d)
    assert not debian & set(after) and any(p.startswith("amdrocm") for p in after)
    facts = json.loads(wizard_cli("--sandbox", str(d), "detect", "--json").stdout)
    assert {i["stream"] for i in facts["rocm"]["installs"]} == {"core-sdk", "pip"}, facts["rocm"]["installs"]
    site = sorted(p.name for p in (d / venv.lstrip("/")).glob("lib/python3*/site-packages/*"))
    second = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--venv", venv, "--yes")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    assert _dpkg(d) == after
    assert sorted(p.name for p in (d / venv.lstrip("/")).glob("lib/python3*/site-packages/*")) == site


def test_the_mixed_root_is_refused_by_default_and_repaired_to_one_stream_after_asking(tmp_path: Path) -> None:
    """core-sdk on the mixed machine: the purge of Debian's ROCm would take python3-torch (through libtorch2.6
    and its MPI/UCX libraries) along; apt's real simulation says so, the run stops naming them and the
    ``--allow-remove`` that lets them go, and nothing of dpkg's state changed. Given that consent, the plan
    purges AMD's 6.2.4 and Debian's ROCm with them and installs AMD's Core SDK: one stream remains. Run again
    with the same consent: nothing changes."""
    d = tmp_path / "root"
    made = wizard_cli("--sandbox", str(d), "--profile", "debian13-mixed", "--root", "debian13", "detect", timeout=3600)
    assert made.returncode == 0, made.stderr[-2000:]
    before = _dpkg(d)
    run = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--yes")
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    named = re.findall(r"^[\s|]*other installed packages depend on these and apt would remove them too: ([^;$]+);"
                       r".*, or allow it: --allow-remove (\S+)$", run.stdout, re.M)
    assert named, run.stdout[-3000:]
    dependents, consent = named[-1][0].split(), named[-1][1]
    assert {"python3-torch", "libtorch2.6"} <= set(dependents) and consent.split(",") == dependents, named
    assert _dpkg(d) == before
    assert wizard_cli("--sandbox", str(d), "abandon", "--yes").returncode == 0

    debian = set(DISTRO_PROFILES["debian13-mixed"].distro_packages) | set(dependents)
    dry = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--allow-remove", consent, "--dry-run")
    assert dry.returncode == 0, dry.stderr[-2000:]
    said = ""  # the script's comments joined back as written (wrapped at spaces, or after a hyphen)
    for line in (ln.lstrip("# ").strip() for ln in dry.stdout.splitlines() if ln.startswith("#")):
        said += line if said.endswith("-") else " " + line
    assert f"because you allowed it (--allow-remove): {' '.join(dependents)}" in said, dry.stdout[-3000:]
    first = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--allow-remove", consent, "--yes")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    after = _dpkg(d)
    assert not debian & set(after), sorted(debian & set(after))
    assert "amdgpu-install" not in after and not (d / "opt/rocm-6.2.4").exists()
    assert any(p.startswith("amdrocm") for p in after)
    facts = json.loads(wizard_cli("--sandbox", str(d), "detect", "--json").stdout)
    assert {i["stream"] for i in facts["rocm"]["installs"]} == {"core-sdk", "pip"}, facts["rocm"]["installs"]
    assert not [e for e in facts["python_envs"] if e["kind"] == "system" and e["torch"]]
    venv = d / "home/user/rocm-wizard-venv"
    site = sorted(p.name for p in venv.glob("lib/python3*/site-packages/*"))
    assert "torch" in site
    second = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--allow-remove", consent, "--yes")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    assert _dpkg(d) == after
    assert sorted(p.name for p in venv.glob("lib/python3*/site-packages/*")) == site


def test_pip_only_venv_does_not_see_debians_torch_and_pypi_in_pip_conf_stops_it(tmp_path: Path) -> None:
    """Debian 13 with python3-torch: a pip.conf putting PyPI beside the index stops pip-only at its preflight
    (the file and the line named, nothing changed); without it the plan's venv has its own torch and does not
    see Debian's, which stays; run again, nothing changes."""
    d = tmp_path / "root"
    made = wizard_cli("--sandbox", str(d), "--profile", "debian13-distro-rocm", "--root", "debian13", "detect",
                      timeout=3600)
    assert made.returncode == 0, made.stderr[-2000:]
    conf = d / "etc/pip.conf"
    conf.write_text("[global]\nextra-index-url = https://pypi.org/simple\n")
    venv = "/home/user/venv"
    trapped = wizard_cli("--sandbox", str(d), "--plan", "pip-only", "--venv", venv, "--yes")
    assert trapped.returncode == 1, trapped.stdout[-3000:]
    assert "/etc/pip.conf line 2: https://pypi.org/simple puts PyPI beside" in trapped.stdout, trapped.stdout[-3000:]
    assert not (d / venv.lstrip("/")).exists()
    assert f"--sandbox {d} --root debian13 rollback" in wizard_cli("--sandbox", str(d), "status").stdout
    assert wizard_cli("--sandbox", str(d), "abandon", "--yes").returncode == 0  # the stopped run; nothing changes
    conf.unlink()
    first = wizard_cli("--sandbox", str(d), "--plan", "pip-only", "--venv", venv, "--yes")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert "include-system-site-packages = false" in (d / "home/user/venv/pyvenv.cfg").read_text()
    from wizard.realroot.machine import open_root

    root = open_root(d)
    where = "import importlib.util as u; print(u.find_spec('torch').origin)"
    assert root.run([f"{venv}/bin/python", "-c", where], as_user=True).stdout.strip() == \
        f"{venv}/lib/python3.13/site-packages/torch/__init__.py"
    assert root.run(["python3", "-c", where], as_user=True).stdout.strip() == \
        "/usr/lib/python3/dist-packages/torch/__init__.py"  # Debian's, left alone
    dpkg, site = _dpkg(d), sorted(p.name for p in (d / venv.lstrip("/")).glob("lib/python3*/site-packages/*"))
    assert "python3-torch" in dpkg
    second = wizard_cli("--sandbox", str(d), "--plan", "pip-only", "--venv", venv, "--yes")
    assert second.returncode == 0, second.stdout[-3000:]
    assert _dpkg(d) == dpkg
    assert sorted(p.name for p in (d / venv.lstrip("/")).glob("lib/python3*/site-packages/*")) == site
