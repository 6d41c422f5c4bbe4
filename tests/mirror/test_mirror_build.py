"""The rehearsal mirror: what it serves comes from the knowledge base, and real tools accept it
(gpgv verifies its Release files, dpkg-deb reads its packages, pip installs its wheels)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from wizard.host import LiveHost
from wizard.kb import KnowledgeBase, load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.build import MirrorManifest
from wizard.mirror.server import MirrorServer
from wizard.mirror.simple_index import JSON_TYPE
from wizard.mirror.wheels import python_tag
from wizard.plan_file import builtin_plans
from wizard.probes.python_envs import env_from_prefix
from wizard.probes.rocm import _short_version
from wizard.profiles import PROFILES

pytestmark = pytest.mark.integration


def fetch(url: str, accept: str | None = None) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), resp.read()


def packages(m: MirrorManifest, repo_url: str, suite: str) -> dict[str, dict[str, str]]:
    _, _, body = fetch(m.url(f"{repo_url}/dists/{suite}/main/binary-amd64/Packages"))
    out: dict[str, dict[str, str]] = {}
    for stanza in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
        if "Package" in fields:
            out[fields["Package"]] = fields
    return out


def test_every_release_the_plans_and_profiles_name_is_served(mirror: MirrorManifest) -> None:
    kb = load_kb()
    wanted = {p.target.rocm for p in builtin_plans() if p.target.rocm and p.target.rocm != "newest"}
    wanted |= {r.version for r in kb.releases("core-sdk") if r.routes is not None and r.install_path}  # "newest"
    wanted |= {p.rocm for p in PROFILES.values() if p.rocm}
    assert {"6.2.0", "6.2.4", "6.4.4", "7.2.4", "10.0.0"} <= wanted  # what the plans name today
    for version in sorted(wanted):
        rel = kb.release(version)
        assert rel is not None
        if rel.stream == "legacy":
            url = rel.amdgpu_install["jammy"]
            status, _, deb = fetch(m_url := mirror.url(url))
            assert status == 200 and m_url.startswith(mirror.base_url + "/repo.radeon.com/amdgpu-install/")
            name = url.rsplit("/", 1)[-1]
            local = mirror.path(url)
            assert local.read_bytes() == deb and local.name == name
            fields = subprocess.run(["dpkg-deb", "--field", str(local), "Package", "Version"], capture_output=True,
                                    text=True, check=True).stdout
            assert fields == f"Package: amdgpu-install\nVersion: {name.split('_')[1]}\n"
            lr = cat.legacy_release(kb, version, "jammy")
            pk = packages(mirror, lr.rocm_repo(), "jammy")
            assert {"rocm-core", "rocminfo", "hip-runtime-amd", "rocm-hip-runtime", "rocm"} <= set(pk)
            assert _short_version(pk["rocm-core"]["Version"]) == version  # the detector reads the release back
            drv = packages(mirror, lr.amdgpu_repo(), "jammy")
            assert drv["amdgpu-dkms"]["Version"].startswith("1:")
        else:
            cr = cat.core_sdk_release(kb, version, "debian12")
            pk = packages(mirror, cr.repo(), cr.suite)
            assert cr.meta in pk and f"{cr.meta}-gfx1100" in pk


def test_every_wheel_row_is_served_for_each_of_its_pythons(mirror: MirrorManifest) -> None:
    kb = load_kb()
    for w in kb.wheels():
        served = {f.filename for f in mirror.index_files(w.index_url)}
        for py in w.python:
            tag = f"{python_tag(py)}-linux_x86_64"
            assert f"torch-{w.torch}+{w.index}-{tag}.whl" in served, (w.torch, w.index, py)
            if w.torchvision:
                assert f"torchvision-{w.torchvision}+{w.index}-{tag}.whl" in served
            if w.torchaudio:
                assert f"torchaudio-{w.torchaudio}+{w.index}-{tag}.whl" in served
    # the pins the plans and profiles name, and the newest row of each index a plan names
    for p in builtin_plans():
        t = p.target
        if t.index and t.index.startswith("rocm"):
            rows = kb.wheels_for(index=t.index) if t.torch == "newest" else kb.wheels_for(torch=t.torch, index=t.index)
            assert rows, p.name
            newest = max(rows, key=lambda r: tuple(int(x) for x in r.torch.split(".")))
            served = {f.filename for f in mirror.index_files(newest.index_url)}
            assert any(n.startswith(f"torch-{newest.torch}+{newest.index}-") for n in served), p.name
    tr = kb.therock()
    assert tr is not None
    seven, ten_sdk = newest_sdk(kb, "7."), newest_sdk(kb, "10.")
    multi = {f.filename for f in mirror.index_files(tr.multi_arch_index)}
    assert any(n.startswith(f"rocm-{seven}-") for n in multi)
    assert any(n.startswith(f"rocm_sdk_device_gfx1100-{seven}-") for n in multi)
    assert tr.rocm10_index is not None
    ten = {f.filename for f in mirror.index_files(tr.rocm10_index)}
    assert any(n.startswith(f"rocm-{ten_sdk}-") for n in ten)
    # AMD's own torch builds on the index each names, never PyTorch's rows (those stay on download.pytorch.org)
    for v in kb.vendor_wheels():
        ix = kb.wheel_index(v.index)
        assert ix is not None
        served = {f.filename for f in mirror.index_files(ix.url)}
        assert any(n.startswith(f"torch-{v.torch}-") for n in served), (v.torch, v.index)
        assert any(n.startswith(f"amd_torch_device_gfx1100-{v.torch}-") for n in served)
        if v.torchaudio:
            assert any(n.startswith(f"torchaudio-{v.torchaudio}-") for n in served)
    pytorch_rows = {f"torch-{w.torch}+{w.index}-" for w in kb.wheels()}
    assert not any(n.startswith(tuple(pytorch_rows)) for n in multi | ten)


def newest_sdk(kb: KnowledgeBase, series: str) -> str:
    return max((r.version for r in kb.releases("core-sdk") if r.version.startswith(series)),
               key=lambda v: tuple(int(x) for x in v.split(".")))


def test_release_files_are_signed_and_gpgv_verifies_them(mirror: MirrorManifest, tmp_path: Path) -> None:
    for repo in mirror.apt_repos:
        d = repo.dists
        ok = subprocess.run(["gpgv", "--keyring", str(mirror.keyring), str(d / "InRelease")], capture_output=True,
                            text=True)
        assert ok.returncode == 0, ok.stderr
        assert mirror.key_fingerprint in ok.stderr.replace(" ", "") or "Good signature" in ok.stderr
        det = subprocess.run(["gpgv", "--keyring", str(mirror.keyring), str(d / "Release.gpg"), str(d / "Release")],
                             capture_output=True, text=True)
        assert det.returncode == 0, det.stderr
    # a changed byte breaks the signature (gpgv really checks)
    repo = mirror.apt_repos[0]
    bad = tmp_path / "Release"
    bad.write_text((repo.dists / "Release").read_text().replace("main", "mainx", 1))
    det = subprocess.run(["gpgv", "--keyring", str(mirror.keyring), str(repo.dists / "Release.gpg"), str(bad)],
                         capture_output=True, text=True)
    assert det.returncode != 0 and "BAD signature" in det.stderr
    release = (repo.dists / "Release").read_text()
    assert "Origin: repo.radeon.com" in release or "Origin: repo.amd.com" in release or "Origin: stable" in release


def test_packages_follow_amds_scheme_and_say_what_they_are(mirror: MirrorManifest) -> None:
    kb = load_kb()
    lr = cat.legacy_release(kb, "6.2.4", "jammy")
    pk = packages(mirror, lr.rocm_repo(), "jammy")
    for name in ("rocm-core", "rocminfo", "hip-runtime-amd", "rocm-hip-runtime", "rocm"):
        assert re.fullmatch(r"6\.2\.4\.60204-rehearsal~22\.04", pk[name]["Version"]), name
        assert "(rehearsal " in pk[name]["Description"]
    assert "rocm-hip-runtime (= 6.2.4.60204-rehearsal~22.04)" in pk["rocm"]["Depends"]
    assert "hip-runtime-amd (=" in pk["rocm-hip-runtime"]["Depends"]
    assert "rocm-core (=" in pk["hip-runtime-amd"]["Depends"]
    deb = mirror.path(lr.rocm_repo()) / pk["rocm-core"]["Filename"]
    contents = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True, check=True).stdout
    assert "./opt/rocm-6.2.4/.info/version" in contents and "./opt/rocm-6.2.4/lib/" in contents
    info = subprocess.run(["dpkg-deb", "--info", str(deb)], capture_output=True, text=True, check=True).stdout
    assert "'rehearsal' stands in its place" in " ".join(info.split())
    assert lr.package_version == "6.2.4.60204-rehearsal~22.04"
    assert cat.legacy_release(kb, "6.2.0", "jammy").directory == "6.2"  # AMD's directory for a .0 release
    assert cat.legacy_release(kb, "7.2.4", "jammy").package_version == "7.2.4.70204-rehearsal~22.04"


def test_amdgpu_install_points_at_the_mirror_with_the_test_key(mirror: MirrorManifest, tmp_path: Path) -> None:
    kb = load_kb()
    lr = cat.legacy_release(kb, "6.2.4", "jammy")
    out = tmp_path / "x"
    subprocess.run(["dpkg-deb", "-R", str(mirror.path(lr.install_url)), str(out)], check=True)
    postinst = (out / "DEBIAN/postinst").read_text()
    base = f"{mirror.base_url}/repo.radeon.com"
    assert (f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] {base}/amdgpu/6.2.4/ubuntu jammy main"
            in postinst)
    assert f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] {base}/rocm/apt/6.2.4 jammy main" in postinst
    assert (out / "usr/share/amdgpu-install/rocm.gpg").read_bytes() == mirror.keyring.read_bytes()
    script = out / "usr/bin/amdgpu-install"
    for s in (script, out / "DEBIAN/postinst", out / "DEBIAN/postrm"):
        subprocess.run(["sh", "-n", str(s)], check=True)
    if shutil.which("shellcheck"):
        lint = subprocess.run(["shellcheck", "-s", "sh", str(script), str(out / "DEBIAN/postinst")],
                              capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout


def _record_ok(whl: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(whl) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    record = next(v for k, v in files.items() if k.endswith(".dist-info/RECORD")).decode()
    for line in record.splitlines():
        path, digest, size = line.rsplit(",", 2)
        if not digest:
            continue
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert digest == want and int(size) == len(files[path]), path
    return files


def test_wheels_are_wheels(mirror: MirrorManifest) -> None:
    whl = mirror.path("https://download.pytorch.org/whl/rocm6.2") / "torch-2.5.1+rocm6.2-cp310-cp310-linux_x86_64.whl"
    files = _record_ok(whl)
    assert b"Tag: cp310-cp310-linux_x86_64" in files["torch-2.5.1+rocm6.2.dist-info/WHEEL"]
    assert b"Version: 2.5.1+rocm6.2" in files["torch-2.5.1+rocm6.2.dist-info/METADATA"]
    version_py = files["torch/version.py"].decode()
    assert "__version__ = '2.5.1+rocm6.2'" in version_py and "cuda = None" in version_py and "hip = '6.2'" in version_py
    gfx = sorted(n.split("_lazy_")[1][:-4] for n in files if "TensileLibrary_lazy_" in n)
    row = load_kb().wheel("2.5.1", "rocm6.2")
    assert row is not None and row.gfx is not None and gfx == sorted(row.gfx)


def test_simple_index_pages_pep503_and_pep691(mirror: MirrorManifest, mirror_server: MirrorServer) -> None:
    page = mirror.url("https://download.pytorch.org/whl/rocm6.2") + "/torch/"
    status, ctype, body = fetch(page, accept=JSON_TYPE)
    assert status == 200 and ctype == JSON_TYPE
    data = json.loads(body)
    assert data["meta"]["api-version"] == "1.0" and data["name"] == "torch"
    f = next(x for x in data["files"] if x["filename"] == "torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl")
    assert f["requires-python"] == ">=3.9"
    _, _, wheel = fetch(urllib.request.urljoin(page, f["url"]))
    assert hashlib.sha256(wheel).hexdigest() == f["hashes"]["sha256"]
    status, ctype, body = fetch(page)
    html = body.decode()
    assert ctype.startswith("text/html")
    assert 'href="../torch-2.5.1%2Brocm6.2-cp311-cp311-linux_x86_64.whl#sha256=' in html
    assert 'data-requires-python="&gt;=3.9"' in html
    _, _, root = fetch(mirror.url("https://download.pytorch.org/whl/rocm6.2") + "/", accept=JSON_TYPE)
    assert {p["name"] for p in json.loads(root)["projects"]} == {"torch", "torchvision", "torchaudio"}


def _venv(tmp_path: Path) -> Path:
    v = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(v)], check=True)
    return v


def _pip(v: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(v), "PIP_CONFIG_FILE": "/dev/null"}
    return subprocess.run([str(v / "bin/pip"), "--disable-pip-version-check", "--no-input", "--no-cache-dir", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_real_pip_installs_the_wheels_and_the_detector_reads_them(mirror: MirrorManifest,
                                                                 mirror_server: MirrorServer, tmp_path: Path) -> None:
    v = _venv(tmp_path)
    mirror_server.clear_log()
    index = mirror.url("https://download.pytorch.org/whl/rocm6.2")
    r = _pip(v, "install", "--index-url", index, "torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1")
    assert r.returncode == 0, r.stderr
    fetched = mirror_server.fetched()
    assert "/download.pytorch.org/whl/rocm6.2/torch/" in fetched
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert f"/download.pytorch.org/whl/rocm6.2/torch-2.5.1+rocm6.2-{py}-{py}-linux_x86_64.whl" in fetched
    assert any(req.accept.startswith(JSON_TYPE) for req in mirror_server.requests)  # pip asked for PEP 691
    env = env_from_prefix(LiveHost(), str(v), "venv")
    row = load_kb().wheel("2.5.1", "rocm6.2")
    assert env is not None and row is not None and row.gfx is not None
    assert (env.torch, env.torchvision, env.torchaudio) == ("2.5.1+rocm6.2", "0.20.1+rocm6.2", "2.5.1+rocm6.2")
    assert env.build == "rocm" and env.hip == "6.2" and set(env.gfx_targets) == set(row.gfx)
    imp = subprocess.run([str(v / "bin/python"), "-c", "import torch"], capture_output=True, text=True)
    assert imp.returncode == 1 and "ImportError" in imp.stderr and "rehearsal mirror is a placeholder" in imp.stderr
    # TheRock: the selector with a device extra pulls exactly that device package
    tr = load_kb().therock()
    assert tr is not None
    r = _pip(v, "install", "--index-url", mirror.url(tr.multi_arch_index), "rocm[libraries,device-gfx1100]")
    assert r.returncode == 0, r.stderr
    env = env_from_prefix(LiveHost(), str(v), "venv")
    assert env is not None and env.rocm_sdk == newest_sdk(load_kb(), "7.") and env.rocm_sdk_targets == ("gfx1100",)


def test_manifest_and_config(mirror: MirrorManifest) -> None:
    data = json.loads((mirror.root / "manifest.json").read_text())
    assert data["base_url"] == mirror.base_url and data["key_fingerprint"] == mirror.key_fingerprint
    assert {r["version"] for r in data["legacy"]} == {"6.2.0", "6.2.4", "6.4.4", "7.2.4"}
    origins = {m.origin for m in mirror.config().origins_in_force()}
    assert {"repo.radeon.com", "repo.amd.com", "download.pytorch.org", "stable.repo.amd.com"} <= origins
    assert mirror.url("https://stable.repo.amd.com/rocm/whl-next") == f"{mirror.base_url}/stable.repo.amd.com/rocm/whl-next"
    assert not (mirror.root / ".build").exists()
