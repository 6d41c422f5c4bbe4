"""Variables that change what the ROCm runtime and torch do, and every place each one is set.

Precedence (first wins): the process environment (a bundle's env.txt), the active venv's activate
script, the user's shell rc files, /etc/profile.d, /etc/environment.
"""

from __future__ import annotations

from wizard.host import Host
from wizard.model import EnvSetting
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
    """(name, value, line) from NAME=value files ("env"), shell rc files ("rc") or venv activate scripts."""
    from wizard.parsers.env_file import parse_activate, parse_env_file, parse_shell_rc

    if kind == "activate":
        found = parse_activate(text).added
    elif kind == "rc":
        found = parse_shell_rc(text)
    else:
        found = parse_env_file(text)
    return [(a.name, a.value, a.line) for a in found if a.value is not None]


def _from_file(host: Host, path: str, label: str, kind: str) -> list[EnvSetting]:
    text = host.read_text(path, limit=1 << 20)
    if not text:
        return []
    last: dict[str, EnvSetting] = {}
    for name, value, line in _assignments(text, kind):
        if name in _RELEVANT:
            last[name] = EnvSetting(name, value, f"{label}:{line}")
    return list(last.values())


def probe_env(host: Host, venv_prefixes: list[str]) -> list[EnvSetting]:
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
    out.extend(_from_file(host, "/etc/environment", "/etc/environment", "env"))
    return out
