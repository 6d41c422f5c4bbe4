"""Ansible stdout callback for rocm-wizard fleets, used when asked (``fleet run|verify|detect --progress``): one
line per host and task as it happens, ``HOST  STATUS  TASK: message`` (skips left out)."""

from __future__ import annotations

DOCUMENTATION = """
    name: rocm_wizard_progress
    type: stdout
    short_description: one line per host and task for rocm-wizard fleet
    description:
        - Prints one line per host and task result (skipped ones left out), with a failure's last line.
    author: rocm-wizard
"""

import sys

from ansible.plugins.callback import CallbackBase


def _text(result):
    r = result._result
    for key in ("stderr", "msg", "stdout"):
        v = r.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "rocm_wizard_progress"

    def _line(self, result, status):
        first = ""
        if status in ("failed", "unreachable"):
            message = _text(result)
            first = message.splitlines()[-1] if message else ""
        sys.stdout.write(f"{result._host.get_name():<20} {status:<11} {result._task.get_name()}"
                         + (f": {first[:200]}" if first else "") + "\n")
        sys.stdout.flush()

    def v2_runner_on_ok(self, result):
        self._line(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._line(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_unreachable(self, result):
        self._line(result, "unreachable")
