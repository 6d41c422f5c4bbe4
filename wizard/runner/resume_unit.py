"""The boot-time resume: ``rocm-wizard-resume.service``, its trigger file and the login notice.

The unit is a one-shot that runs only while the trigger file exists and removes it (ExecStartPre)
before it acts, so it can never loop: a later reboot step writes a new trigger only after real
progress. Output goes to the systemd journal; the run itself logs into the state dir as always.
The login notice (/etc/profile.d/rocm-wizard.sh) prints one line while the trigger exists.

The unit runs as root at boot, so its ``ExecStart`` must be code only root can change
(:func:`untrusted`): a wizard installed in a user's venv is not, and then no unit is installed (the
login notice says to run ``sudo rocm-wizard resume``). The state dir it acts on is passed on its
command line (``--state-dir``) and kept in its environment (``ROCM_WIZARD_STATE_DIR``); a value with
a newline is never written into it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Sequence

from wizard.model import Action

UNIT_NAME = "rocm-wizard-resume.service"
UNIT_PATH = "/etc/systemd/system/" + UNIT_NAME
NOTICE_PATH = "/etc/profile.d/rocm-wizard.sh"


def wizard_command() -> list[str]:
    exe = shutil.which("rocm-wizard")
    if exe:
        return [exe]
    return [sys.executable, "-m", "wizard"]


def _owned_by_root(path: str, depth: int = 0) -> str | None:
    """Why ``path`` (and every directory above it) is not code only root can change (None: it is)."""
    if depth > 20:
        return f"{path}: too many levels of symbolic links"
    p = os.path.abspath(path)
    chain = [p]
    while True:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    for c in chain:
        try:
            st = os.lstat(c)
        except OSError:
            return f"{c} cannot be read"
        if st.st_uid != 0:
            return f"{c} is owned by uid {st.st_uid}, not root"
        if stat.S_ISLNK(st.st_mode):  # a link's own mode means nothing: its target must be root's too
            why = _owned_by_root(os.path.join(os.path.dirname(c), os.readlink(c)), depth + 1)
            if why:
                return why
        elif st.st_mode & 0o022 and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
            return f"{c} is writable by group or others"
    return None


def _tree_owned_by_root(top: str) -> str | None:
    why = _owned_by_root(top)
    if why:
        return why
    for d, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            st = os.lstat(os.path.join(d, name))
            if st.st_uid != 0 or (st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode)):
                return f"{os.path.join(d, name)} can be changed by a user other than root"
    return None


def untrusted(exec_argv: Sequence[str]) -> str | None:
    """Why the boot-time unit may not run ``exec_argv`` as root (None: it may): its program, the
    interpreter its ``#!`` line names, the wizard package it imports and the interpreter's
    site-packages must all be root's alone. A console script in a user's venv is not."""
    if not exec_argv:
        return "no command"
    import sysconfig

    import wizard

    prog = exec_argv[0]
    if not os.path.isabs(prog):
        return f"{prog} is not an absolute path"
    checks = [prog]
    try:
        with open(prog, "rb") as fh:
            head = fh.readline(4096)
    except OSError:
        return f"{prog} cannot be read"
    if head.startswith(b"#!"):
        words = head[2:].decode("utf-8", "replace").split()
        if words:
            checks.append(words[0])
    checks.append(sysconfig.get_paths()["purelib"])
    for c in checks:
        why = _owned_by_root(c)
        if why:
            return why
    return _tree_owned_by_root(os.path.dirname(os.path.abspath(wizard.__file__)))


def _systemd_quote(arg: str) -> str:
    if any(c in arg for c in "\n\r\0"):
        raise ValueError(f"{arg!r}: a newline or NUL cannot be written into a unit")
    arg = arg.replace("%", "%%").replace("$", "$$")
    if arg and not any(c in arg for c in ' \t"\'\\;'):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _condition_path(path: str) -> str:
    """A path for a non-Exec setting: systemd takes it as written (no quotes, no ``$``), expanding only ``%``
    specifiers; a quoted one is "not absolute" and the condition silently dropped (the unit would run at every
    boot). Leading or trailing white space would be trimmed: refused."""
    if any(c in path for c in "\n\r\0") or path != path.strip() or not path.startswith("/"):
        raise ValueError(f"{path!r}: not a path a unit's condition can hold")
    return path.replace("%", "%%")


def unit_text(exec_argv: Sequence[str], trigger: Path, *, user: str | None = None,
              environment: Sequence[tuple[str, str]] = ()) -> str:
    """The unit (ValueError: an argument or a value holds a newline or NUL)."""
    rm = shutil.which("rm") or "/bin/rm"
    lines = [
        "# Written by rocm-wizard before a reboot step; removed when the run finishes.",
        "[Unit]",
        "Description=rocm-wizard: continue the GPU stack migration after the reboot",
        "Wants=network-online.target",
        "After=network-online.target",
        f"ConditionPathExists={_condition_path(str(trigger))}",
        "",
        "[Service]",
        "Type=oneshot",
        # the trigger goes first: whatever happens next, this unit cannot run twice for one reboot
        f"ExecStartPre={rm} -f {_systemd_quote(str(trigger))}",
        "ExecStart=" + " ".join(_systemd_quote(a) for a in exec_argv),
        "StandardOutput=journal",
        "StandardError=journal",
        "TimeoutStartSec=infinity",
    ]
    for name, value in environment:
        lines.append("Environment=" + _systemd_quote(f"{name}={value}"))
    if user:
        lines.append(f"User={user}")
    lines += ["", "[Install]", "WantedBy=multi-user.target", ""]
    return "\n".join(lines)


def notice_text(trigger: Path, resume_argv: Sequence[str]) -> str:
    cmd = shlex.join(resume_argv)
    return (
        "# Written by rocm-wizard while a migration waits to be resumed; removed when it finishes.\n"
        f"if [ -e {shlex.quote(str(trigger))} ]; then\n"
        f"    echo {shlex.quote(f'rocm-wizard: a GPU stack migration is waiting to continue: run `{cmd}`')} >&2\n"
        "fi\n"
    )


def install_actions(staged_unit: Path | None, staged_notice: Path) -> list[Action]:
    acts = [Action(("install", "-D", "-m", "0644", str(staged_notice), NOTICE_PATH), "login notice", root=True)]
    if staged_unit is not None:
        acts += [
            Action(("install", "-D", "-m", "0644", str(staged_unit), UNIT_PATH), "resume unit", root=True),
            Action(("systemctl", "daemon-reload"), "reload units", root=True),
            Action(("systemctl", "enable", UNIT_NAME), "enable the resume unit", root=True),
        ]
    return acts


def remove_actions(unit_installed: bool) -> list[Action]:
    acts = [Action(("rm", "-f", NOTICE_PATH), "remove the login notice", root=True)]
    if unit_installed:
        acts += [
            Action(("systemctl", "disable", UNIT_NAME), "disable the resume unit", root=True, ok_codes=(0, 1)),
            Action(("rm", "-f", UNIT_PATH), "remove the resume unit", root=True),
            Action(("systemctl", "daemon-reload"), "reload units", root=True),
        ]
    return acts
