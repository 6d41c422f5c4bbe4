"""A system python3-torch and the environments it shadows (issue 22, point 2), read from files of a machine tree
(no interpreter run): a venv made with --system-site-packages from the system python3 and no torch of its own, a
PYTHONPATH naming dist-packages in the user's files, python3 on PATH being the system's. Reported in
``detect --json`` (``system_torch``), one line of ``detect`` and a ``diagnose`` finding naming them. The real
Debian 13 root with Debian's python3-torch: tests/realroot/test_distro_roots.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from wizard.diagnose import diagnose
from wizard.facts_json import facts_to_json
from wizard.host import LiveHost
from wizard.model import Facts
from wizard.probes.env_settings import probe_env
from wizard.probes.python_envs import probe_live_envs
from wizard.probes.shadows import probe_shadows, pyvenv_settings
from wizard.render import facts_renderables

pytestmark = pytest.mark.unit

HOME = "/home/user"


def _write(root: Path, rel: str, text: str = "") -> Path:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def _venv(root: Path, rel: str, *, system_site: str, home: str = "/usr/bin", torch: str | None = None) -> None:
    _write(root, f"{rel}/pyvenv.cfg", f"home = {home}\ninclude-system-site-packages = {system_site}\n"
                                      f"version = 3.13.5\nexecutable = {home}/python3.13\n")
    _write(root, f"{rel}/bin/python", "")
    site = f"{rel}/lib/python3.13/site-packages"
    (root / site.lstrip("/")).mkdir(parents=True, exist_ok=True)
    if torch:
        _write(root, f"{site}/torch-{torch}.dist-info/METADATA", f"Name: torch\nVersion: {torch}\n")
        _write(root, f"{site}/torch/version.py", f"__version__ = '{torch}'\nhip = None\ncuda = None\n")


def _machine(root: Path, *, debian_torch: bool = True, bashrc: str = "") -> LiveHost:
    """Debian 13's layout: /usr/bin/python3 -> python3.13, python3-torch in /usr/lib/python3/dist-packages."""
    _write(root, "/usr/bin/python3.13", "")
    (root / "usr/bin/python3").symlink_to("python3.13")
    _write(root, "/usr/lib/python3.13/os.py", "")
    dist = "/usr/lib/python3/dist-packages"
    (root / dist.lstrip("/")).mkdir(parents=True)
    if debian_torch:
        _write(root, f"{dist}/torch-2.6.0.dist-info/METADATA", "Name: torch\nVersion: 2.6.0\n")
        _write(root, f"{dist}/torch/version.py", "__version__ = '2.6.0+debian'\nhip = None\ncuda = None\n")
    (root / HOME.lstrip("/")).mkdir(parents=True)
    if bashrc:
        _write(root, f"{HOME}/.bashrc", bashrc)
    return LiveHost(root, environ={"PATH": "/usr/bin:/bin", "HOME": HOME})


def _facts(host: LiveHost) -> Facts:
    envs, _problems = probe_live_envs(host, [])
    settings = probe_env(host, [e.path for e in envs if e.path and e.kind == "venv"])
    return Facts(python_envs=tuple(envs), env=tuple(settings), torch_shadows=probe_shadows(host, envs, settings))


def test_pyvenv_settings_read_keys_values_and_lines() -> None:
    s = pyvenv_settings("home = /usr/bin\nInclude_System_Site_Packages=TRUE\n\n# a comment\nversion = 3.13.5\n")
    assert s["include-system-site-packages"] == ("TRUE", 2) and s["home"] == ("/usr/bin", 1)


def test_every_shadow_is_named_with_where_it_was_read(tmp_path: Path) -> None:
    host = _machine(tmp_path, bashrc="alias ll='ls -l'\nexport PYTHONPATH=/usr/lib/python3/dist-packages:$HOME/lib\n")
    _venv(tmp_path, f"{HOME}/sees-system", system_site="true")  # no torch of its own: sees Debian's
    _venv(tmp_path, f"{HOME}/own-torch", system_site="true", torch="2.9.1+rocm6.4")  # its own comes first
    _venv(tmp_path, f"{HOME}/isolated", system_site="false")
    _venv(tmp_path, f"{HOME}/other-python", system_site="true", home="/opt/python3.12/bin")  # another system site
    facts = _facts(host)
    shadows = {(s.how, s.where): s.detail for s in facts.torch_shadows}
    assert set(shadows) == {("venv", f"{HOME}/sees-system"), ("PYTHONPATH", "~/.bashrc:2"),
                            ("python3", "/usr/bin/python3")}, shadows
    assert shadows[("venv", f"{HOME}/sees-system")].startswith(
        f"{HOME}/sees-system/pyvenv.cfg line 2: include-system-site-packages = true, and no torch of its own")
    assert "/usr/lib/python3/dist-packages before every environment's own site-packages" in \
        shadows[("PYTHONPATH", "~/.bashrc:2")]
    assert "torch 2.6.0+debian (/usr)" in shadows[("python3", "/usr/bin/python3")]

    doc = facts_to_json(facts)["system_torch"]
    assert (doc["torch"], doc["path"], doc["python"]) == ("2.6.0+debian", "/usr", "/usr/bin/python3")
    assert [(s["how"], s["where"]) for s in doc["shadows"]] == [
        ("venv", f"{HOME}/sees-system"), ("PYTHONPATH", "~/.bashrc:2"), ("python3", "/usr/bin/python3")]

    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(*facts_renderables(facts))
    line = [ln for ln in out.getvalue().splitlines() if "the system's torch" in ln]
    assert line == ["! the system's torch 2.6.0+debian (/usr, a distribution package) is what `import torch` loads "
                    f"for: venv {HOME}/sees-system; PYTHONPATH ~/.bashrc:2; python3 /usr/bin/python3"], line

    found = [f for f in diagnose(facts) if f.id == "system-torch-shadows"]
    assert len(found) == 1 and found[0].fix_plan == "pip-only", found
    assert found[0].evidence[0].startswith("the system's torch 2.6.0+debian in /usr")
    assert any(f"{HOME}/sees-system/pyvenv.cfg line 2" in e for e in found[0].evidence)
    assert any("PYTHONPATH=/usr/lib/python3/dist-packages:$HOME/lib" in e for e in found[0].evidence)


def test_no_system_torch_no_shadows(tmp_path: Path) -> None:
    host = _machine(tmp_path, debian_torch=False, bashrc="export PYTHONPATH=/usr/lib/python3/dist-packages\n")
    _venv(tmp_path, f"{HOME}/sees-system", system_site="true")
    facts = _facts(host)
    assert facts.torch_shadows == () and facts_to_json(facts)["system_torch"] is None
    assert not [f for f in diagnose(facts) if f.id == "system-torch-shadows"]


def test_a_system_torch_that_shadows_nothing_is_reported_without_a_finding(tmp_path: Path) -> None:
    """No python3 on PATH, the user's venv isolated with its own torch, no PYTHONPATH: the system torch is
    listed (``system_torch`` with no shadows) and diagnose says nothing."""
    _machine(tmp_path)
    _venv(tmp_path, f"{HOME}/venv", system_site="false", torch="2.9.1+rocm6.4")
    facts = _facts(LiveHost(tmp_path, environ={"PATH": "/nonexistent", "HOME": HOME}))
    assert facts.torch_shadows == ()
    doc = facts_to_json(facts)["system_torch"]
    assert doc["torch"] == "2.6.0+debian" and doc["shadows"] == []
    assert not [f for f in diagnose(facts) if f.id == "system-torch-shadows"]


def test_detect_looks_for_environments_once_where_the_system_has_a_torch(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The environments read and the torch shadows start from one discovery (the shadows had walked the processes,
    the units and every home folder a second time): a shadowed venv is still found."""
    from wizard.probes import detect
    from wizard.probes import env_discovery

    host = _machine(tmp_path)
    _venv(tmp_path, f"{HOME}/shared-venv", system_site="true")
    calls: list[str] = []
    real = env_discovery.discover
    monkeypatch.setattr(env_discovery, "discover", lambda *a, **k: calls.append("discover") or real(*a, **k))
    facts = detect(host)
    assert calls == ["discover"]
    assert any("shared-venv" in s.where for s in facts.torch_shadows)
