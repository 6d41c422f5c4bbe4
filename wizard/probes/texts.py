"""Every text the wizard has about a machine, and a host view that lets the probes read pastes.

* A bundle's files: the known ones (``rocminfo.txt``...) as they are; any other file
  (``paste.txt``, ``issue.txt``, ``ollama-serve.txt``...) is split by shape
  (:mod:`wizard.parsers.paste`) into the outputs it holds.
* ``--paste``: one mixed text, split the same way.
* On a live machine with an AMD GPU: the kernel's amdgpu/kfd lines, where this user may read them.

:class:`ReadingHost` answers ``captured("rocminfo.txt")`` with a paste's rocminfo segment when the
bundle has no such file, so the ordinary probes read pastes too; :meth:`ReadingHost.locate` maps a
line of such a virtual file back to the file and line it came from.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Mapping

from wizard import lazy_re
from wizard.host import CommandResult, Host
from wizard.model import EvidenceText
from wizard.record import record

if TYPE_CHECKING:
    from wizard.parsers.paste import Segment

MAX_TEXT = 8 << 20  # bytes read from one file or paste

# Files of the bundle format (DESIGN.md) read by their own parser.
KNOWN_FILES = frozenset({
    "os-release.txt", "uname.txt", "lspci.txt", "rocminfo.txt", "rocm-smi.txt", "amd-smi.txt",
    "rocm-version.txt", "dpkg.txt", "rpm.txt", "kfd-properties.txt", "collect_env.txt", "pip-freeze.txt",
    "env.txt", "groups.txt", "dmesg.txt", "rocm_agent_enumerator.txt", "clinfo.txt", "traceback.txt",
    "mokutil.txt",
})
# Files that describe a recording rather than the machine (never evidence).
METADATA_FILES = frozenset({"SOURCE.md", "expected.json", "README.txt", "README.md"})
# Outputs a paste holds once: the richest segment is read. Others are read concatenated.
_SINGLE = frozenset({"rocminfo.txt", "collect_env.txt", "kfd-properties.txt", "clinfo.txt", "uname.txt",
                     "rocm-version.txt", "groups.txt"})
_TEXT_SUFFIXES = (".txt", ".log", ".md", ".out", ".text", "")


@record
class _Piece:
    start: int  # 1-based first line in the virtual file
    length: int
    source: str
    first_line: int  # line of the piece's first line in source


class ReadingHost:
    """A host whose missing captured outputs are filled from pasted texts (read-only delegation)."""

    def __init__(self, base: Host | None, virtual: dict[str, tuple[str, tuple[_Piece, ...]]], name: str) -> None:
        self.base = base
        self._virtual = virtual
        self.name = base.name if base is not None else name

    # -- what the paste adds
    def captured(self, name: str) -> str | None:
        own = self.base.captured(name) if self.base is not None else None
        if own is not None:
            return own
        v = self._virtual.get(name)
        return v[0] if v else None

    def locate(self, source: str, line: int | None) -> tuple[str, int | None] | None:
        """(file, line) a line of a virtual file came from; None for a source that is not virtual."""
        if self.base is not None and self.base.captured(source) is not None:
            return None
        v = self._virtual.get(source)
        if not v:
            return None
        pieces = v[1]
        if line is None:
            return pieces[0].source, None
        for p in pieces:
            if p.start <= line < p.start + p.length:
                return p.source, p.first_line + (line - p.start)
        return pieces[0].source, None

    @property
    def virtual_names(self) -> tuple[str, ...]:
        return tuple(self._virtual)

    # -- everything else is the base host's (an empty recorded machine without one)
    def read_text(self, path: str, limit: int = 4 << 20) -> str | None:
        return self.base.read_text(path, limit) if self.base is not None else None

    def exists(self, path: str) -> bool:
        return self.base.exists(path) if self.base is not None else False

    def is_dir(self, path: str) -> bool:
        return self.base.is_dir(path) if self.base is not None else False

    def listdir(self, path: str) -> list[str]:
        return self.base.listdir(path) if self.base is not None else []

    def subdirs(self, path: str) -> list[str]:
        return self.base.subdirs(path) if self.base is not None else []

    def readlink(self, path: str) -> str | None:
        return self.base.readlink(path) if self.base is not None else None

    def glob(self, pattern: str) -> list[str]:
        return self.base.glob(pattern) if self.base is not None else []

    def realpath(self, path: str) -> str:
        return self.base.realpath(path) if self.base is not None else path

    def access(self, path: str, mode: int) -> bool | None:
        return self.base.access(path, mode) if self.base is not None else None

    def statvfs_free(self, path: str) -> int | None:
        return self.base.statvfs_free(path) if self.base is not None else None

    def run(self, argv: list[str], timeout: float = 5.0) -> CommandResult:
        if self.base is not None:
            return self.base.run(argv, timeout)
        return CommandResult(tuple(argv), None, "", "recorded machine: commands are not run")

    def which(self, program: str) -> str | None:
        return self.base.which(program) if self.base is not None else None

    @property
    def environ(self) -> Mapping[str, str]:
        return self.base.environ if self.base is not None else {}

    @property
    def is_live(self) -> bool:
        return self.base.is_live if self.base is not None else False

    def uid(self) -> int | None:
        return self.base.uid() if self.base is not None else None

    def session_groups(self) -> tuple[str, ...] | None:
        return self.base.session_groups() if self.base is not None else None


def bundle_files(host: Host) -> list[tuple[str, str]]:
    """(name, text) of every top-level text file of a recorded machine, metadata files left out."""
    bundle = getattr(host, "bundle", None)
    if bundle is None or host.is_live:
        return []
    try:
        names = sorted(os.listdir(bundle))
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    for name in names:
        if name in METADATA_FILES or name.startswith(".") or not name.lower().endswith(_TEXT_SUFFIXES):
            continue
        if not os.path.isfile(os.path.join(bundle, name)):
            continue
        text = host.captured(name)
        if text is None or "\x00" in text[:4096]:
            continue
        out.append((name, text))
    return out


def _segments_as_texts(source: str, segments: tuple[Segment, ...]) -> list[EvidenceText]:
    return [EvidenceText(source, s.text, s.start, s.kind, s.own, s.command, s.post) for s in segments]


def gather(host: Host | None, paste: tuple[str, str] | None = None) -> tuple[list[EvidenceText], ReadingHost | None]:
    """Every text of a recorded machine and/or a paste, and a host view that reads pasted outputs.

    ``paste`` is (label, text). The host view is None when nothing was pasted (the host is read as it is).
    """
    from wizard.parsers.paste import split_paste

    texts: list[EvidenceText] = []
    segments_by_kind: dict[str, list[tuple[str, Segment]]] = {}
    sources: list[tuple[str, str]] = bundle_files(host) if host is not None else []
    if paste is not None:
        sources.append(paste)
    for name, text in sources:
        if name in KNOWN_FILES:
            texts.append(EvidenceText(name, text, 1, name, True))
            continue
        split = split_paste(text)
        texts.extend(_segments_as_texts(name, split.segments))
        for seg in split.segments:
            if seg.kind != "text" and seg.own:
                segments_by_kind.setdefault(seg.kind, []).append((name, seg))
    if not segments_by_kind and paste is None:
        return texts, None
    virtual: dict[str, tuple[str, tuple[_Piece, ...]]] = {}
    for kind, segs in segments_by_kind.items():
        if kind in _SINGLE:
            segs = [max(segs, key=lambda ns: (_richness(kind, ns[1]), -ns[1].start))]
        body: list[str] = []
        pieces: list[_Piece] = []
        for name, seg in segs:
            pieces.append(_Piece(len(body) + 1, len(seg.lines), name, seg.start))
            body.extend(seg.lines)
        virtual[kind] = ("\n".join(body) + "\n", tuple(pieces))
    label = paste[0] if paste is not None else "paste"
    return texts, ReadingHost(host, virtual, f"paste:{label}")


def _richness(kind: str, seg: Segment) -> int:
    """How much of a tool's output a segment holds (the paste's fullest copy is read)."""
    if kind == "rocminfo.txt":
        return sum(1 for s in seg.lines if re.match(r"^\s*(?:Agent \d+|Name:|Marketing Name:)", s)) * 100 + len(seg.lines)
    return sum(1 for s in seg.lines if s.strip())


_KERNEL_LINE = lazy_re.compile(r"amdgpu|\bkfd\b|\[drm\]|iommu|AMD-Vi", re.IGNORECASE)


def kernel_log(host: Host, limit: int = 4000) -> EvidenceText | None:
    """amdgpu/kfd lines of the running kernel's log, where this user may read it; None otherwise.

    /dev/kmsg is read directly (no program started); where the kernel restricts it, ``journalctl -k``
    (members of adm / systemd-journal may read it). Either is skipped quietly when not readable.
    """
    if not host.is_live or host.name != "live":
        return None
    kept = _read_kmsg(limit)
    source = "/dev/kmsg"
    if kept is None and host.which("journalctl"):
        res = host.run(["journalctl", "-k", "-b", "-q", "--no-pager", "-o", "short-monotonic"], timeout=3.0)
        if res.ok:
            kept = [ln for ln in res.stdout.splitlines() if _KERNEL_LINE.search(ln)][-limit:]
            source = "journalctl -k"
    if not kept:
        return None
    return EvidenceText(source, "\n".join(kept) + "\n", 1, "dmesg.txt", True, None)


def _read_kmsg(limit: int) -> list[str] | None:
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    kept: list[str] = []
    try:
        while True:
            try:
                rec = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError:  # EPIPE: a record was overwritten while reading; go on
                continue
            if not rec:
                break
            head, _, msg = rec.decode("utf-8", "replace").partition(";")
            msg = msg.split("\n", 1)[0]
            if _KERNEL_LINE.search(msg):
                parts = head.split(",")
                stamp = f"[{int(parts[2]) / 1e6:12.6f}] " if len(parts) > 2 and parts[2].isdigit() else ""
                kept.append(stamp + msg)
    finally:
        os.close(fd)
    return kept[-limit:]


__all__ = ["KNOWN_FILES", "MAX_TEXT", "METADATA_FILES", "ReadingHost", "bundle_files", "gather", "kernel_log"]
