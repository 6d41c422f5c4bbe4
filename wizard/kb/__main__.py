"""``python -m wizard.kb check [DIR]``: validate every knowledge file, one line per problem.
``python -m wizard.kb ingest [DIR]``: regenerate the derived tables from the upstream snapshots."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from . import KB_DIR, KnowledgeBase


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, never the usage block
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m wizard.kb", description="the knowledge base's own tools")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, what in (("check", "validate every knowledge file (one line per problem; exit 1 if any)"),
                       ("ingest", "regenerate the derived tables from the upstream snapshots (upstream/)")):
        a = sub.add_parser(name, help=what, description=what)
        a.add_argument("directory", nargs="?", default=str(KB_DIR), metavar="DIRECTORY",
                       help="a knowledge-base directory (default: the wizard's own)")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # --help (0) or bad usage (2, argparse's one line on stderr)
        return int(exc.code or 0)
    kb = KnowledgeBase(args.directory)
    if args.action == "ingest":
        from .ingest import IngestError, ingest

        try:
            changed = ingest(kb.directory)
        except (IngestError, OSError) as exc:
            print(f"ingest: {exc}", file=sys.stderr)
            return 1
        print(f"derived tables rewritten: {', '.join(changed)}" if changed else "derived tables are up to date")
        return 0
    problems = kb.problems()
    for line in problems:
        print(line)
    if problems:
        return 1
    print(kb.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
