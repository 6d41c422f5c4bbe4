"""The verification suite, wizard side.

``suite.py`` (beside this file) is the self-contained program that runs in the interpreter under
test; it is never imported here. This package starts it (``launch``), parses its JSON lines
(``results``), asks the diagnoser about every failure (``diagnosis``) and renders the report
(``render``). ``run_verify`` is the one entry point for the command, the TUI and the plans' verify
step (which runs ``command_argv(...)``: ``python -m wizard verify --python <venv python> --json``).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from wizard.verify.launch import (
    DEFAULT_TIMEOUT,
    SUITE_PATH,
    WATCHDOG_SLACK,
    SuiteOptions,
    VerifyUsageError,
    command_argv,
    container_name,
    default_python,
    docker_argv,
    local_argv,
    resolve_python,
    run_suite,
)
from wizard.verify.results import CheckFindings, CheckResult, VerifyReport

__all__ = [
    "DEFAULT_TIMEOUT", "SUITE_PATH", "CheckFindings", "CheckResult", "SuiteOptions", "VerifyReport",
    "VerifyUsageError", "command_argv", "default_python", "docker_argv", "local_argv", "resolve_python",
    "run_verify",
]


def run_verify(
    *,
    python: str | None = None,
    image: str | None = None,
    options: SuiteOptions = SuiteOptions(),
    facts: Any = None,
    kb: Any = None,
    diagnose_text: Callable[..., Any] | None | bool = True,
    on_check: Callable[[CheckResult], None] | None = None,
    env: dict[str, str] | None = None,
    docker: str = "docker",
) -> VerifyReport:
    """Run the suite in `python` (a checked interpreter path) or in `image`, and build the report.

    diagnose_text: True loads ``wizard.diagnose.diagnose_error_text``; a callable is used as is;
    None/False skips diagnosis. kb: the knowledge base for the throughput band (None: not checked).
    """
    from wizard.verify.diagnosis import (
        build_notes,
        diagnose_checks,
        diagnose_notes,
        flag_throughput,
        load_diagnoser,
    )

    name = None
    if image:
        name = container_name()
        argv = docker_argv(image, options, python=python, name=name, environ=env, docker=docker)
    else:
        if not python:
            raise VerifyUsageError("no Python interpreter to verify")
        argv = local_argv(python, options)
    t0 = time.monotonic()
    run = run_suite(argv, watchdog=options.timeout + WATCHDOG_SLACK, on_check=on_check, env=env,
                    docker_name=name, docker=docker)
    checks = flag_throughput(run.checks, kb=kb, facts=facts)
    why_not = None
    if diagnose_text is True:
        fn, why_not = load_diagnoser()
    elif callable(diagnose_text):
        fn = diagnose_text
    else:
        fn, why_not = None, "diagnosis not asked for"
    diagnosis = diagnose_checks(checks, facts=facts, diagnose_text=fn) + diagnose_notes(
        checks, facts=facts, diagnose_text=fn)
    problem = run.problem
    if problem and run.stderr and run.stderr.splitlines()[-1] not in problem:
        problem = f"{problem}\n{run.stderr[-1500:]}"
    return VerifyReport(
        checks=checks, python=python, image=image, device=options.device, quick=options.quick,
        timeout=options.timeout, seconds=time.monotonic() - t0, problem=problem, diagnosis=diagnosis,
        notes=build_notes(checks), diagnoser=why_not,
    )
