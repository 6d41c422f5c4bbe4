"""What a system torch shadows: Debian's (or Ubuntu's) ``python3-torch`` lives in the system interpreter's
``dist-packages``, and three things make ``import torch`` load it where the user may expect their own or none:

* a venv made with ``--system-site-packages`` (``include-system-site-packages = true`` in its pyvenv.cfg) from
  the system interpreter, with no torch of its own: its ``import torch`` finds the system's;
* ``PYTHONPATH`` naming a ``dist-packages`` directory in the user's environment files: it comes before every
  environment's own site-packages, so even a venv with its own torch imports the system's (same Python);
* ``python3`` on PATH being the system interpreter: ``python3 -c 'import torch'`` outside a venv runs it.

Read from files only (pyvenv.cfg, the environment settings already probed, PATH); nothing is run.
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.host import Host
from wizard.model import EnvSetting, PythonEnv, TorchShadow, system_torch

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Callable

    from wizard.probes.env_discovery import Candidate

_CFG_LINE = lazy_re.compile(r"^\s*([A-Za-z_-]+)\s*=\s*(.*?)\s*$")
SYSTEM_BINDIRS = ("/usr/bin", "/bin", "/usr/local/bin")


def pyvenv_settings(text: str) -> dict[str, tuple[str, int]]:
    """pyvenv.cfg's ``key = value`` lines: key (lower case, ``-`` for ``_``) -> (value, line number)."""
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = _CFG_LINE.match(line)
        if m:
            out.setdefault(m.group(1).lower().replace("_", "-"), (m.group(2), n))
    return out


def _venv_shadow(host: Host, prefix: str, own: PythonEnv | None, torch: str) -> TorchShadow | None:
    cfg = host.read_text(f"{prefix}/pyvenv.cfg", limit=8192)
    if cfg is None or (own is not None and own.torch):  # not a venv, or its own torch comes first
        return None
    s = pyvenv_settings(cfg)
    value, line = s.get("include-system-site-packages", ("false", 0))
    if value.lower() != "true":
        return None
    home = s.get("home", ("", 0))[0].rstrip("/")
    if home and home not in SYSTEM_BINDIRS:  # made from another interpreter: its system site is that one's
        return None
    return TorchShadow("venv", prefix, f"{prefix}/pyvenv.cfg line {line}: include-system-site-packages = {value}, "
                                       f"and no torch of its own: its `import torch` loads the system's {torch}")


def _pythonpath_shadow(s: EnvSetting, site_dirs: tuple[str, ...], torch: str) -> TorchShadow | None:
    parts = [p for p in s.value.split(":") if p]
    hit = [p for p in parts if p.rstrip("/") in site_dirs or re.search(r"/dist-packages/?$", p)]
    if not hit:
        return None
    return TorchShadow("PYTHONPATH", s.where, f"PYTHONPATH={s.value} puts {hit[0]} before every environment's own "
                                              f"site-packages: `import torch` loads the system's {torch} there")


def probe_shadows(host: Host, envs: list[PythonEnv], settings: list[EnvSetting],
                  discovered: Callable[[], list[Candidate]] | None = None) -> tuple[TorchShadow, ...]:
    """Every way the system's torch shadows another (empty when the system interpreter has no torch);
    ``discovered`` gives ``env_discovery.discover``'s answer where the caller has it (called only when the
    system interpreter has a torch)."""
    system = system_torch(envs)
    if system is None or system.torch is None:
        return ()
    from wizard.probes.env_discovery import discover
    from wizard.probes.python_envs import home_dirs, path_python

    torch = f"torch {system.torch} ({system.path})"
    out: list[TorchShadow] = []
    own = {e.path: e for e in envs if e.path}
    venvs = [e.path for e in envs if e.kind == "venv" and e.path]
    candidates = discovered() if discovered is not None else discover(host, home_dirs(host))
    venvs += [c.prefix for c in candidates if c.kind == "venv"]
    for prefix in dict.fromkeys(venvs):
        shadow = _venv_shadow(host, prefix, own.get(prefix), torch)
        if shadow is not None:
            out.append(shadow)
    site_dirs = tuple(ev.source.rstrip("/") for ev in system.sources)
    for s in settings:
        shadow = _pythonpath_shadow(s, site_dirs, torch) if s.name == "PYTHONPATH" else None
        if shadow is not None:
            out.append(shadow)
    found = path_python(host) if host.is_live else None
    if found is not None and found[2] == "system" and found[0] == system.path:
        out.append(TorchShadow("python3", found[1], f"python3 on PATH is the system's ({found[1]}): "
                                                    f"`python3 -c 'import torch'` outside a venv loads {torch}"))
    return tuple(out)
