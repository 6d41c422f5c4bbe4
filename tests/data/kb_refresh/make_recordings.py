"""Rebuild the recorded sources (snapshot/) and the frozen knowledge base (kb/) that tests/test_kb_refresh.py
reads. Run from the repository root: ``python tests/data/kb_refresh/make_recordings.py``.

kb/ is a trimmed copy of wizard/kb/*.json (the rows the recordings cover, plus what the shipped plans need), so
the test does not change when the shipped knowledge base grows. snapshot/ holds the sources in their real
formats (PEP 691 JSON simple indexes, Apache and nginx directory listings, Docker Hub v2 tags pages), laid out
as wizard.kb.sources.snapshot_path() reads them. They agree with kb/ except for the PLANTED differences below,
which are the exact report the test expects.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from wizard.kb.sources import snapshot_path  # noqa: E402

HERE = Path(__file__).resolve().parent
KB_SRC = ROOT / "wizard" / "kb"
KB_OUT = HERE / "kb"
SNAP = HERE / "snapshot"

# (kind, subject) of every difference planted in snapshot/ -- tests/test_kb_refresh.py repeats this list
PLANTED = [
    ("new-torch-version", "rocm7.2 torch 2.15.0"),
    ("new-index", "index rocm10.0"),
    ("new-amd-torch", "amd-whl-next torch 2.14.0+rocm10.0.0"),
    ("undocumented-device-packages", "index amd-multi-arch"),
    ("new-rocm-release", "release 7.2.5"),
    ("new-rocm-release", "release 10.2.0"),
    ("new-amdgpu-install", "amdgpu-install 31.60"),
    ("new-amdgpu-install", "release 7.14.0 noble"),
    ("new-package-repository", "https://stable.repo.amd.com/rocm/core/packages/ubuntu2610/"),
    ("new-docker-tag", "rocm/pytorch:rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1"),
    ("vanished-docker-tag", "rocm/pytorch:rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1"),
    ("contradiction", "rocm7.2 torch 2.14.1"),  # the index also has cp315 / cp315t wheels
    ("contradiction", "rocm6.4 torch 2.9.1"),  # the knowledge base row has no wheel on the index
    ("contradiction", "index amd-whl-next"),  # no gfx1153 device packages
    ("contradiction", "release 7.2.3 jammy"),  # the listing has another file name
    ("contradiction", "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0"),  # 'exists: false' but listed
]

RELEASES = ("6.2.4", "6.3.0", "6.4.4", "7.2.3", "7.2.4", "7.14.0", "10.0.0")
WHEELS = {("2.5.1", "rocm6.2"), ("2.8.0", "rocm6.4"), ("2.9.0", "rocm6.4"), ("2.9.1", "rocm6.4"),
          ("2.13.0", "rocm7.2"), ("2.14.0", "rocm7.2"), ("2.14.1", "rocm7.2"), ("2.14.0", "rocm7.14"),
          ("2.14.1", "rocm7.14")}
AMD_INDEXES = ("amd-multi-arch", "amd-whl-next", "amd-nightly-multi-arch")
IMAGES = ["rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.9.1", "rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.9.1",
          "rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.7.1", "rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1",
          "rocm7.14_ubuntu24.04_py3.12_pytorch_release_2.12.0", "rocm10.0_ubuntu26.04_py3.14_pytorch_release_2.13.0",
          "rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0"]
ISSUES = ("invalid-device-function", "torch-not-rocm-build", "rdna1-no-upstream-wheel")


def dump(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def frozen_kb() -> dict[str, Any]:
    rel = json.loads((KB_SRC / "rocm_releases.json").read_text())
    rel["releases"] = [r for r in rel["releases"] if r["version"] in RELEASES]
    tw = json.loads((KB_SRC / "torch_wheels.json").read_text())
    tw["wheels"] = [w for w in tw["wheels"] if (w["torch"], w["index"]) in WHEELS]
    names = {w["index"] for w in tw["wheels"]} | set(AMD_INDEXES)
    tw["indexes"] = [i for i in tw["indexes"] if i["name"] in names]
    tw["vendor_wheels"] = [v for v in tw["vendor_wheels"] if v["sdk"] in RELEASES]
    tw["therock"]["legacy_family_indexes"] = []
    di = json.loads((KB_SRC / "docker_images.json").read_text())
    di["images"] = [i for i in di["images"] if i["tag"].split(":", 1)[1] in IMAGES]
    ki = json.loads((KB_SRC / "known_issues.json").read_text())
    ki["issues"] = [i for i in ki["issues"] if i["id"] in ISSUES]
    if KB_OUT.exists():
        shutil.rmtree(KB_OUT)
    for name, doc in (("rocm_releases.json", rel), ("torch_wheels.json", tw), ("docker_images.json", di),
                      ("known_issues.json", ki)):
        dump(KB_OUT / name, doc)
    return {"releases": rel["releases"], "wheels": tw["wheels"], "indexes": tw["indexes"],
            "vendor": tw["vendor_wheels"], "images": di["images"]}


# --------------------------------------------------------------------------- formats


def put(url: str, text: str, *, index_json: bool = False) -> None:
    path = snapshot_path(SNAP, url)
    if index_json:
        path = path.with_name("index.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pep691_project(index_url: str, name: str, files: list[str]) -> str:
    entries = []
    for i, f in enumerate(files):
        entries.append({"filename": f, "url": index_url.rstrip("/") + "/" + f.replace("+", "%2B"),
                        "hashes": {"sha256": sha(f)}, "requires-python": ">=3.10", "core-metadata": {"sha256": sha(f + ".metadata")},
                        "data-dist-info-metadata": {"sha256": sha(f + ".metadata")}, "yanked": False,
                        "size": 1_300_000_000 + 7919 * i, "upload-time": "2026-09-02T16:%02d:%02d.000000Z" % (i // 60 % 60, i % 60)})
    versions = sorted({f.split("-")[1] for f in files})
    return json.dumps({"meta": {"api-version": "1.1", "_last-serial": 0}, "name": name, "versions": versions,
                       "files": entries}, indent=1) + "\n"


def pep691_root(projects: list[str]) -> str:
    return json.dumps({"meta": {"api-version": "1.1", "_last-serial": 0},
                       "projects": [{"name": p} for p in sorted(projects)]}, indent=1) + "\n"


def apache(path: str, dirs: list[str], files: Sequence[str] = ()) -> str:
    rows = ['<tr><td valign="top"><img src="/icons/back.gif" alt="[PARENTDIR]"></td><td><a href="/">Parent Directory</a></td><td>&nbsp;</td><td align="right">  - </td><td>&nbsp;</td></tr>']
    for d in dirs:
        rows.append(f'<tr><td valign="top"><img src="/icons/folder.gif" alt="[DIR]"></td><td><a href="{d}/">{d}/</a></td><td align="right">2026-08-26 09:12  </td><td align="right">  - </td><td>&nbsp;</td></tr>')
    for f in files:
        rows.append(f'<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="{f}">{f}</a></td><td align="right">2026-08-26 09:12  </td><td align="right"> 18K</td><td>&nbsp;</td></tr>')
    return ('<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html>\n <head>\n  <title>Index of '
            f'{path}</title>\n </head>\n <body>\n<h1>Index of {path}</h1>\n  <table>\n   <tr><th valign="top"><img '
            'src="/icons/blank.gif" alt="[ICO]"></th><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last '
            'modified</a></th><th><a href="?C=S;O=A">Size</a></th><th><a href="?C=D;O=A">Description</a></th></tr>\n'
            '   <tr><th colspan="5"><hr></th></tr>\n' + "\n".join(rows) +
            '\n   <tr><th colspan="5"><hr></th></tr>\n</table>\n<address>Apache/2.4.41 (Ubuntu) Server at '
            'repo.radeon.com Port 443</address>\n</body></html>\n')


def nginx(path: str, dirs: list[str], files: Sequence[str] = ()) -> str:
    lines = ['<a href="../">../</a>']
    for d in dirs:
        lines.append(f'<a href="{d}/">{d}/</a>' + " " * max(1, 51 - len(d)) + "26-Aug-2026 09:12                   -")
    for f in files:
        lines.append(f'<a href="{f}">{f}</a>' + " " * max(1, 50 - len(f)) + "26-Aug-2026 09:12          2147483648")
    return (f"<html>\n<head><title>Index of {path}</title></head>\n<body>\n<h1>Index of {path}</h1><hr><pre>"
            + "\n".join(lines) + "\n</pre><hr></body>\n</html>\n")


def wheel_name(version: str, py: str) -> str:
    tag = "cp" + py.replace(".", "").rstrip("t")
    abi = tag + ("t" if py.endswith("t") else "")
    return f"torch-{version}-{tag}-{abi}-manylinux_2_28_x86_64.whl"


# --------------------------------------------------------------------------- sources


def pytorch(k: dict[str, Any]) -> None:
    rows: dict[str, dict[str, list[str]]] = {}
    for w in k["wheels"]:
        rows.setdefault(w["index"], {})[w["torch"]] = list(w["python"])
    rows["rocm6.4"].pop("2.9.1")  # PLANTED: a knowledge-base row the index does not have
    rows["rocm7.2"]["2.14.1"] += ["3.15", "3.15t"]  # PLANTED: Python tags the row lacks
    rows["rocm7.2"]["2.15.0"] = ["3.11", "3.12", "3.13", "3.14", "3.14t"]  # PLANTED: a new version
    root_files = []
    for index, versions in rows.items():
        url = f"https://download.pytorch.org/whl/{index}/torch/"
        files = [wheel_name(f"{v}+{index}", p) for v, pys in sorted(versions.items()) for p in pys]
        if index == "rocm7.2":  # a nightly-style pre-release the refresher must ignore
            files.append(wheel_name("2.16.0.dev20261101+rocm7.2", "3.12"))
        put(url, pep691_project(url, "torch", files), index_json=True)
        root_files += files
    root_files += [wheel_name("2.15.0+rocm10.0", "3.12"), wheel_name("2.15.0+rocm10.0", "3.13")]  # PLANTED: new index
    root_files += [wheel_name("2.14.1+cu130", "3.12"), wheel_name("2.14.1+cpu", "3.12"), wheel_name("2.14.1", "3.12")]
    put("https://download.pytorch.org/whl/torch/",
        pep691_project("https://download.pytorch.org/whl/torch/", "torch", sorted(root_files)), index_json=True)


def amd(k: dict[str, Any]) -> None:
    idx = {i["name"]: i for i in k["indexes"]}
    for name in AMD_INDEXES:
        ix = idx[name]
        gfx = list(ix["device_extras"])
        if name == "amd-multi-arch":
            gfx.append("gfx1010")  # PLANTED: a device package AMD does not document for this index
        if name == "amd-whl-next":
            gfx.remove("gfx1153")  # PLANTED: a documented extra without its package
        projects = ["rocm", "rocm-sdk-core", "rocm-sdk-libraries", "rocm-sdk-devel", "torch", "torchvision",
                    "torchaudio", "triton"]
        projects += [f"rocm-sdk-device-{g}" for g in gfx] + [f"amd-torch-device-{g}" for g in gfx]
        put(ix["url"], pep691_root(projects), index_json=True)
        if ix["channel"] != "stable":
            continue
        versions = [v["torch"] for v in k["vendor"] if v["index"] == name]
        if name == "amd-whl-next":
            versions.append("2.14.0+rocm10.0.0")  # PLANTED: a new AMD torch build
        url = ix["url"] + "torch/"
        files = [wheel_name(v, p) for v in sorted(versions) for p in ("3.11", "3.12", "3.13", "3.14")]
        put(url, pep691_project(url, "torch", files), index_json=True)


def radeon(k: dict[str, Any]) -> None:
    rels = {r["version"]: r for r in k["releases"]}
    dirs = ["6.2.4", "6.3", "6.4.4", "7.2.3", "7.2.4", "31.40", "31.50", "31.60", "latest"]  # 31.60: PLANTED
    put("https://repo.radeon.com/amdgpu-install/", apache("/amdgpu-install", dirs))
    for d, version in (("7.2.3", "7.2.3"), ("7.2.4", "7.2.4"), ("31.50", "10.0.0")):
        urls = {c: u for c, u in rels[version]["amdgpu_install"].items() if "/ubuntu/" in u}
        put(f"https://repo.radeon.com/amdgpu-install/{d}/ubuntu/", apache(f"/amdgpu-install/{d}/ubuntu", sorted(urls)))
        for c, u in urls.items():
            name = u.rsplit("/", 1)[1]
            if version == "7.2.3" and c == "jammy":
                name = "amdgpu-install_7.2.3.70203-2_all.deb"  # PLANTED: another file name than the KB's
            put(f"https://repo.radeon.com/amdgpu-install/{d}/ubuntu/{c}/",
                apache(f"/amdgpu-install/{d}/ubuntu/{c}", [], [name]))
    # 31.40 (7.14.0): the knowledge base records no URL; the listing shows one package  (PLANTED)
    put("https://repo.radeon.com/amdgpu-install/31.40/ubuntu/", apache("/amdgpu-install/31.40/ubuntu", ["noble"]))
    put("https://repo.radeon.com/amdgpu-install/31.40/ubuntu/noble/",
        apache("/amdgpu-install/31.40/ubuntu/noble", [], ["amdgpu-install_31.40.314000-1_all.deb"]))
    put("https://repo.radeon.com/amdgpu-install/31.60/ubuntu/", apache("/amdgpu-install/31.60/ubuntu", ["noble"]))
    put("https://repo.radeon.com/amdgpu-install/31.60/ubuntu/noble/",
        apache("/amdgpu-install/31.60/ubuntu/noble", [], ["amdgpu-install_31.60.316000-1_all.deb"]))
    put("https://repo.radeon.com/rocm/apt/",
        apache("/rocm/apt", ["6.2.4", "6.3", "6.4.4", "7.2.3", "7.2.4", "7.2.5", "latest"]))  # 7.2.5: PLANTED


def repo_amd() -> None:
    fams = ["multiarch", "gfx110X-all", "gfx120X-all", "gfx1151", "gfx94X-dcgpu"]
    put("https://repo.amd.com/rocm/tarball-multi-arch/",
        nginx("/rocm/tarball-multi-arch/", [], [f"therock-dist-linux-{f}-7.14.0.tar.gz" for f in fams]
              + [f"therock-dist-windows-{f}-7.14.0.tar.gz" for f in fams[:2]]))
    put("https://stable.repo.amd.com/rocm/core/tarball/",
        nginx("/rocm/core/tarball/", [], [f"therock-dist-linux-{f}-10.0.0.tar.gz" for f in fams]
              + [f"therock-dist-linux-{f}-10.2.0.tar.gz" for f in fams[:2]]))  # 10.2.0: PLANTED
    distros = ["debian12", "debian13", "gpg", "rhel10", "rhel8", "rhel9", "sles15", "sles16", "ubuntu2204",
               "ubuntu2404", "ubuntu2604"]
    put("https://repo.amd.com/rocm/packages-multi-arch/", nginx("/rocm/packages-multi-arch/", distros))
    put("https://stable.repo.amd.com/rocm/core/packages/",
        nginx("/rocm/core/packages/", sorted(distros + ["ubuntu2610"])))  # ubuntu2610: PLANTED


def docker(k: dict[str, Any]) -> None:
    tags = [i["tag"].split(":", 1)[1] for i in k["images"] if i["exists"] is True]
    tags.remove("rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1")  # PLANTED: vanished
    tags += ["rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1",  # PLANTED: appeared
             "rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0",  # PLANTED: the KB says it does not exist
             "rocm7.14_ubuntu24.04_py3.12_pytorch_staging"]  # not a release tag: ignored
    pages = [tags[:4], tags[4:]]
    base = "https://hub.docker.com/v2/repositories/rocm/pytorch/tags"
    for n, page in enumerate(pages, 1):
        query = "name=_pytorch&page_size=100" if n == 1 else f"name=_pytorch&page={n}&page_size=100"
        nxt = f"{base}?name=_pytorch&page={n + 1}&page_size=100" if n < len(pages) else None
        results = [{"creator": 7, "id": 100000 + 17 * i, "images": [{"architecture": "amd64", "digest": "sha256:" + sha(t),
                    "os": "linux", "size": 21474836480, "status": "active"}], "last_updated": "2026-09-02T10:00:00.000000Z",
                    "last_updater": 7, "last_updater_username": "rocmdocker", "name": t, "repository": 4242,
                    "full_size": 21474836480, "v2": True, "tag_status": "active",
                    "tag_last_pulled": "2026-11-20T08:00:00.000000Z", "tag_last_pushed": "2026-09-02T10:00:00.000000Z",
                    "media_type": "application/vnd.oci.image.index.v1+json", "content_type": "image",
                    "digest": "sha256:" + sha(t + "index")} for i, t in enumerate(page)]
        put(f"{base}?{query}", json.dumps({"count": len(tags), "next": nxt,
                                           "previous": None if n == 1 else base, "results": results}, indent=1) + "\n")


def main() -> None:
    k = frozen_kb()
    if SNAP.exists():
        shutil.rmtree(SNAP)
    pytorch(k)
    amd(k)
    radeon(k)
    repo_amd()
    docker(k)
    print(f"wrote {KB_OUT} and {SNAP}")


if __name__ == "__main__":
    main()
