"""Command line: argparse only; every sub-command lives in wizard/commands/<name>.py.

`rocm-wizard --version` must stay cheap: this module imports the standard library only, and each
command module is imported when (and only when) it is chosen. Command modules expose
``add_arguments(parser)`` and ``run(args, ctx) -> int`` and import heavy things inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from wizard import __version__, exit_codes

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Any, NoReturn, Sequence

PROG = "rocm-wizard"

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "detect": ("wizard.commands.detect", "show the GPUs, driver, ROCm and Python environments of a machine"),
    "diagnose": ("wizard.commands.diagnose", "find what is wrong, with cause, fix and sources"),
    "plans": ("wizard.commands.plans", "list every plan, whether it fits this machine, and the recommended one"),
    "verify": ("wizard.commands.verify", "run the matmul + conv verification suite in a Python env or image"),
    "resume": ("wizard.commands.resume", "continue an interrupted or rebooted run"),
    "status": ("wizard.commands.status", "where the current or last run stands"),
    "rollback": ("wizard.commands.rollback", "undo what the current run did, as far as its backup allows"),
    "abandon": ("wizard.commands.abandon", "forget an unfinished run so a new plan can start (changes nothing)"),
    "report": ("wizard.commands.report", "write this machine's evidence bundle for a bug report"),
    "kb": ("wizard.commands.kb", "check the knowledge base, or refresh it against the live sources"),
    "fleet": ("wizard.commands.fleet", "detect, plan, run and verify many machines through Ansible"),
    "cache": ("wizard.commands.cache", "show or prune the wheelhouse of downloaded files"),
}


class UsageError(Exception):
    """Bad usage or unreadable input: one line on stderr, exit 2."""


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it, without importing shutil (which pulls
    in bz2, lzma and zlib: 4 ms of every start, for the help text only)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line, never the usage block
        raise UsageError(message)


def _machine_options(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options that say which machine to look at; accepted before and after the sub-command."""
    d = argparse.SUPPRESS if suppress else None
    p.add_argument("--from", dest="from_", metavar="PATH", default=d,
                   help="a recorded machine: bundle directory, .tar.gz, or a built-in example name")
    p.add_argument("--python", dest="pythons", metavar="PATH", action="append",
                   default=argparse.SUPPRESS if suppress else [],
                   help="also inspect this Python interpreter or venv (repeatable)")
    p.add_argument("--sandbox", metavar="DIR", default=d,
                   help="use DIR as the machine's root, with stand-in programs (a rehearsal)")
    p.add_argument("--profile", metavar="NAME", default=d,
                   help="sandbox profile used when DIR is first created (e.g. seed-7900xt)")
    p.add_argument("--root", metavar="KIND", choices=("debian12", "debian13"), default=d,
                   help="with --sandbox: a real Debian 12 or 13 root (real apt, dpkg, pip from a local mirror) instead "
                        "of stand-ins; needs root and mmdebstrap")
    p.add_argument("--mirror", dest="mirrors", metavar="ORIGIN=URL", action="append",
                   default=argparse.SUPPRESS if suppress else [],
                   help="serve ORIGIN (repo.radeon.com, repo.amd.com, download.pytorch.org, docker.io ...) from a site "
                        "mirror (repeatable; also /etc/rocm-wizard/mirrors.toml and ~/.config/rocm-wizard/mirrors.toml)")
    p.add_argument("--mirror-key", dest="mirror_keys", metavar="ORIGIN=FINGERPRINT", action="append",
                   default=argparse.SUPPRESS if suppress else [],
                   help="trust this signing key (full fingerprint) for ORIGIN's mirror")
    p.add_argument("--state-dir", metavar="DIR", default=d,
                   help="keep the state (journal, lock, backups) and logs in DIR instead of the default (tests, CI; "
                        "also ROCM_WIZARD_STATE_DIR)")
    p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS if suppress else False,
                   help="a run, resume or rollback prints each command and its output (else they go to the step log)")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Only the sub-commands ``argv`` names are built (each costs imports and time); when it names
    none, every one is listed without its options (for --help and a typo's error). Without ``argv``: all of
    them, complete (for docs and tests)."""
    from wizard.commands.options import add_venv_option, whole_number

    named = [a for a in argv if a in COMMANDS] if argv is not None else list(COMMANDS)
    parser = _Parser(
        prog=PROG,
        description="Detect, diagnose, plan, run and verify PyTorch on AMD GPUs. "
        "Without a sub-command it opens the interactive wizard.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _machine_options(parser, suppress=False)
    parser.add_argument("--plan", metavar="NAME|FILE", help="run (or with --dry-run, print) this plan")
    parser.add_argument("--replan", action="store_true",
                        help="with --plan FILE.json (a resolved plan): resolve the plan it names again on this machine")
    add_venv_option(parser, suppress=False)
    parser.add_argument("--yes", action="store_true", help="unattended: no questions")
    parser.add_argument("--dry-run", action="store_true", help="change nothing; print the plan as a bash script")
    parser.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"),
                        help="change nothing; write the plan as an Ansible playbook and role into DIR (FORMAT: ansible)")
    parser.add_argument("--verify-python", metavar="PATH",
                        help="in a sandbox, run the verify step with this (CPU) torch interpreter")
    parser.add_argument("--lock-wait", metavar="S", type=whole_number("number of seconds", 0, 86400, " seconds"),
                        default=None,
                        help="seconds the preflight waits for another apt/dpkg (or rpm) to finish (default 120)")
    parser.add_argument("--skip-preflight", metavar="NAME", action="append", default=[],
                        help="skip this preflight check (repeatable; journalled): one you know to be wrong")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if name in named:
            sp = sub.add_parser(name, help=help_text, description=help_text)
            _machine_options(sp, suppress=True)
            importlib.import_module(module).add_arguments(sp)
        elif not named:  # listed by --help and named by a typo's error, never parsed: no imports
            sub.add_parser(name, help=help_text, description=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # fast path: no command module is imported
        print(f"{PROG} {__version__}")
        return exit_codes.OK
    from wizard.commands import Context, CommandError
    from wizard.parsers._text import ParseBudgetExceeded

    ctx = None
    try:
        args = build_parser(args_list).parse_args(args_list)
        ctx = Context(args)
        if args.command:
            module = importlib.import_module(COMMANDS[args.command][0])
            return int(module.run(args, ctx))
        if args.plan:
            name = ("wizard.commands.export_plan" if args.export else
                    "wizard.commands.dry_run" if args.dry_run else "wizard.commands.run_plan")
            return int(importlib.import_module(name).run(args, ctx))
        if args.export:
            raise UsageError("--export needs --plan NAME|FILE (see `rocm-wizard plans`)")
        if args.dry_run:
            raise UsageError("--dry-run needs --plan NAME|FILE (see `rocm-wizard plans`)")
        return int(importlib.import_module("wizard.commands.tui").run(args, ctx))
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exit_codes.USAGE
    except CommandError as exc:
        for line in exc.message.splitlines() or [""]:
            print(f"{PROG}: {line}", file=sys.stderr)
        return exc.code
    except ParseBudgetExceeded as exc:  # a reader past its time budget (wizard.parsers._text)
        print(f"{PROG}: {exc}", file=sys.stderr)
        return exit_codes.USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return exit_codes.OK
    except Exception as exc:  # noqa: BLE001 - a bug must still end in one line, not a traceback
        if os.environ.get("ROCM_WIZARD_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {exc} "
              "(ROCM_WIZARD_DEBUG=1 shows the traceback)", file=sys.stderr)
        return exit_codes.FAILURE
    finally:
        if ctx is not None:
            ctx.close()


# Commands that only read and print: their process skips the final garbage collection (see console()).
_READERS = frozenset({"detect", "diagnose", "plans"})


def console() -> int:
    """The ``rocm-wizard`` program: ``main`` in a process that ends right after it.

    A command that only reads and prints runs without the cyclic garbage collector, and every object it
    made is then handed to ``gc.freeze()``: the interpreter's last collection would otherwise walk all of
    them just before the process exits (together ~11 ms of a 70 ms ``detect --json``; ``python
    benchmarks/detect_speed.py``). Output is flushed as usual; commands that write files or run things
    keep the collector and end the normal way.
    """
    import gc

    reader = next((a for a in sys.argv[1:] if a in COMMANDS), None) in _READERS
    if reader:
        gc.disable()  # short-lived and acyclic enough: collections mid-run only cost time
    code = main()
    if reader:
        gc.freeze()
    return code


if __name__ == "__main__":
    raise SystemExit(console())
