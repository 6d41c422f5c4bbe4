"""Sub-commands. Each module: ``add_arguments(parser)`` and ``run(args, ctx) -> int``.

Modules import only the standard library at their top; heavy imports go inside ``run``. The machine a
command works on is ``ctx``: the machine session (``wizard.machine_session``) the command line names.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.machine_session import MachineSession, MachineSpec, SessionError, usage_error

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from wizard.model import ResolvedPlan

CommandError = SessionError  # a command ends with a one-line message and an exit code (no traceback)


def resolve_plan_or_fail(spec: str, ctx: Context) -> ResolvedPlan:
    """The session's plan, or the CLI's answer: exit 2 for a bad plan, exit 5 with one line per reason.
    ``spec`` may also be a resolved-plan JSON file (``runs/<id>/plan.json``): loaded, not resolved again;
    with ``--replan`` the plan it names is resolved again on this machine (a resolved plan runs only on the
    machine it was made for)."""
    from wizard.planner import PlanError, PlanRefused

    try:
        return ctx.resolve(spec, replan=bool(getattr(ctx.args, "replan", False)))
    except PlanError as exc:
        raise CommandError(exc.message, exit_codes.USAGE) from None
    except PlanRefused as exc:
        raise CommandError("\n".join(f"refused: {r}" for r in exc.reasons), exit_codes.REFUSED) from None


def run_error(exc: Exception) -> CommandError:
    """A RunError of the run service as the CLI's one-line error (its own exit code)."""
    return CommandError(str(getattr(exc, "message", exc)), int(getattr(exc, "code", exit_codes.FAILURE)))


def spec_of(args: argparse.Namespace) -> MachineSpec:
    """The machine options of a parsed command line."""
    return MachineSpec(from_=getattr(args, "from_", None), pythons=tuple(getattr(args, "pythons", None) or ()),
                       sandbox=getattr(args, "sandbox", None), profile=getattr(args, "profile", None),
                       root_kind=getattr(args, "root", None), state_dir=getattr(args, "state_dir", None),
                       verify_python=getattr(args, "verify_python", None), venv=getattr(args, "venv", None),
                       allow_remove=tuple(getattr(args, "allow_remove", None) or ()),
                       lock_wait=getattr(args, "lock_wait", None), channel=getattr(args, "channel", None),
                       mirrors=tuple(getattr(args, "mirrors", None) or ()),
                       mirror_keys=tuple(getattr(args, "mirror_keys", None) or ()))


class Context(MachineSession):
    """The CLI's adapter: the machine session its options name, and the parsed arguments."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        super().__init__(spec_of(args))


__all__ = ["CommandError", "Context", "resolve_plan_or_fail", "run_error", "usage_error"]
