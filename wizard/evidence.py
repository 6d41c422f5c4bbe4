"""Collect the live machine's evidence into a bundle (DESIGN.md format), redacted.

Only read-only commands run, each with a timeout; a missing tool is skipped. User names in
paths, the host name and secret-looking values are replaced before anything is written. The
result loads back with ``--from``.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from wizard.host import Host
from wizard.probes.env_settings import RELEVANT

_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH)", re.I)
_SECRET_VALUE = re.compile(r"\b(ghp_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})\b")
_KEY_VALUE = re.compile(r"(?im)^(\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY"
                        r"|ACCESS_KEY|PRIVATE_KEY)[A-Za-z0-9_]*\s*[=:]\s*).+$")


@dataclass(frozen=True)
class Redactor:
    users: tuple[str, ...]
    hostname: str | None

    def __call__(self, text: str) -> str:
        out = _KEY_VALUE.sub(lambda m: m.group(1) + "***", text)
        out = _SECRET_VALUE.sub("***", out)
        for user in self.users:
            if not user or user in ("root", "user"):
                continue
            out = re.sub(rf"/home/{re.escape(user)}(?=/|\b)", "/home/user", out)
            out = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(user)}(?![A-Za-z0-9_.-])", "user", out)
        if self.hostname and self.hostname not in ("localhost",):
            out = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(self.hostname)}(?![A-Za-z0-9_-])", "host", out)
        return out


# bundle file -> argv (first one that exists wins)
COMMANDS: dict[str, list[list[str]]] = {
    "uname.txt": [["uname", "-a"]],
    "lspci.txt": [["lspci", "-nn"]],
    "rocminfo.txt": [["rocminfo"], ["/opt/rocm/bin/rocminfo"]],
    "rocm-smi.txt": [["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus"]],
    "amd-smi.txt": [["amd-smi", "static"]],
    "rocm_agent_enumerator.txt": [["rocm_agent_enumerator"], ["/opt/rocm/bin/rocm_agent_enumerator"]],
    "groups.txt": [["id"]],
    "dmesg.txt": [["dmesg"]],
    "mokutil.txt": [["mokutil", "--sb-state"]],
}
COMMAND_TIMEOUT = {"rocminfo.txt": 30.0, "rocm-smi.txt": 20.0, "amd-smi.txt": 20.0, "dmesg.txt": 10.0}


def _relevant_dmesg(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if re.search(r"amdgpu|kfd|drm|iommu", ln, re.I)) + "\n"


def collect(host: Host, pythons: list[str] | None = None) -> dict[str, str]:
    """Bundle file name (or root/<path>) -> text."""
    files: dict[str, str] = {}
    osr = host.read_text("/etc/os-release")
    if osr:
        files["os-release.txt"] = osr
        files["root/etc/os-release"] = osr
    for name, candidates in COMMANDS.items():
        for argv in candidates:
            if host.which(argv[0]) is None and not os.path.isfile(argv[0]):
                continue
            res = host.run(argv, timeout=COMMAND_TIMEOUT.get(name, 8.0))
            text = res.stdout + (f"\n[stderr]\n{res.stderr}" if res.stderr.strip() and not res.ok else "")
            if res.timed_out:
                text += f"\n[rocm-wizard: {' '.join(argv)} timed out]\n"
            if text.strip():
                files[name] = _relevant_dmesg(text) if name == "dmesg.txt" else text
            break
    for path in ("/opt/rocm/.info/version",):
        v = host.read_text(path, 256)
        if v:
            files["rocm-version.txt"] = v
    status = host.read_text("/var/lib/dpkg/status", limit=64 << 20)
    if status:
        from wizard.probes.rocm import read_packages

        pkgs = read_packages(host)
        files["dpkg.txt"] = "".join(f"ii  {p.name}  {p.version}  all  -\n" for p in pkgs)
    nodes = "/sys/class/kfd/kfd/topology/nodes"
    chunks = []
    for node in sorted(host.listdir(nodes), key=lambda n: (len(n), n)):
        props = host.read_text(f"{nodes}/{node}/properties", 64 << 10)
        if props is not None:
            chunks.append(f"==> {nodes}/{node}/properties <==\n{props}")
            files[f"root{nodes}/{node}/properties"] = props
    if chunks:
        files["kfd-properties.txt"] = "\n".join(chunks)
    for bdf in host.listdir("/sys/bus/pci/devices"):
        base = f"/sys/bus/pci/devices/{bdf}"
        cls = (host.read_text(f"{base}/class", 64) or "").strip()
        if not cls.startswith("0x03"):
            continue
        for leaf in ("vendor", "device", "class", "revision", "mem_info_vram_total"):
            v = host.read_text(f"{base}/{leaf}", 256)
            if v is not None:
                files[f"root{base}/{leaf}"] = v
    for name in host.listdir("/opt"):
        if name.startswith("rocm"):
            v = host.read_text(f"/opt/{name}/.info/version", 256)
            if v is not None:
                files[f"root/opt/{name}/.info/version"] = v
    v = host.read_text("/sys/module/amdgpu/version", 256)
    if v:
        files["root/sys/module/amdgpu/version"] = v
    env = host.environ
    files["env.txt"] = "".join(f"{n}={env[n]}\n" for n in RELEVANT if n in env)
    for spec in pythons or ([f"{env['VIRTUAL_ENV']}/bin/python"] if env.get("VIRTUAL_ENV") else []):
        res = host.run([spec, "-m", "pip", "freeze"], timeout=30.0)
        if res.ok:
            files["pip-freeze.txt"] = res.stdout
        res = host.run([spec, "-m", "torch.utils.collect_env"], timeout=90.0)
        if res.ok or res.stdout.strip():
            files["collect_env.txt"] = res.stdout
        break
    return files


def write_bundle(files: dict[str, str], out: str, redact: Redactor) -> Path:
    """Write a directory, or a .tar.gz when OUT ends so. Refuses to overwrite anything."""
    target = Path(out).expanduser()
    if target.exists():
        raise FileExistsError(f"{out} already exists; choose a new name")
    clean = {name: redact(text) for name, text in files.items()}
    clean["README.txt"] = (f"rocm-wizard evidence bundle, collected {time.strftime('%Y-%m-%d %H:%M:%S %Z')}.\n"
                           "User names, the host name and secret-looking values are redacted.\n"
                           "Load it back with: rocm-wizard detect --from <this bundle>\n")
    if out.endswith((".tar.gz", ".tgz")):
        base = target.name.removesuffix(".tar.gz").removesuffix(".tgz")
        tmp = target.with_name(target.name + ".partial")
        with tarfile.open(tmp, "w:gz") as tf:
            for name, text in sorted(clean.items()):
                data = text.encode()
                info = tarfile.TarInfo(f"{base}/{name}")
                info.size = len(data)
                info.mtime = int(time.time())
                tf.addfile(info, io.BytesIO(data))
        tmp.rename(target)
        return target
    for name, text in clean.items():
        p = target / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return target
