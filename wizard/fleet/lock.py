"""The wizard's lock as Ansible takes it, one task at a time: the exported role (wizard.fleet.export: its
``<role>_lock``) and the collection's role (wizard.fleet.collection: ``rocm_wizard_lock_script``) run each command that
changes the host, their progress read and each done mark under LOCKED, so a wizard run (and the dry-run script) and a
play never change one machine at the same time."""

from __future__ import annotations

import json

from wizard.script import UNFINISHED_RUN, _HOLDER_OF, _LOCK_CHECKS, held_line, unfinished_line

AGAIN = "then run the play again"
# sh -c LOCKED LABEL LOCK HOLDER MODE COMMAND [ARG...] (the exported role's ``<role>_lock`` puts LOCK and HOLDER in
# front; the collection's role passes them from the plan's data): the wizard's lock for one task, as the dry-run
# script's helper (wizard.script.HOLD_LOCK) takes it: the same checks of the state dir, the dir 0700 and the file 0600,
# the engine's holder record (HOLDER: its command, JSON; see holder), so a wizard refused meanwhile names the role;
# then, under it, the script's refusal over an unfinished run of the wizard. COMMAND runs with the lock's descriptor
# (it and what it starts hold the lock, wizard.runner.lock's rule), which is let go when COMMAND ends, whatever it left
# behind; exit: COMMAND's, 4 while another run holds the lock, 1 for any other refusal.
# MODE read: a state dir that does not exist is not made (no wizard has run there; --check changes nothing), the
# command runs as it is.
LOCKED = "\n".join([
    'no="rocm-wizard: cannot take the wizard\'s lock $1:"',
    'command -v flock >/dev/null || { echo "$no flock (util-linux) is not installed" >&2; exit 1; }',
    'if [ "$3" = read ] && [ ! -d "$(dirname -- "$1")" ]; then shift 3; exec "$@"; fi',
    '(umask 077; mkdir -p -- "$(dirname -- "$1")") 2>/dev/null',
    _LOCK_CHECKS.rstrip(" "),
    'if [ -n "$why" ]; then echo "$no refusing it: $why" >&2; exit 1; fi',
    'if ! (umask 077; true >>"$1") 2>/dev/null; then echo "$no cannot open it" >&2; exit 1; fi',
    'exec 9>>"$1"',
    f'if ! flock -n 9; then echo "{held_line(_HOLDER_OF, "$1", AGAIN)}" >&2; exit 4; fi',
    'ps=$(sed \'s/.*) //\' "/proc/$$/stat" 2>/dev/null | cut -d " " -f 20)',
    'if [ -n "$ps" ]; then ps="\\"$ps\\""; else ps=null; fi',
    'printf \'{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}\\n\' "$$" '
    '"$(date +%Y-%m-%dT%H:%M:%S%z)" "$2" "$ps" >"$1"',
    'lock=$1',
    'unfinished=$(set -- "$(dirname -- "$1")"; ' + UNFINISHED_RUN + ')',
    'shift 3',
    f'if [ -n "$unfinished" ]; then : >"$lock"; flock -u 9; echo "{unfinished_line("$unfinished", AGAIN)}" >&2; exit 1; fi',
    '"$@"',
    'rc=$?',
    ': >"$lock"',
    'flock -u 9',
    'exit "$rc"'])


# LOCKED's refusals as its first line on stderr (the command did not run): a task whose command may itself exit 1 or 4
# (an accepted answer, e.g. `systemctl disable` of a unit that is gone) must not take a refusal for that answer.
REFUSED = ("rocm-wizard: (another rocm-wizard run holds the lock|cannot take the wizard.s lock"
           "|run [^ ]+ of the wizard is not finished)")


def refused(reg: str) -> str:
    """A task condition: ``reg`` (a registered command result) is LOCKED's refusal."""
    return f"({reg}.stderr | default('')) is match('{REFUSED}')"


def holder(role: str, plan: str) -> str:
    """LOCKED's HOLDER: the command the engine's holder record names while a role's task holds the lock (JSON)."""
    return json.dumps(f"Ansible role {role} (plan {plan})")


__all__ = ["AGAIN", "LOCKED", "REFUSED", "holder", "refused"]
