"""What plan-time resolution asks of an index's server, read once per process.

* :func:`page`: a listing page (or a PEP 658 ``.metadata`` file), by URL;
* :func:`size`: a file's length, from a ``HEAD`` (or from an earlier range answer's ``Content-Range``);
* :func:`read_range`: bytes ``start..stop`` of a file with an HTTP range request (``start`` negative: the
  last ``-start`` bytes); a server that answers 200 (the whole file) instead of 206 raises at once, before
  its body is read, so a wheel is never downloaded whole here.

One process asks each page once, and a server that could not be reached once is not asked again: every
plan ``recommend()`` resolves reads the same indexes, and a machine without a network must not wait
``TIMEOUT_S`` per plan. :func:`forget` drops all of it (a new plan after the network came back).
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from typing import Mapping
from urllib.parse import urlsplit

from wizard import lazy_re

TIMEOUT_S = 15
_CONTENT_RANGE = lazy_re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")


class ListingError(Exception):
    """One line: why the files could not be resolved from the listing."""


_PAGES: dict[str, tuple[bytes, str]] = {}
_SIZES: dict[str, int] = {}
_UNREACHABLE: dict[str, ListingError] = {}
_METADATA: dict[str, bytes] = {}  # a wheel's URL: its METADATA


def forget() -> None:
    """Drop what this process learnt of the indexes."""
    for cache in (_PAGES, _SIZES, _UNREACHABLE, _METADATA):
        cache.clear()


def _open(url: str, method: str, headers: Mapping[str, str]) -> http.client.HTTPResponse:
    host = urlsplit(url).netloc
    if host in _UNREACHABLE:
        raise _UNREACHABLE[host]
    req = urllib.request.Request(url, method=method, headers={"User-Agent": "rocm-wizard", **headers})
    try:
        resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 - an index URL the plan names
    except urllib.error.HTTPError as exc:
        raise ListingError(f"{url}: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        err = ListingError(f"{url}: cannot be reached ({getattr(exc, 'reason', exc)})")
        _UNREACHABLE[host] = err
        raise err from exc
    assert isinstance(resp, http.client.HTTPResponse)
    return resp


def _read(resp: http.client.HTTPResponse, url: str) -> bytes:
    try:
        with resp:
            return resp.read()
    except (OSError, TimeoutError, http.client.HTTPException) as exc:
        raise ListingError(f"{url}: the connection dropped ({exc})") from exc


def page(url: str, accept: str) -> tuple[bytes, str]:
    """(body, Content-Type) of ``url``."""
    if url not in _PAGES:
        resp = _open(url, "GET", {"Accept": accept})
        _PAGES[url] = (_read(resp, url), resp.headers.get("Content-Type", ""))
    return _PAGES[url]


def size(url: str) -> int:
    """The length of the file at ``url``."""
    if url not in _SIZES:
        with _open(url, "HEAD", {"Accept": "*/*"}) as resp:
            length = resp.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise ListingError(f"{url}: the server gives no Content-Length")
        _SIZES[url] = int(length)
    return _SIZES[url]


def read_range(url: str, start: int, stop: int | None = None) -> bytes:
    """Bytes ``start`` to ``stop`` (exclusive) of ``url``; ``start`` < 0 and ``stop`` None: the last
    ``-start`` bytes (all of a smaller file). Learns the file's size from the answer's Content-Range."""
    want = f"bytes={start}" if start < 0 else f"bytes={start}-" if stop is None else f"bytes={start}-{stop - 1}"
    resp = _open(url, "GET", {"Range": want, "Accept": "*/*", "Accept-Encoding": "identity"})
    if resp.status != 206:
        resp.close()  # the whole file would follow: not read
        raise ListingError(f"{url}: the server does not honour HTTP range requests (HTTP {resp.status} to "
                           f"Range: {want[6:]}): the wheel's metadata cannot be read without downloading it whole")
    mo = _CONTENT_RANGE.match(resp.headers.get("Content-Range", "").strip())
    if mo is None:
        resp.close()
        raise ListingError(f"{url}: a range answer without a usable Content-Range "
                           f"({resp.headers.get('Content-Range')!r})")
    body = _read(resp, url)
    first, last, total = (int(x) for x in mo.groups())
    if len(body) != last - first + 1 or (start >= 0 and first != start):
        raise ListingError(f"{url}: asked for {want[6:]}, got bytes {first}-{last} ({len(body)} bytes)")
    _SIZES[url] = total
    return body


def known_size(url: str) -> int | None:
    """The size this process already learnt for ``url`` (a HEAD or a range answer), without asking."""
    return _SIZES.get(url)


def metadata_memo() -> dict[str, bytes]:
    """The METADATA this process already read, by wheel URL (read once, like the pages)."""
    return _METADATA
