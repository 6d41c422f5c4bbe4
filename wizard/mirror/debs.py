"""Debian binary packages built with ``dpkg-deb`` from a typed description.

A :class:`DebSpec` names the package's control fields, its files (with modes), its symlinks and its
maintainer scripts. :func:`build_deb` lays them into a staging tree and runs
``dpkg-deb --root-owner-group --build``, so the result is an ordinary .deb that real dpkg and apt
install, configure and purge.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from wizard.record import field, record


MAINTAINER = "rocm-wizard rehearsal mirror <rehearsal-mirror@localhost>"
SCRIPTS = ("preinst", "postinst", "prerm", "postrm")


class DebBuildError(RuntimeError):
    """dpkg-deb refused a package; one line with its message."""


@record
class DebFile:
    path: str  # absolute path on the installed system
    content: bytes
    mode: int = 0o644


@record
class DebSpec:
    name: str
    version: str  # full Debian version, epoch included ("1:6.2.4...")
    architecture: str  # "amd64" or "all"
    summary: str  # the Description's first line
    description: tuple[str, ...] = ()  # the long description, one paragraph per item
    depends: tuple[str, ...] = ()
    files: tuple[DebFile, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()  # (path, target)
    scripts: tuple[tuple[str, str], ...] = ()  # (preinst|postinst|prerm|postrm, shell script)
    section: str = "devel"
    extra: tuple[tuple[str, str], ...] = field(default=())  # more control fields ("Provides", "...")

    @property
    def filename(self) -> str:
        """The pool file name dpkg-deb gives it: the version without its epoch."""
        return f"{self.name}_{self.version.split(':', 1)[-1]}_{self.architecture}.deb"

    def control(self) -> str:
        lines = [f"Package: {self.name}", f"Version: {self.version}", f"Architecture: {self.architecture}",
                 f"Maintainer: {MAINTAINER}", f"Section: {self.section}", "Priority: optional"]
        if self.depends:
            lines.append("Depends: " + ", ".join(self.depends))
        lines += [f"{k}: {v}" for k, v in self.extra]
        lines.append(f"Description: {self.summary}")
        for i, para in enumerate(self.description):
            if i:
                lines.append(" .")
            lines += [f" {w}" for w in _wrap(para)]
        return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 78) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(line)
    return out


def build_deb(spec: DebSpec, out_dir: Path, compression: str = "gzip") -> Path:
    """Build ``spec`` into ``out_dir``/``spec.filename``; returns the path."""
    unknown = [name for name, _ in spec.scripts if name not in SCRIPTS]
    if unknown:
        raise DebBuildError(f"{spec.name}: unknown maintainer script {unknown[0]!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=out_dir))
    try:
        debian = stage / "DEBIAN"
        debian.mkdir()
        (debian / "control").write_text(spec.control(), encoding="utf-8")
        for name, body in spec.scripts:
            p = debian / name
            p.write_text(body if body.startswith("#!") else "#!/bin/sh\nset -e\n" + body, encoding="utf-8")
            os.chmod(p, 0o755)
        for f in spec.files:
            p = stage / f.path.lstrip("/")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(f.content)
            os.chmod(p, f.mode)
        for path, target in spec.symlinks:
            p = stage / path.lstrip("/")
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, p)
        for d in stage.rglob("*"):
            if d.is_dir() and not d.is_symlink():
                os.chmod(d, 0o755)
        os.chmod(stage, 0o755)
        out = out_dir / spec.filename
        proc = subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(stage), str(out)],
                              capture_output=True, text=True, timeout=600, env={**os.environ, "LC_ALL": "C"})
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise DebBuildError(f"{spec.name} {spec.version}: dpkg-deb: {last}")
        return out
    finally:
        shutil.rmtree(stage, ignore_errors=True)
