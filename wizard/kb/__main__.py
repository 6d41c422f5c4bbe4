"""``python -m wizard.kb check [DIR]``: validate every knowledge file, one line per problem."""

from __future__ import annotations

import sys

from . import KB_DIR, KnowledgeBase


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "check" or len(args) > 2:
        print("usage: python -m wizard.kb check [DIRECTORY]", file=sys.stderr)
        return 2
    kb = KnowledgeBase(args[1] if len(args) == 2 else KB_DIR)
    problems = kb.problems()
    for line in problems:
        print(line)
    if problems:
        return 1
    print(kb.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
