"""What a fleet run adds around a plan, the same in the standalone export and in the collection's role:

* retries with back-off on the actions that fetch from the network and may be repeated (apt index updates and
  installs, the ``.deb`` and pip downloads, pip installs): ``rocm_wizard_retries`` (default 3) more tries,
  ``rocm_wizard_retry_delay`` (default 10) seconds apart;
* a read-only preflight that refuses while any process holds ``/dev/kfd`` or a ``/dev/dri/renderD*`` node (a
  job on the GPU: the purge would pull the stack from under it); it runs in check mode too;
* the drain and undrain hooks (``rocm_wizard_drain`` / ``rocm_wizard_undrain``: commands, run before the first
  change and after verify, on ``rocm_wizard_hook_host``, default the host itself).
"""

from __future__ import annotations

import os
from typing import Any

from wizard.downloads.shell import is_fetch
from wizard.model import Action

RETRIES = "rocm_wizard_retries"
DELAY = "rocm_wizard_retry_delay"
DEFAULT_RETRIES = 3
DEFAULT_DELAY = 10

# every process's open files, read as root: a process holding the GPU's compute node or a render node, by pid
GPU_HOLDERS = ("python3", "-c", "\n".join([
    "import os, sys",
    "held = []",
    "for pid in filter(str.isdigit, os.listdir('/proc')):",
    "    try:",
    "        fds = os.listdir(f'/proc/{pid}/fd')",
    "    except OSError:",
    "        continue",
    "    for fd in fds:",
    "        try:",
    "            path = os.readlink(f'/proc/{pid}/fd/{fd}')",
    "        except OSError:",
    "            continue",
    "        if path == '/dev/kfd' or path.startswith('/dev/dri/renderD'):",
    "            try:",
    "                name = open(f'/proc/{pid}/comm', encoding='utf-8', errors='replace').read().strip()",
    "            except OSError:",
    "                name = '?'",
    "            held.append(f'pid {pid} ({name}) holds {path}')",
    "            break",
    "if held:",
    "    sys.exit('the GPU is in use: ' + '; '.join(held[:10]) + (' ...' if len(held) > 10 else '') +",
    "             ': stop or drain its jobs (rocm_wizard_drain), then run again')",
    "print('no process holds /dev/kfd or a render node')",
]))

_APT = {"apt-get", "apt"}
_NET_WORDS = {"update", "install", "download", "--download-only"}


def retryable(a: Action) -> bool:
    """An action that reaches the network and can simply be run again: apt's index updates and installs, the .deb
    download, the wheelhouse fetch, pip installs. Removals, purges and anything not idempotent are never retried."""
    if not a.idempotent or a.destructive:
        return False
    argv = list(a.argv)
    if is_fetch(argv):
        return True
    words = set(argv)
    if os.path.basename(argv[0]) in _APT | {"amdgpu-install"}:
        return bool(words & _NET_WORDS) and not words & {"remove", "purge", "autoremove", "--uninstall"}
    if "pip" in words and "install" in words and "uninstall" not in words:
        return True
    script = argv[2] if len(argv) > 2 and os.path.basename(argv[0]) in ("sh", "bash") and argv[1] == "-c" else ""
    return any(w in script.split() for w in ("wget", "curl"))


def retry_keywords(register: str, ok_codes: tuple[int, ...]) -> dict[str, Any]:
    """A task's retries: until its exit code is accepted (a task check mode skips is done at once)."""
    from wizard.fleet.yaml_text import Template

    return {"retries": Template("{{ %s | default(%d) }}" % (RETRIES, DEFAULT_RETRIES)),
            "delay": Template("{{ %s | default(%d) }}" % (DELAY, DEFAULT_DELAY)),
            "until": f"{register} is skipped or {register}.rc in {list(ok_codes)}"}
