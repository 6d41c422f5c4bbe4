"""An index's own listing (PEP 691 JSON, else PEP 503 HTML) resolved to exact files.

``resolve(index_url, ["torch==2.5.1", "torchvision"], "3.12")`` asks ``INDEX/<project>/`` of each
requirement, keeps the wheels the index publishes a sha256 for whose tags fit that Python on Linux
x86_64, and picks the pinned version (or the newest) with the most specific tag. A file's size comes from
the JSON listing (PEP 700) or, where the listing has none, from a HEAD request. Anything that cannot be
resolved raises :class:`ListingError` with one line saying why: the caller says so in the plan.
"""

from __future__ import annotations

import html.parser
import json
import urllib.error
import urllib.request
from typing import Iterable, Sequence
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from wizard.record import record

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
TIMEOUT_S = 15
# manylinux glibc minors tried (newest first): every x86_64 distribution the knowledge base supports has >= 2.28
GLIBC_MINORS = range(40, 16, -1)


class ListingError(Exception):
    """One line: why the files could not be resolved from the listing."""


@record
class RemoteFile:
    """One file a plan downloads: where, its published sha256 and its size in bytes."""

    project: str  # normalised (PEP 503)
    filename: str
    url: str
    sha256: str
    size: int


def supported_tags(python: str, arch: str = "x86_64") -> list[Tag]:
    """The wheel tags a CPython ``python`` ("3.12") on Linux ``arch`` accepts, most specific first."""
    free = python.endswith("t")  # free-threaded "3.13t": its own ABI (cp313t), no abi3
    try:
        major, minor = (int(x) for x in python.rstrip("t").split(".")[:2])
    except ValueError as exc:
        raise ListingError(f"not a Python version: {python!r}") from exc
    platforms = [f"manylinux_2_{m}_{arch}" for m in GLIBC_MINORS] + \
        [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", f"linux_{arch}"]
    abi = f"cp{major}{minor}{'t' if free else ''}"
    tags = [t for t in cpython_tags((major, minor), abis=[abi], platforms=platforms) if not (free and t.abi == "abi3")]
    return [*tags, *compatible_tags((major, minor), platforms=platforms)]


@record
class _Link:
    filename: str
    url: str
    sha256: str | None
    size: int | None
    yanked: bool


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = dict(attrs)
            if a.get("href"):
                self.links.append((str(a["href"]), a))


def parse_listing(body: bytes, content_type: str, page_url: str) -> list[_Link]:
    """The files of one project page, JSON (PEP 691) or HTML (PEP 503), with absolute URLs."""
    out: list[_Link] = []
    if JSON_TYPE in content_type or body.lstrip().startswith(b"{"):
        try:
            doc = json.loads(body)
            files = doc["files"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ListingError(f"{page_url}: not a PEP 691 listing ({exc})") from exc
        for f in files:
            if not isinstance(f, dict) or "filename" not in f or "url" not in f:
                continue
            hashes = f.get("hashes")
            hashes = hashes if isinstance(hashes, dict) else {}
            size = f.get("size")
            out.append(_Link(str(f["filename"]), urljoin(page_url, str(f["url"])), hashes.get("sha256"),
                             size if isinstance(size, int) else None, bool(f.get("yanked"))))
        return out
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    for href, attrs in parser.links:
        url, frag = urldefrag(urljoin(page_url, href))
        name = url.rsplit("/", 1)[-1]
        sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
        out.append(_Link(unquote(name), url, sha, None, "data-yanked" in attrs))
    return out


# one process asks each page once, and a server that could not be reached once is not asked again: every plan
# recommend() resolves reads the same indexes, and a machine without a network must not wait TIMEOUT_S per plan
_PAGES: dict[str, tuple[bytes, str]] = {}
_SIZES: dict[str, int] = {}
_UNREACHABLE: dict[str, ListingError] = {}


def forget() -> None:
    """Drop what this process learnt of the indexes (a new plan after the network came back)."""
    _PAGES.clear()
    _SIZES.clear()
    _UNREACHABLE.clear()


def _open(url: str, method: str, accept: str) -> tuple[bytes, str, str | None]:
    host = urlsplit(url).netloc
    if host in _UNREACHABLE:
        raise _UNREACHABLE[host]
    req = urllib.request.Request(url, method=method, headers={"Accept": accept, "User-Agent": "rocm-wizard"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # noqa: S310 - an index URL the plan names
            body = resp.read() if method == "GET" else b""
            return body, resp.headers.get("Content-Type", ""), resp.headers.get("Content-Length")
    except urllib.error.HTTPError as exc:
        raise ListingError(f"{url}: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        err = ListingError(f"{url}: cannot be reached ({getattr(exc, 'reason', exc)})")
        _UNREACHABLE[host] = err
        raise err from exc


def _get(url: str, accept: str) -> tuple[bytes, str]:
    if url not in _PAGES:
        body, ctype, _ = _open(url, "GET", accept)
        _PAGES[url] = (body, ctype)
    return _PAGES[url]


def _size(url: str) -> int:
    if url not in _SIZES:
        _, _, length = _open(url, "HEAD", "*/*")
        if length is None or not length.isdigit():
            raise ListingError(f"{url}: the server gives no Content-Length")
        _SIZES[url] = int(length)
    return _SIZES[url]


def pick(links: Iterable[_Link], req: Requirement, tags: Sequence[Tag]) -> _Link:
    """The wheel for ``req``: a version the specifier allows (the newest), the most specific tag."""
    rank = {t: i for i, t in enumerate(tags)}
    best: tuple[Version, int, _Link] | None = None
    seen_unhashed = False
    fitting = [link for link in links if _fits(link, req, rank)]
    # as pip: a pre-release only when the specifier names one or nothing else fits
    finals = [link for link in fitting if not parse_wheel_filename(link.filename)[1].is_prerelease]
    if finals and not req.specifier.prereleases:
        fitting = finals
    for link in fitting:
        _, version, _, ftags = parse_wheel_filename(link.filename)
        fits = [rank[t] for t in ftags if t in rank]
        if not link.sha256:
            seen_unhashed = True
            continue
        key = (version, -min(fits), link)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        why = "publishes no sha256 for it" if seen_unhashed else "has no wheel for this Python and platform"
        raise ListingError(f"{req}: the index {why}")
    return best[2]


def _fits(link: _Link, req: Requirement, rank: dict[Tag, int]) -> bool:
    """A wheel of ``req``'s project, in its specifier, with a tag this Python takes, not yanked."""
    if link.yanked or not link.filename.endswith(".whl"):
        return False
    try:
        name, version, _, ftags = parse_wheel_filename(link.filename)
    except InvalidWheelFilename:
        return False
    return (name == canonicalize_name(req.name) and req.specifier.contains(version, prereleases=True)
            and any(t in rank for t in ftags))


def resolve(index_url: str, requirements: Sequence[str], python: str, arch: str = "x86_64") -> tuple[RemoteFile, ...]:
    """The exact file of each requirement on ``index_url`` for CPython ``python`` on Linux ``arch``."""
    tags = supported_tags(python, arch)
    out: list[RemoteFile] = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise ListingError(f"{text!r}: not a requirement ({exc})") from exc
        project = canonicalize_name(req.name)
        page = f"{index_url.rstrip('/')}/{project}/"
        body, ctype = _get(page, ACCEPT)
        link = pick(parse_listing(body, ctype, page), req, tags)
        assert link.sha256 is not None
        size = link.size if link.size is not None else _size(link.url)
        out.append(RemoteFile(project, link.filename, link.url, link.sha256.lower(), size))
    return tuple(out)
