"""The slow fleet tests (marker ``fleet``) run with ``pytest -m fleet tests/fleet`` or
ROCM_WIZARD_FLEET_ALL=1; a plain run keeps the fast ones (export goldens, syntax checks, optional Ansible)."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("ROCM_WIZARD_FLEET_ALL") == "1" or "fleet" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow fleet test: pytest -m fleet tests/fleet (or ROCM_WIZARD_FLEET_ALL=1)")
    for item in items:
        if item.get_closest_marker("fleet") is not None:
            item.add_marker(skip)
