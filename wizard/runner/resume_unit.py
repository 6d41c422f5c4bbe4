"""The boot-time resume: ``rocm-wizard-resume.service``, its trigger file and the login notice.

The unit is a one-shot that runs only while the trigger file exists and removes it (ExecStartPre)
before it acts, so it can never loop: a later reboot step writes a new trigger only after real
progress. Output goes to the systemd journal; the run itself logs into the state dir as always.
The login notice (/etc/profile.d/rocm-wizard.sh) prints one line while the trigger exists.
"""

from __future__ import annotations

import shlex
import shutil
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


def _systemd_quote(arg: str) -> str:
    arg = arg.replace("%", "%%").replace("$", "$$")
    if arg and not any(c in arg for c in ' \t"\'\\;'):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unit_text(exec_argv: Sequence[str], trigger: Path, *, user: str | None = None) -> str:
    rm = shutil.which("rm") or "/bin/rm"
    lines = [
        "# Written by rocm-wizard before a reboot step; removed when the run finishes.",
        "[Unit]",
        "Description=rocm-wizard: continue the GPU stack migration after the reboot",
        "Wants=network-online.target",
        "After=network-online.target",
        f"ConditionPathExists={_systemd_quote(str(trigger))}",
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
