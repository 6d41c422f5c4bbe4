"""Downloads in a real Debian root, with the root's own wget, sha256sum and sh: the dry-run script's (and the
Ansible export's) wheelhouse download and the amdgpu-install ``.deb`` fetch of the rocm_install step, served
from 127.0.0.1 with a byte counter, killed with SIGKILL at random instants of the transfer (3 kills a seed,
10 seeds), then run to the end: the bytes served stay within 1.05x the files' total, and the files equal the
served ones."""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

from wizard.downloads.fetch import files_json
from wizard.downloads.shell import script_lines
from wizard.mirror.server import MirrorServer
from wizard.realroot import enter
from wizard.steps.rocm_install import FETCH_DEB

pytestmark = [pytest.mark.system, pytest.mark.realroot]

BENCH = Path(__file__).resolve().parent.parent.parent / "benchmarks"
DEB = "amdgpu-install_6.2.60204-1_all.deb"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("download_resume", BENCH / "download_resume.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _script(files: list, deb_url: str, dest: str) -> str:
    argv = ("python3", "-m", "wizard.downloads", "fetch", "--dest", dest, files_json(files))
    deb = f"{dest}/{DEB}"
    return ("set -euo pipefail\n" + "\n".join(script_lines(argv)) + "\n"
            f"test -s {deb} || sh -c '{FETCH_DEB}' sh {deb} {deb_url}\n")


def test_a_real_roots_wget_resumes_the_wheelhouse_and_the_deb_across_kill_9(session_base: Path,
                                                                           tmp_path: Path) -> None:
    b = _bench()
    root = session_base
    served = tmp_path / "served"
    served.mkdir()
    paths = b.make_files(served, 18, seed=7)
    (served / DEB).write_bytes(random.Random(8).randbytes(3 << 20))
    need = sum(p.stat().st_size for p in paths) + (3 << 20)
    enter.prepare(root)
    try:
        with MirrorServer(served, idle_timeout=120, rate=b.RATE) as srv:
            files = b.remote(paths, srv.base_url)
            for seed in range(10):
                dest = f"/tmp/rocm-wizard-downloads/seed-{seed}"
                (root / "tmp" / f"dl-{seed}.sh").write_text(_script(files, f"{srv.base_url}/{DEB}", dest))
                argv = enter.enter_argv(root, ["bash", f"/tmp/dl-{seed}.sh"])
                rng = random.Random(seed)
                before, landed = srv.bytes_sent, 0
                for _ in range(3):
                    start = srv.bytes_sent
                    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True)
                    deadline = time.monotonic() + 60
                    while srv.bytes_sent == start and proc.poll() is None and time.monotonic() < deadline:
                        time.sleep(0.005)
                    time.sleep(rng.uniform(0.0, need / b.RATE / 3))
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGKILL)  # unshare, the namespace's sh, bash and wget
                        landed += 1
                    proc.wait()
                done = enter.run(root, ["bash", f"/tmp/dl-{seed}.sh"], timeout=300)
                assert done.returncode == 0, done.stderr
                sent = srv.bytes_sent - before
                assert landed >= 1, f"seed {seed}: no kill landed mid-download"
                assert sent <= b.LIMIT * need, f"seed {seed}: served {sent} for {need}"
                got = root / dest.lstrip("/")
                for p in [*paths, served / DEB]:
                    assert (got / p.name).read_bytes() == p.read_bytes(), f"seed {seed}: {p.name} differs"
                assert not list(got.glob("*.part"))
    finally:
        shutil.rmtree(root / "tmp" / "rocm-wizard-downloads", ignore_errors=True)
        for s in (root / "tmp").glob("dl-*.sh"):
            s.unlink()
