"""An index's own listing (PEP 691 JSON, else PEP 503 HTML) resolved to exact files.

``resolve(index_url, ["torch==2.5.1", "torchvision"], "3.12")`` asks ``INDEX/<project>/`` of each
requirement, keeps the wheels the index publishes a sha256 for whose tags fit that Python on Linux
x86_64 (and whose ``Requires-Python`` takes it), and picks the pinned version (or the newest) with the most
specific tag. A file's size comes from the JSON listing (PEP 700) or, where the listing has none, from a HEAD
request. A file's PEP 658/714 core metadata (``core-metadata``, ``data-core-metadata`` and their older
``dist-info-metadata`` spellings) is kept for :mod:`~wizard.downloads.metadata`. Anything that cannot be
resolved raises :class:`ListingError` with one line saying why: the caller says so in the plan. The pages are
read through :mod:`~wizard.downloads.remote` (once per process); :mod:`~wizard.downloads.closure` resolves
the dependencies of what this module picks.
"""

from __future__ import annotations

import html.parser
import json
from typing import Iterable, Sequence
from urllib.parse import unquote, urldefrag, urljoin

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from wizard.downloads import remote
from wizard.downloads.remote import ListingError
from wizard.record import record

__all__ = ["ListingError", "RemoteFile", "Link", "supported_tags", "parse_listing", "project_links", "file_size",
           "pick", "remote_file", "resolve", "forget", "python_full"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
# manylinux glibc minors tried (newest first): every x86_64 distribution the knowledge base supports has >= 2.28
GLIBC_MINORS = range(40, 16, -1)
SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


@record
class RemoteFile:
    """One file a plan downloads: where, its published sha256 and its size in bytes."""

    project: str  # normalised (PEP 503)
    filename: str
    url: str
    sha256: str
    size: int


def _major_minor(python: str) -> tuple[int, int]:
    try:
        major, minor = (int(x) for x in python.rstrip("t").split(".")[:2])
    except ValueError as exc:
        raise ListingError(f"not a Python version: {python!r}") from exc
    return major, minor


def python_full(python: str) -> Version:
    """"3.12" (or "3.13t") as the version ``Requires-Python`` is checked against: 3.12.0 (the micro is unknown
    at plan time)."""
    major, minor = _major_minor(python)
    return Version(f"{major}.{minor}.0")


def supported_tags(python: str, arch: str = "x86_64") -> list[Tag]:
    """The wheel tags a CPython ``python`` ("3.12") on Linux ``arch`` accepts, most specific first."""
    free = python.endswith("t")  # free-threaded "3.13t": its own ABI (cp313t), no abi3
    major, minor = _major_minor(python)
    platforms = [f"manylinux_2_{m}_{arch}" for m in GLIBC_MINORS] + \
        [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", f"linux_{arch}"]
    abi = f"cp{major}{minor}{'t' if free else ''}"
    tags = [t for t in cpython_tags((major, minor), abis=[abi], platforms=platforms) if not (free and t.abi == "abi3")]
    return [*tags, *compatible_tags((major, minor), platforms=platforms)]


@record
class Link:
    """One file of a project page."""

    filename: str
    url: str
    sha256: str | None
    size: int | None
    yanked: bool
    requires_python: str | None = None
    # PEP 658/714: None: not served; "": served without a hash; else its sha256
    core_metadata: str | None = None


def _core_metadata(value: object) -> str | None:
    """A listing's core-metadata value (JSON: true/false or a dict of hashes; HTML: "true" or "sha256=...")."""
    if value is None or value is False or value == "false":
        return None
    if isinstance(value, dict):
        return str(value.get("sha256") or "").lower()
    if isinstance(value, str) and value.startswith("sha256="):
        return value[len("sha256="):].lower()
    return ""


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = dict(attrs)
            if a.get("href"):
                self.links.append((str(a["href"]), a))


def parse_listing(body: bytes, content_type: str, page_url: str) -> list[Link]:
    """The files of one project page, JSON (PEP 691) or HTML (PEP 503), with absolute URLs."""
    out: list[Link] = []
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
            rp = f.get("requires-python")
            meta = f.get("core-metadata", f.get("dist-info-metadata"))
            out.append(Link(str(f["filename"]), urljoin(page_url, str(f["url"])), hashes.get("sha256"),
                            size if isinstance(size, int) else None, bool(f.get("yanked")),
                            rp if isinstance(rp, str) and rp else None, _core_metadata(meta)))
        return out
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    for href, attrs in parser.links:
        url, frag = urldefrag(urljoin(page_url, href))
        name = url.rsplit("/", 1)[-1]
        sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
        meta = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
        out.append(Link(unquote(name), url, sha, None, "data-yanked" in attrs, attrs.get("data-requires-python") or None,
                        _core_metadata(meta) if "data-core-metadata" in attrs or "data-dist-info-metadata" in attrs
                        else None))
    return out


def forget() -> None:
    """Drop what this process learnt of the indexes (a new plan after the network came back)."""
    remote.forget()


def project_links(index_url: str, project: str) -> list[Link]:
    """The files ``INDEX/<project>/`` lists (read once per process)."""
    url = f"{index_url.rstrip('/')}/{canonicalize_name(project)}/"
    body, ctype = remote.page(url, ACCEPT)
    return parse_listing(body, ctype, url)


def file_size(link: Link) -> int:
    """The listing's size (PEP 700), else what this process learnt of it, else a HEAD."""
    if link.size is not None:
        return link.size
    return remote.known_size(link.url) or remote.size(link.url)


def pick(links: Iterable[Link], req: Requirement, tags: Sequence[Tag], python: str | None = None,
         skip: Iterable[str] = ()) -> Link:
    """The wheel for ``req``: a version the specifier allows (the newest) whose Requires-Python takes
    ``python``, the most specific tag; never a file named in ``skip``."""
    rank = {t: i for i, t in enumerate(tags)}
    best: tuple[Version, int, Link] | None = None
    seen_unhashed = False
    links = [link for link in links if link.filename not in set(skip)]
    fitting = [link for link in links if _fits(link, req, rank, python)]
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
        if seen_unhashed:
            why = "publishes no sha256 for it"
        elif any(link.filename.endswith(SDIST_SUFFIXES) and not link.yanked for link in links):
            why = ("serves only a source distribution of it (its dependencies are decided when it is built, "
                   "not readable at plan time)")
        else:
            why = "has no wheel for this Python and platform"
        raise ListingError(f"{req}: the index {why}")
    return best[2]


def _fits(link: Link, req: Requirement, rank: dict[Tag, int], python: str | None) -> bool:
    """A wheel of ``req``'s project, in its specifier, with a tag this Python takes, not yanked."""
    if link.yanked or not link.filename.endswith(".whl"):
        return False
    try:
        name, version, _, ftags = parse_wheel_filename(link.filename)
    except InvalidWheelFilename:
        return False
    if python is not None and link.requires_python:
        try:
            if not SpecifierSet(link.requires_python).contains(python_full(python), prereleases=True):
                return False
        except InvalidSpecifier:
            pass  # as pip: an unreadable Requires-Python does not exclude the file
    return (name == canonicalize_name(req.name) and req.specifier.contains(version, prereleases=True)
            and any(t in rank for t in ftags))


def remote_file(link: Link) -> RemoteFile:
    assert link.sha256 is not None
    name = parse_wheel_filename(link.filename)[0]
    return RemoteFile(str(name), link.filename, link.url, link.sha256.lower(), file_size(link))


def resolve(index_url: str, requirements: Sequence[str], python: str, arch: str = "x86_64") -> tuple[RemoteFile, ...]:
    """The exact file of each requirement on ``index_url`` for CPython ``python`` on Linux ``arch``."""
    tags = supported_tags(python, arch)
    out: list[RemoteFile] = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise ListingError(f"{text!r}: not a requirement ({exc})") from exc
        out.append(remote_file(pick(project_links(index_url, req.name), req, tags, python)))
    return tuple(out)
