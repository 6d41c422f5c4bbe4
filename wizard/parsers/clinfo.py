"""`clinfo` (ROCm's rocm-clinfo or the generic one): per device, board name and gfx name."""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

_FIELD = lazy_re.compile(r"^\s*(Board name|Device Board Name \(AMD\)|Name|Device Name)\s*:?\s{2,}(.*?)\s*$|"
                    r"^\s*(Board name|Name):\s*(.*?)\s*$")
_GFX = lazy_re.compile(r"\b(gfx[0-9]{2,3}[0-9a-f])\b")


@record
class ClDevice:
    board_name: str | None
    gfx: str | None
    line: int


@record
class ClInfo:
    devices: tuple[ClDevice, ...] = ()


@never_raises(ClInfo)
def parse_clinfo(text: object) -> ClInfo:
    devices: list[ClDevice] = []
    board: tuple[str, int] | None = None
    for no, line in lines(text):
        m = _FIELD.match(line)
        if not m:
            continue
        key = m.group(1) or m.group(3)
        value = (m.group(2) if m.group(1) else m.group(4)) or ""
        if key.startswith(("Board name", "Device Board Name")):
            if board is not None:
                devices.append(ClDevice(board[0], None, board[1]))
            board = (value.strip(), no)
        else:
            g = _GFX.search(value)
            if g is None:
                continue
            if board is not None:
                devices.append(ClDevice(board[0], g.group(1), board[1]))
                board = None
            else:
                devices.append(ClDevice(None, g.group(1), no))
    if board is not None:
        devices.append(ClDevice(board[0], None, board[1]))
    return ClInfo(tuple(devices))
