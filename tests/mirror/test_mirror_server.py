"""The mirror's HTTP server: 127.0.0.1 only, a request log, refusals on demand, and it stops by itself."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from wizard.mirror.server import MirrorServer

pytestmark = pytest.mark.integration


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            resp.read()
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serves_files_logs_requests_and_refuses_on_demand(tmp_path: Path) -> None:
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/b/f.txt").write_text("hello")
    (tmp_path / "a/b/g.txt").write_text("x")
    with MirrorServer(tmp_path) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        assert get(f"{srv.base_url}/a/b/f.txt") == 200
        srv.fail("/a/b/f.txt")
        assert get(f"{srv.base_url}/a/b/f.txt") == 404
        srv.fail("/a/", 403)  # a prefix: everything under it (AMD's index answers 403 for what it lacks)
        assert get(f"{srv.base_url}/a/b/g.txt") == 403
        srv.clear_failures()
        assert get(f"{srv.base_url}/a/b/g.txt") == 200
        assert get(f"{srv.base_url}/a/b/") == 404  # no directory listings
        assert get(f"{srv.base_url}/../../../etc/passwd") == 404
        assert get(f"{srv.base_url}/missing") == 404
        assert srv.fetched() == ["/a/b/f.txt", "/a/b/g.txt"]
        assert [r.status for r in srv.requests[:3]] == [200, 404, 403]
    assert not srv.running


def test_listens_on_loopback_only(tmp_path: Path) -> None:
    with MirrorServer(tmp_path) as srv:
        host, port = srv._httpd.server_address[:2]
        assert host == "127.0.0.1"
        addrs = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
        for addr in addrs:
            with pytest.raises(OSError):
                socket.create_connection((addr, port), timeout=1).close()


def test_stops_by_itself_when_idle(tmp_path: Path) -> None:
    srv = MirrorServer(tmp_path, idle_timeout=0.5).start()
    started = time.monotonic()
    assert srv.wait_stopped(10)
    assert time.monotonic() - started < 5
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()
