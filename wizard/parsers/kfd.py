"""KFD topology node properties (/sys/class/kfd/kfd/topology/nodes/*/properties).

Accepts one node's file, several concatenated (``cat nodes/*/properties``), ``head``/``tail``
output with ``==> path <==`` headers, ``grep -H`` output (``path:key value``), and pastes with
prompt lines between files. A new node starts at a header, a prompt, a blank line after data,
or when a key repeats (e.g. ``cpu_cores_count`` appearing again).

``gfx_target_version`` is packed decimal: major = v // 10000, minor = v // 100 % 100,
stepping = v % 100, rendered with hex minor and stepping: 110000 -> gfx1100, 90010 -> gfx90a,
90402 -> gfx942, 100300 -> gfx1030, 110501 -> gfx1151, 120001 -> gfx1201.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import bdf_from_location, lines, never_raises, prompt_command
from wizard.record import record

_KV_RE = lazy_re.compile(r"^\s*([a-z][a-z0-9_]*)\s+(-?\d+)\s*$")
_GREP_RE = lazy_re.compile(r"^\s*(\S*nodes/(\d+)/properties):\s*([a-z][a-z0-9_]*)\s+(-?\d+)\s*$")
_HEADER_RE = lazy_re.compile(r"^\s*==>(.*)<==$")  # (lines come right-stripped; no overlapping \s* around the name)
_NODE_PATH_RE = lazy_re.compile(r"nodes/(\d+)(?:/properties)?\b")
_BARE_PATH_RE = lazy_re.compile(r"^\s*\S*/nodes/(\d+)/properties:?\s*$")


def gfx_from_target_version(value: int | None) -> str | None:
    """"gfx1100" for 110000; None for 0 (CPU nodes), negatives or digits that do not fit one hex nibble."""
    if value is None or value <= 0:
        return None
    major, minor, stepping = value // 10000, value // 100 % 100, value % 100
    if major <= 0 or minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


@record
class KfdNode:
    """One topology node. ``node`` is the sysfs node number when a header named it."""

    ordinal: int  # 0-based position in the text
    node: int | None  # the N of nodes/N/properties when known
    properties: tuple[tuple[str, int], ...]
    line: int  # 1-based line of the node's first property

    def get(self, key: str) -> int | None:
        for k, v in self.properties:
            if k == key:
                return v
        return None

    @property
    def gfx_target_version(self) -> int | None:
        return self.get("gfx_target_version")

    @property
    def gfx(self) -> str | None:
        return gfx_from_target_version(self.gfx_target_version)

    @property
    def simd_count(self) -> int | None:
        return self.get("simd_count")

    @property
    def cpu_cores_count(self) -> int | None:
        return self.get("cpu_cores_count")

    @property
    def is_gpu(self) -> bool:
        """A GPU node has SIMDs; CPU nodes have simd_count 0."""
        simd = self.simd_count
        if simd is not None:
            return simd > 0
        return (self.gfx_target_version or 0) > 0

    @property
    def vendor_id(self) -> str | None:
        v = self.get("vendor_id")
        return f"{v:04x}" if v is not None and 0 < v <= 0xFFFF else None

    @property
    def device_id(self) -> str | None:
        v = self.get("device_id")
        return f"{v:04x}" if v is not None and 0 < v <= 0xFFFF else None

    @property
    def pci_id(self) -> str | None:
        """"1002:744c" when both ids are known."""
        if self.vendor_id and self.device_id:
            return f"{self.vendor_id}:{self.device_id}"
        return None

    @property
    def bdf(self) -> str | None:
        """"0000:03:00.0" from location_id and domain; None when either is missing."""
        loc = self.get("location_id")
        if not loc:
            return None
        return bdf_from_location(loc, self.get("domain"))[0]

    @property
    def bus_devfn(self) -> str | None:
        """"03:00.0" from location_id alone."""
        loc = self.get("location_id")
        if not loc:
            return None
        return bdf_from_location(loc)[1]

    @property
    def drm_render_minor(self) -> int | None:
        return self.get("drm_render_minor")

    @property
    def render_node(self) -> str | None:
        minor = self.drm_render_minor
        return f"renderD{minor}" if minor is not None and minor > 0 else None

    @property
    def local_mem_size(self) -> int | None:
        """Bytes of local (VRAM) memory the node reports; 0 on APUs and some kernels."""
        return self.get("local_mem_size")

    @property
    def hive_id(self) -> int | None:
        return self.get("hive_id")

    @property
    def unique_id(self) -> int | None:
        return self.get("unique_id")


@record
class KfdTopology:
    nodes: tuple[KfdNode, ...] = ()

    @property
    def gpus(self) -> tuple[KfdNode, ...]:
        return tuple(n for n in self.nodes if n.is_gpu)


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[KfdNode] = []
        self.props: list[tuple[str, int]] = []
        self.keys: set[str] = set()
        self.node: int | None = None
        self.first_line = 0

    def flush(self) -> None:
        if self.props:
            self.nodes.append(KfdNode(len(self.nodes), self.node, tuple(self.props), self.first_line))
        self.props, self.keys, self.node, self.first_line = [], set(), None, 0

    def start(self, node: int | None) -> None:
        self.flush()
        self.node = node

    def add(self, no: int, key: str, value: int, node: int | None = None) -> None:
        if key in self.keys or (node is not None and self.props and node != self.node):
            self.flush()
        if node is not None:
            self.node = node
        if not self.props:
            self.first_line = no
        self.props.append((key, value))
        self.keys.add(key)


@never_raises(KfdTopology)
def parse_kfd_properties(text: object) -> KfdTopology:
    """Nodes in text order; never raises."""
    b = _Builder()
    for no, line in lines(text):
        if not line.strip():
            b.flush()
            continue
        m = _KV_RE.match(line)
        if m:
            b.add(no, m.group(1), int(m.group(2)))
            continue
        m = _GREP_RE.match(line)
        if m:
            b.add(no, m.group(3), int(m.group(4)), node=int(m.group(2)))
            continue
        m = _HEADER_RE.match(line) or _BARE_PATH_RE.match(line)
        if m:
            pm = _NODE_PATH_RE.search(line)
            b.start(int(pm.group(1)) if pm else None)
            continue
        cmd = prompt_command(line)
        if cmd is not None:
            pm = _NODE_PATH_RE.search(cmd)
            b.start(int(pm.group(1)) if pm and "*" not in cmd else None)
            continue
        # anything else (prose, other files) ends nothing: a stray line inside a paste
    b.flush()
    return KfdTopology(tuple(b.nodes))
