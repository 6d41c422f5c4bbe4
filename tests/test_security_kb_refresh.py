"""Second security review, B12: ``kb refresh --write`` fed hostile pages by a server on 127.0.0.1. Listing entries
that are paths or templates are never keys or file names; a body is bounded in size and in total time (a 1.5 GB
body took 4.9 GB, a one-byte-a-second drip ran past 100 s); Docker Hub's ``next`` link is followed only on Docker
Hub."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from wizard.kb import sources
from wizard.kb.sources import Page, SourceError, docker_tags, listing_entries

pytestmark = pytest.mark.integration


def test_listing_entries_that_are_paths_or_templates_are_left_out() -> None:
    hrefs = ["%2e%2e%2f%2e%2e%2f%2e%2e%2fevil/", "{{lookup('pipe','id')}}/", "jammy/", "noble/",
             "amdgpu-install_{{lookup('pipe','id>pwn-kb4')}}_all.deb", "amdgpu-install_6.2.60204-1_all.deb",
             "..%2f..%2fx.deb", "a b.deb"]
    body = "".join(f'<a href="{h}">{h}</a>\n' for h in hrefs).encode()
    assert listing_entries(Page("https://repo.radeon.com/amdgpu-install/7.2.4/ubuntu/", body, "text/html")) == [
        "jammy/", "noble/", "amdgpu-install_6.2.60204-1_all.deb"]


@pytest.mark.parametrize("nxt", ["http://127.0.0.1:9/secret-ssrf", "file:///etc/passwd",
                                 "https://evil.example/v2/repositories/rocm/pytorch/tags?page=2"])
def test_a_docker_hub_next_link_elsewhere_is_refused(nxt: str) -> None:
    body = ('{"results": [{"name": "latest"}], "next": "%s"}' % nxt).encode()
    with pytest.raises(SourceError, match="not on https://hub.docker.com"):
        docker_tags(Page("https://hub.docker.com/v2/repositories/rocm/pytorch/tags", body, "application/json"))


class _Hostile(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        try:
            if "/big" in self.path:
                chunk = b"x" * (1 << 20)
                for _ in range((sources.MAX_BODY >> 20) + 8):
                    self.wfile.write(chunk)
            else:
                for _ in range(60):  # one byte a second (the test's time limit is lowered to 2 s)
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_huge_body_is_refused_at_the_limit(server: str) -> None:
    reader = sources.Reader(mirror=server)
    with pytest.raises(SourceError, match="larger than"):
        reader.get("https://repo.radeon.com/big/")


def test_a_slow_drip_is_cut_off_at_the_page_time_limit(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "TIMEOUT_S", 2)
    reader = sources.Reader(mirror=server)
    t = time.monotonic()
    with pytest.raises(SourceError, match="not read within"):
        reader.get("https://repo.radeon.com/drip/")
    assert time.monotonic() - t < 10
