"""A wheel's core metadata (its ``METADATA``) read at plan time without downloading the wheel.

AMD's and PyTorch's indexes mostly serve no PEP 658 metadata, and pip then downloads whole wheels to
resolve (several GB for torch). Here:

* where the listing gives PEP 658/714 core metadata, ``<wheel URL>.metadata`` is fetched and checked
  against the sha256 the listing gives for it;
* else the wheel is read as a zip through HTTP range requests: its last :data:`TAIL` bytes (the end of
  central directory record, the ZIP64 locator and mostly the central directory itself), the rest of the
  central directory if it starts earlier, then the local header and the compressed bytes of
  ``<name>-<version>.dist-info/METADATA`` only (the zip's CRC checked; ZIP64 as zipfile reads it): the
  central directory and about 64 KiB more, a few MB at most of a multi-GB wheel.
  A server that does not honour range requests raises :class:`~wizard.downloads.remote.ListingError`
  at once (nothing of the wheel is downloaded).

:func:`read` gives a :class:`CoreMetadata` (name, version, Requires-Python, Requires-Dist, Provides-Extra),
once per process and wheel URL.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from email.parser import BytesHeaderParser

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from wizard.downloads import remote
from wizard.downloads.listing import Link, ListingError
from wizard.record import record

TAIL = 64 << 10  # the first range: the end of the zip (EOCD, ZIP64 locator, most central directories)
MIN_FETCH = 64 << 10  # a later miss asks for at least this much (the local header and METADATA in one go)


@record
class CoreMetadata:
    name: str  # normalised (PEP 503)
    version: Version
    requires_python: str | None
    requires_dist: tuple[str, ...]
    provides_extra: tuple[str, ...]


class _RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file: the byte ranges read are fetched once, on demand."""

    def __init__(self, url: str, size: int | None) -> None:
        super().__init__()
        self.url = url
        self._pos = 0
        self._segments: list[tuple[int, bytes]] = []  # (start, bytes), fetched
        if size == 0:
            raise ListingError(f"{url}: the listing says the wheel is empty")
        tail = remote.read_range(url, -TAIL) if size is None else remote.read_range(url, max(0, size - TAIL), size)
        got = remote.known_size(url)
        assert got is not None  # read_range learnt it from Content-Range
        self.size = got
        self._segments.append((got - len(tail), tail))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        stop = min(self.size, self._pos + len(buffer))
        if stop <= self._pos:
            return 0
        data = self._bytes(self._pos, stop)
        buffer[:len(data)] = data
        self._pos = stop
        return len(data)

    def _bytes(self, start: int, stop: int) -> bytes:
        out = bytearray()
        pos = start
        while pos < stop:
            seg = next(((s, b) for s, b in self._segments if s <= pos < s + len(b)), None)
            if seg is None:
                # the gap up to the next fetched segment, at least MIN_FETCH when nothing follows sooner
                nxt = min((s for s, _ in self._segments if s > pos), default=self.size)
                end = min(nxt, max(stop, pos + MIN_FETCH), self.size)
                seg = (pos, remote.read_range(self.url, pos, end))
                self._segments.append(seg)
            s, b = seg
            take = b[pos - s:min(stop, s + len(b)) - s]
            out += take
            pos += len(take)
        return bytes(out)


def _from_zip(link: Link, size: int | None) -> bytes:
    """The METADATA of the wheel at ``link``, through range requests."""
    name, version, _, _ = parse_wheel_filename(link.filename)
    f = _RangeFile(link.url, size)
    try:
        with zipfile.ZipFile(f) as zf:  # a RawIOBase: read, seek, tell
            members = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            mine = [n for n in members if _dist_info(n) == (name, version)]
            if len(mine) != 1 and len(members) != 1:
                raise ListingError(f"{link.filename}: no single .dist-info/METADATA in the wheel ({len(members)} found)")
            data = zf.read((mine or members)[0])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, KeyError) as exc:
        raise ListingError(f"{link.filename}: its zip cannot be read through range requests ({exc})") from exc
    return data


def _dist_info(member: str) -> tuple[str, Version | None]:
    stem = member.split("/", 1)[0][:-len(".dist-info")]
    name, _, version = stem.rpartition("-")
    try:
        return canonicalize_name(name), Version(version)
    except InvalidVersion:
        return canonicalize_name(name), None


def _from_pep658(link: Link) -> bytes:
    url = link.url + ".metadata"
    body, _ = remote.page(url, "*/*")
    if link.core_metadata and hashlib.sha256(body).hexdigest() != link.core_metadata:
        raise ListingError(f"{url}: sha256 {hashlib.sha256(body).hexdigest()} does not match the "
                           f"{link.core_metadata} the listing publishes for it")
    return body


def parse(data: bytes, filename: str) -> CoreMetadata:
    """The fields the resolver needs; the name and version must be the wheel's own."""
    msg = BytesHeaderParser().parsebytes(data)
    name, version = msg.get("Name"), msg.get("Version")
    want_name, want_version, _, _ = parse_wheel_filename(filename)
    try:
        got = Version(str(version))
    except InvalidVersion:
        got = None
    if name is None or canonicalize_name(str(name)) != want_name or got != want_version:
        raise ListingError(f"{filename}: its METADATA names {name} {version}, not the wheel's own")
    rp = msg.get("Requires-Python")
    return CoreMetadata(want_name, want_version, str(rp).strip() if rp else None,
                        tuple(str(r).strip() for r in msg.get_all("Requires-Dist") or ()),
                        tuple(str(canonicalize_name(str(e).strip())) for e in msg.get_all("Provides-Extra") or ()))


def read(link: Link, size: int | None = None) -> CoreMetadata:
    """The core metadata of the wheel at ``link`` (``size``: its length, when known, saves the suffix range)."""
    memo = remote.metadata_memo()
    if link.url not in memo:
        memo[link.url] = _from_pep658(link) if link.core_metadata is not None else _from_zip(link, size)
    return parse(memo[link.url], link.filename)

