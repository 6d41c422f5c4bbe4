"""Step library (installed as ``wizard.steps``): one module per step kind, kind == module name.

Each module exposes ``KIND`` and ``plan(ctx: StepContext) -> StepPlan`` and may raise
``StepRefused``. Steps never execute anything; they describe actions for the runner.
"""

from __future__ import annotations

import importlib
from types import ModuleType

KINDS = ("backup", "purge", "rocm_install", "secure_boot", "groups", "pip_pin", "env", "docker", "reboot",
         "verify")


def module(kind: str) -> ModuleType:
    if kind not in KINDS:
        raise KeyError(kind)
    return importlib.import_module(f"wizard.steps.{kind}")
