"""``rocm-wizard kb refresh`` and ``kb check`` on recorded sources (tests/data/kb_refresh/).

The recordings are in the formats the real servers answer with, rendered from the upstream generators'
formats (PEP 503 HTML with absolute hrefs, TheRock's JavaScript file array, S3 XML, ``dir/index.html``
folders, Apache listings, Docker Hub's documented tags pages); they agree with the frozen knowledge base in
tests/data/kb_refresh/kb/ except for the differences planted by tests/data/kb_refresh/make_recordings.py; the
report must list exactly those, with no false contradiction. Nothing here reaches beyond 127.0.0.1: the mirror
is an HTTP server this module starts and stops.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator, TypeVar

import pytest

from wizard.kb import KnowledgeBase
from wizard.kb.refresh import Addition, Difference, Kind, Report, apply
from wizard.kb.sources import (
    SIMPLE_JSON,
    Page,
    SourceError,
    docker_tags,
    listing_entries,
    parse_wheel_filename,
    simple_files,
    simple_projects,
    snapshot_path,
)

pytestmark = pytest.mark.integration


_T = TypeVar("_T")


def _some(value: _T | None) -> _T:
    """The value, which the test needs to be there."""
    assert value is not None
    return value


ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "kb_refresh"
FROZEN = DATA / "kb"
SNAP = DATA / "snapshot"

PLANTED = sorted([
    ("new-torch-version", "rocm7.2 torch 2.15.0"),
    ("new-index", "index rocm10.0"),
    ("new-amd-torch", "amd-whl-next torch 2.14.0+rocm10.0.0"),
    ("undocumented-device-packages", "index amd-multi-arch"),
    ("new-rocm-release", "release 7.2.5"),
    ("new-rocm-release", "release 7.2.3.1"),
    ("new-rocm-release", "release 10.2.0"),
    ("new-amdgpu-install", "amdgpu-install 31.60"),
    ("new-amdgpu-install", "release 7.14.0 noble"),
    ("new-amdgpu-install", "release 10.0.0 questing"),
    ("new-package-repository", "https://stable.repo.amd.com/rocm/core/packages/ubuntu2610/"),
    ("new-docker-tag", "rocm/pytorch:rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1"),
    ("vanished-docker-tag", "rocm/pytorch:rocm7.2.4_ubuntu22.04_py3.10_pytorch_release_2.7.1"),
    ("contradiction", "rocm7.2 torch 2.14.1"),
    ("contradiction", "rocm6.4 torch 2.9.1"),
    ("contradiction", "index amd-whl-next"),
    ("contradiction", "release 7.2.3 jammy"),
    ("contradiction", "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0"),
])
ADDED = {"rocm7.2 torch 2.15.0", "index rocm10.0", "amd-whl-next torch 2.14.0+rocm10.0.0", "release 7.2.5",
         "release 7.2.3.1", "release 10.2.0", "release 7.14.0 noble",
         "rocm/pytorch:rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1"}
DOCKER_FIRST = "https://hub.docker.com/v2/namespaces/rocm/repositories/pytorch/tags?page_size=100"
DOCKER_SECOND = "https://hub.docker.com/v2/namespaces/rocm/repositories/pytorch/tags?page=2&page_size=100"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def found(report: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((d["kind"], d["subject"]) for d in report["differences"])


# --------------------------------------------------------------------------- a mirror on 127.0.0.1


class _Mirror(BaseHTTPRequestHandler):
    root: Path = SNAP
    fail: dict[str, int] = {}
    limited: dict[str, int] = {}  # url -> how many more times to answer 429 (Retry-After: 0)
    accepts: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = urllib.parse.urlsplit(self.path)
        host, _, rest = parts.path.lstrip("/").partition("/")
        url = f"https://{host}/{rest}" + (f"?{parts.query}" if parts.query else "")
        self.accepts.append(self.headers.get("Accept", ""))
        if url in self.fail:
            self.send_error(self.fail[url])
            return
        if self.limited.get(url, 0) > 0:
            self.limited[url] -= 1
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = snapshot_path(self.root, url)
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        ctype = SIMPLE_JSON if path.name == "index.json" else (
            "application/json" if path.suffix == ".json" else "text/html; charset=utf-8")
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def mirror() -> Iterator[tuple[str, type[_Mirror]]]:
    handler = type("Mirror", (_Mirror,), {"fail": {}, "limited": {}, "accepts": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.glob("*.json"))}


# --------------------------------------------------------------------------- the planted differences


def test_offline_snapshot_reports_exactly_the_planted_differences() -> None:
    before = _digest(FROZEN)
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--offline-snapshot", str(SNAP), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert found(report) == PLANTED
    assert {d["subject"] for d in report["differences"] if "addition" in d} == ADDED
    assert _digest(FROZEN) == before  # a report never edits the knowledge base
    by = {(d["kind"], d["subject"]): d for d in report["differences"]}
    assert "only in the knowledge base 3.15t" in by[("contradiction", "rocm7.2 torch 2.14.1")]["detail"]
    assert by[("new-torch-version", "rocm7.2 torch 2.15.0")]["addition"]["entry"]["python"] == \
        ["3.11", "3.12", "3.13", "3.14", "3.14t"]
    assert by[("undocumented-device-packages", "index amd-multi-arch")]["detail"].startswith("device packages for gfx1010")
    assert "gfx1153" in by[("contradiction", "index amd-whl-next")]["detail"]
    # found in the S3 XML of the stable tarball bucket, and in TheRock's JavaScript file array (no false
    # "no tarball" contradiction for 7.14.0 / 10.0.0), the dir/index.html folders (no false "absent" ones)
    assert by[("new-rocm-release", "release 10.2.0")]["source"] == "https://stable.repo.amd.com/rocm/core/tarball/"
    assert by[("new-rocm-release", "release 7.2.3.1")]["addition"]["entry"]["version"] == "7.2.3.1"
    questing = by[("new-amdgpu-install", "release 10.0.0 questing")]
    assert "addition" not in questing and "not among ROCm 10.0.0's distributions" in questing["detail"]
    assert len([d for d in report["differences"] if d["kind"] == "contradiction"]) == 5
    assert report["incomplete"] == []


def test_mirror_on_localhost_gives_the_same_report(mirror) -> None:  # type: ignore[no-untyped-def]
    url, handler = mirror
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--mirror", url, "--json")
    assert r.returncode == 0, r.stderr
    assert found(json.loads(r.stdout)) == PLANTED
    assert handler.accepts and all(SIMPLE_JSON in a for a in handler.accepts)  # PEP 691 asked for


def test_markdown_report_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--offline-snapshot", str(SNAP), "--report", str(out))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    text = out.read_text()
    assert text.startswith("# Knowledge-base refresh report")
    assert "18 differences (8 can be added with --write)" in text
    for title in ("## New torch versions per index", "## Docker tags that vanished",
                  "## Knowledge-base rows the sources contradict (5)"):
        assert title in text
    assert "- rocm7.2 torch 2.15.0: Python 3.11, 3.12, 3.13, 3.14, 3.14t " \
           "(https://download.pytorch.org/whl/rocm7.2/torch/) [--write adds]" in text


def test_write_adds_only_sourced_entries(tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(FROZEN, kb_dir)
    original = {name: json.loads((kb_dir / name).read_text()) for name in ("torch_wheels.json", "docker_images.json")}
    r = cli("kb", "refresh", "--kb-dir", str(kb_dir), "--offline-snapshot", str(SNAP), "--write", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert "8 additions written" in r.stderr and "left out" not in r.stderr
    assert cli("kb", "check", "--kb-dir", str(kb_dir)).returncode == 0
    kb = KnowledgeBase(kb_dir)
    sources = {d["subject"]: d["source"] for d in report["differences"]}
    row = _some(kb.wheel("2.15.0", "rocm7.2"))
    assert row.sources == (sources["rocm7.2 torch 2.15.0"],) and row.gfx is None and row.uncertain
    assert _some(kb.wheel_index("rocm10.0")).sources == ("https://download.pytorch.org/whl/torch/",)
    assert _some(kb.release("7.2.5")).stream == "legacy" and _some(kb.release("7.2.5")).sources == ("https://repo.radeon.com/rocm/apt/",)
    assert _some(kb.release("10.2.0")).stream == "core-sdk"
    assert _some(kb.release("7.2.3.1")).version == "7.2.3.1" and _some(kb.release("7.2.3")).version == "7.2.3"
    assert kb.amdgpu_install_url("7.14.0", "ubuntu", "24.04", "noble") == \
        "https://repo.radeon.com/amdgpu-install/31.40/ubuntu/noble/amdgpu-install_26.13.26130000-2369674.24.04_all.deb"
    r714 = _some(kb.release("7.14.0"))  # its note no longer says no URL is recorded, and says where this one came from
    assert "no URL is recorded" not in _some(r714.uncertain) and "read from the listing" in _some(r714.uncertain)
    assert "questing" not in _some(kb.release("10.0.0")).amdgpu_install  # not among its distributions
    im = _some(kb.docker_image("rocm7.2.5_ubuntu24.04_py3.12_pytorch_release_2.9.1"))
    assert im.exists is True and im.confidence == "medium" and im.sources[0].startswith("https://hub.docker.com/")
    assert [v.torch for v in kb.vendor_wheels("10.0.0")].count("2.14.0+rocm10.0.0") == 1
    # nothing already there was changed or removed
    for name, doc in original.items():
        now = json.loads((kb_dir / name).read_text())
        for section in ("wheels", "indexes", "vendor_wheels", "images"):
            for entry in doc.get(section, []):
                assert entry in now[section], (name, entry)
    # a second run has nothing left to add; the new index's own page is now read (and not recorded)
    again = json.loads(cli("kb", "refresh", "--kb-dir", str(kb_dir), "--offline-snapshot", str(SNAP),
                           "--json").stdout)
    assert not [d for d in again["differences"] if "addition" in d]
    left = {s for _, s in PLANTED} - {d["subject"] for d in report["differences"] if "addition" in d}
    assert {d["subject"] for d in again["differences"]} == left | {"index rocm10.0"}
    assert not [d for d in again["differences"] if d["subject"].startswith("release 7.2.3.1")]


def test_write_applies_each_addition_alone(tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(FROZEN, kb_dir)
    bad_tag = "rocm/pytorch:rocm9.9_ubuntu24.04_py3.12_pytorch_release_2.9.1"
    good_tag = "rocm/pytorch:rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.8.0"

    def image(tag: str, rocm: str, torch: str) -> dict[str, Any]:
        return {"tag": tag, "exists": True, "rocm": rocm, "torch": torch, "ubuntu": "24.04", "python": "3.12",
                "confidence": "medium", "note": None, "sources": [DOCKER_FIRST]}

    report = Report((Difference(Kind.NEW_TAG, bad_tag, "test", DOCKER_FIRST,
                                Addition("docker_images.json", "images", image(bad_tag, "9.9", "2.9.1"))),
                     Difference(Kind.NEW_TAG, good_tag, "test", DOCKER_FIRST,
                                Addition("docker_images.json", "images", image(good_tag, "7.2.4", "2.8.0")))), ())
    done = apply(kb_dir, report)
    assert len(done.added) == 1 and good_tag in done.added[0]
    assert len(done.refused) == 1 and bad_tag in done.refused[0] and "ROCm 9.9 is not a release" in done.refused[0]
    kb = KnowledgeBase(kb_dir)
    assert kb.problems() == [] and kb.docker_image(good_tag) is not None and kb.docker_image(bad_tag) is None


def test_kb_check_refuses_a_url_outside_the_distributions_and_a_self_contradicting_note(tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(FROZEN, kb_dir)
    doc = json.loads((kb_dir / "rocm_releases.json").read_text())
    r10 = next(r for r in doc["releases"] if r["version"] == "10.0.0")
    r10["amdgpu_install"]["questing"] = r10["amdgpu_install"]["noble"].replace("noble", "questing")
    r714 = next(r for r in doc["releases"] if r["version"] == "7.14.0")
    r714["amdgpu_install"]["noble"] = r10["amdgpu_install"]["noble"]
    (kb_dir / "rocm_releases.json").write_text(json.dumps(doc))
    problems = KnowledgeBase(kb_dir).problems()
    assert any("10.0.0" in p and "questing, which is not among its distributions" in p for p in problems), problems
    assert any("7.14.0" in p and "says no URL is recorded" in p for p in problems), problems


# --------------------------------------------------------------------------- errors: one line, non-zero


def test_unreachable_source_is_one_line_and_exit_1(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--mirror", f"http://127.0.0.1:{port}")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rocm-wizard: kb refresh: cannot read https://"), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_server_error_is_one_line_and_exit_1(mirror) -> None:  # type: ignore[no-untyped-def]
    url, handler = mirror
    handler.fail["https://repo.radeon.com/rocm/apt/"] = 503
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--mirror", url)
    assert r.returncode == 1
    assert r.stderr.strip() == "rocm-wizard: kb refresh: cannot read https://repo.radeon.com/rocm/apt/: HTTP 503 " \
                               "Service Unavailable"


def test_rate_limit_is_waited_out(mirror) -> None:  # type: ignore[no-untyped-def]
    url, handler = mirror
    handler.limited[DOCKER_FIRST] = 2  # Docker Hub answers 429 twice (Retry-After: 0), then the page
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--mirror", url, "--json")
    assert r.returncode == 0, r.stderr
    assert found(json.loads(r.stdout)) == PLANTED and handler.limited[DOCKER_FIRST] == 0


def test_a_rate_limit_that_stays_is_one_line_and_exit_1(mirror) -> None:  # type: ignore[no-untyped-def]
    url, handler = mirror
    handler.limited[DOCKER_FIRST] = 99
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--mirror", url)
    assert r.returncode == 1
    assert r.stderr.strip() == (f"rocm-wizard: kb refresh: cannot read {DOCKER_FIRST}: HTTP 429 Too Many Requests "
                                "(still rate limited after 4 waits)")


def test_reader_backs_off_as_told_and_bounded(mirror) -> None:  # type: ignore[no-untyped-def]
    from wizard.kb.sources import MAX_WAIT_S, Reader, _retry_after

    url, handler = mirror
    handler.limited[DOCKER_FIRST] = 3
    slept: list[float] = []
    reader = Reader(mirror=url, sleep=slept.append)
    assert reader.get(DOCKER_FIRST) is not None
    assert slept == [0.0, 0.0, 0.0] == reader.waited
    assert _retry_after(None, 0) == 2 and _retry_after(None, 2) == 8 and _retry_after("30", 0) == 30
    assert _retry_after("86400", 0) == MAX_WAIT_S and _retry_after("soon", 1) == 4


def test_a_missing_later_tags_page_judges_nothing_vanished(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(SNAP, snap)
    snapshot_path(snap, DOCKER_SECOND).unlink()
    r = cli("kb", "refresh", "--kb-dir", str(FROZEN), "--offline-snapshot", str(snap), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert not [d for d in report["differences"] if d["kind"] == "vanished-docker-tag"]
    assert len(report["incomplete"]) == 1 and "page 2" in report["incomplete"][0]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    r = cli("kb", "refresh", "--offline-snapshot", str(tmp_path / "missing"))
    assert r.returncode == 2 and "not a directory" in r.stderr
    r = cli("kb", "refresh", "--offline-snapshot", str(SNAP), "--mirror", "http://127.0.0.1:9")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


# --------------------------------------------------------------------------- kb check through the CLI


def test_kb_check_through_both_entry_points(tmp_path: Path) -> None:
    r = cli("kb", "check")
    assert r.returncode == 0 and r.stdout.startswith("knowledge base OK"), r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "wizard.kb", "check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("knowledge base OK")
    bad = tmp_path / "kb"
    shutil.copytree(FROZEN, bad)
    doc = json.loads((bad / "docker_images.json").read_text())
    doc["images"].append(dict(doc["images"][0], python="3.9"))
    (bad / "docker_images.json").write_text(json.dumps(doc))
    r = cli("kb", "check", "--kb-dir", str(bad))
    assert r.returncode == 1 and "duplicate tag with different contents" in r.stdout


# --------------------------------------------------------------------------- source formats


def test_wheel_file_names() -> None:
    w = _some(parse_wheel_filename("torch-2.9.0%2Brocm6.4-cp313-cp313t-manylinux_2_28_x86_64.whl"))
    assert (w.name, w.version, w.python) == ("torch", "2.9.0+rocm6.4", "3.13t")
    assert _some(parse_wheel_filename("torch-2.14.1+rocm7.2-cp312-cp312-manylinux_2_28_x86_64.whl")).python == "3.12"
    assert _some(parse_wheel_filename("rocm_sdk_core-7.14.0-py3-none-linux_x86_64.whl")).python is None
    assert parse_wheel_filename("rocm-7.14.1.tar.gz") is None


def test_pep503_html_is_read_too() -> None:
    html = (b'<!DOCTYPE html><html><body><h1>Links for torch</h1>\n'
            b'<a href="/whl/rocm6.2/torch-2.5.1%2Brocm6.2-cp312-cp312-linux_x86_64.whl#sha256=ab">'
            b'torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl</a><br/></body></html>')
    assert simple_files(Page("u", html, "text/html")) == ["torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl"]
    root = b'<html><body><a href="/simple/rocm-sdk-device-gfx1100/">rocm-sdk-device-gfx1100</a>' \
           b'<a href="/simple/Amd_Torch_Device_gfx942/">Amd_Torch_Device_gfx942</a></body></html>'
    assert simple_projects(Page("u", root, "text/html")) == ["rocm-sdk-device-gfx1100", "amd-torch-device-gfx942"]


def test_directory_listings_in_every_form_the_servers_use() -> None:
    apache = (SNAP / "repo.radeon.com" / "amdgpu-install" / "index.html").read_bytes()
    entries = listing_entries(Page("u", apache, "text/html"))
    assert "31.50/" in entries and "7.2.4/" in entries
    assert not [e for e in entries if e.startswith(("?", "/"))]  # sort links and the parent are left out
    nginx = b'<html><body><pre><a href="../">../</a>\n<a href="ubuntu2404/">ubuntu2404/</a>  26-Aug-2026\n' \
            b'<a href="x-10.0.0.tar.gz">x-10.0.0.tar.gz</a> 26-Aug-2026 5</pre></body></html>'
    assert listing_entries(Page("u", nginx, "text/html")) == ["ubuntu2404/", "x-10.0.0.tar.gz"]
    # TheRock's tarball page: the names are only in the JavaScript array
    js = (SNAP / "repo.amd.com" / "rocm" / "tarball-multi-arch" / "index.html").read_bytes()
    assert b"<a href=\"therock" not in js
    assert "therock-dist-linux-gfx1151-7.14.0.tar.gz" in listing_entries(Page("u", js, "text/html"))
    # raw S3 XML: <Key> files (an index.html key left out), <CommonPrefixes> folders, nested keys as folders
    xml = (SNAP / "stable.repo.amd.com" / "rocm" / "core" / "tarball" / "index.html").read_bytes()
    assert xml.startswith(b"<?xml") and "therock-dist-linux-gfx1151-10.0.0.tar.gz" in \
        listing_entries(Page("u", xml, "application/xml"))
    s3 = (b'<?xml version="1.0"?><ListBucketResult><Name>b</Name><Prefix>rocm/core/</Prefix><Contents><Key>'
          b'rocm/core/index.html</Key></Contents><Contents><Key>rocm/core/a&amp;b.deb</Key></Contents><Contents>'
          b'<Key>rocm/core/deep/x.deb</Key></Contents><CommonPrefixes><Prefix>rocm/core/ubuntu2610/</Prefix>'
          b'</CommonPrefixes></ListBucketResult>')
    assert listing_entries(Page("u", s3, "application/xml")) == ["ubuntu2610/", "a&b.deb", "deep/"]
    # TheRock's package repositories: folders linked as name/index.html
    repo = (SNAP / "stable.repo.amd.com" / "rocm" / "core" / "packages" / "index.html").read_bytes()
    entries = listing_entries(Page("u", repo, "text/html"))
    assert "ubuntu2610/" in entries and "ubuntu2404/" in entries and not [e for e in entries if "index.html" in e]
    broken = b"<script>const files = [{'name': oops}];</script>"
    with pytest.raises(SourceError, match="files array is not JSON"):
        listing_entries(Page("https://x/", broken, "text/html"))


def test_pytorch_pages_are_pep503_with_absolute_hrefs() -> None:
    page = (SNAP / "download.pytorch.org" / "whl" / "rocm7.2" / "torch" / "index.html").read_bytes()
    assert b'href="/whl/rocm7.2/torch-2.14.1%2Brocm7.2-cp312' in page and b"data-core-metadata" in page
    files = simple_files(Page("u", page, "text/html"))
    assert "torch-2.14.1+rocm7.2-cp312-cp312-manylinux_2_28_x86_64.whl" in files


def test_docker_hub_pages() -> None:
    first = snapshot_path(SNAP, DOCKER_FIRST)
    names, nxt = docker_tags(Page("u", first.read_bytes(), "application/json"))
    assert names and nxt == DOCKER_SECOND
    last = snapshot_path(SNAP, nxt)
    names, end = docker_tags(Page("u", last.read_bytes(), "application/json"))
    assert end is None and "latest" in names  # every tag: the refresher keeps the release tags itself
