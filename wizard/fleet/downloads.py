"""A pinned pip step's download in the exported role: the dry-run script's bash (the host needs no wizard),
throttled across hosts, and fed from the controller's wheelhouse when the playbook is given one.

* ``rocm_wizard_download_throttle`` (default 2): how many hosts download at once (Ansible's ``throttle``);
* ``rocm_wizard_wheelhouse``: a directory on the controller (``rocm-wizard cache`` shows where the controller's
  plans put theirs); each file the plan pins is copied from it first, and the script then fetches only what
  it lacks or what fails its sha256.
"""

from __future__ import annotations

from typing import Any, Sequence

from wizard.downloads.fetch import parse_files_json
from wizard.downloads.shell import script_lines
from wizard.fleet.yaml_text import Literal, Template

THROTTLE = Template("{{ rocm_wizard_download_throttle | default(2) }}")


def fetch_tasks(name: str, argv: Sequence[str], done: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the tasks before the download: the controller's copies, the download task itself)"""
    args = list(argv)
    dest = args[args.index("--dest") + 1]
    files = parse_files_json(args[-1])
    when = ["rocm_wizard_wheelhouse is defined", *([f"{done}.rc != 0"] if done else [])]
    copy = {
        "name": f"{name}: from the controller's wheelhouse (rocm_wizard_wheelhouse), where it has the file",
        "ansible.builtin.copy": {"src": Template("{{ rocm_wizard_wheelhouse }}/{{ item }}"), "dest": Literal(f"{dest}/"),
                                 "mode": "0644"},
        "loop": [Literal(f.filename) for f in files],
        "when": when,
        "failed_when": False,  # a file the controller lacks is downloaded by the next task
        "throttle": THROTTLE,
    }
    task = {"name": name, "ansible.builtin.shell": {
        "cmd": Literal("set -euo pipefail\n" + "\n".join(script_lines(argv))), "executable": "/bin/bash"},
        "throttle": THROTTLE}
    return [copy], task
