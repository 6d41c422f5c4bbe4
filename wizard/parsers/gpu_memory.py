"""The GPU's memory pools and the system's memory as a text shows them.

* amdgpu's sysfs files ``mem_info_gtt_total`` / ``mem_info_vram_total`` (bytes): a line naming the file with its
  value (``grep . /sys/class/drm/card1/device/mem_info_gtt_total`` prints ``...mem_info_gtt_total:66571993088``),
  or a ``cat`` of them followed by the bare numbers it printed (one file named: every number is its; several:
  as many numbers as files, in their order);
* rocm-smi's ``--showmeminfo`` lines (``GPU[0] : GTT Total Memory (B): 66571993088``; rocm_smi.py prints
  "%s Total Memory (B)" of the memory type in capitals);
* /proc/meminfo's ``MemTotal:`` (kB), the system memory the kernel manages (an APU's carve-out is not in it).
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

# A value is at most 20 digits: the pool files are u64 and MemTotal an unsigned long (of kB); a longer run of digits
# (a hostile or damaged paste) is no such value and is not read (its size would overflow the float arithmetic of the
# predicates that compare the values)
_NAMED = lazy_re.compile(r"mem_info_(gtt|vram)_total[\s:=]+(\d{1,20})\s*$")
_SMI = lazy_re.compile(r"\b(GTT|VRAM) Total Memory \(B\):\s*(\d{1,20})\s*$")
_MEM_TOTAL = lazy_re.compile(r"^\s*MemTotal:\s+(\d{1,20})\s*kB\b")
_CAT_FILE = lazy_re.compile(r"mem_info_(gtt|vram)_total\b")
_NUMBER = lazy_re.compile(r"^\s*(\d{1,20})\s*$")


@record
class GpuMemory:
    gtt: tuple[int, ...] = ()  # bytes, in the order the text shows them
    vram: tuple[int, ...] = ()
    mem_total: int | None = None  # bytes: /proc/meminfo's MemTotal


def _cat_files(line: str) -> list[str]:
    """The pool files a ``cat`` command line names, in order ("gtt", "vram"); [] for any other line."""
    if "cat " not in line or "mem_info_" not in line:
        return []
    return [m.group(1) for m in _CAT_FILE.finditer(line)]


@never_raises(GpuMemory)
def parse_gpu_memory(text: object) -> GpuMemory:
    pools: dict[str, list[int]] = {"gtt": [], "vram": []}
    mem_total: int | None = None
    files: list[str] = []  # the files of the last cat command
    printed: list[int] = []  # the bare numbers printed after it

    def flush() -> None:
        if len(set(files)) == 1 or (files and len(printed) == len(files)):
            for i, value in enumerate(printed):
                pools[files[0] if len(set(files)) == 1 else files[i]].append(value)
        files.clear()
        printed.clear()

    for _no, line in lines(text):
        if files and (m := _NUMBER.match(line)):
            printed.append(int(m.group(1)))
            continue
        flush()
        if (named := _cat_files(line)):
            files.extend(named)
            continue
        if (m := _NAMED.search(line) or _SMI.search(line)):
            pools[m.group(1).lower()].append(int(m.group(2)))
        elif (m := _MEM_TOTAL.match(line)):
            mem_total = int(m.group(1)) * 1024
    flush()
    return GpuMemory(tuple(pools["gtt"]), tuple(pools["vram"]), mem_total)
