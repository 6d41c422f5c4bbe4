"""The GPUs' memory pools and the system's memory, read from the machine at diagnosis (never by ``detect``).

amdgpu shows each GPU's pools in its PCI device directory (``/sys/bus/pci/devices/BDF``, the directory
``/sys/class/drm/cardN/device`` links to): ``mem_info_gtt_total`` / ``mem_info_vram_total`` and their ``_used``
companions, bytes. The system memory the kernel manages is /proc/meminfo's ``MemTotal``. A GTT total means
something only beside MemTotal (the kernel's default GTT limit is half of it), so both are read together, from the
host the session opened: a sandbox's root, a bundle's ``root/`` (``report --bundle`` copies the files there), the
live machine's ``/``. ``detect`` never reads them (its speed target); :func:`with_gpu_memory` adds them, as one text
in the format ``grep . FILES`` prints (which :mod:`wizard.parsers.gpu_memory` reads), to the facts diagnosis reads.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.host import Host
from wizard.model import EvidenceText, Facts
from wizard.record import replace

SOURCE = "gpu-memory"  # the text's source: the lines name their own files
POOL_FILES = ("mem_info_gtt_total", "mem_info_vram_total", "mem_info_gtt_used", "mem_info_vram_used")
PCI_DEVICES = "/sys/bus/pci/devices"
MEMINFO = "/proc/meminfo"
_BDF = lazy_re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
_VALUE = lazy_re.compile(r"\d{1,20}")
_MEM_TOTAL = lazy_re.compile(r"MemTotal:[ \t]+\d{1,20} kB")


def pool_values(host: Host, bdf: str) -> list[tuple[str, str]]:
    """(path, value) of each pool file of the PCI device ``bdf`` that holds one number (nothing else is read)."""
    if not _BDF.fullmatch(bdf):
        return []
    out = []
    for leaf in POOL_FILES:
        path = f"{PCI_DEVICES}/{bdf}/{leaf}"
        value = (host.read_text(path, 64) or "").strip()
        if _VALUE.fullmatch(value):
            out.append((path, value))
    return out


def mem_total_line(host: Host) -> str | None:
    """/proc/meminfo's ``MemTotal:`` line, alone."""
    for line in (host.read_text(MEMINFO, 64 << 10) or "").splitlines():
        if _MEM_TOTAL.fullmatch(line.strip()):
            return line.strip()
    return None


def gpu_memory_text(host: Host, bdfs: list[str]) -> EvidenceText | None:
    """The pools of the GPUs at ``bdfs`` and MemTotal as one text; None where no GPU shows a pool."""
    lines = [f"{path}:{value}" for bdf in bdfs for path, value in pool_values(host, bdf)]
    if not lines:
        return None
    total = mem_total_line(host)
    if total is not None:
        lines.append(total)
    return EvidenceText(SOURCE, "\n".join(lines) + "\n", 1, SOURCE, True)


def with_gpu_memory(facts: Facts, host: Host) -> Facts:
    """``facts`` with the text of the memory pools of its GPUs (the ones it found at a PCI address) on ``host``."""
    if any(t.source == SOURCE for t in facts.texts):
        return facts
    text = gpu_memory_text(host, [g.bdf for g in facts.gpus if g.bdf])
    return facts if text is None else replace(facts, texts=facts.texts + (text,))


__all__ = ["MEMINFO", "PCI_DEVICES", "POOL_FILES", "SOURCE", "gpu_memory_text", "mem_total_line", "pool_values",
           "with_gpu_memory"]
