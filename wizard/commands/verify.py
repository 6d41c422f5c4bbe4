"""rocm-wizard verify: run the matmul + conv verification suite in a Python env or a Docker image.

    rocm-wizard verify [--python PATH | --image TAG] [--device auto|cpu] [--timeout S] [--quick] [--json]

Exit 0 only when every check that ran passed; 1 otherwise; 2 for bad usage (a --python that is not
an interpreter, a recorded machine).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Mapping
import json
import sys
from pathlib import Path

from wizard import exit_codes

if TYPE_CHECKING:
    from wizard.commands import Context
    from wizard.kb import KnowledgeBase
    from wizard.model import Facts


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def add_arguments(p: argparse.ArgumentParser) -> None:
    # --python PATH is a machine option (wizard/cli.py): the interpreter or venv to verify.
    p.add_argument("--image", metavar="TAG", help="run the suite inside this Docker image (AMD's GPU flags)")
    p.add_argument("--device", choices=("auto", "cpu"), default="auto",
                   help="auto: every GPU torch sees, GPU checks skipped when none; cpu: the same checks on the CPU")
    p.add_argument("--timeout", type=_positive, default=None, metavar="S",
                   help="seconds allowed to each check (default 120)")
    p.add_argument("--quick", action="store_true", help="a subset that takes a few seconds")
    p.add_argument("--json", action="store_true",
                   help='print {"checks": [...], "summary": {...}, "findings": [...]} as JSON')


def _facts(ctx: Context) -> Facts | None:
    """The machine's facts for the diagnoser's conditions and the throughput band; None if detection fails."""
    try:
        return ctx.facts
    except Exception:  # noqa: BLE001 - verification must not depend on detection working
        return None


def _kb() -> KnowledgeBase | None:
    try:
        from wizard.kb import load_kb

        return load_kb()
    except Exception:  # noqa: BLE001 - no band without the knowledge base; the checks still run
        return None


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands import CommandError, usage_error
    from wizard.verify import (
        DEFAULT_TIMEOUT,
        SuiteOptions,
        VerifyUsageError,
        default_python,
        resolve_python,
        run_verify,
    )

    if ctx.read_only:
        raise usage_error("verify runs the suite on this machine; --from names a recorded one")
    if args.image is not None:
        from wizard.inputs import InputError, docker_image

        try:
            docker_image(args.image)
        except InputError as exc:
            raise usage_error(str(exc)) from None
    device = args.device
    pythons = list(getattr(args, "pythons", None) or [])
    verify_env: dict[str, str] | None = None  # the docker client's environment (None: this process's)
    if ctx.sandbox and args.image:
        # the sandbox machine's docker (its stand-in, never the host's) has no image to run: the CPU torch given
        # with --verify-python plays the image's torch (the stand-in runs the suite with it), on the CPU
        from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON

        stand_in = ctx.verify_python or os.environ.get(SANDBOX_VERIFY_PYTHON)
        if not stand_in:
            raise usage_error("in a sandbox, verify --image needs --verify-python PATH (a CPU torch that plays the "
                              "image's torch); nothing was verified")
        verify_env, device = {**ctx.host.environ, SANDBOX_VERIFY_PYTHON: stand_in}, "cpu"
    if ctx.sandbox and not args.image:
        # a rehearsal machine has no GPU and its venvs hold stand-ins: the CPU torch given with
        # --verify-python plays the venv's torch, on the CPU
        from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON

        stand_in = ctx.verify_python or os.environ.get(SANDBOX_VERIFY_PYTHON)
        if not stand_in:
            raise usage_error("in a sandbox, verify needs --verify-python PATH (a CPU torch that plays the venv's "
                              "torch); nothing was verified")
        root = str(Path(ctx.sandbox).absolute())
        given = pythons[0] if pythons else None  # a path of the sandbox machine (or one already under its root)
        if given and not (ctx.host.exists(given) or (given.startswith(root + "/") and Path(given).exists())):
            raise usage_error(f"--python {given}: not on the sandbox machine")
        pythons, device = [stand_in], "cpu"
    if len(pythons) > 1:
        raise usage_error("verify takes one --python PATH")
    python = pythons[0] if pythons else None
    docker = "docker"
    try:
        if args.image:
            import shutil

            found = shutil.which("docker", path=(verify_env or os.environ).get("PATH"))
            if found is None:
                raise CommandError("--image needs the docker client, and `docker` is not on PATH",
                                   exit_codes.FAILURE)
            if verify_env is not None:
                docker = found  # the sandbox machine's docker (its stand-in), whatever this process's PATH holds
            why = docker_down(docker, verify_env)
            if why:
                raise CommandError(f"--image: docker cannot run containers: {why}", exit_codes.FAILURE)
            # with --image, --python names the interpreter inside the image (default python3)
        else:
            if python is None:
                python = default_python()
                if python is None:
                    raise usage_error("no Python to verify: give --python PATH (no VIRTUAL_ENV, no python3 on PATH)")
            python = resolve_python(python)
            if not ctx.sandbox and not has_torch(python):
                given = python if pythons else f"{python} (the default: no --python, no active venv)"
                raise usage_error(f"torch is not installed in {given}; use --python PATH (a venv or interpreter "
                                  "with torch)")
    except VerifyUsageError as exc:
        raise usage_error(f"--python {exc}") from None
    options = SuiteOptions(device=device, timeout=args.timeout or DEFAULT_TIMEOUT, quick=args.quick)

    on_check = None
    console = None
    if args.json:  # each check as a JSON line on stderr as it finishes; the report on stdout at the end
        from wizard.verify.view import check_json_line

        def on_check(c):  # type: ignore[no-untyped-def]
            sys.stderr.write(check_json_line(c.to_json()) + "\n")
            sys.stderr.flush()
    else:
        from rich.markup import escape

        from wizard.render import console as cli_console

        console = cli_console()
        console.print(f"[dim]verifying {escape(args.image or python or '')} (each check at most {options.timeout:g} s)"
                      "...[/]")

        def on_check(c):  # type: ignore[no-untyped-def]
            console.print(f"[dim]  {escape(c.status):7} {escape(c.name)} {escape(c.device)} {c.seconds:.1f}s[/]")

    report = run_verify(python=python if not args.image else (pythons[0] if pythons else None),
                        image=args.image, options=options, facts=_facts(ctx), kb=_kb(), on_check=on_check,
                        env=verify_env, docker=docker)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from wizard.verify.render import print_report

        print_report(report, console)
    wrong = None if ctx.sandbox or device == "cpu" else gpu_not_used(report.summary(), _facts(ctx))
    if wrong:
        print(f"rocm-wizard: FAILED: {wrong}", file=sys.stderr)
        return exit_codes.FAILURE
    return report.exit_code


def has_torch(python: str) -> bool:
    """Whether ``python`` can find a torch package (found, not imported)."""
    import subprocess

    try:
        out = subprocess.run([python, "-c", "import importlib.util, sys; "
                              "sys.exit(0 if importlib.util.find_spec('torch') else 3)"],
                             capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return True  # the suite's import check says what is wrong
    return out.returncode != 3


def docker_down(docker: str = "docker", env: Mapping[str, str] | None = None) -> str | None:
    """docker's own words when it cannot reach its daemon (``docker info``), else None."""
    import subprocess

    try:
        out = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer within 30 s"
    except OSError as exc:
        return str(exc)
    if out.returncode == 0 and out.stdout.strip():
        return None
    lines = [x.strip() for x in (out.stderr or out.stdout).splitlines() if x.strip()]
    return (lines[-1] if lines else f"`docker info` exited with {out.returncode}").removeprefix("ERROR: ")


def gpu_not_used(summary: dict[str, object], facts: Facts | None) -> str | None:
    """A run that passed on a machine with an AMD GPU is no success when the torch under test is a CPU or
    CUDA build: it cannot use the GPU (``OK: 1 pass, 11 skip`` must not read as working)."""
    if facts is None or not facts.gpus or summary.get("problem"):
        return None
    gpus = ", ".join(f"{g.name or g.pci_id or 'AMD GPU'} ({g.gfx or 'gfx ?'})" for g in facts.gpus)
    build, torch = summary.get("build"), summary.get("torch") or "torch"
    if build in ("cpu", "cuda"):
        return f"{torch} is a {str(build).upper()} build: it cannot use this machine's AMD GPU {gpus}"
    return None

