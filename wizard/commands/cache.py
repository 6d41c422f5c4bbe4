"""`rocm-wizard cache [show] [--json]` and `rocm-wizard cache prune --all | --older-than DAYS`.

The wheelhouse plans download into (wizard/downloads/wheelhouse.py: ROCM_WIZARD_CACHE_DIR, root's
/var/cache/rocm-wizard, else $XDG_CACHE_HOME/rocm-wizard): its files, their sizes and the total, and
``.part`` files an interrupted download left (the next run continues them). ``prune --older-than DAYS``
removes the files no plan used for that many days (a download that finds a file in place marks it used).
JSON: ``{"wheelhouse", "files": [{"name", "size", "partial", "mtime"}], "total"}``; prune adds ``"removed"``.
"""

from __future__ import annotations

import argparse
import json

from wizard import exit_codes
from wizard.commands import CommandError, Context


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from wizard.commands.options import whole_number

    parser.add_argument("action", nargs="?", choices=("show", "prune"), default="show",
                        help="show (default) or prune the wheelhouse")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--all", action="store_true", help="prune: remove every file")
    how.add_argument("--older-than", metavar="DAYS", type=whole_number("number of days", 0, 36500, " days"),
                     help="prune: remove the files not used for DAYS days")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.downloads.fetch import human
    from wizard.downloads.wheelhouse import contents, prune, wheelhouse_dir

    wh = wheelhouse_dir()
    removed = None
    if args.action == "prune":
        if not args.all and args.older_than is None:
            raise CommandError("error: cache prune needs --all or --older-than DAYS", exit_codes.USAGE)
        try:
            removed = prune(wh, older_than_days=None if args.all else args.older_than)
        except OSError as exc:
            raise CommandError(f"error: cannot prune {wh}: {exc.strerror or exc}", exit_codes.FAILURE) from None
    elif args.all or args.older_than is not None:
        raise CommandError("error: --all and --older-than go with `cache prune`", exit_codes.USAGE)
    files = contents(wh)
    total = sum(f.size for f in files)
    if args.json:
        doc = {"wheelhouse": str(wh), "files": [{"name": f.name, "size": f.size, "partial": f.partial,
                                                 "mtime": f.mtime} for f in files], "total": total}
        if removed is not None:
            doc["removed"] = [f.name for f in removed]
        print(json.dumps(doc, indent=1))
        return exit_codes.OK
    if removed is not None:
        print(f"removed {len(removed)} file(s), {human(sum(f.size for f in removed))}, from {wh}")
    if not files:
        print(f"{wh}: empty" if wh.is_dir() else f"{wh}: no wheelhouse yet (nothing was downloaded)")
        return exit_codes.OK
    width = max(len(f.name) for f in files)
    for f in files:
        print(f"{f.name:<{width}}  {human(f.size):>10}{'  (partial: the next run continues it)' if f.partial else ''}")
    print(f"{len(files)} file(s), {human(total)} in {wh}")
    return exit_codes.OK
