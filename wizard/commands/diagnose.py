"""rocm-wizard diagnose: what is wrong on this machine (and with this error text)."""

from __future__ import annotations

import argparse
import io
import json
import sys

from wizard import exit_codes


def add_arguments(p: argparse.ArgumentParser) -> None:
    from wizard.commands._paste import add_argument

    p.add_argument("--error-file", metavar="FILE", help="an error text or traceback to explain ('-' for stdin)")
    p.add_argument("--json", action="store_true", help='print {"findings": [...], "to_check": [...]} as JSON')
    add_argument(p)


MAX_ERROR_TEXT = 4 << 20  # bytes of --error-file (a traceback with its log fits many times over)


def _read_error(path: str | None) -> str | None:
    """The error text of --error-file FILE|-; one line (exit 2) when unreadable or over 4 MiB."""
    from wizard.commands import usage_error
    from wizard.inputs import InputError, read_bounded

    if path is None:
        return None
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream without one (tests) is read as text
            data = read_bounded(stdin if stdin is not None else io.BytesIO(sys.stdin.read(MAX_ERROR_TEXT + 1).encode()),
                                MAX_ERROR_TEXT, "--error-file -")
        else:
            with open(path, "rb") as fh:
                data = read_bounded(fh, MAX_ERROR_TEXT, f"--error-file {path}")
    except InputError as exc:
        raise usage_error(str(exc)) from None
    except OSError as exc:
        raise usage_error(f"--error-file {path}: {exc.strerror or exc}") from None
    return data.decode("utf-8", errors="replace")


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands import usage_error
    from wizard.commands._paste import facts_for

    if args.paste == "-" and args.error_file == "-":
        raise usage_error("--paste - and --error-file - both read stdin; give one of them a file")
    error_text = _read_error(args.error_file)
    from wizard.diagnose import diagnose

    from wizard.planner import fitting_fix_plans

    facts = facts_for(args, ctx)
    if not args.paste or ctx.from_:  # a paste alone describes another machine: nothing of this one is read
        facts = ctx.for_diagnosis(facts)
    findings = fitting_fix_plans(diagnose(facts, error_text), facts)  # a fix points only at a plan that fits
    if args.json:
        from wizard.diagnose import causes_and_checks

        causes, checks = causes_and_checks(findings)
        json.dump({"findings": [f.to_json() for f in causes], "to_check": [f.to_json() for f in checks]},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK

    from wizard.render import console as cli_console
    from wizard.render import findings_renderables

    console = cli_console()
    for item in findings_renderables(findings):
        console.print(item)
    return exit_codes.OK
