#!/usr/bin/env bash
# rocm-wizard dry run: plan driver: Only the amdgpu kernel driver (amdgpu-dkms from AMD's driver
# repository), for ROCm from pip or a container
# Nothing has been run. Running this script by hand does what `rocm-wizard --plan driver` would
# do, in the same order, with the same commands. Run it again after the reboot, or after fixing a
# failure: it continues where it stopped.
#
# machine: Red Hat Enterprise Linux 9.4 (Plow), kernel 5.14.0-427.13.1.el9_4.x86_64
# [built:rhel9-mi300x]
# GPU: AMD Instinct MI300X (gfx942)
# GPU: AMD Instinct MI300X (gfx942)
# ROCm now: 6.1.2 (legacy)
# driver: amdgpu dkms 6.7.0
# target: stream driver, rocm 10.1.0, gfx gfx942
# why: For the many setups whose ROCm comes from a pip wheel or a container: only the kernel
# driver is needed, and /dev/kfd is how it shows. When the running kernel's own amdgpu driver is
# enough (/dev/kfd present; for a Ryzen APU a kernel as new as the knowledge base says it needs)
# this plan has nothing to do and says so. Otherwise it takes AMD's driver-only route: the driver-
# numbered amdgpu-install package of the newest Core SDK release the knowledge base has facts for
# adds AMD's driver repository, then the running kernel's headers and amdgpu-dkms are installed
# and dkms status must show the module; no ROCm and no graphics stack are installed. A
# distribution the release does not list, or a mainline kernel, is refused; an installed ROCm
# 7.2.4 or older is removed first, as AMD says. Then a reboot. After it, a pip plan (pip-only,
# therock-pip) or docker.
# plan file: plans/driver.toml (shipped)

set -euo pipefail

# Progress: one line per finished step. Delete this file to start the plan over. A step it records
# as done whose check on the machine fails now is drift: reported and run again. A progress file
# that exists but cannot be read stops the script before any change.
progress=/var/lib/rocm-wizard/script/driver.progress
read_record() { sudo -- sh -c 'if out=$(LC_ALL=C cat -- "$1" 2>&1); then if printf "%s\n" "$out" | grep -qvxE -- "$2|"; then echo "rocm-wizard: the record $1 does not parse (each line must match $2): fix or remove it" >&2; exit 1; fi; printf "%s\n" "$out"; exit 0; fi; case $out in *"No such file or directory"*) exit 0;; esac; echo "rocm-wizard: cannot read the record $1: $out" >&2; exit 1' sh "$@"; }
# One wizard at a time: the wizard's own locks (an flock on the lock file of each state dir the
# plan changes things of: /var/lib/rocm-wizard/lock) are held until this script ends, and a run of
# the wizard that is not finished there is resumed, rolled back or abandoned first.
wizard_states=(/var/lib/rocm-wizard)
locks=(/var/lib/rocm-wizard/lock)
stat=$(cat "/proc/$$/stat" 2>/dev/null) || stat=""
read -r -a stat_fields <<<"${stat##*) }"
proc_start=null
if [ -n "${stat_fields[19]:-}" ]; then proc_start="\"${stat_fields[19]}\""; fi
holder=$(printf '{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}' "$$" "$(date +%Y-%m-%dT%H:%M:%S%z)" '"dry-run script of plan driver"' "$proc_start")
# shellcheck disable=SC2016  # literal $ inside single quotes is intended
coproc wizard_lock { umask 077; exec sudo -- sh -c 'one='"'"'trap "" INT QUIT HUP; say() { printf "%s\n%s\n" "$1" "$2"; read -r _ || :; exit 1; }; command -v flock >/dev/null || say "flock (util-linux) is not installed" "$1"; as_owner() { o=$1; shift; if [ "$(id -u)" = 0 ] && [ "$o" != 0:0 ]; then setpriv --reuid="${o%%:*}" --regid="${o#*:}" --clear-groups -- "$@"; else "$@"; fi; }; owner_of() { p=$1; while [ ! -e "$p" ] && [ ! -L "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); done; stat -c %u:%g -- "$p" 2>/dev/null || echo 0:0; }; whose() { d=$(dirname -- "$1"); who=$(owner_of "$d"); why=; if [ "${who%%:*}" != 0 ] && { [ -e "$d" ] || [ -L "$d" ]; } && [ "$(stat -c %u -- "$(dirname -- "$d")" 2>/dev/null)" != "${who%%:*}" ]; then why="$d is owned by neither root nor the user running it"; fi; }; canon() { c=$(as_owner "$2" sh -c '"'"'"'"'"'"'"'"'cd -- "$(dirname -- "$1")" && pwd -P'"'"'"'"'"'"'"'"' sh "$1" 2>/dev/null) || c=$1; [ -n "$c" ] || c=$1; }; check() { d=$(dirname -- "$1"); why=; [ -L "$d" ] || [ -d "$d" ] || { p=$d; while [ ! -e "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); done; own=$(stat -c %u:%g -- "$p" 2>/dev/null) || own=0:0; (umask 022; as_owner "$own" mkdir -p -- "$(dirname -- "$d")") 2>/dev/null; as_owner "$own" mkdir -m 700 -- "$d" 2>/dev/null; }; [ -O "$d" ] || [ -n "$(find "$d" -maxdepth 0 -user 0 2>/dev/null)" ] || why="$d is owned by neither root nor the user running it"; [ -z "$(find "$d" -maxdepth 0 \( -perm -020 -o -perm -002 \) 2>/dev/null)" ] || why="$d is writable by group or others"; [ -L "$d" ] && why="$d is a symlink"; [ -e "$1" ] && [ ! -f "$1" ] && why="$1 is not a file"; [ -L "$1" ] && why="$1 is a symlink"; }; make_lock() { if [ ! -e "$1" ]; then o=$(stat -c %u:%g -- "$(dirname -- "$1")" 2>/dev/null) || o=0:0; as_owner "$o" touch -- "$1" 2>/dev/null; fi; }; holder_of() { printf "%s" "$(sed -n '"'"'"'"'"'"'"'"'s|^{"pid": \([0-9]*\), "start_time": "\([^"]*\)", "command": "\(.*\)", "proc_start".*|pid \1, started \2: \3|p'"'"'"'"'"'"'"'"' -- "$1" 2>/dev/null)"; }; taken=; seen=; fd=9; nl=$(printf "\n_"); nl=${nl%_}; ifs=$IFS; me=$(id -u); let_go() { IFS=$nl; set -f; for t in $taken; do IFS=$ifs; f=${t%%:*}; r=${t#*:}; k=${r%%:*}; r=${r#*:}; if [ "$k" = - ]; then : >"$r"; flock -u "$f"; else (echo let-go >&"$f") 2>/dev/null; eval "exec $f>&-"; wait "$k"; fi; done; IFS=$ifs; set +f; taken=; }; take_as() { ans=; command -v setpriv >/dev/null || { ans="setpriv (util-linux) is not installed"; return 0; }; tmp=$(TMPDIR= mktemp -d -t rocm-wizard-lock.XXXXXXXX) || tmp=; if [ -z "$tmp" ] || ! mkfifo -m 600 -- "$tmp/in" "$tmp/out"; then [ -z "$tmp" ] || rm -rf -- "$tmp"; ans="cannot make the pipes to its owner'"'"'"'"'"'"'"'"'s helper"; return 0; fi; ( IFS=$nl; set -f; for t in $taken; do eval "exec ${t%%:*}>&-"; done; umask 077; exec setpriv --reuid="${2%%:*}" --regid="${2#*:}" --clear-groups -- sh -c "$one" sh "$1" "$3" <"$tmp/in" >"$tmp/out" ) & pid=$!; eval "exec $fd>\"\$tmp/in\""; { read -r ans || :; [ "$ans" = locked ] || read -r _ || :; } <"$tmp/out"; rm -rf -- "$tmp"; if [ "$ans" = locked ]; then taken="$taken$fd:$pid:$1$nl"; fd=$((fd - 1)); return 0; fi; eval "exec $fd>&-"; wait "$pid"; [ -n "$ans" ] || ans="its owner'"'"'"'"'"'"'"'"'s helper (uid ${2%%:*}) did not answer"; }; first=$1; holder=$2; shift 2; set -- "$first" "$@"; for l do who=0:0; why=; [ "$me" != 0 ] || whose "$l"; if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; if [ "${who%%:*}" != 0 ]; then canon "$l" "$who"; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; take_as "$l" "$who" "$holder"; case $ans in locked) ;; "held "*) let_go; printf "%s\n%s\n" "$ans" "$l"; read -r _ || :; exit 0;; *) let_go; say "$ans" "$l";; esac; canon "$l" "$who"; seen="$seen$c$nl"; continue; fi; check "$l"; if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; make_lock "$l"; if ! true 2>/dev/null >>"$l"; then let_go; say "cannot open it" "$l"; fi; c=$(cd -- "$(dirname -- "$l")" && pwd -P) || c=$l; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; seen="$seen$c$nl"; eval "exec $fd>>\"\$l\""; if ! flock -n "$fd"; then h=$(holder_of "$l"); let_go; printf "held %s\n%s\n" "$h" "$l"; read -r _ || :; exit 0; fi; printf "%s\n" "$holder" >"$l"; taken="$taken$fd:-:$l$nl"; fd=$((fd - 1)); done; echo locked; read -r _ || :; let_go; exit 0'"'"'; trap "" INT QUIT HUP; say() { printf "%s\n%s\n" "$1" "$2"; read -r _ || :; exit 1; }; command -v flock >/dev/null || say "flock (util-linux) is not installed" "$1"; as_owner() { o=$1; shift; if [ "$(id -u)" = 0 ] && [ "$o" != 0:0 ]; then setpriv --reuid="${o%%:*}" --regid="${o#*:}" --clear-groups -- "$@"; else "$@"; fi; }; owner_of() { p=$1; while [ ! -e "$p" ] && [ ! -L "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); done; stat -c %u:%g -- "$p" 2>/dev/null || echo 0:0; }; whose() { d=$(dirname -- "$1"); who=$(owner_of "$d"); why=; if [ "${who%%:*}" != 0 ] && { [ -e "$d" ] || [ -L "$d" ]; } && [ "$(stat -c %u -- "$(dirname -- "$d")" 2>/dev/null)" != "${who%%:*}" ]; then why="$d is owned by neither root nor the user running it"; fi; }; canon() { c=$(as_owner "$2" sh -c '"'"'cd -- "$(dirname -- "$1")" && pwd -P'"'"' sh "$1" 2>/dev/null) || c=$1; [ -n "$c" ] || c=$1; }; check() { d=$(dirname -- "$1"); why=; [ -L "$d" ] || [ -d "$d" ] || { p=$d; while [ ! -e "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); done; own=$(stat -c %u:%g -- "$p" 2>/dev/null) || own=0:0; (umask 022; as_owner "$own" mkdir -p -- "$(dirname -- "$d")") 2>/dev/null; as_owner "$own" mkdir -m 700 -- "$d" 2>/dev/null; }; [ -O "$d" ] || [ -n "$(find "$d" -maxdepth 0 -user 0 2>/dev/null)" ] || why="$d is owned by neither root nor the user running it"; [ -z "$(find "$d" -maxdepth 0 \( -perm -020 -o -perm -002 \) 2>/dev/null)" ] || why="$d is writable by group or others"; [ -L "$d" ] && why="$d is a symlink"; [ -e "$1" ] && [ ! -f "$1" ] && why="$1 is not a file"; [ -L "$1" ] && why="$1 is a symlink"; }; make_lock() { if [ ! -e "$1" ]; then o=$(stat -c %u:%g -- "$(dirname -- "$1")" 2>/dev/null) || o=0:0; as_owner "$o" touch -- "$1" 2>/dev/null; fi; }; holder_of() { printf "%s" "$(sed -n '"'"'s|^{"pid": \([0-9]*\), "start_time": "\([^"]*\)", "command": "\(.*\)", "proc_start".*|pid \1, started \2: \3|p'"'"' -- "$1" 2>/dev/null)"; }; taken=; seen=; fd=9; nl=$(printf "\n_"); nl=${nl%_}; ifs=$IFS; me=$(id -u); let_go() { IFS=$nl; set -f; for t in $taken; do IFS=$ifs; f=${t%%:*}; r=${t#*:}; k=${r%%:*}; r=${r#*:}; if [ "$k" = - ]; then : >"$r"; flock -u "$f"; else (echo let-go >&"$f") 2>/dev/null; eval "exec $f>&-"; wait "$k"; fi; done; IFS=$ifs; set +f; taken=; }; take_as() { ans=; command -v setpriv >/dev/null || { ans="setpriv (util-linux) is not installed"; return 0; }; tmp=$(TMPDIR= mktemp -d -t rocm-wizard-lock.XXXXXXXX) || tmp=; if [ -z "$tmp" ] || ! mkfifo -m 600 -- "$tmp/in" "$tmp/out"; then [ -z "$tmp" ] || rm -rf -- "$tmp"; ans="cannot make the pipes to its owner'"'"'s helper"; return 0; fi; ( IFS=$nl; set -f; for t in $taken; do eval "exec ${t%%:*}>&-"; done; umask 077; exec setpriv --reuid="${2%%:*}" --regid="${2#*:}" --clear-groups -- sh -c "$one" sh "$1" "$3" <"$tmp/in" >"$tmp/out" ) & pid=$!; eval "exec $fd>\"\$tmp/in\""; { read -r ans || :; [ "$ans" = locked ] || read -r _ || :; } <"$tmp/out"; rm -rf -- "$tmp"; if [ "$ans" = locked ]; then taken="$taken$fd:$pid:$1$nl"; fd=$((fd - 1)); return 0; fi; eval "exec $fd>&-"; wait "$pid"; [ -n "$ans" ] || ans="its owner'"'"'s helper (uid ${2%%:*}) did not answer"; }; first=$1; holder=$2; shift 2; set -- "$first" "$@"; for l do who=0:0; why=; [ "$me" != 0 ] || whose "$l"; if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; if [ "${who%%:*}" != 0 ]; then canon "$l" "$who"; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; take_as "$l" "$who" "$holder"; case $ans in locked) ;; "held "*) let_go; printf "%s\n%s\n" "$ans" "$l"; read -r _ || :; exit 0;; *) let_go; say "$ans" "$l";; esac; canon "$l" "$who"; seen="$seen$c$nl"; continue; fi; check "$l"; if [ -n "$why" ]; then let_go; say "refusing it: $why" "$l"; fi; make_lock "$l"; if ! true 2>/dev/null >>"$l"; then let_go; say "cannot open it" "$l"; fi; c=$(cd -- "$(dirname -- "$l")" && pwd -P) || c=$l; case "$nl$seen" in *"$nl$c$nl"*) continue;; esac; seen="$seen$c$nl"; eval "exec $fd>>\"\$l\""; if ! flock -n "$fd"; then h=$(holder_of "$l"); let_go; printf "held %s\n%s\n" "$h" "$l"; read -r _ || :; exit 0; fi; printf "%s\n" "$holder" >"$l"; taken="$taken$fd:-:$l$nl"; fd=$((fd - 1)); done; echo locked; read -r _ || :; let_go; exit 0' sh "${locks[0]}" "$holder" "${locks[@]:1}"; }
lock_pid=$!
if ! read -r took <&"${wizard_lock[0]:-}"; then took=""; fi
lock=${locks[0]}
if [ "$took" != locked ] && ! read -r lock <&"${wizard_lock[0]:-}"; then lock=${locks[0]}; fi
# The helper holds the locks until it reads a line (this script's end) or its input ends: every
# command below inherits that input (lock_out, opened anew: bash keeps a coprocess's own
# descriptors from the commands it runs), as the engine's actions inherit its lock, so a script
# killed mid-step (kill -9) leaves the locks held until that step's command ends; a process a step
# leaves behind (a daemon) holds nothing once the script has ended.
let_go() { (echo let-go >&"$lock_out") 2>/dev/null || :; exec {lock_out}>&-; wait "$lock_pid" || true; }
case $took in
  locked) exec {lock_out}>"/dev/fd/${wizard_lock[1]}"; trap let_go EXIT ;;
  held*) echo "rocm-wizard: another rocm-wizard run holds the lock (${took#held }); lock file: $lock: wait for it to end, then run this script again" >&2; exit 4 ;;
  *) echo "rocm-wizard: cannot take the wizard's lock $lock${took:+: $took}" >&2; exit 1 ;;
esac
for wizard_state in "${wizard_states[@]}"; do
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  run_state=$(sudo -- sh -c 'me=$(id -u); limit=60; reader='"'"'cur=$(cat -- "$1/current" 2>/dev/null) || exit 0; case $cur in ""|*/*) exit 0;; esac; [ -d "$1/runs/$cur" ] || exit 0; last=$(grep -E -- '"'"'"'"'"'"'"'"'^[{].*[}]$'"'"'"'"'"'"'"'"' "$1/runs/$cur/journal.jsonl" 2>/dev/null | tail -n 1); case $last in *'"'"'"'"'"'"'"'"'"event": "run-end", "state": "done"'"'"'"'"'"'"'"'"'*|*'"'"'"'"'"'"'"'"'"event": "run-end", "state": "rolled-back"'"'"'"'"'"'"'"'"'*|*'"'"'"'"'"'"'"'"'"event": "run-end", "state": "abandoned"'"'"'"'"'"'"'"'"'*) ;; *) echo "$cur";; esac'"'"'; owner_of() { p=$1; while [ ! -e "$p" ] && [ ! -L "$p" ] && [ "$p" != / ]; do p=$(dirname -- "$p"); done; stat -c %u:%g -- "$p" 2>/dev/null || echo 0:0; }; unfinished_in() { unfinished=; why=; o=$(owner_of "$1"); set -- sh -c "$reader" sh "$1"; if [ "$me" = 0 ] && [ "${o%%:*}" != 0 ]; then command -v setpriv >/dev/null || { why="setpriv (util-linux) is not installed"; return 1; }; set -- setpriv --reuid="${o%%:*}" --regid="${o#*:}" --clear-groups -- "$@"; fi; unfinished=$(timeout "$limit" "$@" </dev/null) && return 0; rc=$?; unfinished=; if [ "$rc" = 124 ]; then why="timed out after $limit s"; else why="exit $rc"; fi; return 1; }; if unfinished_in "$1"; then [ -z "$unfinished" ] || printf "unfinished %s\n" "$unfinished"; else printf "unread %s\n" "$why"; fi' sh "$wizard_state")
  case $run_state in
    "unfinished "*) echo "rocm-wizard: run ${run_state#unfinished } of the wizard is not finished (rocm-wizard status shows where it stands): 'rocm-wizard resume' continues it, 'rocm-wizard rollback' undoes it, 'rocm-wizard abandon' forgets it; then run this script again" >&2; exit 1 ;;
    "unread "*) echo "rocm-wizard: cannot read whether a run of the wizard in $wizard_state is finished (${run_state#unread }): then run this script again" >&2; exit 1 ;;
  esac
done
done_steps=$(read_record "$progress" '[0-9]+') || exit 1
step_done() { [[ $'\n'"$done_steps"$'\n' == *$'\n'"$1"$'\n'* ]]; }
drift() { echo "drift: step $1 is recorded as done, but the machine says otherwise (checked: $2: no): running it again" >&2; done_steps=$(printf '%s\n' "$done_steps" | grep -vx "$1" || true); }
mark_done() { (umask 077; sudo -- mkdir -p "$(dirname "$progress")" && echo "$1" | sudo -- tee -a "$progress" >/dev/null); }
mark_boot() { (umask 077; sudo -- mkdir -p "$(dirname "$progress")" && echo "$1" | sudo -- tee "$progress.reboot" >/dev/null); }

# ---- step 1/7: preflight: Preflight: check everything the plan needs before the first change
# note: each check must pass; a failure stops the run before anything changes (--skip-preflight
# NAME skips a check you know to be wrong, and is journalled)
if ! step_done 1; then
  mark_done 1
fi

# ---- step 2/7: backup: Back up environments, packages, repo lists and evidence
# note: nothing to do
# skipped: no step of this plan changes anything

# ---- step 3/7: purge: Remove the installed ROCm stacks (simulated first)
# note: nothing to purge
# skipped: the driver plan installs no driver here, so the installed ROCm stays

# ---- step 4/7: kernel_driver: The amdgpu kernel driver
# note: nothing to do
# skipped: the amdgpu DKMS driver is installed and /dev/kfd is present

# ---- step 5/7: secure_boot: Enrol the DKMS signing key for Secure Boot (MOK)
# skipped: Secure Boot is off

# ---- step 6/7: groups: Add the user to the render and video groups
# skipped: user is already in render and video

# ---- step 7/7: reboot: Reboot
# skipped: no earlier step needs a reboot

echo 'rocm-wizard plan driver: done'
