"""rocm-wizard detect: what is on this machine (a table, or --json)."""

from __future__ import annotations

import argparse
import json
import sys

from wizard import exit_codes

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from rich.table import Table

    from wizard.mirror.config import Mirror
    from wizard.model import Facts


def add_arguments(p: argparse.ArgumentParser) -> None:
    from wizard.commands._paste import add_argument

    p.add_argument("--json", action="store_true", help="print the facts as JSON (schema 1)")
    p.add_argument("--evidence", action="store_true", help="show the file or command line behind each fact")
    add_argument(p)


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands._paste import facts_for
    from wizard.model import hide_passwords

    facts = facts_for(args, ctx)
    # a rehearsal machine (--sandbox) may carry its own mirror; the live machine is never opened for it (detect
    # stays a read: no runner, no executor)
    mirrors = (ctx.mirrors if ctx.sandbox else ctx.site_mirrors).origins_in_force()
    if args.json:
        from wizard.facts_json import facts_to_json

        doc = facts_to_json(facts)
        # the site's mirrors in force (mirrors.toml, --mirror): every URL of the origin goes to the mirror
        doc["mirrors"] = [{"origin": m.origin, "url": hide_passwords(m.url), "source": m.source,
                           "key_fingerprint": m.key_fingerprint}
                          for m in mirrors]
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK

    from wizard.render import console as cli_console
    from wizard.render import facts_renderables

    console = cli_console()
    for item in facts_renderables(facts, evidence=args.evidence):
        console.print(item)
    if facts.texts and (args.paste or args.evidence):
        console.print(_texts_table(facts))
    if mirrors:
        console.print(_mirrors_table(mirrors))
    return exit_codes.OK


def _mirrors_table(mirrors: tuple[Mirror, ...]) -> Table:
    """The site's mirrors in force: where each origin's URLs go, and who said so."""
    from rich.table import Table
    from rich.text import Text

    from wizard.model import hide_passwords

    table = Table(title="Mirrors in force (every URL of the origin goes to the mirror)", title_justify="left")
    for col in ("origin", "mirror", "signing key", "from"):
        table.add_column(col)
    for m in mirrors:
        key = m.key_fingerprint or ("the origin's own (pinned)" if not m.is_registry else "-")
        table.add_row(*(Text(c) for c in (m.origin, hide_passwords(m.url), key, m.source)))
    return table


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
