"""The dry-run renderer: a ResolvedPlan -> a bash script a person can read, diff and run by hand.

Layout: a header (machine, target, why), ``set -euo pipefail``, the preflight as checks that stop the
script, then one commented section per step. Every command is the action's argv, shlex-quoted;
root actions are prefixed with ``sudo --``; an action with a done-check runs only when the check
fails, so the script can be re-run after a reboot or an interruption. The reboot step records the
boot id and reboots; running the script again after the reboot continues after it.
"""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

from wizard.model import Action, Facts, ResolvedPlan

SUDO = ("sudo", "--")


def _comment(text: str, width: int = 96) -> list[str]:
    out: list[str] = []
    for para in str(text).splitlines() or [""]:
        wrapped = textwrap.wrap(" ".join(para.split()), width=width) or [""]
        out.extend(("# " + w).rstrip() for w in wrapped)
    return out


def command(a: Action) -> str:
    argv = list(a.argv)
    if a.env:
        argv = ["env", *(f"{k}={v}" for k, v in a.env), *argv]
    if a.root:
        argv = [*SUDO, *argv]
    return shlex.join(argv)


def _needs_sc2016(*argvs: tuple[str, ...] | None) -> bool:
    """An argument holding a $ is single-quoted, where shellcheck may warn SC2016 (no expansion in
    single quotes): a literal $ is exactly what the action passes."""
    return any("$" in x for argv in argvs if argv for x in argv[1:])


def _run(a: Action) -> str:
    cmd = command(a)
    if tuple(a.ok_codes) != (0,):
        codes = " || ".join(f"[ \"$rc\" -eq {c} ]" for c in a.ok_codes)
        return f"rc=0; {cmd} || rc=$?; {codes} || exit \"$rc\""
    return cmd


def machine_summary(facts: Facts) -> list[str]:
    o = facts.os
    lines = [f"machine: {o.pretty_name or ' '.join(x for x in (o.id, o.version) if x) or 'unknown OS'}"
             + (f" ({o.codename})" if o.codename else "") + (f", kernel {o.kernel}" if o.kernel else "")
             + f" [{facts.origin}]"]
    for g in facts.gpus:
        kind = "iGPU" if g.integrated else "GPU"
        lines.append(f"{kind}: {g.name or g.pci_id or 'AMD GPU'} ({g.gfx or 'gfx unknown'})")
    for other in facts.other_gpus:
        lines.append(f"other GPU: {other}")
    if facts.rocm.version or facts.rocm.installs:
        lines.append(f"ROCm now: {facts.rocm.version or 'unknown'}"
                     + (f" ({facts.rocm.stream})" if facts.rocm.stream else ""))
    d = facts.driver
    if d.kind or d.version:
        lines.append(f"driver: amdgpu {d.kind or ''} {d.version or ''}".rstrip())
    for e in facts.python_envs:
        if e.torch:
            lines.append(f"python env: {e.path or '(recorded)'}: torch {e.torch}")
    return lines


def render(plan: ResolvedPlan, facts: Facts) -> str:
    out: list[str] = ["#!/usr/bin/env bash"]
    out += _comment(f"rocm-wizard dry run: plan {plan.name}: {plan.title}")
    out += _comment("Nothing has been run. Running this script by hand does what `rocm-wizard --plan "
                    f"{plan.name}` would do, in the same order, with the same commands.")
    out.append("#")
    for line in machine_summary(facts):
        out += _comment(line)
    out += _comment("target: " + ", ".join(f"{k} {v}" for k, v in plan.target))
    out += _comment(f"why: {plan.why}")
    if plan.source_file:
        from wizard.plan_file import PLANS_DIR

        src = Path(plan.source_file)
        shown = f"plans/{src.name} (shipped)" if src.parent.resolve() == Path(PLANS_DIR).resolve() else plan.source_file
        out += _comment(f"plan file: {shown}")
    out += ["", "set -euo pipefail", ""]
    out.append("# ---- preflight: each check must pass before the first change")
    for a in plan.preflight:
        msg = shlex.quote(f"preflight failed: {a.description or a.argv[0]}")
        out += _comment(a.description)
        if _needs_sc2016(a.argv):
            out.append("# shellcheck disable=SC2016  # literal $ inside single quotes is intended")
        out.append(f"if ! {command(a)}; then echo {msg} >&2; exit 1; fi")
    n = len(plan.steps)
    for i, step in enumerate(plan.steps, 1):
        out += ["", f"# ---- step {i}/{n}: {step.kind}: {' '.join(step.title.split())}"]
        for note in step.notes:
            out += _comment(f"note: {note}")
        if step.skipped_reason:
            out += _comment(f"skipped: {step.skipped_reason}")
            continue
        if step.kind == "reboot":
            out += _reboot(plan, step.actions[0] if step.actions else None)
            continue
        for a in step.actions:
            if a.description:
                out += _comment(a.description)
            if _needs_sc2016(a.argv, a.check):
                out.append("# shellcheck disable=SC2016  # literal $ inside single quotes is intended")
            if a.check:
                quiet = "" if a.check[0] in ("test", "[") else " >/dev/null 2>&1"
                out.append(f"if ! {command(Action(argv=a.check))}{quiet}; then")
                out.append("  " + _run(a))
                out.append("fi")
            else:
                out.append(_run(a))
    out += ["", f"echo {shlex.quote(f'rocm-wizard plan {plan.name}: done')}", ""]
    return "\n".join(out)


def _reboot(plan: ResolvedPlan, action: Action | None) -> list[str]:
    marker = f'"${{XDG_STATE_HOME:-$HOME/.local/state}}/rocm-wizard/{plan.name}.reboot-boot-id"'
    cmd = command(action) if action else shlex.join([*SUDO, "systemctl", "reboot"])
    return [
        f"marker={marker}",
        'boot_id=$(cat /proc/sys/kernel/random/boot_id)',
        'if [ ! -e "$marker" ]; then',
        '  mkdir -p "$(dirname "$marker")"',
        '  echo "$boot_id" >"$marker"',
        f"  echo {shlex.quote('rebooting now: run this script again after the reboot to continue')} >&2",
        f"  {cmd}",
        "  exit 0",
        'elif [ "$(cat "$marker")" = "$boot_id" ]; then',
        f"  echo {shlex.quote('a reboot is still pending: reboot, then run this script again')} >&2",
        "  exit 3",
        "fi",
    ]
