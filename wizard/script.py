"""The dry-run renderer: a ResolvedPlan -> a bash script a person can read, diff and run by hand.

Layout: a header (machine, target, why), ``set -euo pipefail``, the progress file, then one commented
section per step; step 1 of a planned run is its preflight (checks that stop the script). Every
command is the action's argv (with its environment), shlex-quoted; root actions are prefixed with
``sudo --``; an action with a done-check runs only when the check, read with the action's
privilege, fails.

The script is resumable the way the wizard's own runs are: each finished step is recorded in a
progress file in the plan's state directory, so running the script again (after the reboot, or after
a failure you fixed) skips every finished step: the backup it made is never made again over the
changed machine, and a purge is never repeated after the new release is installed. The reboot step
records the boot id and reboots; running the script again after the boot continues after it. A step
the progress records as done whose own check (``StepPlan.check``) fails on the machine now is drift:
reported and run again. The progress is read as the owner of the state dir; one that exists but cannot be
read or does not parse stops the script before any change.

One wizard at a time, the script included: before it reads its progress it takes the wizard's own lock (the
run service's flock on ``STATE/lock``, through flock(1) from util-linux, held by a helper as the state dir's
owner, its holder written in the engine's format so a wizard refused meanwhile names the script, and a killed
script as the engine names a killed wizard). The lock follows the engine's rule (wizard.runner.lock): held while
the script or a command it started lives (each command inherits the helper's input, as the engine's actions
inherit its lock: a script killed mid-step keeps the machine locked until that step's command ends), let go at
the script's end whatever its commands left behind (a daemon holds nothing then). And it stops, changing
nothing, while a run of the wizard recorded in the state dir is not finished (failed, stopped, reboot-pending,
interrupted ...): that run is resumed, rolled back or abandoned first, as a new plan of the wizard's own waits
for it. The script's own progress is never such a run.
"""

from __future__ import annotations

import json
import shlex
import textwrap
from pathlib import Path

from wizard import binding, exit_codes
from wizard.model import PREFLIGHT, Action, Facts, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.steps._locks import LOCK_FILE, PlanLock, system_path

SUDO = ("sudo", "--")
# sh -c READ_RECORD sh FILE LINE_RE: a record (the progress file, its reboot file) as it is: nothing when it does
# not exist, its lines when each matches LINE_RE (an ERE); a record that exists but cannot be read or does not
# parse stops the caller (exit 1, naming the file), never "nothing done". Run as the record's owner (root for
# a state dir under /var): a 0700 directory read by the user would look like "no progress"
READ_RECORD = ('if out=$(LC_ALL=C cat -- "$1" 2>&1); then '
               'if printf "%s\\n" "$out" | grep -qvxE -- "$2|"; then '
               'echo "rocm-wizard: the record $1 does not parse (each line must match $2): fix or remove it" >&2; '
               'exit 1; fi; printf "%s\\n" "$out"; exit 0; fi; '
               'case $out in *"No such file or directory"*) exit 0;; esac; '
               'echo "rocm-wizard: cannot read the record $1: $out" >&2; exit 1')
STEP_LINE = "[0-9]+"  # a progress line: the number of a finished step
BOOT_LINE = "[0-9a-f-]+"  # the reboot file: the boot id before the reboot
SC2016 = "# shellcheck disable=SC2016  # literal $ inside single quotes is intended"
# sh -c HOLD_LOCK sh LOCK HOLDER [LOCK...], its stdin a pipe from the script: takes the wizard's flock on each LOCK,
# in the order given (wizard.steps.plan_locks: the system's first, then the users'), all or nothing: a held one lets
# go of those already taken. Each dir is made as wizard.runner.lock.Lock makes it (0700, its missing parents 0755,
# each owned as the nearest folder that existed is: made by that folder's owner, so a user's
# ~/.local/state/rocm-wizard made by root's helper is the user's) and the lock file 0600 under the caller's umask 077
# (made by its dir's owner); HOLDER (the engine's JSON) is written
# into each. It says "locked", or "held <holder>" or why it cannot, then on a line of its own the lock file that
# answered so; then waits for the script to end (end of its stdin) and lets go. Like the engine's state check
# (wizard.runner.state), it refuses a lock that is a symlink or no file, and a state dir that is a symlink, writable
# by group or others, or owned by neither root nor the user running it: one planted link would have it (root, for a
# system state dir) write the holder into the file the link names and empty that file when the script ends. A dir
# named twice (two spellings) is taken once.
# Root never opens a path in a user's state dir (the engine's rule, wizard.runner.lock.HelperLock): run as root, it
# takes a lock whose dir (or, where that is missing, the nearest folder above it) root owns itself, and each other
# by a child run as that owner (take_as: setpriv, util-linux as flock is), the single-lock helper below, which makes,
# checks, opens, writes and empties the user's file with the user's rights and holds the lock until root lets go: a
# user who swaps their folder for a link between the checks and the open reaches only what the user may write. A
# user's dir is accepted by root only where its folder's owner owns it too (a user's helper never takes another
# user's dir).
# the state dir's checks HOLD_LOCK and LOCKED make before they open LOCK ($1), each setting ``why``
# (the missing dirs are made by the owner of the nearest folder that exists, as_owner: root never makes, nor chowns,
# a folder through a path its user controls: a user's link ~/.local -> /etc would have root make state/ in /etc
# and give it to the user; the user makes there what the user can)
_LOCK_CHECKS = ('d=$(dirname -- "$1"); why=; '
                '[ -L "$d" ] || [ -d "$d" ] || { p=$d; while [ ! -e "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); '
                'done; own=$(stat -c %u:%g -- "$p" 2>/dev/null) || own=0:0; '
                '(umask 022; as_owner "$own" mkdir -p -- "$(dirname -- "$d")") 2>/dev/null; '
                'as_owner "$own" mkdir -m 700 -- "$d" 2>/dev/null; }; '
                '[ -O "$d" ] || [ -n "$(find "$d" -maxdepth 0 -user 0 2>/dev/null)" ] || '
                'why="$d is owned by neither root nor the user running it"; '
                '[ -z "$(find "$d" -maxdepth 0 \\( -perm -020 -o -perm -002 \\) 2>/dev/null)" ] || '
                'why="$d is writable by group or others"; '
                '[ -L "$d" ] && why="$d is a symlink"; '
                '[ -e "$1" ] && [ ! -f "$1" ] && why="$1 is not a file"; '
                '[ -L "$1" ] && why="$1 is a symlink"; ')
# as_owner U:G COMMAND...: COMMAND run as U:G (setpriv, util-linux as flock is) where root runs it and U:G is not
# root's, else as it is
_AS_OWNER = ('as_owner() { o=$1; shift; if [ "$(id -u)" = 0 ] && [ "$o" != 0:0 ]; then '
             'setpriv --reuid="${o%%:*}" --regid="${o#*:}" --clear-groups -- "$@"; else "$@"; fi; }')
# owner_of PATH: "U:G" of PATH (a link is its own: not followed) or, where nothing is there, of the nearest folder
# above it that is
_OWNER_OF = ('owner_of() { p=$1; while [ ! -e "$p" ] && [ ! -L "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); '
             'done; stat -c %u:%g -- "$p" 2>/dev/null || echo 0:0; }')
# whose LOCK (root's helper): ``who``, the U:G that takes LOCK (its dir's owner, owner_of), and ``why`` where root
# refuses it (a user's dir in a folder another user owns); looks, never opens
_WHOSE = ('whose() { d=$(dirname -- "$1"); who=$(owner_of "$d"); why=; if [ "${who%%:*}" != 0 ] && '
          '{ [ -e "$d" ] || [ -L "$d" ]; } && '
          '[ "$(stat -c %u -- "$(dirname -- "$d")" 2>/dev/null)" != "${who%%:*}" ]; then '
          'why="$d is owned by neither root nor the user running it"; fi; }')
# canon LOCK U:G: ``c``, LOCK's dir with every link resolved, as U:G finds it (LOCK where it cannot be)
_CANON = ('canon() { c=$(as_owner "$2" sh -c \'cd -- "$(dirname -- "$1")" && pwd -P\' sh "$1" 2>/dev/null) '
          '|| c=$1; [ -n "$c" ] || c=$1; }')
# take_as LOCK U:G HOLDER (root's helper, fd ``fd`` free): a child run as U:G (the single-lock helper, ``one``) takes
# LOCK, its input and answer two pipes in a folder of root's own in /tmp (never $TMPDIR: a folder a user may write;
# gone once both ends are open); ``ans``: its
# answer's first line ("locked": the child and its input's write end, fd, join ``taken``, and it holds the lock until
# let_go writes it a line or closes that end). The child gets none of the descriptors already taken, umask 077.
_TAKE_AS = ('take_as() { ans=; command -v setpriv >/dev/null || { ans="setpriv (util-linux) is not installed"; '
            'return 0; }; tmp=$(TMPDIR= mktemp -d -t rocm-wizard-lock.XXXXXXXX) || tmp=; '
            'if [ -z "$tmp" ] || ! mkfifo -m 600 -- "$tmp/in" "$tmp/out"; then [ -z "$tmp" ] || rm -rf -- "$tmp"; '
            'ans="cannot make the pipes to its owner\'s helper"; return 0; fi; '
            '( IFS=$nl; set -f; for t in $taken; do eval "exec ${t%%:*}>&-"; done; umask 077; '
            'exec setpriv --reuid="${2%%:*}" --regid="${2#*:}" --clear-groups -- sh -c "$one" sh "$1" "$3" '
            '<"$tmp/in" >"$tmp/out" ) & pid=$!; '
            'eval "exec $fd>\\"\\$tmp/in\\""; { read -r ans || :; [ "$ans" = locked ] || read -r _ || :; } <"$tmp/out"; '
            'rm -rf -- "$tmp"; if [ "$ans" = locked ]; then taken="$taken$fd:$pid:$1$nl"; fd=$((fd - 1)); return 0; fi; '
            'eval "exec $fd>&-"; wait "$pid"; '
            '[ -n "$ans" ] || ans="its owner\'s helper (uid ${2%%:*}) did not answer"; }')
# let_go: every lock taken, let go: root's own emptied and unlocked (LOCK_UN drops it in every copy a command
# inherited), a child told to (a line: a command that inherited its input's write end may still hold it) and waited for
_LET_GO = ('let_go() { IFS=$nl; set -f; for t in $taken; do IFS=$ifs; f=${t%%:*}; r=${t#*:}; k=${r%%:*}; r=${r#*:}; '
           'if [ "$k" = - ]; then : >"$r"; flock -u "$f"; else (echo let-go >&"$f") 2>/dev/null; '
           'eval "exec $f>&-"; wait "$k"; fi; done; IFS=$ifs; set +f; taken=; }')
# the lock file $1 made (never through a symlink: the checks above ran first) by its dir's owner (as_owner)
_MAKE_LOCK = ('if [ ! -e "$1" ]; then o=$(stat -c %u:%g -- "$(dirname -- "$1")" 2>/dev/null) || o=0:0; '
              'as_owner "$o" touch -- "$1" 2>/dev/null; fi; ')
# the holder record in LOCK ($1) as "pid N, started T: COMMAND" (what the engine's LockHeld says of it)
_HOLDER_OF = ('$(sed -n \'s|^{"pid": \\([0-9]*\\), "start_time": "\\([^"]*\\)", "command": "\\(.*\\)", '
              '"proc_start".*|pid \\1, started \\2: \\3|p\' -- "$1" 2>/dev/null)')
# The helper ignores the terminal's keyboard and hang-up signals (Ctrl+C, Ctrl+\, a closed terminal): it sits in
# the script's foreground process group, and dying there would free the lock while a step that outlives the signal
# still runs; it lets go when its input ends, i.e. once the script and every command holding that input are gone.
# Its children (a user's lock) ignore them too, and their input is the helper's alone: they let go when it does.
_HOLD = ('trap "" INT QUIT HUP; '
         'say() { printf "%s\\n%s\\n" "$1" "$2"; read -r _ || :; exit 1; }; '
         'command -v flock >/dev/null || say "flock (util-linux) is not installed" "$1"; '
         + _AS_OWNER + '; ' + _OWNER_OF + '; ' + _WHOSE + '; ' + _CANON + '; '
         'check() { ' + _LOCK_CHECKS + '}; '
         'make_lock() { ' + _MAKE_LOCK + '}; '
         'holder_of() { printf "%s" "' + _HOLDER_OF + '"; }; '
         'taken=; seen=; fd=9; nl=$(printf "\\n_"); nl=${nl%_}; ifs=$IFS; me=$(id -u); '
         + _LET_GO + '; ' + _TAKE_AS + '; '
         'first=$1; holder=$2; shift 2; set -- "$first" "$@"; '
         'for l do who=0:0; why=; [ "$me" != 0 ] || whose "$l"; '
         'if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; '
         'if [ "${who%%:*}" != 0 ]; then canon "$l" "$who"; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; '
         'take_as "$l" "$who" "$holder"; case $ans in locked) ;; "held "*) let_go; printf "%s\\n%s\\n" "$ans" "$l"; '
         'read -r _ || :; exit 0;; *) let_go; say "$ans" "$l";; esac; '
         'canon "$l" "$who"; seen="$seen$c$nl"; continue; fi; '
         'check "$l"; '
         'if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; '
         'make_lock "$l"; '
         'if ! true 2>/dev/null >>"$l"; then let_go; say "cannot open it" "$l"; fi; '
         'c=$(cd -- "$(dirname -- "$l")" && pwd -P) || c=$l; '
         'case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; seen="$seen$c$nl"; '
         'eval "exec $fd>>\\"\\$l\\""; '
         'if ! flock -n "$fd"; then h=$(holder_of "$l"); let_go; printf "held %s\\n%s\\n" "$h" "$l"; '
         'read -r _ || :; exit 0; fi; '
         'printf "%s\\n" "$holder" >"$l"; taken="$taken$fd:-:$l$nl"; fd=$((fd - 1)); done; '
         'echo locked; read -r _ || :; let_go; exit 0')
# HOLD_LOCK: the helper, with its own text (``one``) for the children it starts as a user's lock's owner (not root,
# they never start one)
HOLD_LOCK = 'one=' + shlex.quote(_HOLD) + '; ' + _HOLD
# sh -c UNFINISHED_RUN sh STATE: the id of the wizard's current run (STATE/current) when its journal does not end
# in a run-end that finished it (done, rolled back, abandoned): what blocks a new plan of the wizard (a journal's
# torn last line left out, as the wizard's replay leaves it out); nothing when there is none
UNFINISHED_RUN = ('cur=$(cat -- "$1/current" 2>/dev/null) || exit 0; case $cur in ""|*/*) exit 0;; esac; '
                  '[ -d "$1/runs/$cur" ] || exit 0; '
                  'last=$(grep -E -- \'^[{].*[}]$\' "$1/runs/$cur/journal.jsonl" 2>/dev/null | tail -n 1); '
                  'case $last in *\'"event": "run-end", "state": "done"\'*|*\'"event": "run-end", "state": "rolled-back"\'*'
                  '|*\'"event": "run-end", "state": "abandoned"\'*) ;; *) echo "$cur";; esac')
READ_LIMIT = 60  # seconds the unfinished-run read of a state dir may take (a FIFO planted as its journal)
# unfinished_in STATE: UNFINISHED_RUN (``reader``) run as STATE's owner (root reads only a state dir of its own: a
# user's link to a root-only file is read with the user's rights), bounded by ``timeout`` (coreutils; ``limit``
# seconds); ``unfinished``: its answer; fails with ``why`` where it could not answer
_UNFINISHED_IN = ('unfinished_in() { unfinished=; why=; o=$(owner_of "$1"); set -- sh -c "$reader" sh "$1"; '
                  'if [ "$me" = 0 ] && [ "${o%%:*}" != 0 ]; then command -v setpriv >/dev/null || '
                  '{ why="setpriv (util-linux) is not installed"; return 1; }; '
                  'set -- setpriv --reuid="${o%%:*}" --regid="${o#*:}" --clear-groups -- "$@"; fi; '
                  'unfinished=$(timeout "$limit" "$@" </dev/null) && return 0; rc=$?; unfinished=; '
                  'if [ "$rc" = 124 ]; then why="timed out after $limit s"; else why="exit $rc"; fi; return 1; }')
_READER = f'limit={READ_LIMIT}; reader=' + shlex.quote(UNFINISHED_RUN) + '; ' + _OWNER_OF + '; ' + _UNFINISHED_IN
# sh -c READ_UNFINISHED sh STATE (the script's): "unfinished RUN" (UNFINISHED_RUN's answer, read as unfinished_in
# reads it), "unread WHY" where it could not be read, nothing where no run is unfinished
READ_UNFINISHED = ('me=$(id -u); ' + _READER + '; if unfinished_in "$1"; then [ -z "$unfinished" ] || '
                   'printf "unfinished %s\\n" "$unfinished"; else printf "unread %s\\n" "$why"; fi')


def _comment(text: str, width: int = 96) -> list[str]:
    out: list[str] = []
    for para in str(text).splitlines() or [""]:
        wrapped = textwrap.wrap(" ".join(para.split()), width=width) or [""]
        out.extend(("# " + w).rstrip() for w in wrapped)
    return out


def command(a: Action) -> str:
    """The action as a shell command line: exactly the argv the runner executes (Action.command(),
    environment included), with ``sudo --`` in front of a root action."""
    argv = list(a.command())
    if a.root:
        argv = [*SUDO, *argv]
    return " ".join(_quote(x) for x in argv)


def _quote(arg: str) -> str:
    """shlex.quote, except that a leading ``~/`` (a recording's venv whose home is unknown) is left for the
    shell to expand: an argv never means a directory named ``~``."""
    if arg == "~":
        return "~"
    if arg.startswith("~/"):
        return "~/" + shlex.quote(arg[2:])
    return shlex.quote(arg)


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


XDG_STATE = "${XDG_STATE_HOME:-$HOME/.local/state}/rocm-wizard"  # the user's state dir, as the shell names it


def state_path(plan: ResolvedPlan) -> str:
    """The plan's state dir (its backup, the wizard's lock and runs); a plan built without one uses the user's XDG
    state dir, expanded by the shell."""
    return (plan.state_dir or XDG_STATE).rstrip("/")


def progress_path(plan: ResolvedPlan) -> str:
    """Where the script records its progress: the plan's state dir (beside its backup)."""
    return f"{state_path(plan)}/script/{plan.name}.progress"


def render(plan: ResolvedPlan, facts: Facts, user_state: str | None = None, *, own_state_only: bool = False) -> str:
    """``user_state``: the state dir, on the machine, of the user whose things the plan changes (None: found from the
    home its venv is in: wizard.steps.home_user_state). ``own_state_only``: a state dir named on the command line
    holds everything: the script takes its lock alone (as the engine's run then does)."""
    out: list[str] = ["#!/usr/bin/env bash"]
    out += _comment(f"rocm-wizard dry run: plan {plan.name}: {plan.title}")
    out += _comment("Nothing has been run. Running this script by hand does what `rocm-wizard --plan "
                    f"{plan.name}` would do, in the same order, with the same commands. Run it again after the "
                    "reboot, or after fixing a failure: it continues where it stopped.")
    out.append("#")
    for line in machine_summary(facts):
        out += _comment(line)
    out += _comment("target: " + ", ".join(f"{k} {v}" for k, v in plan.target))
    out += _comment(f"why: {plan.why}")
    if plan.source_file:
        from wizard.fix_plans import PLANS_DIR

        src = Path(plan.source_file)
        shown = f"plans/{src.name} (shipped)" if src.parent.resolve() == PLANS_DIR.resolve() else plan.source_file
        out += _comment(f"plan file: {shown}")
    progress = progress_path(plan)
    out += ["", "set -euo pipefail", ""]
    out += _comment("Progress: one line per finished step. Delete this file to start the plan over. A step it "
                    "records as done whose check on the machine fails now is drift: reported and run again. A "
                    "progress file that exists but cannot be read stops the script before any change.")
    out.append(f"progress={shlex.quote(progress) if plan.state_dir else chr(34) + progress + chr(34)}")
    sudo = "sudo -- " if plan.state_dir and system_path(plan.state_dir) else ""  # root's state dir, like the backup
    out += [f"read_record() {{ {sudo}sh -c {shlex.quote(READ_RECORD)} sh \"$@\"; }}", *_one_wizard(plan, user_state, own_state_only),
            f'done_steps=$(read_record "$progress" {shlex.quote(STEP_LINE)}) || exit 1',
            *([f'booted_from=$(read_record "$progress.reboot" {shlex.quote(BOOT_LINE)}) || exit 1']
              if any(s.reboot and not s.skipped_reason for s in plan.steps) else []),
            'step_done() { [[ $\'\\n\'"$done_steps"$\'\\n\' == *$\'\\n\'"$1"$\'\\n\'* ]]; }',
            'drift() { echo "drift: step $1 is recorded as done, but the machine says otherwise (checked: $2: no): '
            'running it again" >&2; done_steps=$(printf \'%s\\n\' "$done_steps" | grep -vx "$1" || true); }',
            # the progress under umask 077, as the wizard's own state files (a user's 002 would leave them group-writable,
            # which the engine's state check refuses: wizard.runner.state)
            f'mark_done() {{ (umask 077; {sudo}mkdir -p "$(dirname "$progress")" && '
            f'echo "$1" | {sudo}tee -a "$progress" >/dev/null); }}',
            f'mark_boot() {{ (umask 077; {sudo}mkdir -p "$(dirname "$progress")" && '
            f'echo "$1" | {sudo}tee "$progress.reboot" >/dev/null); }}']
    n = len(plan.steps)
    for i, step in enumerate(plan.steps, 1):
        out += ["", f"# ---- step {i}/{n}: {step.kind}: {' '.join(step.title.split())}"]
        for note in step.notes:
            out += _comment(f"note: {note}")
        if step.skipped_reason:
            out += _comment(f"skipped: {step.skipped_reason}")
            continue
        if step.kind == PREFLIGHT:
            body = _preflight(step)
        elif step.reboot:
            body = _reboot(step)
        else:
            body = _actions(step)
        if step.check is not None and not step.reboot:
            if _needs_sc2016(step.check.argv):
                out.append(SC2016)
            quiet = "" if step.check.argv[0] in ("test", "[") else " >/dev/null 2>&1"
            out.append(f"if step_done {i} && ! {command(step.check)}{quiet}; then "
                       f"drift {i} {shlex.quote(step.check.description or step.check.shown())}; fi")
        out.append(f"if ! step_done {i}; then")
        out += ["  " + line if line else line for line in body]
        out.append(f"  mark_done {i}")
        out.append("fi")
    out += ["", f"echo {shlex.quote(f'rocm-wizard plan {plan.name}: done')}", ""]
    return "\n".join(out)


def _shell_path(path: str) -> str:
    """A state dir or lock path in the script: quoted, except the user's XDG state dir the shell expands (a state
    dir named with a ``$`` in it is that path, never expanded)."""
    return f'"{path}"' if path == XDG_STATE or path.startswith(XDG_STATE + "/") else _quote(path)


def lock_paths(plan: ResolvedPlan, user_state: str | None = None, own_state_only: bool = False) -> tuple[PlanLock, ...]:
    """The state dirs whose locks the script takes (wizard.steps.executor_locks; the plan's own state dir, the user's
    XDG one when the plan names none; ``own_state_only``: that one alone)."""
    from wizard.steps import executor_locks

    if own_state_only:
        return (PlanLock(state_path(plan), system_path(state_path(plan))),)
    return executor_locks(plan if plan.state_dir else replace(plan, state_dir=state_path(plan)), user_state)


def _one_wizard(plan: ResolvedPlan, user_state: str | None, own_state_only: bool) -> list[str]:
    """The wizard's locks, held until the script ends, and the refusal over an unfinished run of the wizard in each
    state dir they are in."""
    locks = lock_paths(plan, user_state, own_state_only)
    sudo = "sudo -- " if any(system_path(lk.state_dir) for lk in locks) else ""  # root's state dir, like the backup
    holder = json.dumps(f"dry-run script of plan {plan.name}")
    again = "then run this script again"
    out = _comment("One wizard at a time: the wizard's own locks (an flock on the lock file of each state dir the plan "
                   "changes things of: "
                   + ", ".join(lk.path for lk in locks) + ") are held until this script ends, and a run of the wizard "
                   "that is not finished there is resumed, rolled back or abandoned first.")
    return [*out,
            "wizard_states=(" + " ".join(_shell_path(lk.state_dir) for lk in locks) + ")",
            "locks=(" + " ".join(_shell_path(lk.path) for lk in locks) + ")",
            # the engine's holder record; its start time (/proc/PID/stat field 22) tells a killed script apart
            'stat=$(cat "/proc/$$/stat" 2>/dev/null) || stat=""',
            'read -r -a stat_fields <<<"${stat##*) }"',
            'proc_start=null',
            'if [ -n "${stat_fields[19]:-}" ]; then proc_start="\\"${stat_fields[19]}\\""; fi',
            "holder=$(printf '{\"pid\": %s, \"start_time\": \"%s\", \"command\": %s, \"proc_start\": %s}' \"$$\" "
            f'"$(date +%Y-%m-%dT%H:%M:%S%z)" {shlex.quote(holder)} "$proc_start")',
            SC2016,
            f'coproc wizard_lock {{ umask 077; exec {sudo}sh -c {shlex.quote(HOLD_LOCK)} sh "${{locks[0]}}" "$holder" '
            '"${locks[@]:1}"; }',
            "lock_pid=$!",
            'if ! read -r took <&"${wizard_lock[0]:-}"; then took=""; fi',
            # the lock file that answered (its own line, after a refusal)
            'lock=${locks[0]}',
            'if [ "$took" != locked ] && ! read -r lock <&"${wizard_lock[0]:-}"; then lock=${locks[0]}; fi',
            *_comment("The helper holds the locks until it reads a line (this script's end) or its input ends: every "
                      "command below inherits that input (lock_out, opened anew: bash keeps a coprocess's own "
                      "descriptors from the commands it runs), as the engine's actions inherit its lock, so a script "
                      "killed mid-step (kill -9) leaves the locks held until that step's command ends; a process a "
                      "step leaves behind (a daemon) holds nothing once the script has ended."),
            "let_go() { (echo let-go >&\"$lock_out\") 2>/dev/null || :; exec {lock_out}>&-; wait \"$lock_pid\" || true; }",
            "case $took in",
            '  locked) exec {lock_out}>"/dev/fd/${wizard_lock[1]}"; trap let_go EXIT ;;',
            f'  held*) echo "{held_line("${took#held }", "$lock", again)}" >&2; exit 4 ;;',
            '  *) echo "rocm-wizard: cannot take the wizard\'s lock $lock${took:+: $took}" >&2; exit 1 ;;',
            "esac",
            'for wizard_state in "${wizard_states[@]}"; do',
            "  " + SC2016,
            f'  run_state=$({sudo}sh -c {shlex.quote(READ_UNFINISHED)} sh "$wizard_state")',
            "  case $run_state in",
            f'    "unfinished "*) echo "{unfinished_line("${run_state#unfinished }", again)}" >&2; exit 1 ;;',
            f'    "unread "*) echo "{unread_line("$wizard_state", "${run_state#unread }", again)}" >&2; exit 1 ;;',
            "  esac",
            "done"]


def held_line(holder: str, lock: str, again: str) -> str:
    """The refusal while another run holds the wizard's lock (the engine's LockHeld line, and what to do)."""
    return f"rocm-wizard: another rocm-wizard run holds the lock ({holder}); lock file: {lock}: wait for it to end, {again}"


def unfinished_line(run: str, again: str) -> str:
    """The refusal over a run of the wizard that is not finished (UNFINISHED_RUN said ``run``)."""
    return (f"rocm-wizard: run {run} of the wizard is not finished (rocm-wizard status shows where it stands): "
            f"'rocm-wizard resume' continues it, 'rocm-wizard rollback' undoes it, 'rocm-wizard abandon' forgets it; "
            f"{again}")


def unread_line(state: str, why: str, again: str) -> str:
    """The refusal where whether a run of the wizard in ``state`` is finished could not be read (a journal that never
    answers: a FIFO; setpriv missing)."""
    return f"rocm-wizard: cannot read whether a run of the wizard in {state} is finished ({why}): {again}"


def _preflight(step: StepPlan) -> list[str]:
    out: list[str] = []
    for a in step.actions:
        msg = shlex.quote(f"preflight failed: {a.name or a.description}: {a.description}")
        out += _comment(f"{a.name}: {a.description}" if a.name else a.description)
        if _needs_sc2016(a.argv):
            out.append(SC2016)
        if a.name == binding.NAME:
            # the machine binding's refusal is its own one line (what the engine says), exit 5 as the engine's
            # (README: a plan file made for another machine); a check that could not run at all is a failed one
            out += [f"bound=0; {command(a)} || bound=$?",
                    f'if [ "$bound" = 1 ]; then exit {exit_codes.REFUSED}; '
                    f'elif [ "$bound" != 0 ]; then echo {msg} >&2; exit 1; fi']
            continue
        out.append(f"if ! {command(a)}; then echo {msg} >&2; exit 1; fi")
    return out


def _actions(step: StepPlan) -> list[str]:
    out: list[str] = []
    from wizard.downloads.shell import is_fetch, script_lines

    for a in step.actions:
        if a.description:
            out += _comment(a.description)
        # the wheelhouse download in bash (wget -c, sha256sum -c, then the rename): the host needs no wizard
        body = script_lines(a.argv) if is_fetch(a.argv) else [_run(a)]
        if _needs_sc2016(a.argv, a.check):
            out.append(SC2016)
        if a.check:
            quiet = "" if a.check[0] in ("test", "[") else " >/dev/null 2>&1"
            # read with the action's privilege, as the engine probes it and the role's task becomes: a root-only
            # path (the backup, the downloads in a 0700 state dir) is never "not done" for want of sudo
            out.append(f"if ! {command(Action(argv=a.check, env=a.env, root=a.root))}{quiet}; then")
            out += ["  " + line for line in body]
            out.append("fi")
        else:
            out += body
    return out


def _reboot(step: StepPlan) -> list[str]:
    cmds = [_run(a) for a in step.actions] or [shlex.join([*SUDO, "systemctl", "reboot"])]
    return [
        'boot_id=$(cat /proc/sys/kernel/random/boot_id)',
        'if [ -z "$booted_from" ]; then',
        '  mark_boot "$boot_id"',
        f"  echo {shlex.quote('rebooting now: run this script again after the reboot to continue')} >&2",
        *[f"  {c}" for c in cmds],
        "  exit 0",
        'elif [ "$booted_from" = "$boot_id" ]; then',
        f"  echo {shlex.quote('a reboot is still pending: reboot, then run this script again')} >&2",
        "  exit 3",
        "fi",
    ]
