"""rocm-wizard detect: what is on this machine (a table, or --json)."""

from __future__ import annotations

import argparse
import json
import sys

from wizard import exit_codes


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the facts as JSON (schema 1)")
    p.add_argument("--evidence", action="store_true", help="show the file or command line behind each fact")


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    facts = ctx.facts
    if args.json:
        from wizard.facts_json import facts_to_json

        json.dump(facts_to_json(facts), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK
    from rich.console import Console

    from wizard.render import facts_renderables

    console = Console()
    for item in facts_renderables(facts, evidence=args.evidence):
        console.print(item)
    return exit_codes.OK
