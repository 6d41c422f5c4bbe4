"""``python -m wizard.kb check [DIR]``: validate every knowledge file, one line per problem.
``python -m wizard.kb ingest [DIR]``: regenerate the derived tables from the upstream snapshots."""

from __future__ import annotations

import sys

from . import KB_DIR, KnowledgeBase

USAGE = "usage: python -m wizard.kb check|ingest [DIRECTORY]"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("check", "ingest") or len(args) > 2:
        print(USAGE, file=sys.stderr)
        return 2
    kb = KnowledgeBase(args[1] if len(args) == 2 else KB_DIR)
    if args[0] == "ingest":
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
