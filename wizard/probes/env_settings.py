"""Variables that change what the ROCm runtime and torch do, and every place each one is set.

Precedence (first wins): the process environment (a bundle's env.txt), the active venv's activate
script, the user's shell rc files, /etc/profile.d, /etc/environment. After them, each systemd service's
own settings (``EnvSetting.service``): what its ``Environment=`` / ``EnvironmentFile=`` lines give its
processes, which a program started from the shell does not see (``_service_settings``).
"""

from __future__ import annotations

from wizard.host import Host
from wizard.model import EnvSetting
from wizard.parsers.systemd_unit import continues_a_line
from wizard.probes.env_discovery import ServiceUnits, service_units
from wizard.probes.python_envs import home_dirs

RELEVANT = (
    "HSA_OVERRIDE_GFX_VERSION",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTORCH_ROCM_ARCH",
    "ROCM_PATH",
    "HIP_PATH",
    "MIOPEN_FIND_MODE",
    "MIOPEN_USER_DB_PATH",
    "PYTORCH_HIP_ALLOC_CONF",
    "HSA_ENABLE_SDMA",
    "PYTHONPATH",  # ahead of every environment's own site-packages: a dist-packages there brings the system's torch
)
_RELEVANT = frozenset(RELEVANT)
_RC_FILES = (".bashrc", ".zshrc", ".bash_profile", ".profile", ".zprofile", ".config/fish/config.fish")


def _assignments(text: str, kind: str = "env") -> list[tuple[str, str, int]]:
    """(name, value, line) from NAME=value files ("env"), /etc/environment as pam_env reads it ("pam"), shell rc files
    ("rc") or venv activate scripts."""
    from wizard.parsers.env_file import parse_activate, parse_env_file, parse_pam_environment, parse_shell_rc

    if kind == "activate":
        found = parse_activate(text).added
    elif kind == "rc":
        found = parse_shell_rc(text)
    elif kind == "pam":
        found = parse_pam_environment(text)
    else:
        found = parse_env_file(text)
    return [(a.name, a.value, a.line) for a in found if a.value is not None]


def _may_name(text: str) -> bool:
    """Whether a file's text can assign a relevant variable: it names one, or has a continued line that could split
    a name. Most files name none: they are not parsed."""
    return "\\\n" in text or any(n in text for n in RELEVANT)


def _from_file(host: Host, path: str, label: str, kind: str) -> list[EnvSetting]:
    text = host.read_text(path, limit=1 << 20)
    if not text or not _may_name(text):
        return []
    last: dict[str, EnvSetting] = {}
    for name, value, line in _assignments(text, kind):
        if name in _RELEVANT:
            last[name] = EnvSetting(name, value, f"{label}:{line}")
    return list(last.values())


def probe_env(host: Host, venv_prefixes: list[str], services: list[str] | None = None,
              units: ServiceUnits | None = None) -> list[EnvSetting]:
    """Every relevant assignment, in precedence order; ``services`` (where given) receives the names of the systemd
    service units found on the way (a unit file, not masked); ``units`` is the machine's
    ``env_discovery.service_units`` where the caller has read them already."""
    out: list[EnvSetting] = []
    if host.is_live:
        env = host.environ
        out.extend(EnvSetting(n, env[n], "environment") for n in RELEVANT if n in env)
    else:
        text = host.captured("env.txt")
        if text:
            for name, value, line in _assignments(text):
                if name in _RELEVANT:
                    out.append(EnvSetting(name, value, f"env.txt:{line}"))
    for prefix in venv_prefixes:
        out.extend(_from_file(host, f"{prefix}/bin/activate", f"{prefix}/bin/activate", "activate"))
    for home in home_dirs(host):
        for rc in _RC_FILES:
            label = f"~/{rc}" if host.is_live else f"{home}/{rc}"
            out.extend(_from_file(host, f"{home}/{rc}", label, "rc"))
    for name in host.listdir("/etc/profile.d"):
        if name.endswith(".sh"):
            out.extend(_from_file(host, f"/etc/profile.d/{name}", f"/etc/profile.d/{name}", "rc"))
    out.extend(_from_file(host, "/etc/environment", "/etc/environment", "pam"))
    if units is None:
        units = service_units(host, home_dirs(host))
    out.extend(_service_settings(host, units, services))
    return out


# --------------------------------------------------------------------------- systemd services


def _may_set(text: str) -> bool:
    """Cheaply: whether a unit's text can change a relevant variable (most set none: no parse): it names one or an
    EnvironmentFile=, or it has an empty ``Environment=`` line (that resets the list), in the lines the unit's
    reader sees (wizard.parsers.systemd_unit.logical_lines: CRLF ends, continued lines)."""
    if "Environment" not in text:
        return False
    return "EnvironmentFile" in text or _may_name(text) or continues_a_line(text) or any(
        _is_reset(ln) for ln in text.splitlines() if "Environment" in ln)


def _is_reset(line: str) -> bool:
    """``Environment=`` with nothing after it (blanks around the name and the sign), as unit_environment reads a
    line: stripped, the name and the value stripped again."""
    key, sep, value = line.strip().partition("=")
    return bool(sep) and not value.strip() and key.rstrip() in ("Environment", "EnvironmentFile")


def _service_settings(host: Host, units: ServiceUnits, services: list[str] | None = None) -> list[EnvSetting]:
    """The relevant variables each service's Environment= and EnvironmentFile= lines set, as systemd.exec(5) combines
    them (wizard.parsers.systemd_unit): in file order, a later assignment over an earlier one, an empty
    ``Environment=`` dropping all before it, the files' settings over ``Environment=``'s. A file a unit names that
    is not there (or a wildcard) sets nothing. Each setting says the file and line that made it. ``services``
    receives each service that has a unit file, its own or, for an instance, its template's (a drop-in alone makes no
    service; a masked one is not in ``units``)."""
    from wizard.parsers.systemd_unit import unit_environment

    out: list[EnvSetting] = []
    shown: set[tuple[str, str, str]] = set()
    for service, files in units:
        env: dict[str, tuple[str, str]] = {}
        env_files: list[str] = []
        for unit in files:
            text, path = unit.text, unit.path
            if not text or not _may_set(text):
                continue
            for ln in unit_environment(text, unit.home, service):
                if ln.kind == "env":
                    if ln.reset:
                        env.clear()
                    for name, value in ln.pairs:
                        if name in _RELEVANT:
                            env[name] = (value, f"{path}:{ln.line}")
                elif ln.reset:
                    env_files.clear()
                elif ln.path:
                    env_files.append(ln.path)
        if services is not None and files and files[0].main and service not in services:
            services.append(service)
        for path in env_files:
            if not path.startswith("/") or any(c in path for c in "*?["):
                continue
            text = host.read_text(path, limit=1 << 16) or ""
            if not _may_name(text):
                continue
            from wizard.parsers.env_file import parse_env_file

            for a in parse_env_file(text):
                if a.name in _RELEVANT and a.value is not None:
                    env[a.name] = (a.value, f"{path}:{a.line}")
        for name, (value, where) in env.items():
            if (service, name, where) not in shown:
                shown.add((service, name, where))
                out.append(EnvSetting(name, value, where, service))
    return out
