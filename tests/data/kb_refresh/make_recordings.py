"""Rebuild the recorded sources (snapshot/) and the frozen knowledge base (kb/) that tests/test_kb_refresh.py
reads. Run from the repository root: ``python tests/data/kb_refresh/make_recordings.py``.

kb/ is a trimmed copy of wizard/kb/*.json (the rows the recordings cover, plus what the shipped plans need), so
the test does not change when the shipped knowledge base grows. snapshot/ holds the sources in the formats the
real servers answer with, as their generators write them (read in the upstream repositories, rendered here):

* download.pytorch.org: PEP 503 HTML with absolute hrefs and PEP 658/714 attributes (pytorch/test-infra
  ``s3_management/manage.py``, ``to_simple_package_html``); no PEP 691 JSON;
* AMD's pip indexes: PEP 503 HTML with relative hrefs (TheRock ``build_tools/packaging/python/
  manage_structured.py``);
* TheRock's tarball listing: the page of ``build_tools/index_generation_s3_tar.py``, whose file names sit in a
  JavaScript array; the stable tarball bucket answers with raw S3 ``ListBucketResult`` XML;
* AMD's package repositories: ``build_tools/packaging/linux/generate_package_indexes.py`` rows, folders linked
  as ``name/index.html``;
* repo.radeon.com: Apache listings; Docker Hub: the documented ``/v2/namespaces/{ns}/repositories/{repo}/tags``
  pages (no name filter: every tag, filtered by the reader).

They agree with kb/ except for the PLANTED differences below, which are the exact report the test expects.
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
DOCKER_BASE = "https://hub.docker.com/v2/namespaces/rocm/repositories/pytorch/tags"  # the documented endpoint

# (kind, subject) of every difference planted in snapshot/ -- tests/test_kb_refresh.py repeats this list
PLANTED = [
    ("new-torch-version", "rocm7.2 torch 2.15.0"),
    ("new-index", "index rocm10.0"),
    ("new-amd-torch", "amd-whl-next torch 2.14.0+rocm10.0.0"),
    ("undocumented-device-packages", "index amd-multi-arch"),
    ("new-rocm-release", "release 7.2.5"),
    ("new-rocm-release", "release 7.2.3.1"),  # a four-part (hotfix) directory: its own version
    ("new-rocm-release", "release 10.2.0"),  # in the S3 XML of the stable tarball bucket
    ("new-amdgpu-install", "amdgpu-install 31.60"),
    ("new-amdgpu-install", "release 7.14.0 noble"),  # added; the release's "no URL is recorded" note is rewritten
    ("new-amdgpu-install", "release 10.0.0 questing"),  # reported, not added: not among 10.0.0's distributions
    ("new-package-repository", "https://stable.repo.amd.com/rocm/core/packages/ubuntu2610/"),
    ("new-docker-tag", "rocm/pytorch:rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1"),
    ("vanished-docker-tag", "rocm/pytorch:rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1"),
    ("contradiction", "rocm7.2 torch 2.14.1"),  # the index lacks the cp315t wheel the row lists
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
    r714 = next(r for r in rel["releases"] if r["version"] == "7.14.0")  # as before its URLs were recorded
    r714.update(amdgpu_install={}, filename_verified=None,
                uncertain="amdgpu-install file name not read from AMD's page, so no URL is recorded; "
                          "kernel-driver compatibility window not extracted")
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


def put(url: str, text: str) -> None:
    path = snapshot_path(SNAP, url)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pytorch_project(path: str, name: str, files: list[str]) -> str:
    """A download.pytorch.org project page: absolute hrefs with the sha256 fragment and the PEP 658/714
    metadata attributes, the display name with "+" (test-infra manage.py)."""
    out = ["<!DOCTYPE html>", "<html>", "  <body>", f"    <h1>Links for {name}</h1>"]
    for f in sorted(files):
        key = f"{path.strip('/')}/{f.replace('+', '%2B')}"
        meta = f"sha256={sha(f + '.metadata')}"
        out.append(f'    <a href="/{key}#sha256={sha(f)}" data-dist-info-metadata="{meta}" '
                   f'data-core-metadata="{meta}">{f}</a><br/>')
    return "\n".join(out + ["  </body>", "</html>", "<!--TIMESTAMP 1793700000-->"]) + "\n"


def therock_root(projects: list[str]) -> str:
    """An AMD index root: one relative link per project (TheRock manage_structured.py)."""
    rows = [f'    <a href="{p}/">{p}</a><br/>' for p in sorted(projects)]
    return "\n".join(["<!DOCTYPE html>", "<html>", "  <body>", "    <h1>Simple index</h1>", *rows,
                      "  </body>", "</html>"]) + "\n"


def therock_project(name: str, files: list[str]) -> str:
    rows = [f'    <a href="{f.replace("+", "%2B")}#sha256={sha(f)}">{f}</a><br/>' for f in sorted(files)]
    return "\n".join(["<!DOCTYPE html>", "<html>", "  <body>", f"    <h1>Links for {name}</h1>", *rows,
                      "  </body>", "</html>"]) + "\n"


def tarball_page(files: Sequence[str]) -> str:
    """TheRock's tarball index: no anchors in the HTML, the file names in a JavaScript array that the browser
    turns into links (index_generation_s3_tar.py)."""
    array = json.dumps([{"name": f, "mtime": 1787730000.0 + i} for i, f in enumerate(files)])
    return ("\n    <html>\n    <head>\n        <title>Tarball index</title>\n        <meta charset=\"utf-8\"/>\n"
            "        <script>\n            const files = " + array + ";\n"
            "            function renderFiles(list) {\n                const ul = document.getElementById('fileList');\n"
            "                ul.innerHTML = '';\n                list.forEach(file => {\n"
            "                    const li = document.createElement('li');\n"
            "                    const href = encodeURIComponent(file.name).replace(/%2F/g, '/');\n"
            "                    li.innerHTML = `<a href=\"${href}\">${file.name}</a>`;\n"
            "                    ul.appendChild(li);\n                });\n            }\n        </script>\n"
            "    </head>\n    <body onload=\"renderFiles(files)\">\n        <h1>Tarball index</h1>\n"
            "        <ul id=\"fileList\"></ul>\n    </body>\n    </html>\n")


def s3_listing(bucket: str, files: Sequence[str]) -> str:
    """A raw S3 ListBucketResult (what a bucket URL without an index page answers)."""
    contents = "".join(f"<Contents><Key>{f}</Key><LastModified>2026-08-26T09:12:00.000Z</LastModified>"
                       f'<ETag>"{sha(f)[:32]}"</ETag><Size>2147483648</Size><StorageClass>STANDARD</StorageClass>'
                       "</Contents>" for f in files)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/'
            f'2006-03-01/"><Name>{bucket}</Name><Prefix></Prefix><Marker></Marker><MaxKeys>1000</MaxKeys>'
            f"<IsTruncated>false</IsTruncated>{contents}</ListBucketResult>")


def package_repo(dirs: list[str]) -> str:
    """A package-repository top page: folders linked as name/index.html (generate_package_indexes.py)."""
    rows = [f'<tr><td><a href="{d}/index.html">{d}/</a></td></tr>' for d in dirs]
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>artifacts</title>\n</head>\n"
            "<body>\n<table>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n</body>\n</html>\n")


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
    rows["rocm7.2"]["2.14.1"].remove("3.15t")  # PLANTED: a Python tag the index lacks
    rows["rocm7.2"]["2.15.0"] = ["3.11", "3.12", "3.13", "3.14", "3.14t"]  # PLANTED: a new version
    root_files: list[tuple[str, str]] = []
    for index, versions in rows.items():
        url = f"https://download.pytorch.org/whl/{index}/torch/"
        files = [wheel_name(f"{v}+{index}", p) for v, pys in sorted(versions.items()) for p in pys]
        if index == "rocm7.2":  # a nightly-style pre-release the refresher must ignore
            files.append(wheel_name("2.16.0.dev20261101+rocm7.2", "3.12"))
        put(url, pytorch_project(f"/whl/{index}", "torch", files))
        root_files += [(index, f) for f in files]
    root_files += [("rocm10.0", wheel_name("2.15.0+rocm10.0", p)) for p in ("3.12", "3.13")]  # PLANTED: new index
    root_files += [("cu130", wheel_name("2.14.1+cu130", "3.12")), ("cpu", wheel_name("2.14.1+cpu", "3.12")),
                   ("", wheel_name("2.14.1", "3.12"))]
    out = ["<!DOCTYPE html>", "<html>", "  <body>", "    <h1>Links for torch</h1>"]
    for label, f in sorted(root_files, key=lambda x: x[1]):
        key = "/".join(x for x in ("whl", label, f.replace("+", "%2B")) if x)
        out.append(f'    <a href="/{key}#sha256={sha(f)}">{f}</a><br/>')
    put("https://download.pytorch.org/whl/torch/", "\n".join(out + ["  </body>", "</html>"]) + "\n")


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
        put(ix["url"], therock_root(projects))
        if ix["channel"] != "stable":
            continue
        versions = [v["torch"] for v in k["vendor"] if v["index"] == name]
        if name == "amd-whl-next":
            versions.append("2.14.0+rocm10.0.0")  # PLANTED: a new AMD torch build
        files = [wheel_name(v, p) for v in sorted(versions) for p in ("3.11", "3.12", "3.13", "3.14")]
        put(ix["url"] + "torch/", therock_project("torch", files))


def radeon(k: dict[str, Any]) -> None:
    rels = {r["version"]: r for r in k["releases"]}
    dirs = ["6.2.4", "6.3", "6.4.4", "7.2.3", "7.2.4", "31.40", "31.50", "31.60", "latest"]  # 31.60: PLANTED
    put("https://repo.radeon.com/amdgpu-install/", apache("/amdgpu-install", dirs))
    shipped = json.loads((KB_SRC / "rocm_releases.json").read_text())
    r714 = next(r for r in shipped["releases"] if r["version"] == "7.14.0")  # the file AMD's page names
    for d, version in (("7.2.3", "7.2.3"), ("7.2.4", "7.2.4"), ("31.50", "10.0.0"), ("31.40", "7.14.0")):
        urls = {c: u for c, u in (r714 if version == "7.14.0" else rels[version])["amdgpu_install"].items()
                if "/ubuntu/" in u}
        if version == "7.14.0":
            urls = {"noble": urls["noble"]}  # PLANTED: the frozen 7.14.0 has no URL; the listing shows one
        listed = sorted(urls) + (["questing"] if version == "10.0.0" else [])  # questing: PLANTED
        put(f"https://repo.radeon.com/amdgpu-install/{d}/ubuntu/", apache(f"/amdgpu-install/{d}/ubuntu", listed))
        if version == "10.0.0":
            put(f"https://repo.radeon.com/amdgpu-install/{d}/ubuntu/questing/",
                apache(f"/amdgpu-install/{d}/ubuntu/questing", [], ["amdgpu-install_31.50.315000-1_all.deb"]))
        for c, u in urls.items():
            name = u.rsplit("/", 1)[1]
            if version == "7.2.3" and c == "jammy":
                name = "amdgpu-install_7.2.3.70203-2_all.deb"  # PLANTED: another file name than the KB's
            put(f"https://repo.radeon.com/amdgpu-install/{d}/ubuntu/{c}/",
                apache(f"/amdgpu-install/{d}/ubuntu/{c}", [], [name]))
    put("https://repo.radeon.com/amdgpu-install/31.60/ubuntu/", apache("/amdgpu-install/31.60/ubuntu", ["noble"]))
    put("https://repo.radeon.com/amdgpu-install/31.60/ubuntu/noble/",
        apache("/amdgpu-install/31.60/ubuntu/noble", [], ["amdgpu-install_31.60.316000-1_all.deb"]))
    put("https://repo.radeon.com/rocm/apt/",  # 7.2.3.1 and 7.2.5: PLANTED
        apache("/rocm/apt", ["6.2.4", "6.3", "6.4.4", "7.2.3", "7.2.3.1", "7.2.4", "7.2.5", "latest"]))


def repo_amd() -> None:
    fams = ["multiarch", "gfx110X-all", "gfx120X-all", "gfx1151", "gfx94X-dcgpu"]
    put("https://repo.amd.com/rocm/tarball-multi-arch/",
        tarball_page([f"therock-dist-linux-{f}-7.14.0.tar.gz" for f in fams]
                     + [f"therock-dist-windows-{f}-7.14.0.tar.gz" for f in fams[:2]]))
    put("https://stable.repo.amd.com/rocm/core/tarball/",
        s3_listing("therock-repo-amd-stable-core", [f"therock-dist-linux-{f}-10.0.0.tar.gz" for f in fams]
                   + [f"therock-dist-linux-{f}-10.2.0.tar.gz" for f in fams[:2]]))  # 10.2.0: PLANTED
    distros = ["debian12", "debian13", "gpg", "rhel10", "rhel8", "rhel9", "sles15", "sles16", "ubuntu2204",
               "ubuntu2404", "ubuntu2604"]
    put("https://repo.amd.com/rocm/packages-multi-arch/", package_repo(distros))
    put("https://stable.repo.amd.com/rocm/core/packages/", package_repo(sorted(distros + ["ubuntu2610"])))  # PLANTED


def docker(k: dict[str, Any]) -> None:
    tags = [i["tag"].split(":", 1)[1] for i in k["images"] if i["exists"] is True]
    tags.remove("rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1")  # PLANTED: vanished
    tags += ["rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1",  # PLANTED: appeared
             "rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0",  # PLANTED: the KB says it does not exist
             "rocm7.14_ubuntu24.04_py3.12_pytorch_staging", "latest", "rocm7.2_ubuntu24.04_jax"]  # not release tags
    pages = [tags[:4], tags[4:]]
    base = DOCKER_BASE
    for n, page in enumerate(pages, 1):
        query = "page_size=100" if n == 1 else f"page={n}&page_size=100"
        nxt = f"{base}?page={n + 1}&page_size=100" if n < len(pages) else None
        results = [{"creator": 7, "id": 100000 + 17 * i, "images": [{"architecture": "amd64", "digest": "sha256:" + sha(t),
                    "os": "linux", "size": 21474836480, "status": "active"}], "last_updated": "2026-09-02T10:00:00.000000Z",
                    "last_updater": 7, "last_updater_username": "rocmdocker", "name": t, "repository": 4242,
                    "full_size": 21474836480, "v2": True, "tag_status": "active",
                    "tag_last_pulled": "2026-11-20T08:00:00.000000Z", "tag_last_pushed": "2026-09-02T10:00:00.000000Z",
                    "media_type": "application/vnd.oci.image.index.v1+json", "content_type": "image",
                    "digest": "sha256:" + sha(t + "index")} for i, t in enumerate(page)]
        put(f"{base}?{query}", json.dumps({"count": len(tags), "next": nxt,
                                           "previous": None if n == 1 else f"{base}?page_size=100",
                                           "results": results}, indent=1) + "\n")


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
