"""rocm-wizard diagnose: what is wrong on this machine (and with this error text)."""

from __future__ import annotations

import argparse
import json
import sys

from wizard import exit_codes


def add_arguments(p: argparse.ArgumentParser) -> None:
    from wizard.commands._paste import add_argument

    p.add_argument("--error-file", metavar="FILE", help="an error text or traceback to explain ('-' for stdin)")
    p.add_argument("--json", action="store_true", help='print {"findings": [...]} as JSON')
    add_argument(p)


def _read_error(path: str | None) -> str | None:
    from wizard.commands import usage_error

    if path is None:
        return None
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, "rb") as fh:
            return fh.read(4 << 20).decode("utf-8", errors="replace")
    except OSError as exc:
        raise usage_error(f"--error-file {path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands import usage_error
    from wizard.commands._paste import facts_for

    if args.paste == "-" and args.error_file == "-":
        raise usage_error("--paste - and --error-file - both read stdin; give one of them a file")
    error_text = _read_error(args.error_file)
    from wizard.diagnose import diagnose

    findings = diagnose(facts_for(args, ctx), error_text)
    if args.json:
        json.dump({"findings": [f.to_json() for f in findings]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK

    from wizard.render import console as cli_console
    from wizard.render import findings_renderables

    console = cli_console()
    for item in findings_renderables(findings):
        console.print(item)
    return exit_codes.OK
