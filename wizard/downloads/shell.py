"""The download action in the dry-run script: the same files, in bash, with the same guarantees.

Per file: nothing when ``WHEELHOUSE/<name>`` already has the right sha256; else ``wget -c`` into
``<name>.part`` (continued after a kill or a dropped link), ``sha256sum -c`` of it (a mismatch removes
it, names the file and the expected hash, and stops the script before anything is installed), then
the rename. Last, the hashed requirements file the next action installs from.
"""

from __future__ import annotations

import shlex
from typing import Sequence

from wizard.downloads.fetch import parse_files_json, requirements_text

FETCH = ("-m", "wizard.downloads", "fetch")


def is_fetch(argv: Sequence[str]) -> bool:
    return tuple(argv[1:4]) == FETCH


def script_lines(argv: Sequence[str]) -> list[str]:
    """bash lines doing what ``python -m wizard.downloads fetch --dest D --requirements R FILES`` does."""
    args = list(argv[4:])
    dest = args[args.index("--dest") + 1]
    req = args[args.index("--requirements") + 1] if "--requirements" in args else None
    files = parse_files_json(args[-1])
    q = shlex.quote
    out = [f"mkdir -p -- {q(dest)}"]
    for f in files:
        final, part = f"{dest}/{f.filename}", f"{dest}/{f.filename}.part"
        bad = q(f"{f.filename}: sha256 does not match the {f.sha256} the index published; nothing of it is kept")
        out += [f"if ! echo {q(f'{f.sha256}  {final}')} | sha256sum -c --status - 2>/dev/null; then",
                f"  wget -c -q --show-progress -O {q(part)} {q(f.url)}",
                f"  if ! echo {q(f'{f.sha256}  {part}')} | sha256sum -c --status -; then",
                f"    rm -f -- {q(part)}; echo {bad} >&2; exit 1",
                "  fi",
                f"  mv -f -- {q(part)} {q(final)}",
                "fi"]
    if req is not None:
        text = requirements_text(files)
        out.append(f"printf '%s' {q(text)} > {q(req)}")
    return out
