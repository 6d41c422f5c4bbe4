"""``rocminfo`` output: the ROCk line, HSA runtime version, and each agent in order.

Works on indentation-stripped pastes and on pastes cut off mid-agent (the last agent is kept
with whatever it had). ``Name:`` before an agent's ``ISA Info`` is the agent name; inside it, an
ISA name such as ``amdgcn-amd-amdhsa--gfx1100``.
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.model import GFX_TARGET
from wizard.parsers._text import bdf_from_location, leading_int, lines, never_raises
from wizard.record import record

_AGENT_RE = lazy_re.compile(r"^\s*Agent\s+(\d+)\s*$")
_KV_RE = lazy_re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ._()/-]*?)\s*:\s*(.*?)\s*$")
_POOL_RE = lazy_re.compile(r"^\s*Pool\s+(\d+)\s*$")
_ISA_RE = lazy_re.compile(r"^\s*ISA\s+(\d+)\s*$")
# rocminfo's first line (ROCm/rocminfo c6f7a17c85e0 rocminfo.cc, CheckInitialState): "ROCk module [version V] is
# loaded"; "is NOT loaded" without /sys/module/amdgpu; "is NOT live" when amdgpu's initstate there is not "live" (the
# module failed or is still initialising): both mean the driver is not working. Also read in pastes (mentions.py).
ROCK_LINE = r"ROCk module(?: version (?P<ver>\S+))? is (?P<not>NOT )?(?:loaded|(?<=NOT )live\b)"
_ROCK_RE = lazy_re.compile(ROCK_LINE, re.IGNORECASE)
_GFX_RE = lazy_re.compile(rf"\b({GFX_TARGET})\b")
_ERROR_RE = lazy_re.compile(
    r"HSA_STATUS_ERROR\w*|hsa api call failure|Unable to open /dev/kfd|Permission denied"
    r"|Failed to get user name|is not member of|not loaded|Unable to find",
    re.IGNORECASE,
)
_AGENT_KEYS = frozenset({"name", "uuid", "marketing name", "vendor name", "device type", "chip id", "bdfid"})
_SIZE_KB_RE = lazy_re.compile(r"^\s*(\d+)(?:\([^)]*\))?\s*KB\b", re.IGNORECASE)


@record
class RocmPool:
    segment: str  # "GLOBAL; FLAGS: COARSE GRAINED"
    size_kb: int | None


@record
class RocmAgent:
    index: int | None  # N of "Agent N"
    name: str | None = None  # "gfx1100" or the CPU's name
    uuid: str | None = None
    marketing_name: str | None = None
    vendor_name: str | None = None
    device_type: str | None = None  # "CPU", "GPU", "DSP"
    node: int | None = None
    compute_units: int | None = None
    chip_id: int | None = None  # decimal value of "Chip ID: 29772(0x744c)"
    bdfid: int | None = None
    isa_names: tuple[str, ...] = ()
    pools: tuple[RocmPool, ...] = ()
    line: int = 0

    @property
    def is_gpu(self) -> bool:
        """Device Type GPU; when a filtered paste lost that line, a gfx-target name."""
        if self.device_type:
            return self.device_type.upper() == "GPU"
        return bool(_GFX_RE.fullmatch(self.name or ""))

    @property
    def gfx(self) -> str | None:
        """The agent's gfx target: its name, else the first ISA's."""
        for text in (self.name, *self.isa_names):
            m = _GFX_RE.search(text or "")
            if m:
                return m.group(1)
        return None

    @property
    def pci_device_id(self) -> str | None:
        """"744c" from Chip ID; None for CPUs (0) and out-of-range values."""
        if self.chip_id is None or not 0 < self.chip_id <= 0xFFFF:
            return None
        return f"{self.chip_id:04x}"

    @property
    def bus_devfn(self) -> str | None:
        """"03:00.0" from BDFID (no PCI domain in it); None for CPUs (BDFID 0)."""
        if not self.bdfid:
            return None
        return bdf_from_location(self.bdfid)[1]

    @property
    def vram_kb(self) -> int | None:
        """Size of a GPU agent's first GLOBAL pool, in KB (a VRAM hint; APUs report carve-out/GTT)."""
        if not self.is_gpu:
            return None
        for pool in self.pools:
            if pool.segment.upper().startswith("GLOBAL"):
                return pool.size_kb
        return None


@record
class RocmInfo:
    rock_loaded: bool | None = None
    rock_version: str | None = None  # "6.8.5" from "ROCk module version 6.8.5 is loaded"
    runtime_version: str | None = None
    runtime_ext_version: str | None = None
    agents: tuple[RocmAgent, ...] = ()
    errors: tuple[str, ...] = ()
    done: bool = False  # saw the final "*** Done ***"

    @property
    def gpus(self) -> tuple[RocmAgent, ...]:
        return tuple(a for a in self.agents if a.is_gpu)


class _Agent:
    def __init__(self, index: int | None, line: int) -> None:
        self.index, self.line = index, line
        self.fields: dict[str, str] = {}
        self.isas: list[str] = []
        self.pools: list[list[str | int | None]] = []
        self.section = ""  # "", "pool", "isa"

    def build(self) -> RocmAgent:
        f = self.fields
        return RocmAgent(
            index=self.index,
            name=f.get("name") or None,
            uuid=f.get("uuid") or None,
            marketing_name=f.get("marketing name") or None,
            vendor_name=f.get("vendor name") or None,
            device_type=f.get("device type") or None,
            node=leading_int(f.get("node")),
            compute_units=leading_int(f.get("compute unit")),
            chip_id=leading_int(f.get("chip id")),
            bdfid=leading_int(f.get("bdfid")),
            isa_names=tuple(self.isas),
            pools=tuple(RocmPool(str(seg or ""), size if isinstance(size, int) else None) for seg, size in self.pools),
            line=self.line,
        )


@never_raises(RocmInfo)
def parse_rocminfo(text: object) -> RocmInfo:
    rock_loaded: bool | None = None
    rock_version = runtime = runtime_ext = None
    agents: list[_Agent] = []
    errors: list[str] = []
    done = False
    cur: _Agent | None = None
    for no, line in lines(text):
        s = line.strip()
        if not s or set(s) <= {"*", "="}:
            continue
        m = _ROCK_RE.search(s)
        if m:
            rock_loaded = not m.group("not")
            rock_version = m.group("ver") or rock_version
            if not rock_loaded:
                errors.append(s)
            continue
        if s == "*** Done ***":
            done = True
            continue
        m = _AGENT_RE.match(s)
        if m:
            cur = _Agent(int(m.group(1)), no)
            agents.append(cur)
            continue
        if _ERROR_RE.search(s):
            errors.append(s)
            continue
        m = _KV_RE.match(line)
        if cur is None and (
            (m and m.group(1).lower() in _AGENT_KEYS) or s.startswith(("Pool Info", "ISA Info"))
        ):
            cur = _Agent(None, no)  # a paste that starts inside an agent
            agents.append(cur)
        if cur is None:
            if m:
                key, value = m.group(1).lower(), m.group(2)
                if key == "runtime version":
                    runtime = value or None
                elif key == "runtime ext version":
                    runtime_ext = value or None
            continue
        if s == "Pool Info:" or s.startswith("Pool Info"):
            cur.section = "pool"
            continue
        if s.startswith("ISA Info"):
            cur.section = "isa"
            continue
        pm = _POOL_RE.match(s)
        if pm and cur.section == "pool":
            cur.pools.append(["", None])
            continue
        if _ISA_RE.match(s):
            cur.section = "isa"
            continue
        if not m:
            continue
        key, value = m.group(1).lower(), m.group(2)
        if cur.section == "pool" and cur.pools:
            if key == "segment":
                cur.pools[-1][0] = value
            elif key == "size":
                sm = _SIZE_KB_RE.match(value)
                cur.pools[-1][1] = int(sm.group(1)) if sm else None
            continue
        if cur.section == "isa" or (key == "name" and value.startswith("amdgcn-")):
            if key == "name" and value:
                cur.isas.append(value)
            continue
        if key == "name" and "name" in cur.fields and cur.index is None:
            cur = _Agent(None, no)  # e.g. `rocminfo | grep Name`: one agent per agent name
            agents.append(cur)
        if key not in cur.fields:
            cur.fields[key] = value
    return RocmInfo(
        rock_loaded=rock_loaded,
        rock_version=rock_version,
        runtime_version=runtime,
        runtime_ext_version=runtime_ext,
        agents=tuple(a.build() for a in agents),
        errors=tuple(errors),
        done=done,
    )
