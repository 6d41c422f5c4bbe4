"""``python -m wizard.downloads fetch ...``: see :mod:`wizard.downloads.fetch`."""

from __future__ import annotations

import sys

from wizard.downloads.fetch import main

if __name__ == "__main__":
    if sys.argv[1:2] != ["fetch"]:
        sys.stderr.write("usage: python -m wizard.downloads fetch --dest DIR [--requirements FILE] FILES_JSON\n")
        sys.exit(2)
    sys.exit(main(sys.argv[2:]))
