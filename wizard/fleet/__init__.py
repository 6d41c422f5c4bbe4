"""Fleets through Ansible: detection, plans resolved per host, runs and verification of many machines,
exported as playbooks and run by ``ansible-playbook`` (never a home-made ssh fan-out).

Ansible is optional (``pip install 'rocm-wizard[fleet]'``): only the ``fleet`` commands need it, and
they find its programs beside the running interpreter or on PATH; the export (``--plan NAME --export
ansible DIR``) writes text and needs none. Only ``wizard/fleet/plugins/`` (loaded by ansible-playbook)
imports ansible.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

MISSING = ("Ansible is not installed: pip install 'rocm-wizard[fleet]' (ansible-core) into the wizard's "
           "environment, or put ansible-playbook on PATH")
PLUGINS = Path(__file__).resolve().parent / "plugins"


class FleetError(Exception):
    """A fleet command cannot go on (one line)."""


def ansible_program(name: str = "ansible-playbook") -> str:
    """The path of an Ansible program: beside this interpreter (the wizard's venv) first, then PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which(name)
    if found is None:
        raise FleetError(MISSING)
    return found
