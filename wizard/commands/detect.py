"""rocm-wizard detect: what is on this machine (a table, or --json)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from wizard import exit_codes

if TYPE_CHECKING:
    from rich.table import Table

    from wizard.model import Facts


def add_arguments(p: argparse.ArgumentParser) -> None:
    from wizard.commands._paste import add_argument

    p.add_argument("--json", action="store_true", help="print the facts as JSON (schema 1)")
    p.add_argument("--evidence", action="store_true", help="show the file or command line behind each fact")
    add_argument(p)


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands._paste import facts_for

    facts = facts_for(args, ctx)
    if args.json:
        from wizard.facts_json import facts_to_json

        json.dump(facts_to_json(facts), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK

    from wizard.render import console as cli_console
    from wizard.render import facts_renderables

    console = cli_console()
    for item in facts_renderables(facts, evidence=args.evidence):
        console.print(item)
    if facts.texts and (args.paste or args.evidence):
        console.print(_texts_table(facts))
    return exit_codes.OK


def _texts_table(facts: Facts) -> Table:
    """What was read from where: each text, the lines it spans, which output it is, whose post."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Read from", title_justify="left")
    for col in ("source", "lines", "read as", "command", "whose"):
        table.add_column(col)
    for t in facts.texts:
        last = t.first_line + t.text.count("\n")
        cells = (t.source, f"{t.first_line}-{last}", "prose / log" if t.kind == "text" else t.kind.removesuffix(".txt"),
                 t.command or "", "this machine" if t.own else "another post")
        table.add_row(*(Text(c) for c in cells))  # literal: a file name is never rich markup
    return table
