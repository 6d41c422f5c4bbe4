"""Reading the live sources ``kb refresh`` compares the knowledge base with, and parsing their formats.

Three ways to read a URL, one interface (:class:`Reader`):

* the network (``urllib``, the PEP 691 JSON form asked for with ``Accept``);
* a mirror: ``https://HOST/PATH?QUERY`` is read from ``MIRROR/HOST/PATH?QUERY`` (tests serve recordings on 127.0.0.1);
* an offline snapshot directory, laid out by :func:`snapshot_path`.

Formats: PEP 691 JSON and PEP 503 HTML simple indexes (relative or absolute hrefs), directory listings
(Apache, nginx, TheRock's ``dir/index.html`` pages and JavaScript file arrays, raw S3 XML), and Docker Hub's
documented tags endpoint. A 429 (rate limit) is waited out and retried a bounded number of times. Only the
standard library is used.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

from packaging.utils import canonicalize_name

from wizard import lazy_re
from wizard.record import record


SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{SIMPLE_JSON}, text/html;q=0.1, application/json;q=0.5, */*;q=0.01"
TIMEOUT_S = 60  # per page, whole: a server that drips a byte at a time is cut off here
RETRIES_429 = 4  # how many times a rate-limited read is waited out and tried again
MAX_WAIT_S = 120.0
DOCKER_HUB = "hub.docker.com"  # the only host a tags page's "next" link may lead to
MAX_BODY = 64 << 20  # the largest index page read (the biggest simple index is a few MiB)
USER_AGENT = "rocm-wizard-kb-refresh"


class SourceError(Exception):
    """A source could not be read (network failure, server error, unreadable file). One line."""


@record
class Page:
    url: str
    body: bytes
    content_type: str  # lower-case media type without parameters; "" when unknown

    @property
    def is_json(self) -> bool:
        return self.content_type.endswith("json") or self.body.lstrip()[:1] in (b"{", b"[")


def snapshot_path(root: Path, url: str) -> Path:
    """Where a recorded copy of ``url`` lives under ``root``: ``HOST/PATH``; a directory URL (ending in /)
    is ``HOST/PATH/index.json`` or ``index.html``; a query is folded into the file name
    (``tags?page_size=100`` -> ``tags/page_size-100.json``)."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path.lstrip("/")
    base = root / parts.netloc / path
    if parts.query:
        q = "_".join(f"{k}-{v}" for k, v in sorted(urllib.parse.parse_qsl(parts.query)))
        return base / f"{q}.json"
    if not path or path.endswith("/"):
        for name in ("index.json", "index.html"):
            if (base / name).is_file():
                return base / name
        return base / "index.html"
    return base


def _media(name: str) -> str:
    if name.endswith(".json"):
        return SIMPLE_JSON if name == "index.json" else "application/json"
    return "text/html"


class Reader:
    """Reads a URL from the network, a mirror, or an offline snapshot. ``get`` returns None for a page the
    server says is absent (404, and 403, which AMD's and PyTorch's indexes answer for missing projects)."""

    def __init__(self, *, mirror: str | None = None, snapshot: Path | None = None,
                 sleep: Callable[[float], None] = time.sleep, retries: int = RETRIES_429) -> None:
        self.mirror = mirror.rstrip("/") if mirror else None
        self.snapshot = snapshot
        self.read: list[str] = []  # every URL read, in order
        self.sleep = sleep
        self.retries = retries
        self.waited: list[float] = []  # the back-off waits, in order (seconds)

    def get(self, url: str) -> Page | None:
        self.read.append(url)
        if self.snapshot is not None:
            path = snapshot_path(self.snapshot, url)
            if not path.is_file():
                return None
            try:
                return Page(url, path.read_bytes(), _media(path.name))
            except OSError as exc:
                raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
        target = url
        if self.mirror is not None:
            parts = urllib.parse.urlsplit(url)
            target = f"{self.mirror}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        request = urllib.request.Request(target, headers={"Accept": ACCEPT, "User-Agent": USER_AGENT})
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT_S) as resp:  # noqa: S310 - https or the mirror
                    ctype = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                    return Page(url, _bounded_body(resp, url), ctype)
            except urllib.error.HTTPError as exc:
                if exc.code in (403, 404):
                    return None
                if exc.code == 429 and attempt < self.retries:  # rate limited: wait as told (bounded), then again
                    wait = _retry_after(exc.headers.get("Retry-After") if exc.headers else None, attempt)
                    self.waited.append(wait)
                    self.sleep(wait)
                    continue
                tail = f" (still rate limited after {self.retries} waits)" if exc.code == 429 else ""
                raise SourceError(f"cannot read {url}: HTTP {exc.code} {exc.reason}{tail}") from None
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", exc)
                raise SourceError(f"cannot read {url}: {reason}") from None
        raise SourceError(f"cannot read {url}: no answer")  # not reached: the last attempt returns or raises


def _retry_after(header: str | None, attempt: int) -> float:
    """Seconds to wait after a 429: the server's Retry-After (seconds) when it gives one, else 2, 4, 8 ...;
    never more than MAX_WAIT_S."""
    try:
        told = float(header) if header is not None else None
    except ValueError:
        told = None
    wait = told if told is not None and told >= 0 else float(2 ** (attempt + 1))
    return min(wait, MAX_WAIT_S)


def _bounded_body(resp: Any, url: str) -> bytes:
    """The body, at most MAX_BODY bytes and TIMEOUT_S seconds in all (SourceError beyond)."""
    import time

    deadline = time.monotonic() + TIMEOUT_S
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = resp.read1(1 << 20) if hasattr(resp, "read1") else resp.read(1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY:
            raise SourceError(f"cannot read {url}: larger than {MAX_BODY >> 20} MiB")
        if time.monotonic() > deadline:
            raise SourceError(f"cannot read {url}: not read within {TIMEOUT_S} s")
        chunks.append(chunk)


# --------------------------------------------------------------------------- HTML anchors


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def _hrefs(body: bytes) -> list[str]:
    p = _Anchors()
    p.feed(body.decode("utf-8", "replace"))
    return p.hrefs


_JS_FILES = lazy_re.compile(r"\bconst\s+files\s*=\s*(\[.*?\])\s*;", re.S)
_S3_KEY = lazy_re.compile(r"<Key>(.*?)</Key>", re.S)
_S3_PREFIX = lazy_re.compile(r"<Prefix>(.*?)</Prefix>", re.S)
_S3_COMMON = lazy_re.compile(r"<CommonPrefixes>(.*?)</CommonPrefixes>", re.S)
_ENTRY = lazy_re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+~-]{0,200}/?$")


def listing_entries(page: Page) -> list[str]:
    """Names in a directory listing: files as "name", directories as "name/". Read in every form the servers
    answer with: Apache and nginx anchors; TheRock's package-repository pages, which link a folder as
    ``name/index.html`` (``generate_package_indexes.py``); TheRock's tarball pages, whose file names sit in a
    JavaScript array ``const files = [{"name": ...}]`` and get their anchors in the browser
    (``index_generation_s3_tar.py``); and a raw S3 ``ListBucketResult`` (``<Key>`` files, ``<CommonPrefixes>``
    folders). Sort links, the parent link, the page itself and absolute links elsewhere are left out."""
    text = page.body.decode("utf-8", "replace")
    if "<ListBucketResult" in text[:2048]:
        return _s3_entries(text)
    out: list[str] = []
    js = _JS_FILES.search(text)
    if js:
        try:
            files = json.loads(js.group(1))
        except ValueError as exc:
            raise SourceError(f"{page.url}: the listing's files array is not JSON ({exc})") from None
        for f in files if isinstance(files, list) else []:
            name = f.get("name") if isinstance(f, dict) else None
            if isinstance(name, str) and name and "/" not in name and name not in out:
                out.append(name)
    for href in _hrefs(page.body):
        if href.startswith(("?", "#", "/", "..")) or "://" in href:
            continue
        name = urllib.parse.unquote(href.split("?", 1)[0].split("#", 1)[0])
        if name == "index.html":
            continue
        if name.endswith("/index.html"):  # a folder linked to its own listing page
            name = name[: -len("index.html")]
        if not _ENTRY.match(name):  # "%2e%2e%2f..", "{{...}}/": never a key or a file name of the knowledge base
            continue
        if name and name.count("/") <= (1 if name.endswith("/") else 0) and name not in out:
            out.append(name)
    return out


def _s3_entries(text: str) -> list[str]:
    """A ListBucketResult (with Delimiter=/): the direct children of its Prefix."""
    import html

    mo = _S3_PREFIX.search(text.split("<Contents>", 1)[0].split("<CommonPrefixes>", 1)[0])
    prefix = html.unescape(mo.group(1)) if mo else ""
    out: list[str] = []
    for block in _S3_COMMON.findall(text):
        for p in _S3_PREFIX.findall(block):
            name = html.unescape(p)[len(prefix):] if html.unescape(p).startswith(prefix) else ""
            if name and name.rstrip("/").count("/") == 0 and name not in out:
                out.append(name if name.endswith("/") else name + "/")
    for key in _S3_KEY.findall(text):
        k = html.unescape(key)
        name = k[len(prefix):] if k.startswith(prefix) else ""
        if not name or name.endswith("index.html"):
            continue
        entry = name if "/" not in name else name.split("/", 1)[0] + "/"  # a key below a folder shows the folder
        if entry not in out:
            out.append(entry)
    return out


# --------------------------------------------------------------------------- simple indexes


def simple_files(page: Page) -> list[str]:
    """File names on a project page of a simple index (PEP 691 JSON or PEP 503 HTML)."""
    if page.is_json:
        try:
            doc = json.loads(page.body)
        except ValueError as exc:
            raise SourceError(f"{page.url}: not JSON ({exc})") from None
        files = doc.get("files") if isinstance(doc, dict) else None
        if not isinstance(files, list):
            raise SourceError(f"{page.url}: no 'files' list (not a PEP 691 project page)")
        return [f["filename"] for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)]
    return [urllib.parse.unquote(h.rsplit("/", 1)[-1].split("#", 1)[0]) for h in _hrefs(page.body)]


def simple_projects(page: Page) -> list[str]:
    """Project names on an index's root page (PEP 691 JSON or PEP 503 HTML), normalized (PEP 503)."""
    if page.is_json:
        try:
            doc = json.loads(page.body)
        except ValueError as exc:
            raise SourceError(f"{page.url}: not JSON ({exc})") from None
        projects = doc.get("projects") if isinstance(doc, dict) else None
        if not isinstance(projects, list):
            raise SourceError(f"{page.url}: no 'projects' list (not a PEP 691 index root)")
        names = [p["name"] for p in projects if isinstance(p, dict) and isinstance(p.get("name"), str)]
    else:
        names = [h.rstrip("/").rsplit("/", 1)[-1] for h in _hrefs(page.body)]
    return [canonicalize_name(n) for n in names]


@record
class WheelFile:
    name: str  # normalized (PEP 503): "torch"
    version: str  # "2.14.1+rocm7.2"
    python: str | None  # "3.12", "3.13t"; None for py3-none wheels


def parse_wheel_filename(filename: str) -> WheelFile | None:
    """A wheel's file name as an index lists it (``+`` may be escaped as ``%2B``), read by packaging;
    None for anything that is not a valid wheel file name."""
    from packaging.utils import InvalidWheelFilename
    from packaging.utils import parse_wheel_filename as parse

    try:
        name, version, _build, tags = parse(urllib.parse.unquote(filename))
    except InvalidWheelFilename:
        return None
    tag = min(tags, key=str)
    cp = re.match(r"^cp(\d)(\d+)(t?)$", tag.abi) or re.match(r"^cp(\d)(\d+)()$", tag.interpreter)
    return WheelFile(name, str(version), f"{cp[1]}.{cp[2]}{cp[3]}" if cp else None)


# --------------------------------------------------------------------------- Docker Hub


def docker_tags(page: Page) -> tuple[list[str], str | None]:
    """(tag names, next page URL) from one page of the Docker Hub v2 tags API."""
    try:
        doc = json.loads(page.body)
    except ValueError as exc:
        raise SourceError(f"{page.url}: not JSON ({exc})") from None
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise SourceError(f"{page.url}: no 'results' list (not a Docker Hub tags page)")
    names = [r["name"] for r in results if isinstance(r, dict) and isinstance(r.get("name"), str)]
    nxt = doc.get("next")
    if not isinstance(nxt, str) or not nxt:
        return names, None
    there = urllib.parse.urlsplit(nxt)
    if (there.scheme, there.netloc) != ("https", DOCKER_HUB):  # followed only on Docker Hub itself
        raise SourceError(f"{page.url}: its 'next' page {nxt[:120]!r} is not on https://{DOCKER_HUB}")
    return names, nxt
