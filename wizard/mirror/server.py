"""The rehearsal mirror's HTTP server: stdlib, threaded, on 127.0.0.1 and a free port.

``with MirrorServer(root) as srv:`` serves ``root`` at ``srv.base_url`` until the block ends, or until
no request came for ``idle_timeout`` seconds (it then stops by itself: a test that forgets it leaves
nothing listening). Files answer ``Range: bytes=N-`` (a download resumes), ``bytes=N-M`` and ``bytes=-N``
(the end of a wheel, whose metadata is read without downloading it) with 206, or, with ``ranges=False``,
ignore the header and answer 200 with the whole file, as some servers do; they count what they
send in ``srv.bytes_sent``; ``rate`` paces responses (bytes a second). ``srv.fail(path, 404)`` makes a path answer an error status; ``srv.requests``
is the log of what was asked (method, path, status), so tests can assert what was fetched.
A directory holding ``index.json`` and ``index.html`` (a simple-index page) is answered with the
JSON one when the client asks for ``application/vnd.pypi.simple.v1+json`` (PEP 691), else the HTML one.
"""

from __future__ import annotations

import os
import posixpath
import threading
import time
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

from wizard import lazy_re
from wizard.mirror.simple_index import JSON_TYPE
from wizard.record import record

HOST = "127.0.0.1"
_RANGE = lazy_re.compile(r"^bytes=(\d*)-(\d*)$")  # one range: N-, N-M or -N
_CHUNK = 1 << 16


@record
class Request:
    method: str
    path: str  # URL path, decoded ("/download.pytorch.org/whl/rocm6.2/torch/")
    status: int
    accept: str


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: MirrorServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-response (a killed download) is no error of the server's."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(SimpleHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return

    def _path(self) -> str:
        return unquote(urlsplit(self.path).path)

    def send_response(self, code: int, message: str | None = None) -> None:
        self.server.owner._record(self.command, self._path(), code, self.headers.get("Accept", ""))
        super().send_response(code, message)

    def _refuse(self) -> bool:
        status = self.server.owner._status_for(self._path())
        if status is None:
            return False
        body = f"{status} (rehearsal mirror: refused on purpose)\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return True

    def do_GET(self) -> None:
        self.server.owner._touch()
        if self._refuse():
            return
        mo = _RANGE.match(self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if mo is None or not os.path.isfile(path) or not self.server.owner.ranges or mo.groups() == ("", ""):
            super().do_GET()
            return
        size = os.path.getsize(path)
        first, last = mo.groups()
        if not first:  # the last N bytes
            start, stop = max(0, size - int(last)), size
        else:
            start, stop = int(first), min(size, int(last) + 1) if last else size
        if start >= size or stop <= start:
            self.send_response(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(HTTPStatus.PARTIAL_CONTENT)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{size}")
        self.send_header("Content-Length", str(stop - start))
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            self.copyfile(f, self.wfile, stop - start)

    def copyfile(self, source: Any, outputfile: Any, length: int | None = None) -> None:
        """Chunk by chunk (``length`` bytes at most), each counted in ``bytes_sent`` (and paced when the owner
        has a rate)."""
        owner = self.server.owner
        left = -1 if length is None else length
        while left and (chunk := source.read(_CHUNK if left < 0 else min(_CHUNK, left))):
            outputfile.write(chunk)
            owner._sent(len(chunk))
            left -= len(chunk) if left > 0 else 0

    def do_HEAD(self) -> None:
        self.server.owner._touch()
        if not self._refuse():
            super().do_HEAD()

    def translate_path(self, path: str) -> str:
        """Files under the root only; a simple-index directory resolves to the page the client wants."""
        rel = posixpath.normpath(unquote(urlsplit(path).path)).lstrip("/")
        parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
        full = os.path.join(str(self.server.owner.root), *parts)
        if os.path.isdir(full) and path.split("?", 1)[0].endswith("/"):
            want_json = JSON_TYPE in self.headers.get("Accept", "")
            page = os.path.join(full, "index.json" if want_json else "index.html")
            if os.path.isfile(page):
                return page
        return full

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "No directory listings on the rehearsal mirror")
        return None

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        p = str(path)
        if p.endswith("/index.json"):
            return JSON_TYPE
        if p.endswith(".deb"):
            return "application/vnd.debian.binary-package"
        if p.endswith(".whl"):
            return "application/zip"
        if p.endswith(("/Release", "/InRelease", "/Packages")):
            return "text/plain"
        return super().guess_type(path)


class MirrorServer:
    """Serve ``root`` on 127.0.0.1 (port 0: a free one) in a background thread."""

    def __init__(self, root: Path, *, port: int = 0, idle_timeout: float = 600.0, rate: float | None = None,
                 ranges: bool = True) -> None:
        self.root = Path(root)
        self.ranges = ranges  # False: Range headers are ignored (200, the whole file)
        self.idle_timeout = idle_timeout
        self.rate = rate  # bytes per second a response is paced to (None: as fast as it goes)
        self.bytes_sent = 0  # file bytes written to clients (a resume test's counter)
        self.requests: list[Request] = []
        self._fail: dict[str, int] = {}
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()
        self._stopping = False
        self._httpd = _Server((HOST, port), _Handler)
        self._httpd.owner = self
        self._threads: list[threading.Thread] = []

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> MirrorServer:
        serve = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                 name="rehearsal-mirror", daemon=True)
        idle = threading.Thread(target=self._watch_idle, name="rehearsal-mirror-idle", daemon=True)
        self._threads = [serve, idle]
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        with self._stop_lock:
            if self._stopping:
                return
            self._stopping = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._stopped.set()  # only once nothing listens any more

    @property
    def running(self) -> bool:
        return not self._stopping

    def __enter__(self) -> MirrorServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def wait_stopped(self, timeout: float) -> bool:
        return self._stopped.wait(timeout)

    # ------------------------------------------------------------------ test controls

    def fail(self, path: str, status: int = 404) -> None:
        """Answer ``status`` for this URL path (exact, or a directory prefix ending in '/')."""
        with self._lock:
            self._fail[path] = status

    def clear_failures(self) -> None:
        with self._lock:
            self._fail.clear()

    def fetched(self, *, method: str = "GET", status: int | None = 200) -> list[str]:
        """Paths requested (by method, with a status; None: any)."""
        with self._lock:
            return [r.path for r in self.requests if r.method == method and (status is None or r.status == status)]

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # ------------------------------------------------------------------ internals

    def _status_for(self, path: str) -> int | None:
        with self._lock:
            if path in self._fail:
                return self._fail[path]
            for prefix, status in self._fail.items():
                if prefix.endswith("/") and path.startswith(prefix):
                    return status
        return None

    def _record(self, method: str, path: str, status: int, accept: str) -> None:
        with self._lock:
            self.requests.append(Request(method, path, status, accept))

    def _touch(self) -> None:
        self._last = time.monotonic()

    def _sent(self, n: int) -> None:
        with self._lock:
            self.bytes_sent += n
        self._touch()
        if self.rate:
            time.sleep(n / self.rate)

    def _watch_idle(self) -> None:
        while not self._stopped.wait(min(1.0, self.idle_timeout / 4)):
            if time.monotonic() - self._last > self.idle_timeout:
                self.stop()
                return
