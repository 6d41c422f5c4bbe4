"""Ansible notification callback for rocm-wizard fleets: every result as a JSON line in the file named by
ROCM_WIZARD_FLEET_EVENTS, which wizard.fleet reads back for its tables and report. It needs no enabling and prints
nothing, so the operator's own stdout callback stays (the wizard's one-line-per-task progress is the stdout
callback ``rocm_wizard_progress``, used when asked: ``--progress``). A task tagged ``rocm_wizard_capture`` has its
whole stdout recorded too (each item's for a loop): the controller writes what a host answered itself, with no
module run on the controller per host."""

from __future__ import annotations

DOCUMENTATION = """
    name: rocm_wizard_events
    type: notification
    short_description: a JSON-lines record of every result for rocm-wizard fleet
    description:
        - Writes each result to $ROCM_WIZARD_FLEET_EVENTS (nothing when it is unset).
    author: rocm-wizard
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


def text(result):
    r = result._result
    for key in ("stderr", "msg", "stdout"):  # a failed command's own words before Ansible's "non-zero return code"
        v = r.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "rocm_wizard_events"
    CALLBACK_NEEDS_ENABLED = False

    def __init__(self):
        super().__init__()
        path = os.environ.get("ROCM_WIZARD_FLEET_EVENTS")
        self._out = open(path, "a", encoding="utf-8") if path else None

    def _record(self, host, status, task, message="", rc=None, capture=None):
        if self._out is None:
            return
        doc = {"t": round(time.time(), 3), "host": host, "status": status, "task": task,
               "message": message[-2000:], "rc": rc}
        if capture is not None:
            doc["capture"] = capture
        self._out.write(json.dumps(doc) + "\n")
        self._out.flush()

    def _result(self, result, status):
        rc = result._result.get("rc")
        if status == "skipped":  # which condition skipped it: a finished step, or another group's role
            message = str(result._result.get("false_condition") or "")
        else:
            message = text(result) if status in ("failed", "unreachable") else ""
        capture = None
        if status != "skipped" and "rocm_wizard_capture" in (result._task.tags or []):
            items = result._result.get("results")
            if isinstance(items, list):
                capture = {"items": [{"item": i.get("item"), "rc": i.get("rc"), "stdout": i.get("stdout")}
                                     for i in items if isinstance(i, dict) and not i.get("skipped")]}
            else:  # a command's stdout, or what a debug task says (msg)
                out = result._result.get("stdout")
                capture = {"stdout": out if out is not None else result._result.get("msg")}
        self._record(result._host.get_name(), status, result._task.get_name(), message,
                     rc if isinstance(rc, int) else None, capture)

    def v2_runner_on_ok(self, result):
        self._result(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_unreachable(self, result):
        self._result(result, "unreachable")

    def v2_runner_on_skipped(self, result):
        self._result(result, "skipped")

    def v2_playbook_on_stats(self, stats):
        for host in sorted(stats.processed):
            self._record(host, "recap", "recap", json.dumps(stats.summarize(host)))
