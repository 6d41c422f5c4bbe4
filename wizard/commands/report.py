"""rocm-wizard report --bundle OUT: this machine's evidence, redacted, for a bug report."""

from __future__ import annotations

import argparse
import os

from wizard import exit_codes


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", metavar="OUT", required=True,
                   help="write the evidence to OUT (a directory, or a .tar.gz when OUT ends so)")


def _run_files(ctx) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The pending or last run's plan, journal and step logs (none where no run ever started)."""
    from wizard.evidence import run_files
    from wizard.runner.service import RunError

    try:
        run = ctx.runs.current()
    except (RunError, OSError):
        return {}
    return {} if run is None else run_files(run.dir, run.logs)


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands import CommandError, usage_error
    from wizard.evidence import Redactor, check_out, collect, write_bundle
    from wizard.inputs import InputError, cli_path

    if ctx.read_only:
        raise usage_error("report collects the live machine's evidence; --from names a recording already")
    try:
        out = cli_path(args.bundle, "--bundle")
        check_out(out)  # before anything is collected
    except (InputError, FileExistsError, FileNotFoundError) as exc:
        raise usage_error(str(exc)) from None
    host = ctx.host
    env = host.environ
    users = {env.get(k, "") for k in ("USER", "LOGNAME", "SUDO_USER")}
    users.add(os.path.basename(env.get("HOME", "").rstrip("/")))
    redact = Redactor(tuple(sorted(u for u in users if u)), os.uname().nodename if host.name == "live" else None)
    files = collect(host, ctx.pythons, ctx.facts)
    files.update(_run_files(ctx))
    try:
        path = write_bundle(files, out, redact)
    except (FileExistsError, FileNotFoundError) as exc:
        raise usage_error(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write {args.bundle}: {exc.strerror or exc}") from None
    envs = sum(1 for name in files if name.startswith("python/") and name.endswith("pip-freeze.txt"))
    listed = files.get("python/envs.jsonl", "").count("\n")
    run_note = "; the last run's plan, journal and step logs" if "run/journal.jsonl" in files else ""
    print(f"Evidence written to {path} (user and host names redacted): {listed} Python environment(s), "
          f"{envs} with pip freeze{run_note}.")
    print(f"Check it with: rocm-wizard detect --from {path}")
    return exit_codes.OK
