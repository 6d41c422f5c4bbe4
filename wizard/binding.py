"""A resolved plan is bound to the machine it was made for.

The planner records the facts a plan depends on (``ResolvedPlan.machine``): the distribution and its
version, the kernel, the GPUs (PCI ids and gfx targets), the ROCm releases under /opt, the venv and its
Python. The check below is the first preflight check of every plan, so the engine (step 0), the dry-run
script (its preflight section) and the Ansible role (its preflight tasks, ahead of every destructive
task) all run the same program before the first change: it reads the target machine's files and stops,
naming each difference, when the machine is not the one the plan was made for. A fact that was unknown
when the plan was made (a recording without a kernel line) is not bound.

The program reads only files, each named by an argument, so a rehearsal machine maps them into its root
exactly as it maps every other path.
"""

from __future__ import annotations

import json

from wizard import lazy_re
from wizard.model import Action, Facts

REFUSAL = "this is not the machine the plan was made for"  # how the check's refusal starts (its one line)
NAME = "machine"  # the preflight check's name (what --skip-preflight names)
SAYS = "this is the machine the plan was made for"  # how the check's description starts (the role's assert task)
# the files the program reads, in its argument order (after the JSON of the bound facts)
PATHS = ("/etc/os-release", "/proc/sys/kernel/osrelease", "/sys/bus/pci/devices", "/sys/class/kfd/kfd/topology/nodes",
         "/opt")
LEGACY_DIR = lazy_re.compile(r"^/opt/rocm-(\d+\.\d+(?:\.\d+)?)(?:-\d+)?$")  # as the ROCm probe reads /opt

# python3 -c CHECK JSON OS_RELEASE OSRELEASE PCI_DEVICES KFD_NODES OPT [VENV]: exit 0 when every bound fact
# of JSON holds on this machine; else each difference on stderr and exit 1
CHECK = """\
import json, os, re, sys
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
    rel[k.strip()] = v.strip().strip('"').strip("'")
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
    m = re.search(r"^gfx_target_version (\\d+)", read(os.path.join(kfd, n, "properties")) or "", re.M)
    v = int(m.group(1)) if m else 0
    if v:
        gfx.append(f"gfx{v // 10000}{v // 100 % 100}{v % 100:x}")
have["gfx"] = ",".join(sorted(gfx)) if nodes is not None else None
try:
    legacy = (re.match(r"^rocm-(\\d+\\.\\d+(?:\\.\\d+)?)(?:-\\d+)?$", x) for x in os.listdir(opt))
    have["rocm"] = ",".join(sorted(m.group(1) for m in legacy if m)) or "none"
except OSError:
    have["rocm"] = "none"
if venv is not None:
    cfg = read(os.path.join(venv, "pyvenv.cfg"))
    if cfg is None:
        have["venv_python"] = "present" if os.path.isdir(os.path.join(venv, "bin")) else "absent"
    else:
        m = re.search(r"^version(?:_info)?\\s*=\\s*(\\d+\\.\\d+)", cfg, re.M)
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
print("the machine is the one the plan was made for")"""


def bound_facts(facts: Facts, venv: str | None = None, venv_exists: bool = False,
                venv_python: str | None = None) -> tuple[tuple[str, str], ...]:
    """The facts a plan made from ``facts`` depends on, as (key, value) pairs the check compares; a fact
    unknown here is left out (never guessed)."""
    out: list[tuple[str, str]] = []
    o = facts.os
    if o.id and o.version:
        out.append(("os", f"{o.id} {o.version}"))
    if o.kernel:
        out.append(("kernel", o.kernel))
    if facts.gpus and all(g.pci_id for g in facts.gpus):
        out.append(("pci", ",".join(sorted(str(g.pci_id).lower() for g in facts.gpus))))
    if facts.gpus and all(g.gfx for g in facts.gpus) and facts.driver.kfd_present:
        out.append(("gfx", ",".join(sorted(str(g.gfx) for g in facts.gpus))))
    legacy = sorted({mo.group(1) for i in facts.rocm.installs if i.path for mo in [LEGACY_DIR.match(i.path)] if mo})
    if legacy or not facts.origin.startswith("bundle:"):  # a recording without /opt says nothing of it
        out.append(("rocm", ",".join(legacy) or "none"))
    if venv:
        out.append(("venv", venv))
        out.append(("venv_python", (venv_python or "present") if venv_exists else "absent"))
    return tuple(out)


def check(machine: tuple[tuple[str, str], ...]) -> Action | None:
    """The preflight check that the target is the machine of ``machine`` (None: nothing is bound)."""
    if not machine:
        return None
    facts = dict(machine)
    venv = facts.pop("venv", None)
    if venv is None:
        facts.pop("venv_python", None)
    shown = ", ".join(f"{k} {v}" for k, v in machine)
    return Action(("python3", "-c", CHECK, json.dumps(facts, sort_keys=True), *PATHS, *((venv,) if venv else ())),
                  f"{SAYS} ({shown})", name=NAME)
