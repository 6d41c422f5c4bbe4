"""Option types and options shared by the top-level parser (``wizard/cli.py``) and the sub-commands'
parsers: defined here, below both, so no command imports the CLI module."""

from __future__ import annotations

import argparse

from wizard import lazy_re

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Callable


def whole_number(noun: str, low: int, high: int | None = None, unit: str = "") -> Callable[[str], int]:
    """An argparse ``type`` for a whole number in [low, high] (no upper bound when ``high`` is None)."""
    def convert(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole {noun}: {text!r}") from None
        if v < low or (high is not None and v > high):
            bound = f"at least {low}" if high is None else f"between {low} and {high}{unit}"
            raise argparse.ArgumentTypeError(f"{bound}: {text!r}")
        return v

    return convert


_PACKAGE = lazy_re.compile(r"^[a-z0-9][a-z0-9+.\-]*$")  # a Debian package name (Debian Policy 5.6.1)


def package_list(text: str) -> tuple[str, ...]:
    """An argparse ``type``: ``PKG[,PKG]``, Debian package names, in order, without repeats."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",")))
    bad = [n for n in names if not _PACKAGE.match(n)]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of package names: {text!r}")
    return names


def add_venv_option(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--venv PATH``, ``--allow-remove PKG[,PKG]`` and ``--channel`` on every command that plans: the venv the
    pip plans fill (existing or new), which dependents of the distribution's ROCm a purge may take along, and
    whether AMD's nightly indexes may serve it."""
    p.add_argument("--venv", metavar="PATH", default=argparse.SUPPRESS if suppress else None,
                   help="the venv the plan fills: an existing one, or a new one at PATH (default: a new venv "
                        "beside the one found, else ~/rocm-wizard-venv)")
    p.add_argument("--allow-remove", metavar="PKG[,PKG]", type=package_list,
                   default=argparse.SUPPRESS if suppress else (),
                   help="a system plan that purges the distribution's ROCm may also remove these installed packages "
                        "that depend on it (apt's simulation names them; without this the run stops there)")
    p.add_argument("--channel", choices=("stable", "nightly"), default=argparse.SUPPRESS if suppress else None,
                   help="which AMD wheel indexes a plan may use: stable (the plans' default) or nightly (builds "
                        "that are not releases: they may be broken or withdrawn)")
