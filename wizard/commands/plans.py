"""`rocm-wizard plans [--json]`: every shipped plan, whether it fits this machine, and which one to take.

JSON: ``{"plans": [{"name", "title", "applicable", "reasons", "target", "recommended", "notes"}]}``: ``notes`` says
what is neither a reason for nor against the plan (an applicable plan the machine is already at the end of).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from wizard import exit_codes

if TYPE_CHECKING:
    from wizard.commands import Context


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from wizard.commands.options import add_venv_option

    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_venv_option(parser, suppress=True)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands import CommandError
    from wizard.planner import PlanError

    try:
        choices = ctx.choices()
    except PlanError as exc:
        raise CommandError(exc.message, exit_codes.USAGE) from None
    rows: list[dict[str, Any]] = [{"name": c.plan.name, "title": c.plan.title, "applicable": c.applicable, "reasons": list(c.reasons),
             "target": {k: v for k, v in c.target.items()}, "recommended": c.recommended, "notes": list(c.notes)}
            for c in choices]
    if args.json:
        json.dump({"plans": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Plans for this machine", show_lines=True)
    for col in ("plan", "fits", "target", "why / why not"):
        table.add_column(col, overflow="fold")
    for r in rows:
        fits = (Text("recommended", "bold green") if r["recommended"] else
                Text("yes") if r["applicable"] else Text("no", "red"))
        target = ", ".join(f"{k} {v}" for k, v in r["target"].items() if k not in ("index_url",))
        # literal text: a path or a plan file's title is never rich markup
        why = "\n".join([*r["reasons"], *r["notes"]]) or "fits"
        table.add_row(Text(f"{r['name']}\n{r['title']}"), fits, Text(target), Text(why))
    from wizard.render import console

    console().print(table)
    return exit_codes.OK
