"""Crash consistency with the real dpkg, apt and pip, the CI subset of benchmarks/realroot_crash.py: three seeds
(one kill inside a dpkg of the run, one inside pip, one after a random number of journalled actions), each
``kill -9`` of the whole wizard session in a copy of the real root, then ``resume --yes`` until done; the end
state (dpkg's database, /opt/rocm* version files, venv, apt sources, groups) must equal an uninterrupted
run's. The full set: ``python benchmarks/realroot_crash.py --seeds 30``."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from tests.realroot.helpers import REPO
from wizard.realroot.endstate import end_state

pytestmark = [pytest.mark.system, pytest.mark.realroot]

SEEDS = (0, 1, 2)  # MODES[seed % 3]: dpkg, pip, random


def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("realroot_crash", REPO / "benchmarks" / "realroot_crash.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def reference(cli_template: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory) -> Any:
    bench = benchmark()
    work = tmp_path_factory.mktemp("crash")
    tmpl = cli_template(bench.PLAN[0])
    want = bench.reference(work, tmpl)
    yield bench, work, tmpl, want
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_kill_9_then_resume_reaches_the_uninterrupted_end_state(seed: int, reference: Any,
                                                                timings: dict[str, float]) -> None:
    import time

    bench, work, tmpl, want = reference
    mode = bench.MODES[seed % len(bench.MODES)]
    started = time.monotonic()
    where, resumes = bench.one(work, tmpl, seed, mode)
    timings[f"crash seed {seed} ({mode}): killed {where}; {resumes} resume(s)"] = time.monotonic() - started
    assert where != "after the run ended", f"seed {seed} ({mode}): the run ended before the kill"
    if mode != "random":
        assert where.startswith(f"inside {mode}"), where
    got = end_state(work / f"seed-{seed}")
    assert got == want, {k: (want[k], got[k]) for k in want if want[k] != got[k]}
    shutil.rmtree(work / f"seed-{seed}", ignore_errors=True)
