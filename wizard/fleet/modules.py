"""Ansible's own modules for the plan actions one of them expresses exactly (the standalone export), so that
``ansible-playbook --check --diff`` reports what each would change and ansible-lint reads what each does.

An action is recognised by the exact argv its step builds (the shapes below are those of ``steps/``); anything
else stays an ``ansible.builtin.command`` with its argv. The action's done-check, become, environment and timeout
are the export's, unchanged: this module only says which module does the action and with which arguments.

==================================================  ===========================================================
action (argv)                                        module
==================================================  ===========================================================
``mkdir -p [-m MODE] -- DIR`` (with a done-check)    ``file: state=directory`` (mode MODE, else 0755: what
                                                     ``mkdir -p`` makes under the usual umask 022; directories it
                                                     creates on the way get the same mode)
``chmod [-R] MODE -- PATH``                          ``file: mode`` (``-R``: ``recurse`` on the directory)
``rm -f|-rf -- PATH...``                             ``file: state=absent``, one item per path
``python3 -c WRITE PATH MODE TEXT``                  ``copy: content`` (its directory first, 0755, when absent)
``apt-get -y purge PKG...``                          ``apt: state=absent purge=true``
``apt-get install -y PKG...`` / ``... FILE.deb``     ``apt: state=present`` / ``apt: deb``
``apt-get update``                                   ``apt: update_cache``
``wget -q -O FILE URL`` and the resumable .deb fetch ``get_url`` (``force``: the done-check already said the
                                                     file is missing; no checksum: the knowledge base records
                                                     none for these files)
``usermod -a -G GROUPS USER``                        ``user: groups append``
``wget -q --spider URL`` (the preflight's check)     ``uri: method=HEAD`` (redirects followed, 200 expected)
==================================================  ===========================================================

The apt module needs ``python3-apt`` on the host (Debian and Ubuntu ship it with apt's own tools; a real run
installs it where it is missing, ``--check`` cannot). A task that acts on what an earlier task would have made
(a mode set on the directory made just before, a download into it, the package from a repository the run adds,
the ``.deb`` it downloads, a file in a directory it makes) fails in ``--check``, and so does the apt module
without ``python3-apt``: such tasks (chmod, every download, apt and copy task) carry
``ignore_errors: "{{ ansible_check_mode }}"``: a check run reports them and goes on, a real run stops at them.

The wheelhouse download of a pinned plan stays the dry-run script's bash (wizard/fleet/downloads.py): ``get_url``
cannot resume a multi-gigabyte wheel after a dropped link, which the script's ``wget -c`` does, and the script
checks each file against the sha256 its index published as get_url's checksum would.
"""

from __future__ import annotations

import os
from typing import Any

from wizard import lazy_re
from wizard.model import Action
from wizard.record import record
from wizard.steps._common import WRITE
from wizard.steps.rocm_install import FETCH_DEB

from wizard.fleet.yaml_text import Literal as L, Template

_MODE = lazy_re.compile(r"^[0-7]{3,4}$")
_SYMBOLIC = lazy_re.compile(r"^[ugoa]*[-+=][rwxXst]*$")
_NAME = lazy_re.compile(r"^[a-z0-9][a-z0-9+.:~=-]*$")  # a Debian package name, with =VERSION at most
_URL = lazy_re.compile(r"^https?://\S+$")


@record
class ModuleTask:
    """An action as one module task: ``module`` with ``args``, over ``loop`` when set; ``parent``: a directory
    that must exist first (created 0755 when absent, as the action's own program would); ``check_mode_fails``:
    it depends on what earlier tasks do, so ``--check`` cannot run it."""

    module: str
    args: dict[str, Any]
    loop: tuple[str, ...] = ()
    parent: str | None = None
    check_mode_fails: bool = False


def _mode(text: str) -> str | None:
    if _MODE.match(text):
        return text.rjust(4, "0")
    return text if _SYMBOLIC.match(text) else None


def _path(text: str) -> bool:
    return text.startswith("/") and "\n" not in text


def module_task(a: Action) -> ModuleTask | None:
    """The module that does exactly what ``a`` does, or None: it stays a command."""
    if tuple(a.ok_codes) != (0,) or a.redact:
        return None
    v = list(a.argv)
    n = len(v)
    prog = v[0] if v else ""
    if prog == "mkdir" and a.check is not None:  # the guard runs it only where the directory is missing
        if n == 4 and v[1:3] == ["-p", "--"] and _path(v[3]):
            return ModuleTask("ansible.builtin.file", {"path": L(v[3]), "state": "directory", "mode": "0755"})
        if n == 6 and v[1] == "-p" and v[2] == "-m" and v[4] == "--" and _path(v[5]) and (m := _mode(v[3])):
            return ModuleTask("ansible.builtin.file", {"path": L(v[5]), "state": "directory", "mode": m})
    if prog == "chmod":
        if n == 4 and v[2] == "--" and _path(v[3]) and (m := _mode(v[1])):
            return ModuleTask("ansible.builtin.file", {"path": L(v[3]), "mode": m}, check_mode_fails=True)
        if n == 5 and v[1] == "-R" and v[3] == "--" and _path(v[4]) and (m := _mode(v[2])):
            return ModuleTask("ansible.builtin.file", {"path": L(v[4]), "state": "directory", "recurse": True, "mode": m},
                              check_mode_fails=True)
    if prog == "rm" and n >= 4 and v[1] in ("-f", "-rf") and v[2] == "--" and all(_path(p) for p in v[3:]):
        return ModuleTask("ansible.builtin.file", {"path": Template("{{ item }}"), "state": "absent"}, loop=tuple(L(p) for p in v[3:]))
    if n == 6 and v[1] == "-c" and v[2] == WRITE and _path(v[3]) and (m := _mode(v[4])):
        # in --check its directory may only have been announced (made by an earlier task, or just before it)
        return ModuleTask("ansible.builtin.copy", {"content": L(v[5]), "dest": L(v[3]), "mode": m},
                          parent=os.path.dirname(v[3]) or None, check_mode_fails=True)
    if prog == "apt-get":
        if n >= 4 and v[1:3] == ["-y", "purge"] and all(_NAME.match(p) for p in v[3:]):
            return ModuleTask("ansible.builtin.apt", {"name": [L(p) for p in v[3:]], "state": "absent", "purge": True},
                              check_mode_fails=True)
        if n == 4 and v[1:3] == ["install", "-y"] and _path(v[3]) and v[3].endswith(".deb"):
            return ModuleTask("ansible.builtin.apt", {"deb": L(v[3])}, check_mode_fails=True)
        if n >= 4 and v[1:3] == ["install", "-y"] and all(_NAME.match(p) for p in v[3:]):
            return ModuleTask("ansible.builtin.apt", {"name": [L(p) for p in v[3:]], "state": "present"}, check_mode_fails=True)
        if v == ["apt-get", "update"]:
            return ModuleTask("ansible.builtin.apt", {"update_cache": True}, check_mode_fails=True)
    fetch = (v[3], v[4]) if n == 5 and v[:3] == ["wget", "-q", "-O"] else \
        (v[4], v[5]) if n == 6 and v[:3] == ["sh", "-c", FETCH_DEB] and v[3] == "sh" else None
    if fetch is not None and _path(fetch[0]) and _URL.match(fetch[1]):
        return ModuleTask("ansible.builtin.get_url", {"url": L(fetch[1]), "dest": L(fetch[0]), "mode": "0644",
                                                      "force": True}, check_mode_fails=True)
    if n == 4 and v[:3] == ["wget", "-q", "--spider"] and _URL.match(v[3]):  # the preflight's "it exists"
        return ModuleTask("ansible.builtin.uri", {"url": L(v[3]), "method": "HEAD",
                                                  **({"timeout": int(a.timeout)} if a.timeout else {})})
    if prog == "usermod" and n == 5 and v[1:3] == ["-a", "-G"] and _NAME.match(v[4]) and \
            all(_NAME.match(g) for g in v[3].split(",")):
        return ModuleTask("ansible.builtin.user", {"name": L(v[4]), "groups": [L(g) for g in v[3].split(",")], "append": True})
    return None
