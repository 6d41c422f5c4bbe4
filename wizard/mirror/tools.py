"""What building the rehearsal mirror needs on the host. Standard library only: the TUI's first screen asks
(whether a real-root rehearsal is offered) without importing the builder and the knowledge base."""

from __future__ import annotations

import shutil

TOOLS = {"dpkg-deb": "dpkg-dev", "apt-ftparchive": "apt-utils", "gpg": "gnupg", "gpgv": "gpgv"}


def missing_tools() -> str | None:
    """None when the host can build the mirror; else one line saying what to install."""
    gone = [f"{tool} ({pkg})" for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    if gone:
        return f"building the rehearsal mirror needs {', '.join(gone)}: apt-get install them (.ci/run does)"
    return None
