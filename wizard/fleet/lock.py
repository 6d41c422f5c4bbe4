"""The wizard's locks as Ansible takes them, one task at a time: the exported role (wizard.fleet.export: its
``<role>_lock`` and ``<role>_user_lock``) and the collection's role (wizard.fleet.collection:
``rocm_wizard_lock_script``) run each command that changes the host, their progress read and each done mark under
LOCKED, with the locks the engine and the dry-run script take for the plan (task_locks: wizard.steps.executor_locks,
the one rule), so a wizard run (and the dry-run script) and a play never change one machine at the same time."""

from __future__ import annotations

import json
import shlex

from wizard.model import ResolvedPlan
from wizard.script import (lock_paths, _AS_OWNER, _CANON, _HOLD, _HOLDER_OF, _LET_GO, _LOCK_CHECKS, _MAKE_LOCK,
                           _OWNER_OF, _READER, _TAKE_AS, _WHOSE, held_line, unfinished_line, unread_line)

AGAIN = "then run the play again"
# sh -c LOCKED LABEL LOCKS HOLDER MODE COMMAND [ARG...] (the exported role's ``<role>_lock`` puts LOCKS and HOLDER in
# front; the collection's role passes them from the plan's data): the wizard's locks for one task, as the dry-run
# script's helper (wizard.script.HOLD_LOCK) takes them. LOCKS: the lock files, one a line (wizard.steps.executor_locks'
# order: the system's first, then the users'; one path alone is a list of one, as plan data exported before the list
# names it), taken all or nothing: a held one lets go of those already taken. Each with the helper's own checks of the
# state dir and its making (0700, missing folders owned as the nearest one that existed: a user's state dir made by
# root stays the user's; the file 0600), a dir named twice taken once, and the engine's holder record (HOLDER: its
# command, JSON; see holder) written into each, so a wizard refused meanwhile names the role; then, under them, the
# script's refusal over an unfinished run of the wizard in each state dir taken. Root (a become task) never opens a
# path in a user's state dir, as the helper never does: a lock whose dir root does not own is taken by a child run as
# its owner (take_as: the helper's single-lock part, held until the task lets go), and each state dir's unfinished run
# is read as its owner, bounded (timeout ``limit`` s: a FIFO planted as a journal). COMMAND runs with the locks'
# descriptors (root's own locks, and the write end of each child's input: it and what it starts hold them,
# wizard.runner.lock's rule), which are let go when COMMAND ends, whatever it left behind; exit: COMMAND's, 4 while
# another run holds one of the locks (the line names its holder and its file), 1 for any other refusal (setpriv
# missing where a user's lock is to be taken: one line).
# MODE read: a state dir that does not exist is not made (no wizard has run there; --check changes nothing) and its
# lock is not taken; the command runs under the others.
LOCKED = "\n".join([
    'locks=$1; holder=$2; mode=$3; shift 3',
    'nl=$(printf "\\n_"); nl=${nl%_}; taken=; seen=; fd=9; ifs=$IFS; me=$(id -u)',
    'command -v flock >/dev/null || { echo "rocm-wizard: cannot take the wizard\'s lock ${locks%%"$nl"*}: flock '
    '(util-linux) is not installed" >&2; exit 1; }',
    'one=' + shlex.quote(_HOLD),
    _AS_OWNER,
    _OWNER_OF,
    _WHOSE,
    _CANON,
    'check() { ' + _LOCK_CHECKS + '}',
    'make_lock() { ' + _MAKE_LOCK + '}',
    'holder_of() { printf "%s" "' + _HOLDER_OF + '"; }',
    _LET_GO,
    _TAKE_AS,
    _READER,
    'ps=$(sed \'s/.*) //\' "/proc/$$/stat" 2>/dev/null | cut -d " " -f 20)',
    'if [ -n "$ps" ]; then ps="\\"$ps\\""; else ps=null; fi',
    'record=$(printf \'{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}\' "$$" '
    '"$(date +%Y-%m-%dT%H:%M:%S%z)" "$holder" "$ps")',
    'IFS=$nl; set -f',
    'for l in $locks; do',
    '  IFS=$ifs; no="rocm-wizard: cannot take the wizard\'s lock $l:"',
    '  if [ "$mode" = read ] && [ ! -d "$(dirname -- "$l")" ]; then continue; fi',
    '  who=0:0; why=; [ "$me" != 0 ] || whose "$l"',
    '  if [ -n "$why" ]; then let_go; echo "$no refusing it: $why" >&2; exit 1; fi',
    '  if [ "${who%%:*}" != 0 ]; then',
    '    canon "$l" "$who"; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac',
    '    take_as "$l" "$who" "$record"',
    '    case $ans in',
    '      locked) ;;',
    f'      "held "*) h=${{ans#held }}; let_go; echo "{held_line("$h", "$l", AGAIN)}" >&2; exit 4;;',
    '      *) let_go; echo "$no $ans" >&2; exit 1;;',
    '    esac',
    '    canon "$l" "$who"; seen="$seen$c$nl"; continue',
    '  fi',
    '  check "$l"',
    '  if [ -n "$why" ]; then let_go; echo "$no refusing it: $why" >&2; exit 1; fi',
    '  (umask 077; make_lock "$l")',
    '  if ! (umask 077; true >>"$l") 2>/dev/null; then let_go; echo "$no cannot open it" >&2; exit 1; fi',
    '  c=$(cd -- "$(dirname -- "$l")" && pwd -P) || c=$l',
    '  case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; seen="$seen$c$nl"',
    '  eval "exec $fd>>\\"\\$l\\""',
    f'  if ! flock -n "$fd"; then h=$(holder_of "$l"); let_go; echo "{held_line("$h", "$l", AGAIN)}" >&2; exit 4; fi',
    '  printf "%s\\n" "$record" >"$l"; taken="$taken$fd:-:$l$nl"; fd=$((fd - 1))',
    'done',
    'IFS=$nl',
    'for t in $taken; do',
    '  IFS=$ifs; d=${t#*:}; d=$(dirname -- "${d#*:}")',
    f'  if ! unfinished_in "$d"; then let_go; echo "{unread_line("$d", "$why", AGAIN)}" >&2; exit 1; fi',
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
           "|run [^ ]+ of the wizard is not finished|cannot read whether a run of the wizard)")


def refused(reg: str) -> str:
    """A task condition: ``reg`` (a registered command result) is LOCKED's refusal."""
    return f"({reg}.stderr | default('')) is match('{REFUSED}')"


def task_locks(plan: ResolvedPlan) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the lock files a task run as root takes, those a task run as a user takes), in the order taken.

    Root's: the rule's (wizard.steps.executor_locks, as the dry-run script takes them: wizard.script.lock_paths).
    A user's: the ones of those a user can take, the non-system ones (never the system state dir's, which only root
    opens): the user's own state dir's lock is one of them wherever the plan changes that user's things, and both the
    wizard run as root of such a plan (wizard.runner.service.RunService._locks_for takes the user's lock as that user)
    and the user's own run (a pip-only run of the venv: its state dir is the user's) take it, so a task run as the GPU
    user excludes both. None of them: the task runs without a lock (a system plan that changes nothing of a user's: only root
    changes anything there)."""
    # a user's lock under ``~`` (a recording's venv, whose home the plan does not name) is none a role can name: a
    # task run as root would expand it to root's home, and the collection's role passes it unexpanded
    locks = [lk for lk in lock_paths(plan) if not lk.path.startswith("~")]
    return tuple(lk.path for lk in locks), tuple(lk.path for lk in locks if not lk.system)


def holder(role: str, plan: str) -> str:
    """LOCKED's HOLDER: the command the engine's holder record names while a role's task holds the lock (JSON)."""
    return json.dumps(f"Ansible role {role} (plan {plan})")


__all__ = ["AGAIN", "LOCKED", "REFUSED", "holder", "refused", "task_locks"]
