"""Hostile evidence bundles (issue 16 items 1 and 10), each attack performed for real in a temp dir.

Every archive is extracted by ``diagnose --from X.tar.gz`` in a child process whose ``$TMPDIR`` is a
directory of the test: the outcome must be exit 2 with one line on stderr, no traceback, nothing
outside the extraction directory changed, and the extraction directory gone.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import signal
import stat
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from runner_helpers import default_signals
from wizard.host import BundleHost, HostError
from wizard.inputs.archive import PREFIX, ArchiveError, Limits, extract

pytestmark = pytest.mark.integration

GOOD_LSPCI = "03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [1002:744c]\n"


def snapshot(top: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``top`` (links not followed): kind and content digest / link target / mode."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(top))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest() + oct(st.st_mode))
            else:
                out[rel] = ("other", oct(st.st_mode))
    return out


def cli(*args: str, tmpdir: Path, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, timeout=timeout,
                          env=env, input=stdin.decode() if stdin is not None else None, text=True)


def one_line_error(res: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert res.returncode == code, (res.returncode, res.stdout[-500:], res.stderr[-2000:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


def add(tf: tarfile.TarFile, name: str, *, content: str | None = None, type: bytes = tarfile.REGTYPE,
        linkname: str = "", mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.type = type
    info.linkname = linkname
    info.mode = mode
    data = (content or "").encode()
    if type == tarfile.REGTYPE:
        info.size = len(data)
    tf.addfile(info, io.BytesIO(data) if type == tarfile.REGTYPE else None)


@pytest.fixture()
def stage(tmp_path: Path) -> tuple[Path, Path]:
    """(outer, tmpdir): the child's $TMPDIR (``outer``, where its extraction directory is made) holding a
    0600 'flag' file beside it, as in CPython's test (``escape`` leads to the extraction dir's parent)."""
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "flag").write_text("capture me\n")
    (outer / "flag").chmod(0o600)
    return outer, outer


def assert_nothing_changed(outer: Path, before: dict[str, tuple[str, str]]) -> None:
    assert snapshot(outer) == before
    assert not [n for n in os.listdir(outer) if n.startswith(PREFIX)], "extraction dir left behind"


# -- CVE-2025-4517: built the way CPython's test_tarfile builds it (test_realpath_limit_attack) ------------

def cve_2025_4517_archive(path: Path, destdir_len: int) -> None:
    """Dirs and links that expand in os.path.realpath(), a final link past PATH_MAX pointing at the top,
    an 'escape' link through it, a hard link to ``escape/flag``, a file written through that hard link,
    and a new file written through 'escape' (CPython's Lib/test/test_tarfile.py, same steps)."""
    steps = "abcdefghijklmnop"
    max_path_len = os.pathconf(path.parent, "PC_PATH_MAX")
    component = "d" * ((max_path_len - (destdir_len + 1)) // (len(steps) + 1))
    with tarfile.open(path, "w:gz") as tf:
        p = ""
        for i in steps:
            add(tf, os.path.join(p, component), type=tarfile.DIRTYPE, mode=0o777)
            add(tf, os.path.join(p, i), type=tarfile.SYMTYPE, linkname=component)
            p = os.path.join(p, component)
        linkpath = os.path.join(*steps, "l" * 254)
        add(tf, linkpath, type=tarfile.SYMTYPE, linkname=os.path.join(*[".."] * len(steps)))
        add(tf, "escape", type=tarfile.SYMTYPE, linkname=os.path.join(linkpath, ".."))
        add(tf, "flaglink", type=tarfile.LNKTYPE, linkname=os.path.join("escape", "flag"))
        add(tf, "flaglink", content="overwrite")
        add(tf, "escape/newfile", content="new")


def _mkdtemp_len(tmpdir: Path) -> int:
    return len(str(tmpdir)) + 1 + len(PREFIX) + 8  # tempfile.mkdtemp: prefix + 8 random characters


def test_the_cve_archive_really_escapes_the_stdlib_data_filter_here(stage: tuple[Path, Path]) -> None:
    """The attack is real on this Python: tarfile's own filter writes outside (skipped where patched)."""
    outer, tmpdir = stage
    dest = tmpdir / (PREFIX + "x" * 8)
    dest.mkdir()
    arc = outer.parent / "cve.tar.gz"
    cve_2025_4517_archive(arc, len(str(dest)))
    try:
        with tarfile.open(arc) as tf:
            tf.extractall(dest, filter="data")
    except (OSError, tarfile.TarError, KeyError):
        pytest.skip("this Python's tarfile refuses the CVE-2025-4517 archive (patched)")
    assert (outer / "flag").read_text() == "overwrite" or (outer / "newfile").exists()


def test_the_cve_archive_is_refused_and_writes_nothing_outside(stage: tuple[Path, Path]) -> None:
    outer, tmpdir = stage
    arc = outer.parent / "cve.tar.gz"
    cve_2025_4517_archive(arc, _mkdtemp_len(tmpdir))
    before = snapshot(outer)
    line = one_line_error(cli("diagnose", "--from", str(arc), tmpdir=tmpdir))
    assert "bundle refused" in line and "link" in line
    assert_nothing_changed(outer, before)
    assert (outer / "flag").read_text() == "capture me\n" and not (outer / "newfile").exists()


# -- the other hostile members --------------------------------------------------------------------------

def _dotdot(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/../../flag", content="overwritten")


def _absolute_member(tf: tarfile.TarFile, outer: Path) -> None:
    add(tf, str(outer / "flag"), content="overwritten")


def _absolute_link(tf: tarfile.TarFile, outer: Path) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/out", type=tarfile.SYMTYPE, linkname=str(outer))
    add(tf, "b/out/flag", content="overwritten")


def _relative_escaping_link(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/out", type=tarfile.SYMTYPE, linkname="../..")


def _chained_links(tf: tarfile.TarFile) -> None:
    """Each link lexically inside, the chain outside: d/s -> '..' (the top), x -> 'd/s/../..'."""
    add(tf, "d", type=tarfile.DIRTYPE)
    add(tf, "d/s", type=tarfile.SYMTYPE, linkname="..")
    add(tf, "x", type=tarfile.SYMTYPE, linkname="d/s/../..")


def _write_through_link(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/dir", type=tarfile.DIRTYPE)
    add(tf, "b/l", type=tarfile.SYMTYPE, linkname="dir")
    add(tf, "b/l/file.txt", content="through a link")


def _hard_link(tf: tarfile.TarFile, outer: Path) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/h", type=tarfile.LNKTYPE, linkname=str(outer / "flag"))


def _device(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    info = tarfile.TarInfo("b/null")
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    tf.addfile(info)


def _fifo(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/dpkg.txt", type=tarfile.FIFOTYPE)


def _twice(tf: tarfile.TarFile) -> None:
    add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    add(tf, "b/lspci.txt", content="again")


ATTACKS = {
    "dotdot": (lambda tf, outer: _dotdot(tf), "'..'"),
    "absolute-member": (_absolute_member, "absolute path"),
    "absolute-link": (_absolute_link, "absolute path"),
    "relative-escaping-link": (lambda tf, outer: _relative_escaping_link(tf), "outside the bundle"),
    "chained-links": (lambda tf, outer: _chained_links(tf), "outside the bundle"),
    "write-through-link": (lambda tf, outer: _write_through_link(tf), "through a link"),
    "hard-link": (_hard_link, "hard link"),
    "device": (lambda tf, outer: _device(tf), "device"),
    "fifo": (lambda tf, outer: _fifo(tf), "FIFO"),
    "twice": (lambda tf, outer: _twice(tf), "twice"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_hostile_member_refuses_the_bundle(attack: str, stage: tuple[Path, Path]) -> None:
    outer, tmpdir = stage
    build, needle = ATTACKS[attack]
    arc = outer.parent / f"{attack}.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        build(tf, outer)
    before = snapshot(outer)
    line = one_line_error(cli("diagnose", "--from", str(arc), tmpdir=tmpdir))
    assert "bundle refused" in line and needle in line, line
    assert_nothing_changed(outer, before)


def bomb(path: Path, size: int = 2 << 30) -> None:
    """A ~2 MB .tar.gz whose one member declares (and holds) 2 GiB of zeros: gzip members concatenated."""
    info = tarfile.TarInfo("b/dpkg.txt")
    info.size = size
    chunk = gzip.compress(b"\0" * (1 << 20), compresslevel=9)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(size >> 20):
            fh.write(chunk)


def test_a_decompression_bomb_is_refused_at_once(stage: tuple[Path, Path]) -> None:
    outer, tmpdir = stage
    arc = outer.parent / "bomb.tar.gz"
    bomb(arc)
    assert arc.stat().st_size < 4 << 20
    before = snapshot(outer)
    t = time.monotonic()
    line = one_line_error(cli("diagnose", "--from", str(arc), tmpdir=tmpdir))
    assert time.monotonic() - t < 20
    assert "MiB" in line, line
    assert_nothing_changed(outer, before)


def test_the_decompressed_stream_itself_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small members (no single one too big) still stop at the byte bound; the directory goes."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    arc = tmp_path / "many.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        for i in range(64):
            add(tf, f"b/f{i}.txt", content="x" * 4096)
    with pytest.raises(ArchiveError, match="expands to more than"):
        extract(arc, Limits(total_bytes=64 << 10))
    with pytest.raises(ArchiveError, match="more than 10 members"):
        extract(arc, Limits(members=10))
    with pytest.raises(ArchiveError, match="longer than"):
        extract(arc, Limits(seconds=0.0))
    assert not [n for n in os.listdir(tmp_path) if n.startswith(PREFIX)]
    good = extract(arc)
    assert sorted(os.listdir(good / "b"))[:2] == ["f0.txt", "f1.txt"]
    assert stat.S_IMODE((good / "b" / "f0.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE((good / "b").stat().st_mode) == 0o700


def test_a_bundle_with_links_inside_it_still_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a bundle may hold: files, directories, relative links that stay inside (e.g. /opt/rocm)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    arc = tmp_path / "ok.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        add(tf, "b/lspci.txt", content=GOOD_LSPCI)
        add(tf, "b/root/opt/rocm-6.2.0/.info/version", content="6.2.0-66\n")
        add(tf, "b/root/opt/rocm", type=tarfile.SYMTYPE, linkname="rocm-6.2.0")
    host = BundleHost(arc)
    assert host.captured("lspci.txt") == GOOD_LSPCI
    assert host.realpath("/opt/rocm") == "/opt/rocm-6.2.0"
    assert host.read_text("/opt/rocm/.info/version") == "6.2.0-66\n"


def test_the_extraction_dir_goes_on_sigterm_and_on_exit(tmp_path: Path) -> None:
    arc = tmp_path / "ok.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        add(tf, "b/lspci.txt", content=GOOD_LSPCI)
    code = textwrap.dedent(f"""
        import sys, time
        from wizard.host import BundleHost
        h = BundleHost({str(arc)!r})
        print(h.extracted, flush=True)
        if sys.argv[1] != "exit":
            time.sleep(60)
    """)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for mode in ("wait", "hup", "exit"):
        proc = subprocess.Popen([sys.executable, "-c", code, mode], stdout=subprocess.PIPE, text=True, env=env,
                                preexec_fn=default_signals)
        assert proc.stdout is not None
        extracted = Path(proc.stdout.readline().strip())
        assert extracted.is_dir() or mode == "exit"
        assert extracted.name.startswith(PREFIX)
        sig = {"wait": signal.SIGTERM, "hup": signal.SIGHUP}.get(mode)
        if sig is not None:
            proc.send_signal(sig)
        rc = proc.wait(timeout=30)
        assert rc == (-sig if sig is not None else 0)
        assert not extracted.exists(), f"{mode}: {extracted} left behind"


# -- directory bundles ---------------------------------------------------------------------------------

def test_a_fifo_in_a_directory_bundle_does_not_hang_detection(tmp_path: Path) -> None:
    b = tmp_path / "b"
    (b / "root" / "etc").mkdir(parents=True)
    (b / "lspci.txt").write_text(GOOD_LSPCI)
    for fifo in (b / "dpkg.txt", b / "traceback.txt", b / "notes.txt", b / "root" / "etc" / "os-release"):
        os.mkfifo(fifo)
    t = time.monotonic()
    res = cli("diagnose", "--from", str(b), "--json", tmpdir=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - t < 30
    res = cli("detect", "--from", str(b), "--json", tmpdir=tmp_path, timeout=60)
    assert res.returncode == 0 and '"1002:744c"' in res.stdout, res.stderr


def test_links_out_of_a_directory_bundle_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    (secret / "etc").mkdir(parents=True)
    (secret / "etc" / "os-release").write_text("ID=leakedmarker\nVERSION_ID=99\n")
    (secret / "token.txt").write_text("LEAKED-MARKER-TOKEN\n")
    b = tmp_path / "b"
    (b / "root").mkdir(parents=True)
    (b / "lspci.txt").write_text(GOOD_LSPCI)
    os.symlink(secret / "etc", b / "root" / "etc")  # an absolute link: taken inside the bundle's root
    os.symlink("../secret/etc/os-release", b / "os-release.txt")  # a relative link out of the bundle
    os.symlink("../../../secret/token.txt", b / "traceback.txt")
    os.symlink(str(secret / "token.txt"), b / "notes.txt")
    host = BundleHost(b)
    assert host.read_text("/etc/os-release") is None and not host.exists("/etc/os-release")
    assert host.captured("os-release.txt") is None and host.captured("traceback.txt") is None
    assert host.listdir("/etc") == [] and host.realpath("/etc") == str(secret / "etc")
    rooted = tmp_path / "rooted"
    rooted.mkdir()
    (rooted / "lspci.txt").write_text(GOOD_LSPCI)
    os.symlink("/", rooted / "root")  # the bundle's root/ itself a link to the real root
    assert BundleHost(rooted).read_text("/etc/os-release") is None and BundleHost(rooted).listdir("/") == []
    os.symlink(b, tmp_path / "link-to-bundle")  # the path the user names may be a link
    assert BundleHost(tmp_path / "link-to-bundle").captured("lspci.txt") == GOOD_LSPCI
    for cmd in ("detect", "diagnose"):
        res = cli(cmd, "--from", str(b), "--json", tmpdir=tmp_path)
        assert res.returncode == 0, res.stderr
        assert "leakedmarker" not in res.stdout and "LEAKED-MARKER" not in res.stdout


@pytest.mark.parametrize("what, needle", [
    ("binary", "not a .tar.gz"),
    ("binary.tar.gz", "not gzip data"),
    ("empty-dir", "an empty directory"),
    ("fifo", "neither a directory nor a .tar.gz"),
    ("corrupt.tar.gz", "not a readable .tar.gz"),
    ("empty.tar.gz", "an archive with no evidence file"),
])
def test_not_a_bundle_is_one_clear_line(what: str, needle: str, tmp_path: Path) -> None:
    p = tmp_path / what
    if what.startswith("binary"):
        p.write_bytes(bytes(range(256)) * 64)
    elif what == "empty-dir":
        p.mkdir()
    elif what == "fifo":
        os.mkfifo(p)
    elif what == "empty.tar.gz":
        with tarfile.open(p, "w:gz") as tf:
            add(tf, "b", type=tarfile.DIRTYPE)
    else:
        p.write_bytes(gzip.compress(b"this is not a tar archive at all" * 40))
    line = one_line_error(cli("diagnose", "--from", str(p), tmpdir=tmp_path, timeout=30))
    assert needle in line, line
    with pytest.raises(HostError):
        BundleHost(p)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(PREFIX)]
