#!/usr/bin/env bash
# rocm-wizard dry run: plan upgrade-6.4: Upgrade to ROCm 6.4.4 with the newest torch of the
# rocm6.4 wheel index
# Nothing has been run. Running this script by hand does what `rocm-wizard --plan upgrade-6.4`
# would do, in the same order, with the same commands. Run it again after the reboot, or after
# fixing a failure: it continues where it stopped.
#
# machine: Ubuntu 24.04.1 LTS (noble), kernel 6.8.0-48-generic [built:rx9070xt-noble-fresh]
# GPU: AMD Radeon RX 9070 XT (gfx1201)
# driver: amdgpu in-tree
# target: stream legacy, rocm 6.4.4, torch 2.9.1, index rocm6.4, index_url
# https://download.pytorch.org/whl/rocm6.4, gfx gfx1201, venv /home/user/rocm-wizard-venv
# why: The conservative current legacy stack: ROCm 6.4.4 (the last 6.4 patch release of the legacy
# amdgpu-install line) and the newest torch the rocm6.4 wheel index carries (RDNA2 gfx1030, RDNA3
# gfx1100-1102, RDNA4 gfx1200/1201, Instinct). Choose it when you need a system ROCm (hipcc,
# rocminfo, other tools) but not the 7.x line.
# plan file: plans/upgrade-6.4.toml (shipped)

set -euo pipefail

# Progress: one line per finished step. Delete this file to start the plan over. A step it records
# as done whose check on the machine fails now is drift: reported and run again. A progress file
# that exists but cannot be read stops the script before any change.
progress=/var/lib/rocm-wizard/script/upgrade-6.4.progress
read_record() { sudo -- sh -c 'if out=$(LC_ALL=C cat -- "$1" 2>&1); then if printf "%s\n" "$out" | grep -qvxE -- "$2|"; then echo "rocm-wizard: the record $1 does not parse (each line must match $2): fix or remove it" >&2; exit 1; fi; printf "%s\n" "$out"; exit 0; fi; case $out in *"No such file or directory"*) exit 0;; esac; echo "rocm-wizard: cannot read the record $1: $out" >&2; exit 1' sh "$@"; }
# One wizard at a time: the wizard's own locks (an flock on the lock file of each state dir the
# plan changes things of: /var/lib/rocm-wizard/lock, /home/user/.local/state/rocm-wizard/lock) are
# held until this script ends, and a run of the wizard that is not finished there is resumed,
# rolled back or abandoned first.
wizard_states=(/var/lib/rocm-wizard /home/user/.local/state/rocm-wizard)
locks=(/var/lib/rocm-wizard/lock /home/user/.local/state/rocm-wizard/lock)
stat=$(cat "/proc/$$/stat" 2>/dev/null) || stat=""
read -r -a stat_fields <<<"${stat##*) }"
proc_start=null
if [ -n "${stat_fields[19]:-}" ]; then proc_start="\"${stat_fields[19]}\""; fi
holder=$(printf '{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}' "$$" "$(date +%Y-%m-%dT%H:%M:%S%z)" '"dry-run script of plan upgrade-6.4"' "$proc_start")
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

# ---- step 1/10: preflight: Preflight: check everything the plan needs before the first change
# note: each check must pass; a failure stops the run before anything changes (--skip-preflight
# NAME skips a check you know to be wrong, and is journalled)
if ! step_done 1; then
  # machine: this is the machine the plan was made for (os ubuntu 24.04, kernel 6.8.0-48-generic,
  # pci 1002:7550, gfx gfx1201, rocm none, venv /home/user/rocm-wizard-venv, venv_python absent)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  bound=0; python3 -c 'import json, os, re, sys
want = json.loads(sys.argv[1])
osr, krel, pci, kfd, opt = sys.argv[2:7]
venv = sys.argv[7] if len(sys.argv) > 7 else None
def read(p):
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None
have = {}
rel = {}
for line in (read(osr) or "").splitlines():
    k, _, v = line.partition("=")
    rel[k.strip()] = v.strip().strip('"'"'"'"'"').strip("'"'"'")
have["os"] = " ".join(x for x in (rel.get("ID"), rel.get("VERSION_ID")) if x) or "unknown"
have["kernel"] = (read(krel) or "").strip() or "unknown"
ids = []
try:
    devs = sorted(os.listdir(pci))
except OSError:
    devs = []
for d in devs:
    vendor = (read(os.path.join(pci, d, "vendor")) or "").strip().lower()
    cls = (read(os.path.join(pci, d, "class")) or "").strip().lower()
    if vendor == "0x1002" and cls.startswith("0x03"):
        dev = (read(os.path.join(pci, d, "device")) or "").strip().lower()
        ids.append("1002:" + dev[2:] if dev.startswith("0x") else "1002:" + dev)
have["pci"] = ",".join(sorted(ids)) or "none"
gfx = []
try:
    nodes = sorted(os.listdir(kfd))
except OSError:
    nodes = None
for n in nodes or ():
    m = re.search(r"^gfx_target_version (\d+)", read(os.path.join(kfd, n, "properties")) or "", re.M)
    v = int(m.group(1)) if m else 0
    if v:
        gfx.append(f"gfx{v // 10000}{v // 100 % 100}{v % 100:x}")
have["gfx"] = ",".join(sorted(gfx)) if nodes is not None else None
try:
    legacy = (re.match(r"^rocm-(\d+\.\d+(?:\.\d+)?)(?:-\d+)?$", x) for x in os.listdir(opt))
    have["rocm"] = ",".join(sorted(m.group(1) for m in legacy if m)) or "none"
except OSError:
    have["rocm"] = "none"
if venv is not None:
    cfg = read(os.path.join(venv, "pyvenv.cfg"))
    if cfg is None:
        have["venv_python"] = "present" if os.path.isdir(os.path.join(venv, "bin")) else "absent"
    else:
        m = re.search(r"^version(?:_info)?\s*=\s*(\d+\.\d+)", cfg, re.M)
        have["venv_python"] = m.group(1) if m else "present"
diff = []
for key, value in want.items():
    got = have.get(key)
    if got is None:
        continue
    if key == "venv_python" and value == "present" and got != "absent":
        continue
    if got != value:
        diff.append(f"{key}: the plan was made for {value}, this machine has {got}")
if diff:
    sys.exit("this is not the machine the plan was made for (" + "; ".join(diff) + "); resolve the plan "
             "again on this machine (rocm-wizard --plan FILE --replan, or --plan NAME; fleet run --replan)")
print("the machine is the one the plan was made for")' '{"gfx": "gfx1201", "kernel": "6.8.0-48-generic", "os": "ubuntu 24.04", "pci": "1002:7550", "rocm": "none", "venv_python": "absent"}' /etc/os-release /proc/sys/kernel/osrelease /sys/bus/pci/devices /sys/class/kfd/kfd/topology/nodes /opt /home/user/rocm-wizard-venv || bound=$?
  if [ "$bound" = 1 ]; then exit 5; elif [ "$bound" != 0 ]; then echo 'preflight failed: machine: this is the machine the plan was made for (os ubuntu 24.04, kernel 6.8.0-48-generic, pci 1002:7550, gfx gfx1201, rocm none, venv /home/user/rocm-wizard-venv, venv_python absent)' >&2; exit 1; fi
  # ssh: ssh session: advise tmux/screen
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'if [ -n "${SSH_CONNECTION:-}" ] && [ -z "${TMUX:-}${STY:-}" ]; then echo "warning: over ssh without tmux/screen: a dropped connection stops the run; start tmux or screen first" >&2; fi'; then echo 'preflight failed: ssh: ssh session: advise tmux/screen' >&2; exit 1; fi
  # root: root is available through sudo
  if ! sudo -- true; then echo 'preflight failed: root: root is available through sudo' >&2; exit 1; fi
  # package-lock: the package manager's lock is free (waits up to 120 s)
  if ! sudo -- python3 -c 'import fcntl, os, struct, sys, time
wait, paths = float(sys.argv[1]), sys.argv[2:]
def holder(path):
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(8))
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack("hhqqi", got[:struct.calcsize("hhqqi")])
    if kind == fcntl.F_UNLCK:
        return None
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"pid {pid}" + (f" ({cmd[:80]})" if cmd else "")
start, said = time.monotonic(), -10.0
while True:
    held = [(p, h) for p in paths for h in [holder(p)] if h]
    if not held:
        sys.exit(0)
    waited = time.monotonic() - start
    if waited >= wait:
        p, h = held[0]
        sys.exit(f"{p} is still locked by {h} after {wait:g} s: another package manager (unattended-upgrades?) "
                 "is running; wait for it, or give the run more time with --lock-wait S")
    if waited - said >= 10:
        p, h = held[0]
        print(f"waiting for {p}, locked by {h} ({waited:.0f} s of at most {wait:g} s)", flush=True)
        said = waited
    time.sleep(0.5)' 120 /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock; then echo 'preflight failed: package-lock: the package manager'"'"'s lock is free (waits up to 120 s)' >&2; exit 1; fi
  # package-url: the amdgpu-install package for this distro exists
  if ! wget -q --spider https://repo.radeon.com/amdgpu-install/6.4.4/ubuntu/noble/amdgpu-install_6.4.60404-1_all.deb; then echo 'preflight failed: package-url: the amdgpu-install package for this distro exists' >&2; exit 1; fi
  # venv-path: /home/user/rocm-wizard-venv is new or a venv
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'if [ -e "$1" ] && [ ! -e "$1/pyvenv.cfg" ]; then echo "$1 exists and is not a Python venv: choose another venv path" >&2; exit 1; fi' sh /home/user/rocm-wizard-venv; then echo 'preflight failed: venv-path: /home/user/rocm-wizard-venv is new or a venv' >&2; exit 1; fi
  # python-version: python3 is a Python the wheel exists for (3.10, 3.11, 3.12, 3.13, 3.14, 3.13t,
  # 3.14t)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'py=$1; shift; v=$("$py" --version 2>&1) || { echo "$py cannot run: $v" >&2; exit 1; }; v=${v#Python }; mm=$(echo "$v" | cut -d. -f1,2); for w in "$@"; do [ "$mm" = "$w" ] && { echo "$py is Python $mm"; exit 0; }; done; echo "$py is Python $mm; the wheel exists for Python $*" >&2; exit 1' sh python3 3.10 3.11 3.12 3.13 3.14 3.13t 3.14t; then echo 'preflight failed: python-version: python3 is a Python the wheel exists for (3.10, 3.11, 3.12, 3.13, 3.14, 3.13t, 3.14t)' >&2; exit 1; fi
  # pip-config: pip's configuration lets no PyPI answer beside the index
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! python3 -c 'import os, re, sys
from urllib.parse import urlsplit
PYPI = ('"'"'pypi.org'"'"', '"'"'pypi.python.org'"'"', '"'"'files.pythonhosted.org'"'"')
KEYS = {"index-url": "index", "extra-index-url": "extra"}
def read(path):
    out, section, key = {}, None, None
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return None
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip()[:1] in "#;":
            continue
        if line.startswith("[") and "]" in line:
            section, key = line[1:line.index("]")].strip().lower(), None
            continue
        if line[:1] in " \t" and key:
            out[key][1].extend((u, f"{path} line {n}") for u in line.split())
            continue
        mo = re.match(r"^([A-Za-z_-]+)\s*[=:]\s*(.*)$", line)
        key = None
        if mo and section in ("global", "install"):
            name = KEYS.get(mo.group(1).lower().replace("_", "-"))
            if name:
                key = (section, name)
                out[key] = (section, [(u, f"{path} line {n}") for u in mo.group(2).split()])
    merged = {}
    for section in ("global", "install"):
        merged.update({k[1]: v[1] for k, v in out.items() if k[0] == section})
    return merged
VENDOR = {urlsplit(sys.argv[1]).hostname or "", "download.pytorch.org", "repo.radeon.com"}
files, chosen = sys.argv[2:], os.environ.get("PIP_CONFIG_FILE")
if chosen == os.devnull:
    files = []
elif chosen is not None:
    if os.path.exists(chosen):
        files = [f for f in files if f.split("/")[-2] != ".pip" and f.split("/")[-3:-1] != [".config", "pip"]]
    files.append(chosen)
found = {"index": [("https://pypi.org/simple", "pip'"'"'s default index")], "extra": []}
for f in files:
    got = read(f)
    if got:
        found.update(got)
for var, name in (("PIP_INDEX_URL", "index"), ("PIP_EXTRA_INDEX_URL", "extra")):
    if os.environ.get(var):
        found[name] = [(u, f"the environment'"'"'s {var}") for u in os.environ[var].split()]
def pypi(u):
    return (urlsplit(u).hostname or "") in PYPI
def vendor(u):
    host = urlsplit(u).hostname or ""
    return host in VENDOR or host.endswith(".amd.com")
extra = found["extra"]
# PyPI named as an extra index, or PyPI as the index beside a ROCm wheel index (the plan'"'"'s, PyTorch'"'"'s, AMD'"'"'s)
bad = [x for x in extra if pypi(x[0])] or     [x for x in found["index"] if pypi(x[0]) and any(vendor(u) for u, _ in extra)]
if bad:
    u, where = bad[0]
    other = next((x for x in found["index"] + extra if not pypi(x[0])), ("the plan'"'"'s index", "its command line"))
    sys.exit(f"{where}: {u} puts PyPI beside {other[0]} ({other[1]}): pip would let PyPI answer for "
             "rocm, rocm-sdk-* and torch, and PyPI serves empty placeholders under ROCm'"'"'s names (rocm 0.1.0, "
             "rocm-sdk-device-gfx* 0.0.1.dev0) and CUDA/CPU torch builds; remove PyPI from that setting "
             "(the wizard'"'"'s own install ignores pip'"'"'s configuration; later pip commands in the venv do not)")
where = ", ".join(sorted({w for _, w in found["index"] + extra}))
print(f"pip configuration: PyPI is not beside a ROCm index ({where})")' https://download.pytorch.org/whl/rocm6.4 /etc/xdg/pip/pip.conf /etc/pip.conf /home/user/.pip/pip.conf /home/user/.config/pip/pip.conf /home/user/rocm-wizard-venv/pip.conf; then echo 'preflight failed: pip-config: pip'"'"'s configuration lets no PyPI answer beside the index' >&2; exit 1; fi
  # wheel: torch 2.9.1 exists on https://download.pytorch.org/whl/rocm6.4 for this Python
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'py=$1 index=$2 name=$3 re=$4; v=$("$py" --version 2>&1) || { echo "$py cannot run: $v" >&2; exit 1; }; v=${v#Python }; tag=cp$(echo "$v" | cut -d. -f1,2 | tr -d .); page=$(wget -q -O - "${index%/}/$name/") || { echo "${index%/}/$name/ cannot be read" >&2; exit 1; }; re=$(echo "$re" | sed "s/@TAG@/$tag/g"); if printf "%s\n" "$page" | grep -qE -- "$re"; then echo "$name for $tag is on $index"; exit 0; fi; echo "no $name wheel for $tag (this Python) on $index" >&2; exit 1' sh python3 https://download.pytorch.org/whl/rocm6.4 torch 'torch-2\.9\.1((\+|%2B)[^-]*)?-@TAG@-'; then echo 'preflight failed: wheel: torch 2.9.1 exists on https://download.pytorch.org/whl/rocm6.4 for this Python' >&2; exit 1; fi
  # disk-rocm: disk space for ROCm under /opt
  if ! python3 -c 'import os, shutil, sys
path, need = sys.argv[1], int(sys.argv[2])
while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
free = shutil.disk_usage(path).free
if free < need:
    sys.exit(f"only {free / 2**30:.1f} GiB free on {path}; {need >> 30} GiB needed")
print(f"{free / 2**30:.1f} GiB free on {path}")' /opt 26843545600; then echo 'preflight failed: disk-rocm: disk space for ROCm under /opt' >&2; exit 1; fi
  # disk-venv: disk space for the venv under /home/user
  if ! python3 -c 'import os, shutil, sys
path, need = sys.argv[1], int(sys.argv[2])
while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
free = shutil.disk_usage(path).free
if free < need:
    sys.exit(f"only {free / 2**30:.1f} GiB free on {path}; {need >> 30} GiB needed")
print(f"{free / 2**30:.1f} GiB free on {path}")' /home/user 16106127360; then echo 'preflight failed: disk-venv: disk space for the venv under /home/user' >&2; exit 1; fi
  mark_done 1
fi

# ---- step 2/10: backup: Back up environments, packages, repo lists and evidence
# note: backup directory: /var/lib/rocm-wizard/backup/upgrade-6.4
# note: no Python environment with torch to back up
if ! step_done 2; then
  # create the backup directory
  if ! sudo -- test -d /var/lib/rocm-wizard/backup/upgrade-6.4; then
    sudo -- mkdir -p -m 0700 -- /var/lib/rocm-wizard/backup/upgrade-6.4
  fi
  # the backup directory is its owner's alone (it holds pip.conf files, which may carry index
  # passwords)
  sudo -- chmod 0700 -- /var/lib/rocm-wizard/backup/upgrade-6.4
  # installed packages (both ROCm streams included)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json; then
    sudo -- sh -c 'out=$1; shift; "$@" >"$out" 2>&1' sh /var/lib/rocm-wizard/backup/upgrade-6.4/dpkg-selections.txt dpkg-query -W -f '${Package}\t${Version}\t${db:Status-Abbrev}\n'
  fi
  # repo lists, keys, pins and global env files
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json; then
    sudo -- tar --ignore-failed-read --warning=no-failed-read -czf /var/lib/rocm-wizard/backup/upgrade-6.4/etc-files.tar.gz -C / etc/apt/sources.list etc/apt/sources.list.d etc/apt/preferences.d etc/apt/keyrings etc/apt/trusted.gpg.d etc/environment etc/profile.d etc/ld.so.conf.d
  fi
  # rocminfo evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json; then
    sudo -- sh -c 'out=$1; shift; if command -v "$1" >/dev/null 2>&1; then "$@" >"$out" 2>&1 || true; else echo "not installed: $1" >"$out"; fi' sh /var/lib/rocm-wizard/backup/upgrade-6.4/rocminfo.txt rocminfo
  fi
  # KFD topology evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json; then
    sudo -- sh -c 'for f in /sys/class/kfd/kfd/topology/nodes/*/properties; do echo "== $f"; cat "$f"; done >"$1" 2>&1 || true' sh /var/lib/rocm-wizard/backup/upgrade-6.4/kfd-properties.txt
  fi
  # the manifest rollback reads
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json; then
    sudo -- python3 -c 'import os,sys
p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]
d=os.path.dirname(p) or '"'"'.'"'"'
os.makedirs(d,exist_ok=True)
t=p+'"'"'.rocm-wizard.tmp'"'"'
with open(t,'"'"'w'"'"') as f: f.write(text)
os.chmod(t,mode)
os.replace(t,p)' /var/lib/rocm-wizard/backup/upgrade-6.4/manifest.json 644 '{
 "backup_dir": "/var/lib/rocm-wizard/backup/upgrade-6.4",
 "driver": {
  "kind": "in-tree",
  "version": null
 },
 "env_settings": [],
 "envs": [],
 "evidence": [
  "rocminfo.txt",
  "kfd-properties.txt"
 ],
 "files": {
  "archive": "etc-files.tar.gz",
  "paths": [
   "/etc/apt/sources.list",
   "/etc/apt/sources.list.d",
   "/etc/apt/preferences.d",
   "/etc/apt/keyrings",
   "/etc/apt/trusted.gpg.d",
   "/etc/environment",
   "/etc/profile.d",
   "/etc/ld.so.conf.d"
  ]
 },
 "format": 1,
 "machine": {
  "codename": "noble",
  "kernel": "6.8.0-48-generic",
  "os": "ubuntu",
  "version": "24.04"
 },
 "packages": {
  "dkms": [],
  "file": "dpkg-selections.txt",
  "manager": "apt",
  "rocm_streams": {}
 },
 "plan": "upgrade-6.4",
 "rocm": {
  "apt_sources": [],
  "installs": [],
  "pins": [],
  "stream": null,
  "version": null
 }
}
'
  fi
  # the backup is readable by its owner only
  sudo -- chmod -R go-rwx -- /var/lib/rocm-wizard/backup/upgrade-6.4
  mark_done 2
fi

# ---- step 3/10: purge: Remove the installed ROCm stacks (simulated first)
# note: nothing to purge
# skipped: no ROCm packages installed

# ---- step 4/10: rocm_install: Install ROCm 6.4.4 with amdgpu-install
# note: amdgpu-install package: https://repo.radeon.com/amdgpu-install/6.4.4/ubuntu/noble/amdgpu-
# install_6.4.60404-1_all.deb (the knowledge base records no sha256 for it: it is installed
# without a hash check; the packages it then installs are checked by the package manager against
# AMD's signed repository)
# note: --no-dkms: the running kernel's amdgpu driver stays; no reboot needed for the driver
if step_done 4 && ! test -e /opt/rocm-6.4.4/.info/version; then drift 4 'ROCm 6.4.4 is installed (its rocm-core version file)'; fi
if ! step_done 4; then
  # wait for the package manager's lock (at most 120 s)
  sudo -- python3 -c 'import fcntl, os, struct, sys, time
wait, paths = float(sys.argv[1]), sys.argv[2:]
def holder(path):
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0) + bytes(8))
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack("hhqqi", got[:struct.calcsize("hhqqi")])
    if kind == fcntl.F_UNLCK:
        return None
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = ""
    return f"pid {pid}" + (f" ({cmd[:80]})" if cmd else "")
start, said = time.monotonic(), -10.0
while True:
    held = [(p, h) for p in paths for h in [holder(p)] if h]
    if not held:
        sys.exit(0)
    waited = time.monotonic() - start
    if waited >= wait:
        p, h = held[0]
        sys.exit(f"{p} is still locked by {h} after {wait:g} s: another package manager (unattended-upgrades?) "
                 "is running; wait for it, or give the run more time with --lock-wait S")
    if waited - said >= 10:
        p, h = held[0]
        print(f"waiting for {p}, locked by {h} ({waited:.0f} s of at most {wait:g} s)", flush=True)
        said = waited
    time.sleep(0.5)' 120 /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock
  # repair an interrupted dpkg (dpkg --configure -a)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'test -z "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" && { test -z "$(dpkg --audit 2>/dev/null)" || dpkg-query -W -f '"'"'${Status}\n'"'"' 2>/dev/null | grep -Eq '"'"' reinstreq (unpacked|half-configured)$'"'"'; }' >/dev/null 2>&1; then
    sudo -- dpkg --configure -a
  fi
  # repair broken dependencies and reinstall half-installed packages (apt-get -f install)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c '{ apt-get check >/dev/null 2>&1 && test -z "$(dpkg --audit 2>/dev/null)"; } || dpkg-query -W -f '"'"'${Status}\n'"'"' 2>/dev/null | grep -Eq '"'"' reinstreq (unpacked|half-configured)$'"'"'' >/dev/null 2>&1; then
    sudo -- apt-get -f install -y
  fi
  # reinstall the packages a kill mid-unpack left half-installed (apt-get install --reinstall)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c '! dpkg-query -W -f '"'"'${Status}\n'"'"' 2>/dev/null | grep -q '"'"' reinstreq '"'"'' >/dev/null 2>&1; then
    sudo -- sh -c 'pkgs=$(dpkg-query -W -f '"'"'${Package} ${Status}\n'"'"' 2>/dev/null | awk '"'"'$3 == "reinstreq" {print $1}'"'"'); [ -z "$pkgs" ] || { apt-get install --reinstall -y $pkgs && dpkg --configure -a; }'
  fi
  # no package the step changes is held
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  sh -c 'held=$(apt-mark showhold "$@" 2>/dev/null | tr "\n" " " | sed "s/ *$//"); if [ -n "$held" ]; then echo "held packages the plan changes: $held. A hold is the admin'"'"'s decision: if you decide so, run: sudo apt-mark unhold $held (then rocm-wizard resume)" >&2; exit 1; fi' sh amdgpu-install rocm amdgpu-dkms
  # download directory
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1' sh /opt/rocm-6.4.4/.info/version test -d /var/lib/rocm-wizard/downloads >/dev/null 2>&1; then
    sudo -- mkdir -p -- /var/lib/rocm-wizard/downloads
  fi
  # download amdgpu-install for ROCm 6.4.4
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1' sh /opt/rocm-6.4.4/.info/version test -s /var/lib/rocm-wizard/downloads/amdgpu-install_6.4.60404-1_all.deb >/dev/null 2>&1; then
    sudo -- sh -c 'wget -q -c -O "$1.part" "$2" && mv -f -- "$1.part" "$1"' sh /var/lib/rocm-wizard/downloads/amdgpu-install_6.4.60404-1_all.deb https://repo.radeon.com/amdgpu-install/6.4.4/ubuntu/noble/amdgpu-install_6.4.60404-1_all.deb
  fi
  # install the amdgpu-install package (adds AMD's repo lists and key)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1' sh /opt/rocm-6.4.4/.info/version >/dev/null 2>&1; then
    sudo -- apt-get install -y /var/lib/rocm-wizard/downloads/amdgpu-install_6.4.60404-1_all.deb
  fi
  # AMD's repository key has the pinned fingerprint
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1' sh /opt/rocm-6.4.4/.info/version >/dev/null 2>&1; then
    sh -c 'got=$(gpg --show-keys --with-colons "$1" 2>/dev/null | awk -F: '"'"'$1=="pub"{p=1;next} p&&$1=="fpr"{print $10;p=0}'"'"'); [ "$got" = "$2" ] || { echo "$1 holds key(s) ${got:-none}, not only the AMD ROCm key $2" >&2; exit 1; }' sh /etc/apt/keyrings/rocm.gpg CA8BB4727A47B4D09B4EE8969386B48A1A693C5C
  fi
  # pin AMD's repository at 600 above distro rocm packages
  if ! sudo -- python3 -c 'import sys
try: sys.exit(0 if open(sys.argv[1]).read()==sys.argv[2] else 1)
except OSError: sys.exit(1)' /etc/apt/preferences.d/rocm-pin-600 'Package: *
Pin: release o=repo.radeon.com
Pin-Priority: 600
' >/dev/null 2>&1; then
    sudo -- python3 -c 'import os,sys
p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]
d=os.path.dirname(p) or '"'"'.'"'"'
os.makedirs(d,exist_ok=True)
t=p+'"'"'.rocm-wizard.tmp'"'"'
with open(t,'"'"'w'"'"') as f: f.write(text)
os.chmod(t,mode)
os.replace(t,p)' /etc/apt/preferences.d/rocm-pin-600 644 'Package: *
Pin: release o=repo.radeon.com
Pin-Priority: 600
'
  fi
  # read the new repository lists
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'test -e "$1" && exit 0; shift; [ "$#" -gt 0 ] && exec "$@"; exit 1' sh /opt/rocm-6.4.4/.info/version >/dev/null 2>&1; then
    sudo -- apt-get update
  fi
  # install ROCm 6.4.4 (usecase rocm, in-tree kernel driver kept)
  if ! sudo -- test -e /opt/rocm-6.4.4/.info/version; then
    sudo -- amdgpu-install -y --usecase=rocm --no-dkms
  fi
  mark_done 4
fi

# ---- step 5/10: secure_boot: Enrol the DKMS signing key for Secure Boot (MOK)
# skipped: Secure Boot is off

# ---- step 6/10: groups: Add the user to the render and video groups
# note: log out and back in (or run `newgrp render`) for the groups to apply; no reboot needed
# shellcheck disable=SC2016  # literal $ inside single quotes is intended
if step_done 6 && ! sh -c 'for g in render video; do id -nG "$1" | tr " " "\n" | grep -qx "$g" || exit 1; done' sh user >/dev/null 2>&1; then drift 6 'user is in render and video'; fi
if ! step_done 6; then
  # add user to render and video
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- sh -c 'for g in render video; do id -nG "$1" | tr " " "\n" | grep -qx "$g" || exit 1; done' sh user >/dev/null 2>&1; then
    sudo -- usermod -a -G render,video user
  fi
  mark_done 6
fi

# ---- step 7/10: pip_pin: Pin the torch stack in /home/user/rocm-wizard-venv
# note: new venv /home/user/rocm-wizard-venv
# note: pytorch-triton-rocm comes from rocm6.4 as torch's own pinned dependency (the knowledge
# base does not record its version)
# note: knowledge base: measured on 2.7.1 (rocm6.2.4, rocm6.3); other versions on this index
# assumed to match the build script list
if step_done 7 && ! /home/user/rocm-wizard-venv/bin/python -c 'import os, re, sys
from importlib import metadata as md
want, targets = sys.argv[1], sys.argv[2:]
try:
    v = md.version("torch")
except md.PackageNotFoundError:
    sys.exit("torch is not installed")
if want != "any" and v.split("+")[0] != want:
    sys.exit(f"torch {v} is installed, {want} was expected")
names = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions()}
fake = sorted(f"{d.metadata['"'"'Name'"'"']} {d.version}" for d in md.distributions()
              if ((d.metadata["Name"] or "").lower().replace("_", "-") in ("rocm", "rocm-sdk", "rocm-sdk-core",
                  "rocm-sdk-libraries") and d.version == "0.1.0") or ((d.metadata["Name"] or "").lower().replace(
                  "_", "-").startswith(("rocm-sdk-device-", "amd-torch-device-")) and d.version == "0.0.1.dev0"))
if fake:
    sys.exit(f"PyPI'"'"'s empty placeholders are installed, not ROCm: {'"'"', '"'"'.join(fake)}")
therock = any(n.startswith(("rocm-sdk-", "amd-torch-device-")) for n in names)
if "+rocm" not in v and not therock:
    sys.exit(f"torch {v} is not a ROCm build (CUDA or CPU wheel installed)")
if therock:
    missing = [t for t in targets if f"amd-torch-device-{t}" not in names and f"rocm-sdk-device-{t}" not in names]
else:
    lib = os.path.join(os.path.dirname(str(md.distribution("torch").locate_file("torch/__init__.py"))), "lib")
    found = set()
    for root, dirs, files in os.walk(lib):
        for name in files:
            found.update(re.findall(r"gfx[0-9]+[a-z]?", name))
    if not found:
        print(f"torch {v}: no per-arch files under {lib}; the verify step checks the GPU")
        sys.exit(0)
    missing = [t for t in targets if t not in found]
if missing:
    sys.exit(f"torch {v} lacks {'"'"', '"'"'.join(missing)}")
print(f"torch {v}: ROCm build carrying {'"'"', '"'"'.join(targets) or '"'"'the requested targets'"'"'}")' 2.9.1 gfx1201 >/dev/null 2>&1; then drift 7 'the venv /home/user/rocm-wizard-venv has the pinned torch'; fi
if ! step_done 7; then
  # create the venv /home/user/rocm-wizard-venv
  if ! test -x /home/user/rocm-wizard-venv/bin/python; then
    python3 -m venv /home/user/rocm-wizard-venv
  fi
  # remove every torch-stack distribution from the venv
  if ! /home/user/rocm-wizard-venv/bin/python -c 'import os, re, sys
from importlib import metadata as md
want, targets = sys.argv[1], sys.argv[2:]
try:
    v = md.version("torch")
except md.PackageNotFoundError:
    sys.exit("torch is not installed")
if want != "any" and v.split("+")[0] != want:
    sys.exit(f"torch {v} is installed, {want} was expected")
names = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions()}
fake = sorted(f"{d.metadata['"'"'Name'"'"']} {d.version}" for d in md.distributions()
              if ((d.metadata["Name"] or "").lower().replace("_", "-") in ("rocm", "rocm-sdk", "rocm-sdk-core",
                  "rocm-sdk-libraries") and d.version == "0.1.0") or ((d.metadata["Name"] or "").lower().replace(
                  "_", "-").startswith(("rocm-sdk-device-", "amd-torch-device-")) and d.version == "0.0.1.dev0"))
if fake:
    sys.exit(f"PyPI'"'"'s empty placeholders are installed, not ROCm: {'"'"', '"'"'.join(fake)}")
therock = any(n.startswith(("rocm-sdk-", "amd-torch-device-")) for n in names)
if "+rocm" not in v and not therock:
    sys.exit(f"torch {v} is not a ROCm build (CUDA or CPU wheel installed)")
if therock:
    missing = [t for t in targets if f"amd-torch-device-{t}" not in names and f"rocm-sdk-device-{t}" not in names]
else:
    lib = os.path.join(os.path.dirname(str(md.distribution("torch").locate_file("torch/__init__.py"))), "lib")
    found = set()
    for root, dirs, files in os.walk(lib):
        for name in files:
            found.update(re.findall(r"gfx[0-9]+[a-z]?", name))
    if not found:
        print(f"torch {v}: no per-arch files under {lib}; the verify step checks the GPU")
        sys.exit(0)
    missing = [t for t in targets if t not in found]
if missing:
    sys.exit(f"torch {v} lacks {'"'"', '"'"'.join(missing)}")
print(f"torch {v}: ROCm build carrying {'"'"', '"'"'.join(targets) or '"'"'the requested targets'"'"'}")' 2.9.1 gfx1201 >/dev/null 2>&1; then
    /home/user/rocm-wizard-venv/bin/python -m pip uninstall -y torch torchvision torchaudio pytorch-triton-rocm triton
  fi
  # install the pinned stack from https://download.pytorch.org/whl/rocm6.4 alone
  if ! env PIP_CONFIG_FILE=/dev/null /home/user/rocm-wizard-venv/bin/python -c 'import os, re, sys
from importlib import metadata as md
want, targets = sys.argv[1], sys.argv[2:]
try:
    v = md.version("torch")
except md.PackageNotFoundError:
    sys.exit("torch is not installed")
if want != "any" and v.split("+")[0] != want:
    sys.exit(f"torch {v} is installed, {want} was expected")
names = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions()}
fake = sorted(f"{d.metadata['"'"'Name'"'"']} {d.version}" for d in md.distributions()
              if ((d.metadata["Name"] or "").lower().replace("_", "-") in ("rocm", "rocm-sdk", "rocm-sdk-core",
                  "rocm-sdk-libraries") and d.version == "0.1.0") or ((d.metadata["Name"] or "").lower().replace(
                  "_", "-").startswith(("rocm-sdk-device-", "amd-torch-device-")) and d.version == "0.0.1.dev0"))
if fake:
    sys.exit(f"PyPI'"'"'s empty placeholders are installed, not ROCm: {'"'"', '"'"'.join(fake)}")
therock = any(n.startswith(("rocm-sdk-", "amd-torch-device-")) for n in names)
if "+rocm" not in v and not therock:
    sys.exit(f"torch {v} is not a ROCm build (CUDA or CPU wheel installed)")
if therock:
    missing = [t for t in targets if f"amd-torch-device-{t}" not in names and f"rocm-sdk-device-{t}" not in names]
else:
    lib = os.path.join(os.path.dirname(str(md.distribution("torch").locate_file("torch/__init__.py"))), "lib")
    found = set()
    for root, dirs, files in os.walk(lib):
        for name in files:
            found.update(re.findall(r"gfx[0-9]+[a-z]?", name))
    if not found:
        print(f"torch {v}: no per-arch files under {lib}; the verify step checks the GPU")
        sys.exit(0)
    missing = [t for t in targets if t not in found]
if missing:
    sys.exit(f"torch {v} lacks {'"'"', '"'"'.join(missing)}")
print(f"torch {v}: ROCm build carrying {'"'"', '"'"'.join(targets) or '"'"'the requested targets'"'"'}")' 2.9.1 gfx1201 >/dev/null 2>&1; then
    env PIP_CONFIG_FILE=/dev/null /home/user/rocm-wizard-venv/bin/python -m pip install --isolated --no-input --index-url https://download.pytorch.org/whl/rocm6.4 torch==2.9.1 torchvision==0.24.1 torchaudio==2.9.1
  fi
  # constraints file pinning the installed build
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! /home/user/rocm-wizard-venv/bin/python -c 'import re, sys
from importlib import metadata as md
keep = re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|amd-torch-device-.*)$")
pins = sorted({f"{d.metadata['"'"'Name'"'"']}=={d.version}" for d in md.distributions()
               if d.metadata['"'"'Name'"'"'] and keep.match(d.metadata['"'"'Name'"'"'].lower().replace('"'"'_'"'"', '"'"'-'"'"'))})
torch = any(p.lower().startswith("torch==") for p in pins)
text = "# written by rocm-wizard: keeps this venv'"'"'s ROCm torch build\n" + "\n".join(pins) + "\n"
if sys.argv[2:] == ["--same"]:
    try:
        with open(sys.argv[1]) as f:
            sys.exit(0 if torch and f.read() == text else 1)
    except OSError:
        sys.exit(1)
if not torch:
    sys.exit("torch is not installed: no constraints written")
with open(sys.argv[1], "w") as f:
    f.write(text)
print("\n".join(pins))' /home/user/rocm-wizard-venv/rocm-wizard-constraints.txt --same >/dev/null 2>&1; then
    /home/user/rocm-wizard-venv/bin/python -c 'import re, sys
from importlib import metadata as md
keep = re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|amd-torch-device-.*)$")
pins = sorted({f"{d.metadata['"'"'Name'"'"']}=={d.version}" for d in md.distributions()
               if d.metadata['"'"'Name'"'"'] and keep.match(d.metadata['"'"'Name'"'"'].lower().replace('"'"'_'"'"', '"'"'-'"'"'))})
torch = any(p.lower().startswith("torch==") for p in pins)
text = "# written by rocm-wizard: keeps this venv'"'"'s ROCm torch build\n" + "\n".join(pins) + "\n"
if sys.argv[2:] == ["--same"]:
    try:
        with open(sys.argv[1]) as f:
            sys.exit(0 if torch and f.read() == text else 1)
    except OSError:
        sys.exit(1)
if not torch:
    sys.exit("torch is not installed: no constraints written")
with open(sys.argv[1], "w") as f:
    f.write(text)
print("\n".join(pins))' /home/user/rocm-wizard-venv/rocm-wizard-constraints.txt
  fi
  # assert: a ROCm build carrying gfx1201
  /home/user/rocm-wizard-venv/bin/python -c 'import os, re, sys
from importlib import metadata as md
want, targets = sys.argv[1], sys.argv[2:]
try:
    v = md.version("torch")
except md.PackageNotFoundError:
    sys.exit("torch is not installed")
if want != "any" and v.split("+")[0] != want:
    sys.exit(f"torch {v} is installed, {want} was expected")
names = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions()}
fake = sorted(f"{d.metadata['"'"'Name'"'"']} {d.version}" for d in md.distributions()
              if ((d.metadata["Name"] or "").lower().replace("_", "-") in ("rocm", "rocm-sdk", "rocm-sdk-core",
                  "rocm-sdk-libraries") and d.version == "0.1.0") or ((d.metadata["Name"] or "").lower().replace(
                  "_", "-").startswith(("rocm-sdk-device-", "amd-torch-device-")) and d.version == "0.0.1.dev0"))
if fake:
    sys.exit(f"PyPI'"'"'s empty placeholders are installed, not ROCm: {'"'"', '"'"'.join(fake)}")
therock = any(n.startswith(("rocm-sdk-", "amd-torch-device-")) for n in names)
if "+rocm" not in v and not therock:
    sys.exit(f"torch {v} is not a ROCm build (CUDA or CPU wheel installed)")
if therock:
    missing = [t for t in targets if f"amd-torch-device-{t}" not in names and f"rocm-sdk-device-{t}" not in names]
else:
    lib = os.path.join(os.path.dirname(str(md.distribution("torch").locate_file("torch/__init__.py"))), "lib")
    found = set()
    for root, dirs, files in os.walk(lib):
        for name in files:
            found.update(re.findall(r"gfx[0-9]+[a-z]?", name))
    if not found:
        print(f"torch {v}: no per-arch files under {lib}; the verify step checks the GPU")
        sys.exit(0)
    missing = [t for t in targets if t not in found]
if missing:
    sys.exit(f"torch {v} lacks {'"'"', '"'"'.join(missing)}")
print(f"torch {v}: ROCm build carrying {'"'"', '"'"'.join(targets) or '"'"'the requested targets'"'"'}")' 2.9.1 gfx1201
  mark_done 7
fi

# ---- step 8/10: env: Set the venv's environment (activate script)
if step_done 8 && ! /home/user/rocm-wizard-venv/bin/python -c 'import sys
text, want = open(sys.argv[1]).read(), sys.argv[2]
begin, end = '"'"'# >>> rocm-wizard >>>'"'"', '"'"'# <<< rocm-wizard <<<'"'"'
def inner(t):
    return t.split(begin, 1)[1].split(end, 1)[0].splitlines() if begin in t and end in t else None
got, wanted = inner(text), inner(want) or []
named = {w.split("=", 1)[0].split()[-1] for w in wanted if w.strip()}
if got is not None:
    got = [g for g in got if not (g.startswith("unset ") and g.split()[-1] not in named)]
sys.exit(0 if got == wanted else 1)' /home/user/rocm-wizard-venv/bin/activate '# >>> rocm-wizard >>>
export PIP_CONSTRAINT=/home/user/rocm-wizard-venv/rocm-wizard-constraints.txt
# <<< rocm-wizard <<<
' >/dev/null 2>&1; then drift 8 'the rocm-wizard block is in /home/user/rocm-wizard-venv/bin/activate'; fi
if ! step_done 8; then
  # write the rocm-wizard block into /home/user/rocm-wizard-venv/bin/activate
  if ! /home/user/rocm-wizard-venv/bin/python -c 'import sys
text, want = open(sys.argv[1]).read(), sys.argv[2]
begin, end = '"'"'# >>> rocm-wizard >>>'"'"', '"'"'# <<< rocm-wizard <<<'"'"'
def inner(t):
    return t.split(begin, 1)[1].split(end, 1)[0].splitlines() if begin in t and end in t else None
got, wanted = inner(text), inner(want) or []
named = {w.split("=", 1)[0].split()[-1] for w in wanted if w.strip()}
if got is not None:
    got = [g for g in got if not (g.startswith("unset ") and g.split()[-1] not in named)]
sys.exit(0 if got == wanted else 1)' /home/user/rocm-wizard-venv/bin/activate '# >>> rocm-wizard >>>
export PIP_CONSTRAINT=/home/user/rocm-wizard-venv/rocm-wizard-constraints.txt
# <<< rocm-wizard <<<
' >/dev/null 2>&1; then
    /home/user/rocm-wizard-venv/bin/python -c 'import sys
path, block = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = '"'"'# >>> rocm-wizard >>>'"'"', '"'"'# <<< rocm-wizard <<<'"'"'
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    text = head.rstrip("\n") + "\n" + rest.split(end, 1)[1].lstrip("\n")
if block:
    text = text.rstrip("\n") + "\n" + block
open(path + ".rocm-wizard.tmp", "w").write(text)
import os
os.replace(path + ".rocm-wizard.tmp", path)' /home/user/rocm-wizard-venv/bin/activate '# >>> rocm-wizard >>>
export PIP_CONSTRAINT=/home/user/rocm-wizard-venv/rocm-wizard-constraints.txt
# <<< rocm-wizard <<<
'
  fi
  mark_done 8
fi

# ---- step 9/10: reboot: Reboot
# skipped: no earlier step needs a reboot

# ---- step 10/10: verify: Verify: matmul and convolution on the GPU
if ! step_done 10; then
  # run the suite with /home/user/rocm-wizard-venv/bin/python
  python3 -m wizard verify --python /home/user/rocm-wizard-venv/bin/python --json
  mark_done 10
fi

echo 'rocm-wizard plan upgrade-6.4: done'
