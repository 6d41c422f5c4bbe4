"""The rehearsal's CPU torch: the torch a rehearsal's Verify step runs the suite with (``m`` in the TUI).

Made in a venv of its own, from wherever pip works for this user, in this order: the site mirror of
PyTorch's CPU index (``--mirror download.pytorch.org=URL`` or mirrors.toml), the user's own pip
configuration (pip.conf, ``PIP_INDEX_URL``; a ``pypi.org`` mirror in force is passed as the index), then
PyTorch's CPU index itself. The first that installs wins; each failure is kept, one line each, and said
when none worked. What pip downloaded is added up from its own "Downloading ... (N MB)" lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wizard import lazy_re
from wizard.mirror.config import MirrorConfig
from wizard.record import record

PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PYPI_SIMPLE = "https://pypi.org/simple"
MADE_MARK = ".made"
_DOWNLOADING = lazy_re.compile(r"Downloading \S+ \(([0-9.]+) (kB|MB|GB)\)")
_UNITS = {"kB": 1e3, "MB": 1e6, "GB": 1e9}


class CpuTorchError(ValueError):
    """No source gave a CPU torch: one line per source tried, what failed."""


@record
class Source:
    label: str  # "the site mirror of PyTorch's CPU index", "your pip configuration", ...
    pip_args: tuple[str, ...]  # index options after ``pip install torch``


@record
class Made:
    python: str
    source: str  # the label of the source that worked
    downloaded_bytes: int  # what pip said it downloaded (0: everything came from its cache)
    failures: tuple[str, ...]  # the sources tried before it, and why each failed


def sources(mirrors: MirrorConfig | None = None) -> list[Source]:
    """Where a CPU torch may come from, in the order they are tried."""
    out: list[Source] = []
    if mirrors is not None and mirrors.mirror_for(PYTORCH_CPU_INDEX) is not None:
        out.append(Source("the site mirror of PyTorch's CPU index",
                          ("--index-url", mirrors.rewrite(PYTORCH_CPU_INDEX))))
    pypi = mirrors.rewrite(PYPI_SIMPLE) if mirrors is not None and mirrors.mirror_for(PYPI_SIMPLE) else None
    out.append(Source("your pip configuration" + (" with the pypi.org mirror" if pypi else ""),
                      ("--index-url", pypi) if pypi else ()))
    out.append(Source("PyTorch's CPU index", ("--index-url", PYTORCH_CPU_INDEX)))
    return out


def venv_argv(venv: Path) -> list[str]:
    return [sys.executable, "-m", "venv", str(venv)]


def install_argv(venv: Path, source: Source) -> list[str]:
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "torch",
            *source.pip_args]


def commands(venv: Path, mirrors: MirrorConfig | None = None) -> list[list[str]]:
    """What making it runs: the venv, then one pip install per source until one works."""
    return [venv_argv(venv), *(install_argv(venv, s) for s in sources(mirrors))]


def downloaded(pip_output: str) -> int:
    """Bytes pip said it downloaded ("Downloading torch-....whl (184.5 MB)"); cached wheels count nothing."""
    return int(sum(float(m.group(1)) * _UNITS[m.group(2)] for m in _DOWNLOADING.finditer(pip_output)))


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]
    return (errors or lines or ["no output"])[-1]


def make(venv: Path, mirrors: MirrorConfig | None = None, *, timeout: float = 3600.0) -> Made:
    """Make the CPU torch in ``venv`` (minutes where it downloads). Raises CpuTorchError naming every source
    tried and why it failed."""
    out = subprocess.run(venv_argv(venv), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    if out.returncode != 0:
        raise CpuTorchError(f"`python -m venv {venv}` failed: {_last_line(out.stderr or out.stdout)}")
    failures: list[str] = []
    python = str(venv / "bin" / "python")
    for source in sources(mirrors):
        try:
            res = subprocess.run(install_argv(venv, source), capture_output=True, text=True,
                                 stdin=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired:
            failures.append(f"{source.label}: pip did not finish in {timeout:.0f} s")
            continue
        if res.returncode != 0:
            failures.append(f"{source.label}: {_last_line(res.stderr or res.stdout)}")
            continue
        probe = subprocess.run([python, "-c", "import torch; print(torch.version.hip)"], capture_output=True,
                               text=True, timeout=300)
        if probe.returncode != 0 or probe.stdout.strip() != "None":
            why = _last_line(probe.stderr) if probe.returncode != 0 else f"a ROCm build (HIP {probe.stdout.strip()})"
            failures.append(f"{source.label}: the torch installed does not run on the CPU here: {why}")
            continue
        (venv / MADE_MARK).write_text(source.label + "\n")
        return Made(python, source.label, downloaded(res.stdout), tuple(failures))
    raise CpuTorchError("no CPU torch: " + "; ".join(failures))


def size_text(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else ("nothing (pip's cache)" if n == 0 else f"{n / 1e3:,.0f} kB")


__all__ = ["CpuTorchError", "Made", "Source", "commands", "downloaded", "make", "size_text", "sources"]
