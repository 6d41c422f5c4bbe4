"""Files fetched by hash into the wheelhouse, resuming from the bytes already on disk.

Each file is written to ``WHEELHOUSE/<name>.part`` chunk by chunk (a kill loses at most the chunk in
flight); a later run asks for the rest with ``Range: bytes=N-`` (a server that answers 200 instead of
206 is read from the start again). The finished file is checked against its sha256 and only then renamed
to ``WHEELHOUSE/<name>``; a mismatch removes the ``.part`` and stops, naming the file and the expected
hash. A file already in the wheelhouse with the right hash is never fetched again. ``flock`` on the
``.part`` keeps two runs (two venvs planned at once) from writing the same file.

``python -m wizard.downloads fetch --dest WHEELHOUSE [--requirements FILE] FILES_JSON`` is the action a
plan's download step runs: FILES_JSON is the list of ``[filename, url, sha256, size]`` the planner
resolved; ``--requirements`` writes the hashed requirements pip installs from (``name==version
--hash=sha256:...``, found in the wheelhouse).
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import io
import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence, TextIO

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from wizard.downloads.listing import RemoteFile

CHUNK = 1 << 16
TIMEOUT_S = 60
PROGRESS_EVERY_S = 1.0


class DownloadError(Exception):
    """One line: which file failed and why."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _eta(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """Lines a user can read: file, bytes of total, rate, time left; at most one a second per file."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def start(self, f: RemoteFile, have: int) -> None:
        self._f, self._t0, self._b0, self._shown = f, time.monotonic(), have, -1
        self._last = self._t0  # the first line after a second of transfer
        resumed = f", resuming at {human(have)}" if have else ""
        self.out.write(f"download {f.filename}: {human(f.size)}{resumed}\n")
        self.out.flush()

    def update(self, done: int, final: bool = False) -> None:
        now = time.monotonic()
        if (not final and now - self._last < PROGRESS_EVERY_S) or done == self._shown:
            return
        self._last, self._shown = now, done
        rate = (done - self._b0) / max(now - self._t0, 1e-6)
        size = self._f.size
        left = f", {_eta((size - done) / rate)} left" if rate > 0 and not final else ""
        pct = f" ({100 * done // size}%)" if size else ""
        self.out.write(f"  {self._f.filename}: {human(done)} of {human(size)}{pct}, {human(rate)}/s{left}\n")
        self.out.flush()


def _open_range(url: str, start: int) -> tuple[http.client.HTTPResponse, int]:
    headers = {"User-Agent": "rocm-wizard"}
    if start:
        headers["Range"] = f"bytes={start}-"
    req = urllib.request.Request(url, headers=headers)
    resp = urllib.request.urlopen(req, timeout=TIMEOUT_S)  # noqa: S310 - a URL the plan resolved
    assert isinstance(resp, http.client.HTTPResponse)
    return resp, resp.status


def fetch_one(f: RemoteFile, dest: Path, progress: Progress | None = None) -> bool:
    """``dest/<filename>`` with the right hash; True when bytes were fetched, False when it was there."""
    final = dest / f.filename
    if final.is_file():
        if final.stat().st_size == f.size and sha256_of(final) == f.sha256:
            os.utime(final)  # used now: ``cache prune --older-than`` keeps it
            return False
        final.unlink()  # not what the plan pins: fetched again
    part = dest / (f.filename + ".part")
    with open(part, "ab") as out:
        try:
            fcntl.flock(out, fcntl.LOCK_EX)
        except OSError as exc:
            raise DownloadError(f"{f.filename}: cannot lock {part} ({exc})") from exc
        if final.is_file():  # another run finished it while this one waited
            return False
        have = out.seek(0, os.SEEK_END)
        if have > f.size:
            out.truncate(0)
            have = 0
        if have < f.size:
            if progress:
                progress.start(f, have)
            have = _download(f, out, have, progress)
        out.flush()
        os.fsync(out.fileno())
    got = sha256_of(part)
    if got != f.sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{f.filename}: sha256 {got} does not match the {f.sha256} the index published; "
                            "nothing of it is kept")
    os.replace(part, final)
    return True


def _download(f: RemoteFile, out: io.BufferedWriter, have: int, progress: Progress | None) -> int:
    try:
        resp, status = _open_range(f.url, have)
    except urllib.error.HTTPError as exc:
        if exc.code == 416:  # asked past the end: what is on disk is the whole file (the hash decides)
            return have
        raise DownloadError(f"{f.filename}: HTTP {exc.code} from {f.url}") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise DownloadError(f"{f.filename}: {f.url} cannot be reached ({getattr(exc, 'reason', exc)}); "
                            "run again to continue from the bytes on disk") from exc
    with resp:
        if have and status != 206:  # the server ignored the range: start over
            out.seek(0)
            out.truncate(0)
            have = 0
        try:
            while have < f.size:
                chunk = resp.read(min(CHUNK, f.size - have))
                if not chunk:
                    break
                out.write(chunk)
                out.flush()
                have += len(chunk)
                if progress:
                    progress.update(have)
        except (OSError, TimeoutError) as exc:
            raise DownloadError(f"{f.filename}: the link dropped at {human(have)} of {human(f.size)} ({exc}); "
                                "run again to continue from there") from exc
    if progress:
        progress.update(have, final=True)
    if have < f.size:
        raise DownloadError(f"{f.filename}: the server sent {human(have)} of {human(f.size)}; "
                            "run again to continue from there")
    return have


def fetch_all(files: Sequence[RemoteFile], dest: Path, out: TextIO | None = None) -> tuple[int, int]:
    """Every file into ``dest``; (files fetched, files that were already there)."""
    dest.mkdir(parents=True, exist_ok=True)
    progress = Progress(out) if out is not None else None
    fetched = kept = 0
    for f in files:
        if fetch_one(f, dest, progress):
            fetched += 1
        else:
            kept += 1
            if out is not None:
                out.write(f"{f.filename}: already in the wheelhouse with the right hash\n")
    return fetched, kept


def requirements_text(files: Sequence[RemoteFile]) -> str:
    """Hashed requirements of exactly these files: ``name==version --hash=sha256:...``, which pip finds in the
    wheelhouse (``--no-index --find-links``) and checks (``--require-hashes``). By name and version, not by
    path: ``pip freeze`` then says ``name==version`` (not ``name @ file://...``), which a backup restores."""
    out = []
    for f in files:
        name, version, _, _ = parse_wheel_filename(f.filename)
        out.append(f"{name}=={version} --hash=sha256:{f.sha256}\n")
    return "".join(out)


def files_json(files: Sequence[RemoteFile]) -> str:
    return json.dumps([[f.filename, f.url, f.sha256, f.size] for f in files], separators=(",", ":"))


def parse_files_json(text: str) -> tuple[RemoteFile, ...]:
    try:
        rows = json.loads(text)
        return tuple(RemoteFile(_project(str(name)), str(name), str(url), str(sha).lower(), int(size))
                     for name, url, sha, size in rows)
    except (ValueError, TypeError) as exc:
        raise DownloadError(f"not a list of [filename, url, sha256, size]: {exc}") from exc


def _project(filename: str) -> str:
    try:
        return str(parse_wheel_filename(filename)[0])
    except InvalidWheelFilename:
        return filename


def main(argv: Sequence[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m wizard.downloads fetch")
    p.add_argument("--dest", required=True)
    p.add_argument("--requirements")
    p.add_argument("files")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    dest = Path(args.dest)
    try:
        files = parse_files_json(args.files)
        fetched, kept = fetch_all(files, dest, out)
    except (DownloadError, OSError) as exc:
        err.write(f"download failed: {exc}\n")
        return 1
    total = sum(f.size for f in files)
    out.write(f"{len(files)} file(s), {human(total)}: {fetched} fetched, {kept} already in {dest}\n")
    if args.requirements:
        tmp = Path(args.requirements + ".tmp")
        tmp.write_text(requirements_text(files))
        os.replace(tmp, args.requirements)
    return 0
