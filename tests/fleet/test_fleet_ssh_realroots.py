"""The fleet proof over plain SSH: three real Debian 12 roots, each with its own sshd (Debian's openssh-server, installed
into the root by its own apt) listening on 127.0.0.1, reached by stock ansible-core's ``ssh`` connection as an admin
account with sudo (no project connection plugin), ``fleet run --engine`` canary first.

Hosts: ``canary`` (seed-7900xt: ROCm 6.2 with DKMS, a reboot), ``noble-a`` and ``noble-b`` (rx9070xt-noble): two plan
groups of upgrade-6.4 (noble-b is a copy of noble-a's root, so the two share one mirror and one plan). Each root's
rehearsal mirror is served on 127.0.0.1 by the fleet command (the inventory names
the root with ``rocm_wizard_realroot``), and the controller tells each host's wizard that a root has no GPU, so verify
is skipped and reported so, never passed. The drain and undrain hooks run on the controller (``rocm_wizard_hook_host=
localhost``) and append to one log, so their order across hosts is read from it.

1. A failure injected on the canary (an apt hook that fails every dpkg call) stops the run there: the other hosts are
   never drained and their roots are unchanged; the canary stays drained.
2. Without the injection the canary's own run continues (same run id), then the others: every host migrated, its
   verify skipped, drained before its run and undrained after it, the canary's batch before the rest; the venv owned
   by the GPU user (user actions as the GPU user, not the admin who connects), the wizard's venv by root.
3. A second run changes nothing and drains nobody.
4. ``fleet rollback`` restores each root's dpkg status, apt sources and venv as they were before the first run.
5. The standalone export (``fleet plan --export ansible``: Ansible's own modules, apt, copy, get_url, file, user,
   nothing of the wizard on the host) run by plain ``ansible-playbook`` over SSH on a pristine copy of noble-a's root
   reaches the end state the wizard's own engine reached on noble-a (packages, ROCm, venv, apt sources, groups);
   a second run changes nothing.

System tier (``-m system``, or ``-m fleet`` / ``-m realroot``); needs host root, mmdebstrap and the host's ssh client,
and Debian's archive reachable (openssh-server, sudo, acl and python3-apt go into each root). About 2 minutes on two cores with the base roots
cached, 15-25 minutes without.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from wizard.realroot import enter
from wizard.realroot.endstate import end_state

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.realroot, pytest.mark.timeout(5400)]

HOSTS = {"canary": "seed-7900xt", "noble-a": "rx9070xt-noble", "noble-b": "rx9070xt-noble"}
# two hosts of one plan group must resolve to the same actions, mirror address included: noble-b is noble-a's root
# copied (each root built apart serves its own mirror on its own port, which makes its plan its own)
COPY = ("noble-a", "noble-b")
PLAN = "upgrade-6.4"
ADMIN = "ops"
RESTORED = ("dpkg", "apt", "venvs")
INJECTED = "etc/apt/apt.conf.d/00-injected-by-the-test"
DEBIAN = "deb http://deb.debian.org/debian bookworm main\n"
SSH_PACKAGES = ("openssh-server", "sudo", "acl", "python3-apt")  # python3-apt: the standalone export's apt module
STANDALONE = "standalone"  # a pristine copy of noble-a, for the standalone export (test 5)
RUN_TASK = "Wizard: run the plan on this host"


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_REMOTE_TEMP"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=3000, env={**env, "HOME": str(cwd / "home")}, stdin=subprocess.DEVNULL)


def in_root(root: Path, *argv: str, timeout: float = 900) -> str:
    res = enter.run(root, list(argv), timeout=timeout)
    assert res.returncode == 0, (argv, res.stdout[-2000:], res.stderr[-2000:])
    return res.stdout


def install_sshd(root: Path) -> None:
    """openssh-server, sudo and acl from Debian's archive, by the root's own apt: the archive's name resolves only
    while this runs (the rehearsal root resolves from /etc/hosts alone), its index and .debs go to /tmp, and no
    service starts (policy-rc.d)."""
    addresses = sorted({a[4][0] for a in socket.getaddrinfo("deb.debian.org", 80, socket.AF_INET)})
    hosts = root / "etc/hosts"
    kept = hosts.read_text() if hosts.exists() else None  # a minbase root may have none
    hosts.write_text((kept or "") + "".join(f"{a} deb.debian.org\n" for a in addresses[:1]))
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    for d in ("tmp/debian-lists/partial", "tmp/debian-archives/partial"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "tmp/debian.list").write_text(DEBIAN)
    opts = ["-o", "Dir::Etc::SourceList=/tmp/debian.list", "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", "Dir::State::Lists=/tmp/debian-lists", "-o", "Dir::Cache::Archives=/tmp/debian-archives",
            "-o", "APT::Get::List-Cleanup=false"]
    try:
        in_root(root, "apt-get", *opts, "update")
        in_root(root, "apt-get", *opts, "install", "-y", "--no-install-recommends", *SSH_PACKAGES)
    finally:
        if kept is None:
            hosts.unlink()
        else:
            hosts.write_text(kept)
        for d in ("tmp/debian-lists", "tmp/debian-archives", "tmp/debian.list"):
            p = root / d
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


def add_admin(root: Path, key: str) -> None:
    """The admin account Ansible connects as: a password-less login (``*``, so sshd without PAM takes its key),
    sudo without a password, the controller's public key."""
    in_root(root, "useradd", "--create-home", "--shell", "/bin/bash", "--password", "*", ADMIN)
    sudoers = root / "etc/sudoers.d" / ADMIN
    sudoers.write_text(f"{ADMIN} ALL=(ALL:ALL) NOPASSWD: ALL\n")
    sudoers.chmod(0o440)
    in_root(root, "install", "-d", "-m", "0700", "-o", ADMIN, "-g", ADMIN, f"/home/{ADMIN}/.ssh")
    (root / "tmp/admin.pub").write_text(key)
    in_root(root, "install", "-m", "0600", "-o", ADMIN, "-g", ADMIN, "/tmp/admin.pub",
            f"/home/{ADMIN}/.ssh/authorized_keys")
    (root / "tmp/admin.pub").unlink()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sshd(root: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The root's own sshd, PID 1 of the root's namespace (its sessions see the root's /proc, /dev/pts and boot id),
    on 127.0.0.1 only; killed with its namespace at the end, and by ``timeout`` if the test itself dies."""
    in_root(root, "ssh-keygen", "-A")
    (root / "run/sshd").mkdir(mode=0o755, exist_ok=True)
    argv = enter.enter_argv(root, ["/usr/sbin/sshd", "-D", "-e", "-p", str(port), "-o", "ListenAddress=127.0.0.1",
                                   "-o", "UsePAM=no", "-o", "PasswordAuthentication=no", "-o", "PidFile=none"])
    with open(log, "wb") as out:
        proc = subprocess.Popen(["timeout", "--signal=KILL", "5400", *argv], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            assert proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.3)
    raise AssertionError(f"sshd in {root} did not listen on 127.0.0.1:{port}: {log.read_text()[-2000:]}")


def gpu_user(root: Path) -> str:
    return str(json.loads((root / ".realroot/machine.json").read_text())["user"])


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from wizard.realroot import base as rb

    if os.geteuid() != 0:
        pytest.skip("a real root needs root on the host (unshare, chroot)")
    if rb.mmdebstrap() is None:
        pytest.skip("mmdebstrap is not installed: apt-get install mmdebstrap")
    if not (shutil.which("ssh") and shutil.which("ssh-keygen")):
        pytest.skip("the host's ssh client is missing: apt-get install openssh-client")
    base = tmp_path_factory.mktemp("sshfleet")
    (base / "home").mkdir()
    key = base / "admin_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rocm-wizard-test", "-f", str(key)],
                   check=True, capture_output=True)
    hooks = base / "hooks.log"
    lines = ["[gpus]"]
    daemons: list[subprocess.Popen[bytes]] = []
    users: dict[str, str] = {}
    try:
        for host, profile in HOSTS.items():
            root = base / host
            if host == COPY[1]:  # a copy of its twin: the same rehearsal mirror (its address, its key), served once
                rb.copy(base / COPY[0], root)
            else:
                res = wizard("--sandbox", str(root), "--profile", profile, "--root", "debian12", "detect", "--json",
                             cwd=base)
                assert res.returncode == 0, res.stderr[-3000:]
                install_sshd(root)
                add_admin(root, key.with_suffix(".pub").read_text())
            port = free_port()
            daemons.append(start_sshd(root, port, base / f"sshd-{host}.log"))
            users[host] = gpu_user(root)
            lines.append(f"{host} ansible_host=127.0.0.1 ansible_port={port} rocm_wizard_realroot={root} "
                         f"rocm_wizard_gpu_user={users[host]}")
        rb.copy(base / COPY[0], base / STANDALONE)  # before any run: as noble-a was
        lines += ["", "[gpus:vars]", "ansible_connection=ssh", f"ansible_user={ADMIN}",
                  f"ansible_ssh_private_key_file={key}",
                  "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                  "-o IdentitiesOnly=yes'",
                  "ansible_python_interpreter=/usr/bin/python3", "rocm_wizard_reboot_command=/usr/sbin/reboot",
                  "rocm_wizard_hook_host=localhost",
                  f"rocm_wizard_drain='echo drain {{{{ inventory_hostname }}}} >> {hooks}'",
                  f"rocm_wizard_undrain='echo undrain {{{{ inventory_hostname }}}} >> {hooks}'"]
        inv = base / "inventory.ini"
        inv.write_text("\n".join(lines) + "\n")
        yield {"base": base, "inv": str(inv), "fdir": str(base / "fleet"), "hooks": hooks, "users": users,
               "before": {h: end_state(base / h) for h in HOSTS}, "vars": lines[lines.index("[gpus:vars]") + 1:]}
    finally:
        for d in daemons:
            os.killpg(d.pid, 9)
            d.wait(timeout=30)


def hook_lines(fleet: dict[str, Any]) -> list[str]:
    p: Path = fleet["hooks"]
    return p.read_text().split("\n")[:-1] if p.exists() else []


def engine_run(fleet: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return wizard("fleet", "run", PLAN, "-i", fleet["inv"], "--fleet-dir", fleet["fdir"], "--engine", "--json",
                  "--progress", cwd=fleet["base"])


def rows_of(res: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {r["host"]: r for r in json.loads(res.stdout)["hosts"]}


def test_detect_over_ssh_sees_each_root_as_its_gpu_user_and_plans_two_groups(fleet: dict[str, Any]) -> None:
    res = wizard("fleet", "plan", PLAN, "-i", fleet["inv"], "--fleet-dir", fleet["fdir"], "--json",
                 cwd=fleet["base"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    doc = json.loads(res.stdout)
    groups = sorted(sorted(g["hosts"]) for g in doc["groups"])
    assert groups == [["canary"], ["noble-a", "noble-b"]], doc
    for host in HOSTS:  # the facts came over SSH as the GPU user sees the root (its groups, its venv), not the admin's
        facts = json.loads((Path(fleet["fdir"]) / "hosts" / host / "facts.json").read_text())["facts"]
        assert facts["driver"]["user"] == fleet["users"][host] and not facts["is_root"], host
        venvs = [e["path"] for e in facts["python_envs"] if e["kind"] == "venv"]
        assert venvs == (["/home/user/pytorch_venv"] if host == "canary" else []), (host, venvs)


def test_a_failure_on_the_canary_stops_the_rest_before_their_first_change(fleet: dict[str, Any]) -> None:
    base: Path = fleet["base"]
    inject = base / "canary" / INJECTED
    inject.write_text('DPkg::Pre-Invoke { "echo injected by the test >&2; exit 1"; };\n')
    try:
        res = engine_run(fleet)
    finally:
        inject.unlink()
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-5000:]
    rows = rows_of(res)
    canary = rows["canary"]
    assert canary["state"] == "failed" and canary["failed"]["task"] == RUN_TASK, canary
    assert "fleet rollback" in canary["next"], canary
    for host in ("noble-a", "noble-b"):  # the batches after the canary never started
        assert rows[host]["state"] is None and rows[host]["steps_done"] == 0, rows[host]
        assert end_state(base / host) == fleet["before"][host]
    assert hook_lines(fleet) == ["drain canary"]  # drained before its first change, left drained after the failure
    fleet["failed_run"] = canary["run_id"]


def test_the_fleet_migrates_canary_first_drained_around_each_run_as_the_gpu_user(fleet: dict[str, Any]) -> None:
    if "failed_run" not in fleet:
        pytest.skip("needs the failed canary run above")
    base: Path = fleet["base"]
    res = engine_run(fleet)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    rows = rows_of(res)
    assert set(rows) == set(HOSTS)
    for host, row in rows.items():
        assert row["failed"] is None and row["state"] == "done" and row["steps_done"] == row["steps"] > 3, row
        assert row["verify"]["status"] == "skipped" and "GPU" in row["verify"]["reason"], row  # a root has no GPU
        assert row["reboot"] == ("rebooted" if host == "canary" else "not needed"), row
        root = base / host
        after = end_state(root)
        assert after["dpkg"] != fleet["before"][host]["dpkg"] and after["rocm"], host  # migrated
        # the host's own wizard ran it (its journal on the host), installed root-owned; the plan's venv is the GPU
        # user's: the user actions ran as that user, not as the admin account Ansible connected as
        assert (root / "var/lib/rocm-wizard/current").is_file()
        assert (root / "opt/rocm-wizard/venv/bin/python").exists()
        assert (root / "opt/rocm-wizard/venv").stat().st_uid == 0
        owners = {p.stat().st_uid for p in root.glob("home/*/*/lib/python*/site-packages")}
        uid = {ln.split(":")[0]: int(ln.split(":")[2]) for ln in (root / "etc/passwd").read_text().splitlines()}
        assert owners == {uid[fleet["users"][host]]}, (host, owners)
    assert rows["canary"]["run_id"] == fleet["failed_run"]  # the canary's own run went on
    lines = hook_lines(fleet)
    assert lines[0] == "drain canary" and lines[1:3] == ["drain canary", "undrain canary"], lines
    rest = lines[3:]
    for host in ("noble-a", "noble-b"):
        assert rest.count(f"drain {host}") == 1 and rest.count(f"undrain {host}") == 1, lines
        assert rest.index(f"drain {host}") < rest.index(f"undrain {host}"), lines
    fleet["migrated"] = {h: end_state(base / h) for h in HOSTS}


def test_a_second_run_changes_nothing_and_drains_nobody(fleet: dict[str, Any]) -> None:
    if "migrated" not in fleet:
        pytest.skip("needs the fleet run above")
    before = hook_lines(fleet)
    res = engine_run(fleet)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    changed = [ln for ln in res.stderr.splitlines() if len(ln.split()) > 1 and ln.split()[1] == "changed"]
    assert changed == [], changed
    rows = rows_of(res)
    assert all(r["state"] == "done" and not r["changed"] for r in rows.values()), rows
    assert hook_lines(fleet) == before
    for host in HOSTS:
        assert end_state(fleet["base"] / host) == fleet["migrated"][host]


def test_fleet_rollback_restores_each_roots_packages_sources_and_venv(fleet: dict[str, Any]) -> None:
    if "migrated" not in fleet:
        pytest.skip("needs the fleet run above")
    res = wizard("fleet", "rollback", "-i", fleet["inv"], "--fleet-dir", fleet["fdir"], "--json", "--progress",
                 cwd=fleet["base"])
    rows = rows_of(res)
    assert set(rows) == set(HOSTS), res.stdout[-3000:] + res.stderr[-5000:]
    for host, row in rows.items():
        assert row["state"] == "rolled-back" and row["failed"] is None and row["changed"], row
        after = end_state(fleet["base"] / host)
        for key in RESTORED:
            assert after[key] == fleet["before"][host][key], (host, key)
    # exit 0 only when nothing was left that the rollback could not restore (the 9070 XT's group membership has no undo)
    assert res.returncode == (1 if any(r["cannot"] for r in rows.values()) else 0), res.stdout[-2000:]


def test_the_standalone_export_reaches_the_engines_end_state_with_ansibles_modules(fleet: dict[str, Any]) -> None:
    """One plan, two doors: the module-form export, run by ansible-playbook itself (the mirror served by this test,
    as an operator's own mirror would be), leaves the root as the host's wizard left its twin."""
    from wizard.fleet import ansible_program, realroots

    if "migrated" not in fleet:
        pytest.skip("needs the fleet run above")
    yaml = pytest.importorskip("yaml")
    base: Path = fleet["base"]
    root = base / STANDALONE
    before = end_state(root)
    daemon = start_sshd(root, port := free_port(), base / f"sshd-{STANDALONE}.log")
    try:
        inv = base / f"{STANDALONE}.ini"
        inv.write_text("\n".join(["[gpus]", f"{STANDALONE} ansible_host=127.0.0.1 ansible_port={port} "
                                  f"rocm_wizard_realroot={root} rocm_wizard_gpu_user={gpu_user(root)}", "",
                                  "[gpus:vars]", *(v for v in fleet["vars"] if "drain" not in v)]) + "\n")
        out = base / "export"
        res = wizard("fleet", "plan", PLAN, "-i", str(inv), "--fleet-dir", str(base / "fleet-standalone"), "--export",
                     "ansible", str(out), "--json", cwd=base)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        book = Path(json.loads(res.stdout)["export"])
        modules = {k for p in (out / "roles").rglob("*.yml") for t in yaml.safe_load(p.read_text()) or []
                   for k in t if k.startswith("ansible.builtin.")}
        assert {"ansible.builtin.apt", "ansible.builtin.copy", "ansible.builtin.get_url", "ansible.builtin.file",
                "ansible.builtin.user"} <= modules, modules
        extra = json.dumps({"rocm_wizard_hosts": "all", "rocm_wizard_unavailable": realroots.unavailable({STANDALONE: root})})
        env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_REMOTE_TEMP"}
        env.update(HOME=str(base / "home"), ANSIBLE_HOST_KEY_CHECKING="False")

        def playbook() -> subprocess.CompletedProcess[str]:
            res = subprocess.run([ansible_program(), "-i", str(inv), str(book), "-e", extra], cwd=base,
                                 capture_output=True, text=True, timeout=3000, env=env, stdin=subprocess.DEVNULL)
            assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
            return res

        with realroots.serving({STANDALONE: root}):
            playbook()
            first = end_state(root)
            again = playbook()
    finally:
        os.killpg(daemon.pid, 9)
        daemon.wait(timeout=30)
    assert first["dpkg"] != before["dpkg"] and first["rocm"], "not migrated"
    assert first == fleet["migrated"][COPY[0]]  # the engine's end state on the twin, key by key
    assert json.loads((out / "results" / STANDALONE / "verify.json").read_text()).get("skipped")  # no GPU in a root
    recap = [ln for ln in again.stdout.splitlines() if ln.startswith(STANDALONE) and "changed=" in ln]
    assert recap and " changed=0 " in recap[-1], again.stdout[-4000:]  # the second run changes nothing
    assert end_state(root) == first
