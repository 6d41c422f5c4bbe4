#!/usr/bin/env bash
# rocm-wizard dry run: plan docker: AMD's rocm/pytorch Docker image with a launcher for your
# workspace
# Nothing has been run. Running this script by hand does what `rocm-wizard --plan docker` would
# do, in the same order, with the same commands. Run it again after the reboot, or after fixing a
# failure: it continues where it stopped.
#
# machine: Ubuntu 24.04.1 LTS (noble), kernel 6.8.0-48-generic [built:apu-gfx1103-only]
# iGPU: AMD Radeon 780M (gfx1103)
# driver: amdgpu in-tree
# target: stream docker, image rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0,
# gfx gfx1103
# why: Keeps ROCm and PyTorch inside a container: AMD's rocm/pytorch image whose ROCm release
# carries this GPU's gfx and fits the host's kernel driver, pulled and started with the device
# flags from AMD's docs by a launcher script that mounts the current directory. The host needs
# only the amdgpu driver, /dev/kfd and /dev/dri, and Docker or Podman; nothing else is installed.
# plan file: plans/docker.toml (shipped)

set -euo pipefail

# Progress: one line per finished step. Delete this file to start the plan over. A step it records
# as done whose check on the machine fails now is drift: reported and run again. A progress file
# that exists but cannot be read stops the script before any change.
progress=/var/lib/rocm-wizard/script/docker.progress
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
holder=$(printf '{"pid": %s, "start_time": "%s", "command": %s, "proc_start": %s}' "$$" "$(date +%Y-%m-%dT%H:%M:%S%z)" '"dry-run script of plan docker"' "$proc_start")
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

# ---- step 1/5: preflight: Preflight: check everything the plan needs before the first change
# note: each check must pass; a failure stops the run before anything changes (--skip-preflight
# NAME skips a check you know to be wrong, and is journalled)
if ! step_done 1; then
  # machine: this is the machine the plan was made for (os ubuntu 24.04, kernel 6.8.0-48-generic,
  # pci 1002:15bf, gfx gfx1103, rocm none)
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
print("the machine is the one the plan was made for")' '{"gfx": "gfx1103", "kernel": "6.8.0-48-generic", "os": "ubuntu 24.04", "pci": "1002:15bf", "rocm": "none"}' /etc/os-release /proc/sys/kernel/osrelease /sys/bus/pci/devices /sys/class/kfd/kfd/topology/nodes /opt || bound=$?
  if [ "$bound" = 1 ]; then exit 5; elif [ "$bound" != 0 ]; then echo 'preflight failed: machine: this is the machine the plan was made for (os ubuntu 24.04, kernel 6.8.0-48-generic, pci 1002:15bf, gfx gfx1103, rocm none)' >&2; exit 1; fi
  # ssh: ssh session: advise tmux/screen
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'if [ -n "${SSH_CONNECTION:-}" ] && [ -z "${TMUX:-}${STY:-}" ]; then echo "warning: over ssh without tmux/screen: a dropped connection stops the run; start tmux or screen first" >&2; fi'; then echo 'preflight failed: ssh: ssh session: advise tmux/screen' >&2; exit 1; fi
  # root: root is available through sudo
  if ! sudo -- true; then echo 'preflight failed: root: root is available through sudo' >&2; exit 1; fi
  # disk-image: disk space for the image
  if ! python3 -c 'import os, shutil, sys
path, need = sys.argv[1], int(sys.argv[2])
while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
free = shutil.disk_usage(path).free
if free < need:
    sys.exit(f"only {free / 2**30:.1f} GiB free on {path}; {need >> 30} GiB needed")
print(f"{free / 2**30:.1f} GiB free on {path}")' /var/lib 42949672960; then echo 'preflight failed: disk-image: disk space for the image' >&2; exit 1; fi
  # docker: docker is installed
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sh -c 'command -v "$1" >/dev/null 2>&1 || { echo "$1 is not installed" >&2; exit 1; }' sh docker; then echo 'preflight failed: docker: docker is installed' >&2; exit 1; fi
  mark_done 1
fi

# ---- step 2/5: backup: Back up environments, packages, repo lists and evidence
# note: backup directory: /var/lib/rocm-wizard/backup/docker
# note: no Python environment with torch to back up
if ! step_done 2; then
  # create the backup directory
  if ! sudo -- test -d /var/lib/rocm-wizard/backup/docker; then
    sudo -- mkdir -p -m 0700 -- /var/lib/rocm-wizard/backup/docker
  fi
  # the backup directory is its owner's alone (it holds pip.conf files, which may carry index
  # passwords)
  sudo -- chmod 0700 -- /var/lib/rocm-wizard/backup/docker
  # installed packages (both ROCm streams included)
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/docker/manifest.json; then
    sudo -- sh -c 'out=$1; shift; "$@" >"$out" 2>&1' sh /var/lib/rocm-wizard/backup/docker/dpkg-selections.txt dpkg-query -W -f '${Package}\t${Version}\t${db:Status-Abbrev}\n'
  fi
  # repo lists, keys, pins and global env files
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/docker/manifest.json; then
    sudo -- tar --ignore-failed-read --warning=no-failed-read -czf /var/lib/rocm-wizard/backup/docker/etc-files.tar.gz -C / etc/apt/sources.list etc/apt/sources.list.d etc/apt/preferences.d etc/apt/keyrings etc/apt/trusted.gpg.d etc/environment etc/profile.d etc/ld.so.conf.d
  fi
  # rocminfo evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/docker/manifest.json; then
    sudo -- sh -c 'out=$1; shift; if command -v "$1" >/dev/null 2>&1; then "$@" >"$out" 2>&1 || true; else echo "not installed: $1" >"$out"; fi' sh /var/lib/rocm-wizard/backup/docker/rocminfo.txt rocminfo
  fi
  # KFD topology evidence
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/docker/manifest.json; then
    sudo -- sh -c 'for f in /sys/class/kfd/kfd/topology/nodes/*/properties; do echo "== $f"; cat "$f"; done >"$1" 2>&1 || true' sh /var/lib/rocm-wizard/backup/docker/kfd-properties.txt
  fi
  # the manifest rollback reads
  if ! sudo -- test -e /var/lib/rocm-wizard/backup/docker/manifest.json; then
    sudo -- python3 -c 'import os,sys
p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]
d=os.path.dirname(p) or '"'"'.'"'"'
os.makedirs(d,exist_ok=True)
t=p+'"'"'.rocm-wizard.tmp'"'"'
with open(t,'"'"'w'"'"') as f: f.write(text)
os.chmod(t,mode)
os.replace(t,p)' /var/lib/rocm-wizard/backup/docker/manifest.json 644 '{
 "backup_dir": "/var/lib/rocm-wizard/backup/docker",
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
 "plan": "docker",
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
  sudo -- chmod -R go-rwx -- /var/lib/rocm-wizard/backup/docker
  mark_done 2
fi

# ---- step 3/5: groups: Add the user to the render and video groups
# skipped: user is already in render and video

# ---- step 4/5: docker: Pull rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 and write the launcher
# note: image: rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 (ROCm 7.14.1,
# torch 2.12.0, Python 3.14; high confidence)
# note: Docker was not detected on this machine: the pull fails until Docker Engine is installed
# note: start it with: /home/user/rocm-wizard-docker.sh
if step_done 4 && ! docker image inspect rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 >/dev/null 2>&1; then drift 4 'the image rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 is there'; fi
if ! step_done 4; then
  # host: /dev/kfd exists (amdgpu KFD)
  test -e /dev/kfd
  # host: /dev/dri exists
  test -d /dev/dri
  # host: the amdgpu driver is loaded
  test -d /sys/module/amdgpu
  # pull rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0
  if ! docker image inspect rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 >/dev/null 2>&1; then
    docker pull rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0
  fi
  # launcher /home/user/rocm-wizard-docker.sh
  # shellcheck disable=SC2016  # literal $ inside single quotes is intended
  if ! python3 -c 'import sys
try: sys.exit(0 if open(sys.argv[1]).read()==sys.argv[2] else 1)
except OSError: sys.exit(1)' /home/user/rocm-wizard-docker.sh '#!/usr/bin/env bash
# written by rocm-wizard: rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 with the device flags from the AMD docs,
# the render group of the host, and the current directory at /workspace. Arguments go to the container.
set -euo pipefail
render_gid=$(getent group render | cut -d: -f3 || true)
group_args=()
if [ -n "$render_gid" ]; then group_args=(--group-add "$render_gid"); fi
exec docker run -it --rm --cap-add=SYS_PTRACE --security-opt=seccomp=unconfined --device=/dev/kfd --device=/dev/dri --group-add=video --ipc=host --shm-size=8G "${group_args[@]}" -v "$PWD":/workspace -w /workspace rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 "$@"
' >/dev/null 2>&1; then
    python3 -c 'import os,sys
p,mode,text=sys.argv[1],int(sys.argv[2],8),sys.argv[3]
d=os.path.dirname(p) or '"'"'.'"'"'
os.makedirs(d,exist_ok=True)
t=p+'"'"'.rocm-wizard.tmp'"'"'
with open(t,'"'"'w'"'"') as f: f.write(text)
os.chmod(t,mode)
os.replace(t,p)' /home/user/rocm-wizard-docker.sh 755 '#!/usr/bin/env bash
# written by rocm-wizard: rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 with the device flags from the AMD docs,
# the render group of the host, and the current directory at /workspace. Arguments go to the container.
set -euo pipefail
render_gid=$(getent group render | cut -d: -f3 || true)
group_args=()
if [ -n "$render_gid" ]; then group_args=(--group-add "$render_gid"); fi
exec docker run -it --rm --cap-add=SYS_PTRACE --security-opt=seccomp=unconfined --device=/dev/kfd --device=/dev/dri --group-add=video --ipc=host --shm-size=8G "${group_args[@]}" -v "$PWD":/workspace -w /workspace rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 "$@"
'
  fi
  mark_done 4
fi

# ---- step 5/5: verify: Verify: matmul and convolution on the GPU
if ! step_done 5; then
  # run the suite with rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0
  python3 -m wizard verify --image rocm/pytorch:rocm7.14.1_ubuntu26.04_py3.14_pytorch_release_2.12.0 --json
  mark_done 5
fi

echo 'rocm-wizard plan docker: done'
