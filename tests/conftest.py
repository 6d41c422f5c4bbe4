"""The suite's harness: tiers, what a plain ``python -m pytest`` runs, failures that surface, Ctrl-C.

* **Tiers.** Every test is exactly one of ``unit``, ``integration``, ``system`` (a module's
  ``pytestmark = pytest.mark.unit``, or a mark per test where a module mixes tiers). An unmarked or doubly
  marked test stops the collection, naming it.
* **What runs.** Without ``-m``, ``python -m pytest`` runs the unit and integration tiers plus the system
  smoke (tests also marked ``smoke``: one real-root plan to the reboot and back, one fleet sandbox run, one
  tmux walk); the other system tests are skipped, saying how to run them. ``-m EXPR`` selects by markers
  alone (``-m system``: the whole system tier). ROCM_WIZARD_REALROOT_ALL=1 and ROCM_WIZARD_FLEET_ALL=1 are
  kept as aliases: either one lets every system test run beside the rest, and an ``-m`` naming the system
  tier (or its kinds ``realroot``, ``fleet``, ``e2e``) sets both for the modules that read them.
* **Built once, outside any timeout.** A session-, package- or module-scoped fixture (the CPU-torch venv,
  the cached Debian base, the rehearsal mirror, a fleet of sandboxes) is built with the requesting test's
  timeout paused; the test gets its whole budget after it. A session fixture that builds lazily, when a test
  calls it (a seeded real root per profile), wraps the build in ``outside_timeout()``.
* **Failures surface.** ROCM_WIZARD_DEBUG=1 for the session (and every subprocess that inherits the
  environment): ``cli.main`` re-raises what it would report as "internal error", so a bug fails the test
  that hit it instead of passing as exit 1.
* **Ctrl-C stops the suite.** A SIGINT caught by a handler the wizard installs in-process (a run's stop
  request, the sudo prompt's) still reaches the code under test, and the suite stops after that test.
* **A CPU torch** for the suites that verify for real (``torch_python``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from contextlib import contextmanager
from types import FrameType
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

import pytest

TORCH_PIN = "torch==2.13.0"  # the CPU build on this machine's disk; never let pip pull a CUDA build
TIERS = ("unit", "integration", "system")
SWITCHES = ("ROCM_WIZARD_REALROOT_ALL", "ROCM_WIZARD_FLEET_ALL")  # aliases of -m system, kept from before tiers
SYSTEM_WORDS = re.compile(r"\b(system|realroot|fleet|e2e)\b")
ONCE_SCOPES = ("session", "package", "module")


# ------------------------------------------------------------------------------------------------ tiers

def tier_problems(items: list[pytest.Item]) -> list[str]:
    """One line per test without exactly one tier marker."""
    out = []
    for item in items:
        tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS})
        if len(tiers) != 1:
            out.append(f"{item.nodeid}: {'no tier' if not tiers else 'tiers ' + ' and '.join(tiers)}")
    return out


def every_system_test(config: pytest.Config) -> bool:
    """True where nothing of the system tier is skipped by default: an ``-m`` expression picks, or a switch."""
    return bool(config.getoption("markexpr", "")) or any(os.environ.get(s) == "1" for s in SWITCHES)


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("ROCM_WIZARD_DEBUG", "1")
    # plans of made-up machines are not pinned to files (no index is reached); tests/test_downloads.py turns it on
    os.environ.setdefault("ROCM_WIZARD_NO_DOWNLOAD_PINS", "1")
    if SYSTEM_WORDS.search(config.getoption("markexpr", "") or ""):
        for s in SWITCHES:
            os.environ.setdefault(s, "1")
    _forward_sigint()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = tier_problems(items)
    if problems:
        shown = "\n  ".join(problems[:30]) + (f"\n  ... and {len(problems) - 30} more" if len(problems) > 30 else "")
        raise pytest.UsageError(f"{len(problems)} test(s) without exactly one tier marker (unit, integration, "
                                f"system; tests/conftest.py):\n  {shown}")
    if every_system_test(config):
        return
    skip = pytest.mark.skip(reason="system tier: python -m pytest -m system (the default run keeps its smoke)")
    for item in items:
        if item.get_closest_marker("system") is not None and item.get_closest_marker("smoke") is None:
            item.add_marker(skip)


# --------------------------------------------------------------------- built once, outside any timeout

_running: list[pytest.Item] = []
_once_depth = [0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    _running.append(item)
    yield
    _running.pop()


@contextmanager
def _paused_timeout() -> Iterator[None]:
    """The running test's timeout paused meanwhile, and restarted whole after (nested uses: the outermost)."""
    item = _running[-1] if _running else None
    paused = (item is not None and _once_depth[0] == 0 and item.config.pluginmanager.hasplugin("timeout")
              and hasattr(item, "cancel_timeout"))
    if paused:
        item.config.hook.pytest_timeout_cancel_timer(item=item)
    _once_depth[0] += 1
    try:
        yield
    finally:
        _once_depth[0] -= 1
        if paused and item is not None:
            import pytest_timeout

            settings = pytest_timeout._get_item_settings(item)  # the marker's, else the ini's
            if settings.timeout and not settings.func_only:
                item.config.hook.pytest_timeout_set_timer(item=item, settings=settings)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Iterator[None]:
    if fixturedef.scope not in ONCE_SCOPES:
        yield
        return
    with _paused_timeout():
        yield


@pytest.fixture(scope="session")
def outside_timeout() -> Callable[[], ContextManager[None]]:
    """For a session fixture that builds lazily (a factory called from tests): ``with outside_timeout():``
    around the build keeps it out of the calling test's timeout."""
    return _paused_timeout


# ---------------------------------------------------------------------------------- Ctrl-C stops the suite

_sigint_seen = [False]


def _forward_sigint() -> None:
    """Wrap ``signal.signal`` so that a SIGINT handler installed by code under test also marks the session
    interrupted; :func:`_stop_after_an_interrupt` then ends the suite after the test. The wrapping is
    invisible: ``signal.signal`` and ``signal.getsignal`` return the handler that was installed (asyncio
    compares them to restore its own)."""
    real_signal, real_getsignal = signal.signal, signal.getsignal
    if getattr(real_signal, "_rocm_wizard_forwards", False):
        return
    inner_of: dict[Any, Any] = {}

    def unwrap(handler: Any) -> Any:
        return inner_of.get(handler, handler)

    def install(signum: int, handler: Any) -> Any:
        if signum == signal.SIGINT and callable(handler) and handler is not signal.default_int_handler:
            inner: Callable[[int, FrameType | None], Any] = handler

            def forwarding(s: int, frame: FrameType | None) -> Any:
                _sigint_seen[0] = True
                return inner(s, frame)

            inner_of[forwarding] = inner
            handler = forwarding
        return unwrap(real_signal(signum, handler))

    def getsignal(signum: int) -> Any:
        return unwrap(real_getsignal(signum))

    install._rocm_wizard_forwards = True  # type: ignore[attr-defined]
    signal.signal = install  # type: ignore[assignment]
    signal.getsignal = getsignal  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _stop_after_an_interrupt() -> Iterator[None]:
    yield
    if _sigint_seen[0]:
        raise KeyboardInterrupt("SIGINT during the test (caught by a handler of the code under test)")


@pytest.fixture
def isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No state dir of this machine's: the wizard's state and XDG dirs under the test's tmp_path (a test file takes it
    for all its tests: ``pytestmark = [..., pytest.mark.usefixtures("isolated_state")]``)."""
    monkeypatch.delenv("ROCM_WIZARD_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))


# ------------------------------------------------------------------------------------------- CPU torch

@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    given = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON")
    if given:
        return given
    venv = tmp_path_factory.mktemp("torch-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    py = str(venv / "bin" / "python")
    out = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCH_PIN],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        pytest.fail(f"pip install {TORCH_PIN} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    probe = subprocess.run([py, "-c", "import torch; print(torch.version.cuda, torch.version.hip)"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == ["None", "None"], f"not a CPU torch: {probe.stdout} {probe.stderr[-500:]}"
    return py
