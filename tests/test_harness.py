"""The suite's own harness (tests/conftest.py) does what it promises: each check runs pytest in a subprocess,
on a module written to a temp dir (or on a real test with a fault injected) and looks at what pytest did."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runner_helpers import default_signals

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
INI = """[pytest]
markers =
    unit: u
    integration: i
    system: s
    smoke: the default run's system tests
    realroot: r
"""


def pytest_on(tmp_path: Path, module: str, *args: str, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` on ``module`` (written to tmp_path) with the suite's conftest as a plugin."""
    (tmp_path / "pytest.ini").write_text(INI)
    (tmp_path / "test_it.py").write_text(textwrap.dedent(module))
    e = {k: v for k, v in os.environ.items() if k not in ("ROCM_WIZARD_REALROOT_ALL", "ROCM_WIZARD_FLEET_ALL",
                                                          "PYTEST_ADDOPTS")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), "-rfs",
                           str(tmp_path / "test_it.py"), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout, env=e,
                          stdin=subprocess.DEVNULL, preexec_fn=default_signals)


def test_an_unmarked_or_doubly_marked_test_stops_the_collection(tmp_path: Path) -> None:
    res = pytest_on(tmp_path, """
        import pytest

        def test_unmarked():
            pass

        @pytest.mark.unit
        @pytest.mark.system
        def test_twice():
            pass

        @pytest.mark.unit
        def test_fine():
            pass
    """)
    assert res.returncode == pytest.ExitCode.USAGE_ERROR, res.stdout + res.stderr
    err = res.stderr
    assert "2 test(s) without exactly one tier marker" in err, err
    assert "test_it.py::test_unmarked: no tier" in err and "test_it.py::test_twice: tiers system and unit" in err
    assert "test_fine" not in err


def test_a_module_tier_line_is_accepted(tmp_path: Path) -> None:
    res = pytest_on(tmp_path, """
        import pytest

        pytestmark = pytest.mark.unit

        def test_one():
            pass

        @pytest.mark.parametrize("x", [1, 2])
        def test_two(x):
            assert x
    """)
    assert res.returncode == 0 and "3 passed" in res.stdout, res.stdout + res.stderr


SYSTEM_MODULE = """
    import pytest

    pytestmark = pytest.mark.system

    def test_slow():
        pass

    @pytest.mark.smoke
    def test_smoke():
        pass
"""


@pytest.mark.parametrize("args,env,passed,skipped", [
    ((), {}, 1, 1),
    (("-m", "system"), {}, 2, 0),
    ((), {"ROCM_WIZARD_REALROOT_ALL": "1"}, 2, 0),
    ((), {"ROCM_WIZARD_FLEET_ALL": "1"}, 2, 0),
], ids=["default-runs-the-smoke", "m-system", "realroot-switch", "fleet-switch"])
def test_the_default_run_keeps_only_the_system_smoke(tmp_path: Path, args: tuple[str, ...], env: dict[str, str],
                                                     passed: int, skipped: int) -> None:
    res = pytest_on(tmp_path, SYSTEM_MODULE, *args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{passed} passed" in res.stdout and (f"{skipped} skipped" in res.stdout) == bool(skipped), res.stdout
    if skipped:
        assert "system tier: python -m pytest -m system" in res.stdout


def test_m_system_sets_the_old_switches_for_modules_that_read_them(tmp_path: Path) -> None:
    res = pytest_on(tmp_path, """
        import os
        import pytest

        pytestmark = [pytest.mark.system, pytest.mark.skipif(os.environ.get("ROCM_WIZARD_REALROOT_ALL") != "1",
                                                             reason="switch off")]

        def test_runs():
            assert os.environ["ROCM_WIZARD_FLEET_ALL"] == "1"
    """, "-m", "system")
    assert res.returncode == 0 and "1 passed" in res.stdout, res.stdout + res.stderr


def test_a_session_fixture_is_built_outside_the_tests_timeout(tmp_path: Path) -> None:
    """A session fixture slower than the test's timeout does not time the test out, nor does a session
    fixture's factory that builds under ``outside_timeout()``; the same wait in the test itself does (so the
    timeout is really on)."""
    res = pytest_on(tmp_path, """
        import time
        import pytest

        pytestmark = pytest.mark.unit

        @pytest.fixture(scope="session")
        def built_once():
            time.sleep(3)
            return 1

        @pytest.mark.timeout(1)
        def test_uses_it(built_once):
            assert built_once == 1

        @pytest.fixture(scope="session")
        def lazily(outside_timeout):
            def get():
                with outside_timeout():  # a factory that builds when a test first asks
                    time.sleep(3)
                return 2
            return get

        @pytest.mark.timeout(1)
        def test_builds_lazily(lazily):
            assert lazily() == 2

        @pytest.mark.timeout(1)
        def test_waits_itself():
            time.sleep(3)
    """)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 failed, 2 passed" in res.stdout and "Failed: Timeout (>1.0s)" in res.stdout, res.stdout
    assert "FAILED" in res.stdout and "test_it.py::test_waits_itself" in res.stdout.split("short test summary")[1]


def test_a_sigint_caught_by_the_wizards_own_handler_stops_the_suite(tmp_path: Path) -> None:
    """A run's stop handler (wizard.runner.signals) takes the SIGINT, as it must for the code under test;
    the suite still stops after that test, and the next one never runs."""
    after = tmp_path / "the-next-test-ran"
    res = pytest_on(tmp_path, f"""
        import asyncio
        import os
        import signal
        import pytest
        from wizard.runner.signals import stop_on_signals

        pytestmark = pytest.mark.unit

        def test_asyncio_still_puts_the_default_handler_back():
            asyncio.run(asyncio.sleep(0))  # installs its own SIGINT handler, then restores the default
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

        def test_interrupted():
            with stop_on_signals(None) as stop:
                os.kill(os.getpid(), signal.SIGINT)
                assert stop.wait(30) and stop.reason == "interrupted by SIGINT"

        def test_next():
            open({str(after)!r}, "w").close()
    """)
    assert res.returncode == pytest.ExitCode.INTERRUPTED, res.stdout + res.stderr
    assert "KeyboardInterrupt" in res.stdout and "2 passed" in res.stdout and not after.exists(), res.stdout


def test_an_internal_error_fails_the_fuzzed_cli_test(tmp_path: Path) -> None:
    """``1 / 0`` injected into detect: tests/test_cli.py::test_fuzzed_arguments_never_traceback fails on it
    (the harness sets ROCM_WIZARD_DEBUG, so cli.main re-raises instead of printing "internal error", exit 1)."""
    (tmp_path / "fault_in_detect.py").write_text(
        "import wizard.commands.detect as detect\n\n\n"
        "def run(args, ctx):\n    return 1 / 0\n\n\ndetect.run = run\n")
    e = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    e["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(REPO)])
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "fault_in_detect", "-p", "no:cacheprovider", "-q",
                          "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"),
                          f"{REPO}/tests/test_cli.py::test_fuzzed_arguments_never_traceback"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=e, stdin=subprocess.DEVNULL)
    assert res.returncode == pytest.ExitCode.TESTS_FAILED, res.stdout + res.stderr
    assert "ZeroDivisionError" in res.stdout and "1 failed" in res.stdout, res.stdout[-3000:]
