"""``rocm-wizard kb check|refresh``: the knowledge base's own consistency, and how it compares with the live sources.

``check`` lists every problem (one line each; exit 1 when there is one). ``refresh`` reads the sources
(``wizard.kb.refresh``), writes a report (Markdown, or JSON with ``--json``) to stdout or ``--report FILE``, and
with ``--write`` adds what the sources show, each entry with the URL it was read from. ``--offline-snapshot DIR``
reads recorded copies instead of the network; ``--mirror URL`` reads ``URL/HOST/PATH`` for every source.
A source that cannot be read ends the command with one line and exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wizard import exit_codes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kb_action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="verify the knowledge base's own consistency",
                           description="verify the knowledge base's own consistency")
    check.add_argument("--kb-dir", metavar="DIR", help="the knowledge files to check (default: the shipped ones)")
    refresh = sub.add_parser("refresh", help="compare the knowledge base with the live sources and report",
                             description="compare the knowledge base with the live sources and write a report")
    refresh.add_argument("--kb-dir", metavar="DIR", help="the knowledge files to compare (default: the shipped ones)")
    where = refresh.add_mutually_exclusive_group()
    where.add_argument("--offline-snapshot", metavar="DIR", help="read recorded copies of the sources from DIR")
    where.add_argument("--mirror", metavar="URL", help="read every source from URL/HOST/PATH (a local mirror)")
    refresh.add_argument("--report", metavar="FILE", help="write the report to FILE instead of stdout")
    refresh.add_argument("--json", action="store_true", help="the report as JSON")
    refresh.add_argument("--write", action="store_true",
                         help="add what the sources show to the knowledge files (new rows only, each with its URL)")


def _kb_dir(args: argparse.Namespace) -> Path:
    from wizard.commands import usage_error
    from wizard.kb import KB_DIR

    d = Path(args.kb_dir) if args.kb_dir else KB_DIR
    if not d.is_dir():
        raise usage_error(f"--kb-dir {d}: not a directory")
    return d


def _check(args: argparse.Namespace) -> int:
    from wizard.kb import KnowledgeBase

    kb = KnowledgeBase(_kb_dir(args))
    problems = kb.problems()
    for line in problems:
        print(line)
    if problems:
        return exit_codes.FAILURE
    print(kb.summary())
    return exit_codes.OK


def _refresh(args: argparse.Namespace) -> int:
    from wizard.commands import CommandError, usage_error
    from wizard.kb import KbError, KnowledgeBase
    from wizard.kb.refresh import apply, refresh
    from wizard.kb.sources import Reader, SourceError

    directory = _kb_dir(args)
    snapshot = None
    if args.offline_snapshot:
        snapshot = Path(args.offline_snapshot)
        if not snapshot.is_dir():
            raise usage_error(f"--offline-snapshot {snapshot}: not a directory")
    reader = Reader(mirror=args.mirror, snapshot=snapshot)
    try:
        report = refresh(KnowledgeBase(directory), reader)
    except SourceError as exc:
        raise CommandError(f"kb refresh: {exc}", exit_codes.FAILURE) from None
    except KbError as exc:
        raise CommandError(f"kb refresh: {exc}", exit_codes.FAILURE) from None
    text = json.dumps(report.to_json(), indent=1) + "\n" if args.json else report.markdown()
    if args.report:
        try:
            Path(args.report).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"kb refresh: cannot write {args.report}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    if args.write:
        try:
            applied = apply(directory, report)
        except (ValueError, OSError) as exc:
            raise CommandError(f"kb refresh --write: nothing written: {exc}") from None
        for line in applied.added:
            print(f"added {line}", file=sys.stderr)
        for line in applied.refused:
            print(f"not added (the knowledge base would fail its check) {line}", file=sys.stderr)
        print(f"kb refresh --write: {len(applied.added)} additions written to {directory}"
              + (f", {len(applied.refused)} left out" if applied.refused else ""), file=sys.stderr)
    return exit_codes.OK


def run(args: argparse.Namespace, ctx: object) -> int:
    if args.kb_action == "check":
        return _check(args)
    return _refresh(args)
