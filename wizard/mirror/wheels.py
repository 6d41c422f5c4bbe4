"""Wheel files (PEP 427 zip archives with METADATA, WHEEL and RECORD) built from a typed description.

A :class:`WheelSpec` names the distribution, its version (local versions such as ``+rocm6.2``
included), the files it installs and its ``Requires-Dist``/``Provides-Extra``; :func:`build_wheel`
writes one wheel per compatibility tag. pip installs, upgrades and uninstalls them like any other
wheel; what they contain is the caller's business (see :mod:`wizard.mirror.catalogue`).
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from pathlib import Path

from wizard.record import record


GENERATOR = "rocm-wizard rehearsal mirror"
_ZIP_DATE = (2024, 1, 1, 0, 0, 0)  # fixed, so a wheel's bytes depend on its content only


@record
class WheelSpec:
    name: str  # "torch", "rocm-sdk-device-gfx1100"
    version: str  # "2.5.1+rocm6.2"
    tags: tuple[str, ...]  # "cp310-cp310-linux_x86_64", "py3-none-linux_x86_64"
    files: tuple[tuple[str, bytes], ...]  # (path inside site-packages, content)
    summary: str
    requires_python: str | None = None
    requires_dist: tuple[str, ...] = ()
    provides_extra: tuple[str, ...] = ()
    description: str = ""

    @property
    def escaped_name(self) -> str:
        """The name as wheel file and .dist-info names spell it (PEP 427: runs of -_. become _)."""
        return re.sub(r"[-_.]+", "_", self.name)

    @property
    def dist_info(self) -> str:
        return f"{self.escaped_name}-{self.version}.dist-info"

    def filename(self, tag: str) -> str:
        return f"{self.escaped_name}-{self.version}-{tag}.whl"

    def metadata(self) -> str:
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}",
                 f"Summary: {self.summary}"]
        if self.requires_python:
            lines.append(f"Requires-Python: {self.requires_python}")
        lines += [f"Provides-Extra: {e}" for e in self.provides_extra]
        lines += [f"Requires-Dist: {r}" for r in self.requires_dist]
        text = "\n".join(lines) + "\n"
        if self.description:
            text += "\n" + self.description.rstrip("\n") + "\n"
        return text


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def build_wheel(spec: WheelSpec, tag: str, out_dir: Path) -> Path:
    """Write the wheel for one tag; returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    purelib = tag.split("-")[1] == "none" and tag.endswith("-any")
    wheel_meta = (f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: {'true' if purelib else 'false'}\n"
                  f"Tag: {tag}\n")
    entries: list[tuple[str, bytes]] = list(spec.files)
    entries += [(f"{spec.dist_info}/METADATA", spec.metadata().encode("utf-8")),
                (f"{spec.dist_info}/WHEEL", wheel_meta.encode("utf-8"))]
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in entries)
    record += f"{spec.dist_info}/RECORD,,\n"
    entries.append((f"{spec.dist_info}/RECORD", record.encode("utf-8")))
    out = out_dir / spec.filename(tag)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=_ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    tmp.replace(out)
    return out


def python_tag(version: str) -> str:
    """KB python "3.10" -> "cp310-cp310"; free-threaded "3.13t" -> "cp313-cp313t"."""
    m = re.fullmatch(r"(\d+)\.(\d+)(t?)", version)
    if not m:
        raise ValueError(f"not a Python version: {version!r}")
    nodot = f"{m.group(1)}{m.group(2)}"
    return f"cp{nodot}-cp{nodot}{m.group(3)}"
