"""Every shipped plan that changes packages, end to end in a Debian 12 real root built by the wizard's own
``--sandbox DIR --profile NAME --root debian12``, for the profiles it applies to: the run, the reboot (a new
boot id) and ``resume --yes``, then the end state read back four ways: the wizard's own ``detect`` run by
the root's python3, ``dpkg-query``, ``pip list`` in the venv, and the apt source lines. Upstream hosts are
unreachable from the root (it has no resolver: asserted before every run), so everything comes through
the rehearsal mirror on 127.0.0.1.

Expectations come from the knowledge base and the plan files, not from the run.
seed-7900xt downgrade-6.2 runs in every ``python -m pytest``; the rest are marked ``realroot``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.kb import KnowledgeBase, load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.config import KNOWN_ORIGINS
from wizard.plan_file import load_plan
from wizard.planner import NEW_VENV_NAME
from wizard.profiles import PROFILES
from wizard.realroot import enter
from wizard.realroot.endstate import end_state
from wizard.realroot.machine import RealRoot, install_wizard_source, open_root
from wizard.record import record

pytestmark = [pytest.mark.system, pytest.mark.realroot]

REALROOT = pytest.mark.realroot
# (profile, plan): the one list a plan rename touches
PAIRS = [
    pytest.param("seed-7900xt", "downgrade-6.2", marks=pytest.mark.smoke, id="seed-7900xt-downgrade-6.2"),
    pytest.param("seed-7900xt", "upgrade-7.2", marks=REALROOT, id="seed-7900xt-upgrade-7.2"),
    pytest.param("seed-7900xt", "upgrade-6.4", marks=REALROOT, id="seed-7900xt-upgrade-6.4"),
    pytest.param("rx9070xt-noble", "upgrade-7.2", marks=REALROOT, id="rx9070xt-noble-upgrade-7.2"),
    pytest.param("rx9070xt-noble", "core-sdk", marks=REALROOT, id="rx9070xt-noble-core-sdk"),
    pytest.param("rx9070xt-noble-nodriver", "driver", marks=REALROOT, id="rx9070xt-noble-nodriver-driver"),
    pytest.param("seed-7900xt", "therock-pip", marks=REALROOT, id="seed-7900xt-therock-pip"),
    pytest.param("seed-5600xt", "therock-pip", marks=REALROOT, id="seed-5600xt-therock-pip"),
]
# what the knowledge base says about a pair the planner must refuse (nothing may change in the root); none now:
# seed-5600xt's gfx1010 takes the device packages TheRock publishes on the stable whl-next index (undocumented)
REFUSED: dict[tuple[str, str], str] = {}
SOURCE_OPTS = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"


@record
class Expect:
    venv: str
    torch: str  # the full version pip list must show
    companions: dict[str, str]  # torchvision / torchaudio / rocm (TheRock's selector) -> version
    rocm: str | None  # the system ROCm release after the run (None: the plan leaves it alone)
    rocm_core: str | None  # its rocm-core package version in AMD's scheme
    sources: dict[str, str] | None  # apt list file -> its line, with the mirror's URL (None: unchanged)
    gone: str | None  # the release the profile started with, when the plan replaces it
    stream: str = "legacy"  # of the system ROCm after the run
    install_path: str | None = None  # where it is installed (None: /opt/rocm-<rocm>)
    installs: tuple[str, ...] = ()  # every ROCm detect must find (empty: the install_path only)
    packages: tuple[tuple[str, str], ...] = ()  # other dpkg packages the run installs -> their version
    gfx: str = "gfx1100"  # the profile's GPU target (TheRock's device package)
    driver: str | None = None  # the amdgpu driver detect must find loaded with /dev/kfd (None: not checked)


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def expect(kb: KnowledgeBase, profile: str, plan: str, mirror: str) -> Expect:
    prof, t = PROFILES[profile], load_plan(plan).target
    venv = prof.venv or f"/home/user/{NEW_VENV_NAME}"
    if t.stream == "core-sdk" and t.index != "therock":  # therock-pip: AMD's wheels only, nothing system-wide
        from tests.realroot.expect_core_sdk import expect_core_sdk

        return expect_core_sdk(kb, prof, venv, mirror)
    if t.stream == "driver":
        from tests.realroot.expect_core_sdk import expect_driver

        return expect_driver(kb, prof, mirror)
    if t.index == "therock":
        from wizard.parsers.kfd import gfx_from_target_version

        gfx = next(x for g in prof.gpus if (x := gfx_from_target_version(g.gfx_target_version)))
        # the planner's rule: the first stable AMD index with the GPU's device packages, documented or published
        ix0 = kb.device_extra_indexes(gfx, stable_only=True, published=True)[0]
        rows = [v for v in kb.vendor_wheels() if v.index == ix0.name and v.uncertain is None]
        v = max(rows, key=lambda r: _vkey(r.torch))
        torch, comp = v.torch, {"torchvision": v.torchvision or "", "torchaudio": v.torchaudio or ""}
        # the planner's rule: TheRock's rocm selector at the torch build's own Core SDK release
        rel = kb.release(v.sdk)
        assert rel is not None and rel.routes is not None and rel.routes.pip_requirement
        comp["rocm"] = rel.version
        new = f"{prof.venv}-{plan}" if prof.venv else venv  # the planner fills a new venv beside the user's
        return Expect(new, torch, comp, None, None, None, None, gfx=gfx)
    else:
        assert t.index is not None
        rows = kb.wheels_for(index=t.index) if t.torch == "newest" else kb.wheels_for(torch=t.torch, index=t.index)
        # "newest": the newest row whose gfx list and Python tags are certain (the planner's documented rule)
        w = max(rows, key=lambda r: (r.choice_certain, _vkey(r.torch)))
        torch = f"{w.torch}+{w.index}"
        comp = {k: f"{v}+{w.index}" for k, v in (("torchvision", w.torchvision), ("torchaudio", w.torchaudio)) if v}
    venv = f"{prof.venv}-{plan}" if prof.venv else venv  # a new venv beside the user's, as the planner fills
    if t.stream != "legacy" or not t.rocm:
        return Expect(venv, torch, comp, None, None, None, None)
    assert prof.codename is not None
    rel = cat.legacy_release(kb, t.rocm, prof.codename)
    m = mirror.rstrip("/")
    sources = {"rocm.list": f"deb {SOURCE_OPTS} {rel.rocm_repo().replace('https:/', m)} {rel.codename} main\n",
               "amdgpu.list": f"deb {SOURCE_OPTS} {rel.amdgpu_repo().replace('https:/', m)} {rel.codename} main\n"}
    gone = prof.rocm if prof.rocm and prof.rocm != t.rocm else None
    return Expect(venv, torch, comp, t.rocm, rel.package_version, sources, gone)


def upstream_unreachable(root: RealRoot) -> None:
    """The root reaches no upstream host: no name resolves, no connection is made."""
    for host in KNOWN_ORIGINS:
        looked = root.run(["getent", "hosts", host], timeout=30)
        assert looked.returncode != 0 and looked.stdout == "", f"{host} resolves inside the root: {looked.stdout}"
        got = root.run(["wget", "-q", "-T", "5", "--tries=1", "-O", "/dev/null", f"https://{host}/"], timeout=60)
        assert got.returncode == 4, f"{host}: wget exit {got.returncode} (4: network failure)"


def installed(root: RealRoot) -> dict[str, str]:
    out = root.run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n"]).stdout
    return {p[0]: p[1] for p in (ln.split() for ln in out.splitlines()) if len(p) >= 3 and p[2] == "ii"}


def pip_list(root: RealRoot, venv: str) -> dict[str, str]:
    out = root.run([f"{venv}/bin/python", "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
                   as_user=True)
    assert out.returncode == 0, out.stderr[-500:]
    return {d["name"].lower(): d["version"] for d in json.loads(out.stdout)}


def detect_inside(root: RealRoot) -> dict[str, object]:
    path = install_wizard_source(root.path)
    out = root.run(["python3", "-m", "wizard", "detect", "--json"], as_user=True, env={"PYTHONPATH": path})
    assert out.returncode == 0, out.stderr[-800:]
    facts: dict[str, object] = json.loads(out.stdout)
    return facts


def apt_lists(d: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((d / "etc/apt/sources.list.d").glob("*")) if p.is_file()}


@pytest.mark.parametrize(("profile", "plan"), PAIRS)
def test_plan_runs_end_to_end_in_a_real_root(profile: str, plan: str, cli_root: Callable[[str], Path],
                                             timings: dict[str, float]) -> None:
    import time

    kb = load_kb()
    d = cli_root(profile)
    root = open_root(d)
    upstream_unreachable(root)
    before, boot0 = end_state(d), enter.boot_id(d)
    before_dpkg = installed(root)
    started = time.monotonic()
    first = wizard_cli("--sandbox", str(d), "--plan", plan, "--yes")
    if (profile, plan) in REFUSED:
        assert first.returncode == 5, first.stdout[-1500:]
        assert f"rocm-wizard: refused: {REFUSED[(profile, plan)]}" in first.stderr.splitlines()
        assert "Traceback" not in first.stderr
        assert end_state(d) == before and not (d / "var/lib/rocm-wizard/runs").exists()
        return
    assert first.returncode in (0, 3), first.stdout[-2500:] + first.stderr[-800:]
    rebooted = first.returncode == 3
    if rebooted:
        assert "REBOOT" in first.stdout and enter.boot_id(d) != boot0
        again = wizard_cli("--sandbox", str(d), "resume", "--yes")
        assert again.returncode == 0, again.stdout[-2500:]
        assert "Resuming " + plan in again.stdout
    timings[f"{profile} {plan}: run{' + reboot + resume' if rebooted else ''}"] = time.monotonic() - started
    status = json.loads(wizard_cli("--sandbox", str(d), "status", "--json").stdout)
    assert (status["plan"], status["state"], status["reboot_needed"]) == (plan, "done", False)
    records = [json.loads(ln) for ln in Path(str(status["journal"])).read_text().splitlines()]
    reboots = [r for r in records if r["event"] == "action-end" and r.get("argv") == "systemctl reboot"]
    boots = list(dict.fromkeys(r["boot_id"] for r in records if r.get("boot_id")))
    assert (len(reboots), len(boots)) == ((1, 2) if rebooted else (0, 1))  # resumed on the new boot
    target = load_plan(plan).target
    if target.stream == "core-sdk" and target.index != "therock":  # the Core SDK key was checked against the mirror key
        assert [r["exit_code"] for r in records if r["event"] == "action-end"
                and "not the mirror key" in r.get("argv", "")] == [0]

    want = expect(kb, profile, plan, root.mirror_url)
    # 1. the wizard's own detect, run by the root's python3 as the user
    facts = detect_inside(root)
    rocm = facts["rocm"]
    assert isinstance(rocm, dict)
    if want.rocm is not None:
        assert (rocm["version"], rocm["stream"]) == (want.rocm, want.stream)
        assert [i["path"] for i in rocm["installs"]] == list(want.installs or (f"/opt/rocm-{want.rocm}",))
    if want.driver is not None:
        drv = facts["driver"]
        assert isinstance(drv, dict)
        assert (drv["kfd_present"], drv["loaded"], drv["kind"]) == (True, True, want.driver), drv
    envs = {e["path"]: e for e in facts["python_envs"]}  # type: ignore[attr-defined]
    if want.venv:
        assert envs[want.venv]["torch"] == want.torch and envs[want.venv]["build"] == "rocm"
    if "rocm" in want.companions:
        assert envs[want.venv]["rocm_sdk"] == want.companions["rocm"]
        assert want.gfx in envs[want.venv]["rocm_sdk_targets"]
    # 2. dpkg-query
    now = installed(root)
    assert {k: now.get(k) for k, _ in want.packages} == dict(want.packages)
    if want.stream == "core-sdk":
        assert (d / str(want.install_path).lstrip("/") / ".info/version").read_text().strip() == want.rocm
        assert not [p for p in now if p in ("rocm-core", "rocm") or p.startswith("rocm-hip")]  # no legacy left
    elif want.rocm is not None:
        assert now["rocm-core"] == want.rocm_core and now["rocm"] == want.rocm_core
        assert (d / f"opt/rocm-{want.rocm}/.info/version").read_text().strip() == want.rocm
        if want.gone:
            assert not (d / f"opt/rocm-{want.gone}").exists()
    elif not want.packages:
        assert now == before_dpkg
    # 3. pip list in the venv
    if want.venv:
        pkgs = pip_list(root, want.venv)
        assert pkgs["torch"] == want.torch
        assert {k: pkgs.get(k) for k in want.companions} == want.companions
    # 4. the apt source lines: the target release, through the mirror only
    lists = apt_lists(d)
    if want.sources is not None:
        assert {k: lists.get(k) for k in want.sources} == want.sources
    else:
        assert lists == before["apt"]
    for name, text in lists.items():
        for url in re.findall(r"\b[a-z]+://\S+", text):
            assert url.startswith(root.mirror_url + "/"), f"{name}: {url} is not the mirror"
