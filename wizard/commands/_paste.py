"""`--paste FILE|-` for detect and diagnose: one mixed text read as a machine's evidence."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from wizard.model import Facts

MAX_PASTE = 8 << 20  # bytes: a whole issue thread with its logs fits many times over


def add_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paste", metavar="FILE", help="read one pasted text (an issue body, a terminal scrollback, a forum "
                   "post; '-' for stdin) as the machine's evidence, split into the outputs it holds")


def read_paste(path: str) -> tuple[str, str]:
    """(label, text) of --paste; one-line error (exit 2) when unreadable, binary or over 8 MiB."""
    from wizard.commands import usage_error
    from wizard.inputs import InputError, read_bounded

    try:
        if path == "-":
            data = read_bounded(sys.stdin.buffer, MAX_PASTE, "--paste -")
            label = "stdin"
        else:
            with open(path, "rb") as fh:
                data = read_bounded(fh, MAX_PASTE, f"--paste {path}")
            label = path
    except InputError as exc:
        raise usage_error(str(exc)) from None
    except OSError as exc:
        raise usage_error(f"--paste {path}: {exc.strerror or exc}") from None
    if b"\x00" in data[:65536]:
        raise usage_error(f"--paste {path}: binary data, not a text")
    if not data.strip():
        raise usage_error(f"--paste {path}: empty; paste the outputs or the thread to read (a file, or - for stdin)")
    return label, data.decode("utf-8", errors="replace")


def facts_for(args: argparse.Namespace, ctx) -> Facts:  # type: ignore[no-untyped-def]
    """The facts a command shows: the pasted machine (with --from's bundle, when given), else the context's."""
    if not getattr(args, "paste", None):
        return ctx.facts  # type: ignore[no-any-return]
    from wizard.probes import detect

    paste = read_paste(args.paste)
    base = ctx.host if ctx.from_ else None
    return detect(base, pythons=ctx.pythons if base is not None else (), paste=paste)
