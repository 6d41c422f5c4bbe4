"""One rehearsal mirror per test session, built from the knowledge base and served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from wizard.mirror.build import MirrorManifest, build_mirror
from wizard.mirror.server import MirrorServer
from wizard.mirror.tools import missing_tools


@pytest.fixture(scope="session")
def mirror_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MirrorServer]:
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("mirror")
    with MirrorServer(root, idle_timeout=1800) as srv:
        yield srv


@pytest.fixture(scope="session")
def mirror(mirror_server: MirrorServer) -> MirrorManifest:
    return build_mirror(Path(mirror_server.root), mirror_server.base_url)
