"""Downloads resumed across kill -9: bytes the server sent against the bytes the files need.

A 127.0.0.1 server (the rehearsal mirror's, paced, counting what it sends) serves three random files;
for each seed the downloader (``python -m wizard.downloads fetch``, a subprocess) is killed with SIGKILL
at random instants, ``--kills`` times, then run to the end. Each seed's files must equal the served ones
byte for byte, and the bytes served stay within 1.05x the files' total size.

    python benchmarks/download_resume.py [--seeds 10] [--kills 3] [--mib 24] [--write-results]

Prints one line per seed (bytes served / bytes needed) and the worst ratio; ``--write-results`` also
writes benchmarks/results/download_resume.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wizard.downloads.fetch import files_json  # noqa: E402
from wizard.downloads.listing import RemoteFile  # noqa: E402
from wizard.mirror.server import MirrorServer  # noqa: E402

LIMIT = 1.05
RATE = 24 << 20  # bytes a second: the kill instants fall inside the transfer


def make_files(root: Path, mib: int, seed: int = 0) -> list[Path]:
    """Three files of random bytes, 1/6, 2/6 and 3/6 of ``mib`` MiB."""
    rng = random.Random(seed)
    out = []
    for i, share in enumerate((1, 2, 3)):
        p = root / f"pkg{i}-1.0-py3-none-any.whl"
        p.write_bytes(rng.randbytes((mib << 20) * share // 6))
        out.append(p)
    return out


def remote(files: list[Path], base_url: str) -> list[RemoteFile]:
    return [RemoteFile(f"pkg{i}", p.name, f"{base_url}/{p.name}", hashlib.sha256(p.read_bytes()).hexdigest(),
                       p.stat().st_size) for i, p in enumerate(files)]


def fetch_argv(files: list[RemoteFile], dest: Path) -> list[str]:
    return [sys.executable, "-m", "wizard.downloads", "fetch", "--dest", str(dest), files_json(files)]


def started_over(srv: MirrorServer, since: int, dest: Path, before: dict[str, int]) -> int:
    """GETs since request ``since`` answered with the whole file (200, not 206) for a file whose ``.part`` held
    bytes when the run began: a download that started over instead of resuming."""
    return sum(1 for r in srv.requests[since:] if r.method == "GET" and r.status == 200
               and before.get(r.path.rsplit("/", 1)[-1], 0) > 0)


def _part_sizes(dest: Path, files: list[RemoteFile]) -> dict[str, int]:
    parts = {f.filename: dest / (f.filename + ".part") for f in files}
    return {name: p.stat().st_size for name, p in parts.items() if p.is_file()}


def kill_seed(seed: int, files: list[RemoteFile], dest: Path, kills: int, srv: MirrorServer,
              need: int, restarts: list[int] | None = None) -> tuple[int, int]:
    """Kill the downloader ``kills`` times at random instants of its transfer (once bytes flow), then let it
    finish; (its exit status, the kills that landed while it was still downloading). ``restarts`` gets, per run
    after the first, the downloads that started over (``started_over``)."""
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    landed = 0
    for i in range(kills):
        since, before = len(srv.requests), _part_sizes(dest, files)
        start = srv.bytes_sent
        proc = subprocess.Popen(fetch_argv(files, dest), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, cwd=REPO)
        deadline = time.monotonic() + 30
        while srv.bytes_sent == start and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, need / RATE / kills))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            landed += 1
        proc.wait()
        if restarts is not None and i:
            restarts.append(started_over(srv, since, dest, before))
    since, before = len(srv.requests), _part_sizes(dest, files)
    done = subprocess.run(fetch_argv(files, dest), capture_output=True, text=True, env=env, cwd=REPO, check=False)
    if restarts is not None:
        restarts.append(started_over(srv, since, dest, before))
    return done.returncode, landed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--mib", type=int, default=24)
    a = ap.parse_args()
    worst = 0.0
    bad = 0
    with tempfile.TemporaryDirectory(prefix="download-resume-") as tmp:
        served = Path(tmp) / "served"
        served.mkdir()
        paths = make_files(served, a.mib)
        need = sum(p.stat().st_size for p in paths)
        with MirrorServer(served, idle_timeout=60, rate=RATE) as srv:
            files = remote(paths, srv.base_url)
            for seed in range(a.seeds):
                dest = Path(tmp) / f"seed-{seed}"
                before = srv.bytes_sent
                rc, landed = kill_seed(seed, files, dest, a.kills, srv, need)
                sent = srv.bytes_sent - before
                same = rc == 0 and all((dest / p.name).read_bytes() == p.read_bytes() for p in paths)
                ratio = sent / need
                worst = max(worst, ratio)
                bad += (not same) or ratio > LIMIT
                print(f"seed {seed:2d}: {landed} kill(s) mid-download; served {sent} / needed {need} bytes = {ratio:.4f}; "
                      f"{'files equal' if same else 'FILES DIFFER'}", flush=True)
    print(f"\nworst ratio {worst:.4f} (limit {LIMIT}); {a.seeds - bad}/{a.seeds} seeds within it with equal files")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "download_resume.txt"))
