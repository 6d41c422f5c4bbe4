"""Issue 25, point 3: the rehearsal's CPU torch (the TUI's ``m``) comes through the site mirror and the user's
pip configuration first, then PyTorch's CPU index, says how much it downloaded and what failed. A local
PyPI-style mirror on 127.0.0.1 serves a small torch stand-in (a package named torch whose version module
says it is no ROCm build): what is tested is where pip is sent, not torch itself."""

from __future__ import annotations

import base64
import hashlib
import http.server
import os
import threading
import zipfile
from pathlib import Path
from typing import Iterator

import pytest

from wizard.mirror.config import load_config
from wizard.sandbox import cpu_torch

pytestmark = pytest.mark.integration


def _wheel(path: Path) -> None:
    files = {"torch/__init__.py": "from torch import version\n",
             "torch/version.py": "__version__ = '0.0.1'\nhip = None\ncuda = None\n",
             "torch-0.0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 0.0.1\n",
             "torch-0.0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("torch-0.0.1.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr("torch-0.0.1.dist-info/RECORD", "\n".join(record) + "\n")


@pytest.fixture()
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """http://127.0.0.1:PORT: /simple/torch/ serves the stand-in wheel; everything else is 404. This machine's
    own pip configuration (config files, find-links) is set aside: the test's environment is the user's."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "mirror"
    (root / "simple" / "torch").mkdir(parents=True)
    _wheel(root / "simple" / "torch" / "torch-0.0.1-py3-none-any.whl")
    (root / "simple" / "torch" / "index.html").write_text(
        '<html><body><a href="torch-0.0.1-py3-none-any.whl">torch-0.0.1-py3-none-any.whl</a></body></html>\n')

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, directory=str(root), **kw)  # type: ignore[arg-type]

        def log_message(self, *a: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_order_of_sources() -> None:
    plain = cpu_torch.sources(None)
    assert [s.label for s in plain] == ["your pip configuration", "PyTorch's CPU index"]
    assert plain[0].pip_args == () and plain[1].pip_args == ("--index-url", cpu_torch.PYTORCH_CPU_INDEX)
    cfg = load_config(["download.pytorch.org=http://127.0.0.1:9/pt", "pypi.org=http://127.0.0.1:9/pypi"])
    labels = [s.label for s in cpu_torch.sources(cfg)]
    assert labels[0] == "the site mirror of PyTorch's CPU index" and labels[-1] == "PyTorch's CPU index"
    assert cpu_torch.sources(cfg)[0].pip_args == ("--index-url", "http://127.0.0.1:9/pt/whl/cpu")
    assert "pypi.org mirror" in labels[1] and "http://127.0.0.1:9/pypi" in " ".join(cpu_torch.sources(cfg)[1].pip_args)


def test_through_the_users_pip_configuration_after_a_dead_mirror(tmp_path: Path, mirror: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", f"{mirror}/simple/")  # the user's pip configuration
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    cfg = load_config([f"download.pytorch.org={mirror}/dead"])
    made = cpu_torch.make(tmp_path / "cpu-torch", cfg, timeout=300)
    assert made.source == "your pip configuration"
    assert len(made.failures) == 1 and made.failures[0].startswith("the site mirror of PyTorch's CPU index: ")
    assert made.downloaded_bytes > 0 and cpu_torch.size_text(made.downloaded_bytes).endswith("kB")
    assert Path(made.python).is_file() and (tmp_path / "cpu-torch" / cpu_torch.MADE_MARK).is_file()


def test_every_failure_is_said(tmp_path: Path, mirror: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = [cpu_torch.Source("the site mirror of PyTorch's CPU index", ("--index-url", f"{mirror}/dead")),
            cpu_torch.Source("your pip configuration", ("--index-url", f"{mirror}/also-dead"))]
    monkeypatch.setattr(cpu_torch, "sources", lambda mirrors=None: dead)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    with pytest.raises(cpu_torch.CpuTorchError) as err:
        cpu_torch.make(tmp_path / "cpu-torch", None, timeout=300)
    text = str(err.value)
    assert text.startswith("no CPU torch: the site mirror of PyTorch's CPU index: ")
    assert "; your pip configuration: " in text and "No matching distribution found for torch" in text


def test_downloaded_adds_up_pips_own_lines() -> None:
    out = ("Collecting torch\n  Downloading torch-2.5.1%2Bcpu-cp311-cp311-linux_x86_64.whl (174.7 MB)\n"
           "  Downloading filelock-3.16.1-py3-none-any.whl (16 kB)\nUsing cached sympy-1.13.1-py3-none-any.whl\n")
    assert cpu_torch.downloaded(out) == int(174.7e6 + 16e3)
    assert cpu_torch.size_text(0) == "nothing (pip's cache)"
