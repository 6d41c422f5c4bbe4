"""Collect the live machine's evidence into a bundle (DESIGN.md format), redacted.

Only read-only commands run, each with a timeout; a missing tool is skipped. User names in
paths, the host name and secret-looking values are replaced before anything is written. The
result loads back with ``--from``.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
import time
from pathlib import Path
from typing import Sequence

from wizard import lazy_re
from wizard.host import Host
from wizard.model import Facts, PythonEnv
from wizard.probes.env_settings import RELEVANT
from wizard.probes.gpu_memory import MEMINFO, mem_total_line, pool_values
from wizard.record import record

# Secret-looking values, replaced wherever they appear (token formats as their issuers document them).
_SECRET_VALUE = lazy_re.compile(
    r"\b(?:ghp_[A-Za-z0-9]{20,}|gh[osur]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,}|pypi-AgE[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)")  # a JWT (header.payload.signature)
_BEARER = lazy_re.compile(r"(?i)(\bbearer\s+|\bauthorization:\s*(?:basic\s+|token\s+|bearer\s+)?)[A-Za-z0-9._~+/=-]{8,}")
# user:password@ in URLs (any scheme: https, postgres, redis ...) and bare user:password@host
_URL_PASSWORD = lazy_re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(@)")
_BARE_PASSWORD = lazy_re.compile(r"(?<![\w/:.@-])([\w.%+-]+:)(?!//)[^\s/@:]+(@[A-Za-z0-9.-]+)")
# signed-URL query parameters (S3 presigned URLs, SAS tokens, OAuth)
_QUERY_SECRET = lazy_re.compile(r"(?i)([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|Signature|sig"
                           r"|access_token|api_key|apikey|token|password)=)[^&\s\"'#]+")
_SECRET_KEY = r"[\w.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[\w.-]*"
# NAME=value / name: value whose name says it is secret: at a line's start the rest of the line, elsewhere one word
# (never a requirement such as tokenizers==0.19.1)
_KEY_LINE = lazy_re.compile(rf"(?im)^(\s*(?:export\s+)?[\"']?{_SECRET_KEY}[\"']?\s*[=:](?![=:])\s*).+$")
_KEY_WORD = lazy_re.compile(rf"(?i)((?<![\w.-]){_SECRET_KEY}[\"']?\s*[=:](?![=:])\s*[\"']?)[^\s,;&\"']+")
# --password VALUE (the = form is _KEY_WORD's); a netrc's "[machine H] [login U] password P"; docker's "auth": "..."
_KEY_FLAG = lazy_re.compile(r"(?i)((?<![\w-])--?[\w-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API[_-]?KEY"
                            r"|ACCESS[_-]?KEY)[ \t]+)[^\s-][^\s]*")
_NETRC = lazy_re.compile(r"(?im)^([ \t]*(?:machine|default)[ \t]+(?:\S+[ \t]+)?(?:login[ \t]+\S+[ \t]+)?password[ \t]+)\S+"
                         r"|^([ \t]*password[ \t]+)\S+(?=[ \t]*$)")
_DOCKER_AUTH = lazy_re.compile(r'(?i)("(?:auth|identitytoken|registrytoken)"\s*:\s*")[^"]+')
_PEM = lazy_re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)


def _user_patterns(user: str) -> list[tuple[lazy_re.Pattern, str]]:
    """Where a user name stands as a user: home paths, user@host, id's (name), NAME=user; never elsewhere
    (a user called ``torch`` leaves ``torch==2.5.1`` alone)."""
    u = re.escape(user)
    end = r"(?![\w.-])"
    return [
        (lazy_re.compile(rf"(/home/|/Users/|/var/home/|~){u}(?=/|{end})"), r"\1user"),
        (lazy_re.compile(rf"(?<![\w.-]){u}(@)"), r"user\1"),
        (lazy_re.compile(rf"(\d\(){u}(\))"), r"\1user\2"),
        (lazy_re.compile(rf"(?i)\b((?:SUDO_)?USER(?:NAME)?=|LOGNAME=|MAIL=/var/mail/|user[ :]+){u}{end}"), r"\1user"),
    ]


# Default host names of installers and images: they identify nobody, and replacing them would corrupt the
# evidence (ID=ubuntu in os-release, "Ubuntu" kernels, ubuntu.com URLs).
_GENERIC_HOSTS = frozenset({"localhost", "ubuntu", "debian", "fedora", "archlinux", "arch", "centos", "rocky",
                            "almalinux", "rhel", "opensuse", "linux", "pop-os", "raspberrypi", "kali", "manjaro",
                            "mint", "host"})


@record
class Redactor:
    """Replaces user names (where they stand as users), the host name with its domain, and secrets."""

    users: tuple[str, ...]
    hostname: str | None

    def __call__(self, text: str) -> str:
        out = _KEY_LINE.sub(lambda m: m.group(1) + "***", text)
        out = _KEY_WORD.sub(lambda m: m.group(1) + "***", out)
        out = _KEY_FLAG.sub(lambda m: m.group(1) + "***", out)
        out = _NETRC.sub(lambda m: (m.group(1) or m.group(2)) + "***", out)
        out = _DOCKER_AUTH.sub(lambda m: m.group(1) + "***", out)
        out = _PEM.sub(lambda m: f"-----BEGIN {m.group(1)}-----\n***\n-----END {m.group(1)}-----", out)
        out = _URL_PASSWORD.sub(r"\1***\2", out)
        out = _BARE_PASSWORD.sub(r"\1***\2", out)
        out = _QUERY_SECRET.sub(r"\1***", out)
        out = _BEARER.sub(r"\1***", out)
        out = _SECRET_VALUE.sub("***", out)
        for user in self.users:
            if not user or user in ("root", "user"):
                continue
            for pattern, repl in _user_patterns(user):
                out = pattern.sub(repl, out)
        short, _, domain = (self.hostname or "").partition(".")
        if short and short.lower() not in _GENERIC_HOSTS:
            # the host with any domain after it (gpu01, gpu01.lab.example.com)
            out = re.sub(rf"(?<![\w.-]){re.escape(short)}(?:\.[A-Za-z0-9-]+)*(?![\w-])", "host", out, flags=re.I)
        if "." in domain:  # the domain alone (an organisation's name), whatever the host is called
            out = re.sub(rf"(?<![\w-]){re.escape(domain)}(?![\w-])", "domain", out, flags=re.I)
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


def collect(host: Host, pythons: list[str] | None = None, facts: Facts | None = None) -> dict[str, str]:
    """Bundle file name (or root/<path>) -> text. ``facts``: what detect found on this machine: its Python
    environments (listed, with the files the probes read of them and each one's ``pip freeze``) and the
    user's groups as the probe read them."""
    files: dict[str, str] = {}
    osr = host.read_text("/etc/os-release")
    if osr:
        files["os-release.txt"] = osr
        files["root/etc/os-release"] = osr
    for name, candidates in COMMANDS.items():
        for argv in candidates:
            if host.which(argv[0]) is None and not os.path.isfile(argv[0]):
                continue
            if name == "groups.txt" and facts is not None and facts.driver.groups:
                break  # the groups the probe read (below), not this session's
            res = host.run(argv, timeout=COMMAND_TIMEOUT.get(name, 8.0))
            if res.returncode == 127:  # the shell's "command not found": the tool is not there
                break
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
        for leaf in ("vendor", "device", "class", "revision"):
            v = host.read_text(f"{base}/{leaf}", 256)
            if v is not None:
                files[f"root{base}/{leaf}"] = v
        for path, value in pool_values(host, bdf):  # the GPU's memory pools: numbers only (diagnosis reads them)
            files[f"root{path}"] = value + "\n"
    total = mem_total_line(host)
    if total is not None:  # the system memory beside the GPU's pools: MemTotal's line alone
        files[f"root{MEMINFO}"] = total + "\n"
    for name in host.listdir("/opt"):
        if name.startswith("rocm"):
            v = host.read_text(f"/opt/{name}/.info/version", 256)
            if v is not None:
                files[f"root/opt/{name}/.info/version"] = v
    v = host.read_text("/sys/module/amdgpu/version", 256)
    if v:
        files["root/sys/module/amdgpu/version"] = v
    elif host.is_dir("/sys/module/amdgpu"):  # the in-tree module: loaded, with no version file
        files["root/sys/module/amdgpu/initstate"] = host.read_text("/sys/module/amdgpu/initstate", 64) or "live\n"
    if host.is_dir("/var/lib/dkms/amdgpu"):
        files["root/var/lib/dkms/amdgpu/versions.txt"] = "".join(n + "\n" for n in host.listdir("/var/lib/dkms/amdgpu"))
    files.update(_settings_files(host))
    files.update(_repository_files(host))
    if facts is not None and facts.driver.groups:
        files["groups.txt"] = _groups_text(host, facts.driver.user, facts.driver.groups)
    env = host.environ
    files["env.txt"] = "".join(f"{n}={env[n]}\n" for n in RELEVANT if n in env)
    files.update(_python_envs(host, facts.python_envs if facts is not None else ()))
    for spec in pythons or ([f"{env['VIRTUAL_ENV']}/bin/python"] if env.get("VIRTUAL_ENV") else []):
        res = host.run([spec, "-m", "pip", "freeze"], timeout=30.0)
        if res.ok:
            files["pip-freeze.txt"] = res.stdout
        res = host.run([spec, "-m", "torch.utils.collect_env"], timeout=90.0)
        if res.ok or res.stdout.strip():
            files["collect_env.txt"] = res.stdout
        break
    return files


def _repository_files(host: Host) -> dict[str, str]:
    """Package-manager sources and apt pins that name AMD's repositories, and the Core SDK's version files."""
    paths = ["/etc/apt/sources.list"]
    for d in ("/etc/apt/sources.list.d", "/etc/yum.repos.d", "/etc/zypp/repos.d", "/etc/apt/preferences.d"):
        paths += [f"{d}/{n}" for n in host.listdir(d)]
    files: dict[str, str] = {}
    for path in paths:
        text = host.read_text(path, 1 << 20)
        if text and ("repo.radeon.com" in text or "repo.amd.com" in text):
            files["root" + path] = text
    if host.is_dir("/opt/rocm") and host.realpath("/opt/rocm") == "/opt/rocm":
        for name in host.listdir("/opt/rocm"):
            v = host.read_text(f"/opt/rocm/{name}/.info/version", 256) if name.startswith("core") else None
            if v is not None:
                files[f"root/opt/rocm/{name}/.info/version"] = v
    return files


def _settings_files(host: Host) -> dict[str, str]:
    """The shell start-up files, /etc/profile.d scripts and /etc/environment that set a variable the probes
    read (HSA_OVERRIDE_GFX_VERSION ...), whole, so their line numbers stay the machine's."""
    from wizard.probes.env_settings import _RC_FILES, _from_file
    from wizard.probes.python_envs import home_dirs

    paths = [f"{home}/{rc}" for home in home_dirs(host) for rc in _RC_FILES]
    paths += [f"/etc/profile.d/{n}" for n in host.listdir("/etc/profile.d") if n.endswith(".sh")]
    paths.append("/etc/environment")
    files: dict[str, str] = {}
    for path in paths:
        if _from_file(host, path, path, "rc"):
            files["root" + path] = host.read_text(path, 1 << 20) or ""
    return files


def _groups_text(host: Host, user: str | None, groups: Sequence[str]) -> str:
    """``id``'s format for the groups the probe found (gids from /etc/group where it names them)."""
    gids: dict[str, str] = {}
    for line in (host.read_text("/etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[2].isdigit():
            gids.setdefault(parts[0], parts[2])
    uid = "0" if user == "root" else "1000"
    for line in (host.read_text("/etc/passwd") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[0] == user and parts[2].isdigit():
            uid = parts[2]
    listed = ",".join(f"{gids.get(g, '0')}({g})" for g in groups)
    return f"uid={uid}({user or 'user'}) groups={listed}\n"


def _python_envs(host: Host, envs: Sequence[PythonEnv]) -> dict[str, str]:
    """python/envs.jsonl, the probes' files of each environment under root/, python/N/pip-freeze.txt."""
    from wizard.probes import bundle_envs

    files: dict[str, str] = {}
    text = bundle_envs.listing(envs)
    if not text:
        return files
    files[bundle_envs.LISTING] = text
    for n, e in enumerate(e for e in envs if e.path and e.kind != "recorded"):
        for path, body in bundle_envs.env_files(host, e).items():
            files["root" + path] = body
        if e.python and host.exists(e.python):
            # a sandbox runs its programs from its root (a real root's host enters the root itself)
            exe = f"{getattr(host, 'root', '')}{e.python}" if host.name.startswith("sandbox:") else e.python
            res = host.run([exe, "-m", "pip", "freeze", "--all"], timeout=30.0)
            if res.ok and res.stdout.strip():
                files[f"python/{n}/pip-freeze.txt"] = f"# {e.python} -m pip freeze --all\n" + res.stdout
    return files


# A run's files in a bundle: its plan and journal, and the tail of each step log
RUN_LOG_LIMIT = 1 << 20


def run_files(run_dir: Path, log_dir: Path) -> dict[str, str]:
    """``run/plan.json``, ``run/journal.jsonl`` and ``run/logs/NN-kind.log`` (each log's last MiB) of one run."""
    files: dict[str, str] = {}
    for leaf in ("plan.json", "journal.jsonl"):
        text = _read_plain(run_dir / leaf, 8 << 20)
        if text is not None:
            files[f"run/{leaf}"] = text
    try:
        logs = sorted(p.name for p in log_dir.iterdir() if p.name.endswith(".log"))
    except OSError:
        logs = []
    for name in logs:
        text = _read_plain(log_dir / name, RUN_LOG_LIMIT, tail=True)
        if text is not None:
            files[f"run/logs/{name}"] = text
    return files


def _read_plain(path: Path, limit: int, *, tail: bool = False) -> str | None:
    """A regular file's text (never through a link), its first or last ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        if tail and st.st_size > limit:
            fh.seek(st.st_size - limit)
            return "[rocm-wizard: the log's start left out]\n" + fh.read(limit).decode("utf-8", "replace")
        return fh.read(limit).decode("utf-8", "replace")


def check_out(out: str) -> Path:
    """OUT as a path a bundle may be written to: new, in a directory that exists (FileExistsError,
    FileNotFoundError with one line otherwise)."""
    target = Path(out).expanduser()
    if not target.parent.is_dir():
        raise FileNotFoundError(f"{target.parent} does not exist (it is not created): make it first or choose "
                                "another OUT")
    if os.path.lexists(target):
        raise FileExistsError(f"{out} already exists; choose a new name")
    return target


def write_bundle(files: dict[str, str], out: str, redact: Redactor) -> Path:
    """Write a directory, or a .tar.gz when OUT ends so. Refuses to overwrite anything.

    OUT's directory must exist (it is never created). Nothing is opened through a link: the
    ``.partial`` file is created ``O_CREAT | O_EXCL | O_NOFOLLOW`` (a planted file or link there is an
    error, its target untouched) and linked to OUT only if OUT still does not exist; a directory
    bundle is a new directory (0700) whose files are created the same way. Files are 0600.
    """
    target = check_out(out)
    clean = {redact(name): redact(text) for name, text in files.items()}  # paths name users too (root/home/...)
    clean["README.txt"] = (f"rocm-wizard evidence bundle, collected {time.strftime('%Y-%m-%d %H:%M:%S %Z')}.\n"
                           "User names, the host name and secret-looking values are redacted.\n"
                           "Load it back with: rocm-wizard detect --from <this bundle>\n")
    if out.endswith((".tar.gz", ".tgz")):
        _write_archive(clean, target)
        return target
    from wizard.inputs.files import write_new

    os.mkdir(target, 0o700)  # FileExistsError when something appeared meanwhile
    dfd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name, text in sorted(clean.items()):
            *dirs, leaf = name.split("/")
            if any(part in ("", ".", "..") for part in (*dirs, leaf)):
                continue  # a path that would not stay inside the bundle (never written)
            fd = os.dup(dfd)
            try:
                for d in dirs:
                    try:
                        os.mkdir(d, 0o700, dir_fd=fd)
                    except FileExistsError:
                        pass
                    sub = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = sub
                write_new(leaf, text.encode(), dir_fd=fd)
            finally:
                os.close(fd)
    finally:
        os.close(dfd)
    return target


def _write_archive(clean: dict[str, str], target: Path) -> None:
    from wizard.inputs.files import new_file

    base = target.name.removesuffix(".tar.gz").removesuffix(".tgz")
    with new_file(target, 0o600) as raw, tarfile.open(fileobj=raw, mode="w:gz") as tf:
        for name, text in sorted(clean.items()):
            if any(part in ("", ".", "..") for part in name.split("/")):
                continue
            data = text.encode()
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            info.mode = 0o600
            info.mtime = int(time.time())
            tf.addfile(info, io.BytesIO(data))
