"""The wizard's locks as Ansible takes them, one task at a time: the exported role (wizard.fleet.export: its
``<role>_lock`` and ``<role>_user_lock``) and the collection's role (wizard.fleet.collection:
``rocm_wizard_lock_script``) run each command that changes the host, their progress read and each done mark under
LOCKED, with the locks the engine and the dry-run script take for the plan (task_locks: wizard.steps.executor_locks,
the one rule), so a wizard run (and the dry-run script) and a play never change one machine at the same time."""

from __future__ import annotations

import json

from wizard.model import ResolvedPlan
from wizard.script import (UNFINISHED_RUN, lock_paths, _AS_OWNER, _HOLDER_OF, _LOCK_CHECKS, _MAKE_LOCK, held_line,
                           unfinished_line)

AGAIN = "then run the play again"
# sh -c LOCKED LABEL LOCKS HOLDER MODE COMMAND [ARG...] (the exported role's ``<role>_lock`` puts LOCKS and HOLDER in
# front; the collection's role passes them from the plan's data): the wizard's locks for one task, as the dry-run
# script's helper (wizard.script.HOLD_LOCK) takes them. LOCKS: the lock files, one a line (wizard.steps.executor_locks'
# order: the system's first, then the users'; one path alone is a list of one, as plan data exported before the list
# names it), taken all or nothing: a held one lets go of those already taken. Each with the helper's own checks of the
# state dir and its making (0700, missing folders owned as the nearest one that existed: a user's state dir made by
# root stays the user's; the file 0600), a dir named twice taken once, and the engine's holder record (HOLDER: its
# command, JSON; see holder) written into each, so a wizard refused meanwhile names the role; then, under them, the
# script's refusal over an unfinished run of the wizard in each state dir taken. COMMAND runs with the locks'
# descriptors (it and what it starts hold them, wizard.runner.lock's rule), which are let go when COMMAND ends,
# whatever it left behind; exit: COMMAND's, 4 while another run holds one of the locks (the line names its holder and
# its file), 1 for any other refusal.
# MODE read: a state dir that does not exist is not made (no wizard has run there; --check changes nothing) and its
# lock is not taken; the command runs under the others.
LOCKED = "\n".join([
    'locks=$1; holder=$2; mode=$3; shift 3',
    'nl=$(printf "\\n_"); nl=${nl%_}; taken=; seen=; fd=9',
    'command -v flock >/dev/null || { echo "rocm-wizard: cannot take the wizard\'s lock ${locks%%"$nl"*}: flock '
    '(util-linux) is not installed" >&2; exit 1; }',
    _AS_OWNER,
    'check() { ' + _LOCK_CHECKS + '}',
    'make_lock() { ' + _MAKE_LOCK + '}',
    'holder_of() { printf "%s" "' + _HOLDER_OF + '"; }',
    'let_go() { printf "%s" "$taken" | while IFS= read -r t; do [ -n "$t" ] || continue; : >"${t#*:}"; '
    'flock -u "${t%%:*}"; done; }',
    'ps=$(sed \'s/.*) //\' "/proc/$$/stat" 2>/dev/null | cut -d " " -f 20)',
    'if [ -n "$ps" ]; then ps="\\"$ps\\""; else ps=null; fi',
    'record=$(printf \'{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}\' "$$" '
    '"$(date +%Y-%m-%dT%H:%M:%S%z)" "$holder" "$ps")',
    'ifs=$IFS; IFS=$nl; set -f',
    'for l in $locks; do',
    '  IFS=$ifs; no="rocm-wizard: cannot take the wizard\'s lock $l:"',
    '  if [ "$mode" = read ] && [ ! -d "$(dirname -- "$l")" ]; then continue; fi',
    '  check "$l"',
    '  if [ -n "$why" ]; then let_go; echo "$no refusing it: $why" >&2; exit 1; fi',
    '  (umask 077; make_lock "$l")',
    '  if ! (umask 077; true >>"$l") 2>/dev/null; then let_go; echo "$no cannot open it" >&2; exit 1; fi',
    '  c=$(cd -- "$(dirname -- "$l")" && pwd -P) || c=$l',
    '  case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; seen="$seen$c$nl"',
    '  eval "exec $fd>>\\"\\$l\\""',
    f'  if ! flock -n "$fd"; then h=$(holder_of "$l"); let_go; echo "{held_line("$h", "$l", AGAIN)}" >&2; exit 4; fi',
    '  printf "%s\\n" "$record" >"$l"; taken="$taken$fd:$l$nl"; fd=$((fd - 1))',
    'done',
    'IFS=$nl',
    'for t in $taken; do',
    '  IFS=$ifs; unfinished=$(set -- "$(dirname -- "${t#*:}")"; ' + UNFINISHED_RUN + ')',
    f'  if [ -n "$unfinished" ]; then let_go; echo "{unfinished_line("$unfinished", AGAIN)}" >&2; exit 1; fi',
    'done',
    'IFS=$ifs; set +f',
    '"$@"',
    'rc=$?',
    'let_go',
    'exit "$rc"'])


# LOCKED's refusals as its first line on stderr (the command did not run): a task whose command may itself exit 1 or 4
# (an accepted answer, e.g. `systemctl disable` of a unit that is gone) must not take a refusal for that answer.
REFUSED = ("rocm-wizard: (another rocm-wizard run holds the lock|cannot take the wizard.s lock"
           "|run [^ ]+ of the wizard is not finished)")


def refused(reg: str) -> str:
    """A task condition: ``reg`` (a registered command result) is LOCKED's refusal."""
    return f"({reg}.stderr | default('')) is match('{REFUSED}')"


def task_locks(plan: ResolvedPlan) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the lock files a task run as root takes, those a task run as a user takes), in the order taken.

    Root's: the rule's (wizard.steps.executor_locks, as the dry-run script takes them: wizard.script.lock_paths).
    A user's: the ones of those a user can take, the ones in a user's home (never the system state dir's, which only
    root opens, nor another dir a plan names, its owner's): the user's own state dir's lock is one of them wherever the plan changes that user's things, and both the
    wizard run as root of such a plan (wizard.runner.service.RunService._locks_for takes the user's lock as that user)
    and the user's own run (a pip-only run of the venv: its state dir is the user's) take it, so a task run as the GPU
    user excludes both. None of them: the task runs without a lock (a system plan that changes nothing of a user's: only root
    changes anything there)."""
    # a user's lock under ``~`` (a recording's venv, whose home the plan does not name) is none a role can name: a
    # task run as root would expand it to root's home, and the collection's role passes it unexpanded
    locks = [lk for lk in lock_paths(plan) if not lk.path.startswith("~")]
    from wizard.steps import in_user_home

    # a user's: a state dir in a user's home (the GPU user's own); another one a plan names (``--state-dir /srv/x``,
    # a temporary dir) is the state dir owner's, root's, which the user cannot open: the user's task runs without it
    return tuple(lk.path for lk in locks), tuple(lk.path for lk in locks if not lk.system and in_user_home(lk.path))


def holder(role: str, plan: str) -> str:
    """LOCKED's HOLDER: the command the engine's holder record names while a role's task holds the lock (JSON)."""
    return json.dumps(f"Ansible role {role} (plan {plan})")


__all__ = ["AGAIN", "LOCKED", "REFUSED", "holder", "refused", "task_locks"]
