"""The live detection path, on machine roots laid out in temp dirs (sysfs, /opt, /home, /etc)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wizard.host import LiveHost
from wizard.probes import detect

pytestmark = pytest.mark.unit

KFD = "sys/class/kfd/kfd/topology/nodes"


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def pci(root: Path, bdf: str, device: str, vram: int | None = None, render: int | None = None,
        vendor: str = "0x1002", cls: str = "0x030000") -> None:
    base = f"sys/bus/pci/devices/{bdf}"
    write(root, f"{base}/vendor", vendor + "\n")
    write(root, f"{base}/device", f"0x{device}\n")
    write(root, f"{base}/class", cls + "\n")
    if vram is not None:
        write(root, f"{base}/mem_info_vram_total", f"{vram}\n")
    if render is not None:
        (root / base / "drm" / f"renderD{render}").mkdir(parents=True)


def kfd_node(root: Path, n: int, **props: int) -> None:
    write(root, f"{KFD}/{n}/properties", "".join(f"{k} {v}\n" for k, v in props.items()))


def location(bus: int, dev: int = 0, fn: int = 0) -> int:
    return (bus << 8) | (dev << 3) | fn


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """Ubuntu 24.04 with a Raphael iGPU (KFD node 2) and an RX 7900 XTX (node 1), ROCm 6.4.1."""
    r = tmp_path
    write(r, "etc/os-release", 'ID=ubuntu\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n')
    kfd_node(r, 0, cpu_cores_count=16, simd_count=0, gfx_target_version=0)
    kfd_node(r, 1, simd_count=192, gfx_target_version=110000, vendor_id=4098, device_id=0x744C,
             location_id=location(3), domain=0, drm_render_minor=128, local_mem_size=25753026560)
    kfd_node(r, 2, simd_count=4, gfx_target_version=100306, vendor_id=4098, device_id=0x164E,
             location_id=location(0x12), domain=0, drm_render_minor=129, local_mem_size=0)
    pci(r, "0000:03:00.0", "744c", vram=25753026560, render=128)
    pci(r, "0000:12:00.0", "164e", vram=536870912, render=129)
    pci(r, "0000:01:00.0", "2684", vendor="0x10de")
    write(r, "opt/rocm-6.4.1/.info/version", "6.4.1-83\n")
    os.symlink("rocm-6.4.1", r / "opt/rocm")
    write(r, "var/lib/dpkg/status",
          "Package: rocm-core\nStatus: install ok installed\nVersion: 6.4.1.60401-83~24.04\nArchitecture: amd64\n\n"
          "Package: amdgpu-dkms\nStatus: install ok installed\nVersion: 1:6.12.12.60401-2164967.24.04\nArchitecture: all\n\n"
          "Package: rocminfo\nStatus: install ok installed\nVersion: 5.7.1-3build1\nArchitecture: amd64\n\n"
          "Package: bash\nStatus: install ok installed\nVersion: 5.2\nArchitecture: amd64\n")
    write(r, "etc/passwd", "root:x:0:0::/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n")
    write(r, "etc/group", "root:x:0:\nvideo:x:44:alice\nrender:x:110:\nalice:x:1000:\n")
    venv = "home/alice/pytorch_venv"
    write(r, f"{venv}/pyvenv.cfg", "home = /usr/bin\n")
    site = f"{venv}/lib/python3.12/site-packages"
    (r / site / "torch-2.7.1+rocm6.3.dist-info").mkdir(parents=True)
    (r / site / "pytorch_triton_rocm-3.3.1.dist-info").mkdir(parents=True)
    write(r, f"{site}/torch/version.py", "__version__ = '2.7.1+rocm6.3'\nhip = '6.3.42131-fa1d09cbd'\ncuda = None\n")
    for gfx in ("gfx1030", "gfx1100", "gfx1101", "gfx1201"):
        write(r, f"{site}/torch/lib/rocblas/library/TensileLibrary_lazy_{gfx}.dat", "")
    write(r, f"{venv}/bin/activate", 'VIRTUAL_ENV="/home/alice/pytorch_venv"\nexport VIRTUAL_ENV\n'
          'export HIP_VISIBLE_DEVICES=0\n')
    write(r, "home/alice/.bashrc", "alias ll='ls -l'\nexport HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    return r


def host_for(root: Path, **env: str) -> LiveHost:
    return LiveHost(root, environ={"HOME": "/home/alice", "USER": "alice", "PATH": "/nonexistent", **env})


def test_gpus_in_kfd_order_with_hardware_and_reported_gfx(machine: Path) -> None:
    f = detect(host_for(machine))
    assert [(g.gfx, g.pci_id, g.integrated, g.hip_index) for g in f.gpus] == [
        ("gfx1100", "1002:744c", False, 0),
        ("gfx1036", "1002:164e", True, 1),
    ]
    # the override in ~/.bashrc is in force for the user's shell: the runtime reports gfx1100 for both
    assert [g.gfx_reported for g in f.gpus] == ["gfx1100", "gfx1100"]
    assert f.gpus[0].bdf == "0000:03:00.0" and f.gpus[0].render_node == "renderD128"
    assert f.gpus[0].vram_bytes == 25753026560
    assert f.gpus[0].family == "RDNA3" and f.gpus[1].family == "RDNA2"
    assert any("10de:2684" in o for o in f.other_gpus)
    assert any(c.id == "gfx-reported-differs" for c in f.conflicts)


def test_os_rocm_driver_groups(machine: Path) -> None:
    f = detect(host_for(machine))
    assert (f.os.id, f.os.version, f.os.codename, f.os.package_manager) == ("ubuntu", "24.04", "noble", "apt")
    assert f.rocm.version == "6.4.1" and f.rocm.stream == "legacy"
    legacy = [i for i in f.rocm.installs if i.stream == "legacy"]
    assert legacy[0].path == "/opt/rocm-6.4.1" and "rocm-core" in legacy[0].packages
    distro = [i for i in f.rocm.installs if i.stream == "distro"]
    assert distro and distro[0].packages == ("rocminfo",)
    assert f.driver.kind == "dkms" and f.driver.dkms_packages
    assert f.driver.in_video_group is True and f.driver.in_render_group is False
    assert any(c.id == "distro-and-amd-rocm" for c in f.conflicts)


def test_python_env_read_from_files_without_importing_torch(machine: Path) -> None:
    f = detect(host_for(machine))
    env = next(e for e in f.python_envs if e.path == "/home/alice/pytorch_venv")
    assert (env.torch, env.build, env.hip, env.triton) == ("2.7.1+rocm6.3", "rocm", "6.3.42131-fa1d09cbd", "3.3.1")
    assert env.gfx_targets == ("gfx1030", "gfx1100", "gfx1101", "gfx1201")
    assert env.python_version == "3.12"


def test_env_settings_and_where_they_are_set(machine: Path) -> None:
    f = detect(host_for(machine, VIRTUAL_ENV="/home/alice/pytorch_venv"))
    where = {(s.name, s.where) for s in f.env}
    assert ("HSA_OVERRIDE_GFX_VERSION", "~/.bashrc:2") in where
    assert ("HIP_VISIBLE_DEVICES", "/home/alice/pytorch_venv/bin/activate:3") in where
    assert f.env_values["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"


def test_process_environment_wins(machine: Path) -> None:
    f = detect(host_for(machine, HSA_OVERRIDE_GFX_VERSION="10.3.0"))
    assert f.env_values["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"
    assert [g.gfx_reported for g in f.gpus] == ["gfx1030", "gfx1030"]


def test_core_sdk_and_pip_rocm(tmp_path: Path) -> None:
    r = tmp_path
    write(r, "etc/os-release", "ID=ubuntu\nVERSION_ID=24.04\n")
    write(r, "opt/rocm/core-10.0/.info/version", "10.0.0\n")
    site = "home/alice/therock/lib/python3.12/site-packages"
    write(r, "home/alice/therock/pyvenv.cfg", "")
    for d in ("torch-2.12.0+rocm7.14.0.dist-info", "rocm-7.14.0.dist-info", "rocm_sdk_device_gfx1151-7.14.0.dist-info"):
        (r / site / d).mkdir(parents=True)
    write(r, f"{site}/torch/version.py", "__version__ = '2.12.0+rocm7.14.0'\nhip = '7.14.0'\ncuda = None\n")
    f = detect(host_for(r))
    streams = {(i.stream, i.version) for i in f.rocm.installs}
    assert ("core-sdk", "10.0.0") in streams and ("pip", "7.14.0") in streams
    env = f.python_envs[0]
    assert env.rocm_sdk == "7.14.0" and env.rocm_sdk_targets == ("gfx1151",)


def test_user_site_torch_and_python_arg(tmp_path: Path) -> None:
    r = tmp_path
    site = "home/alice/.local/lib/python3.12/site-packages"
    (r / site / "torch-2.5.1+rocm6.2.dist-info").mkdir(parents=True)
    write(r, f"{site}/torch/version.py", "__version__ = '2.5.1+rocm6.2'\nhip = '6.2.41133-dd7f95766'\n")
    write(r, "srv/env/pyvenv.cfg", "")
    (r / "srv/env/lib/python3.11/site-packages/torch-2.13.0+cpu.dist-info").mkdir(parents=True)
    write(r, "srv/env/lib/python3.11/site-packages/torch/version.py", "__version__ = '2.13.0+cpu'\nhip = None\ncuda = None\n")
    write(r, "srv/env/bin/python", "")
    f = detect(host_for(r), pythons=["/srv/env/bin/python", "/does/not/exist"])
    assert f.python_envs[0].path == "/srv/env" and f.python_envs[0].build == "cpu"
    assert any(e.kind == "user-site" and e.torch == "2.5.1+rocm6.2" for e in f.python_envs)
    assert any(e.probe == "python" and "/does/not/exist" in e.message for e in f.errors)


def test_empty_root_is_no_gpu_and_no_crash(tmp_path: Path) -> None:
    f = detect(host_for(tmp_path))
    assert f.gpus == () and f.rocm.version is None
    assert not [e for e in f.errors if e.probe != "python"]


def test_garbage_files_never_raise(machine: Path) -> None:
    write(machine, f"{KFD}/1/properties", "\x00\xff garbage \n gfx_target_version notanumber\n")
    write(machine, "etc/os-release", "\x00\x01=\n")
    write(machine, "var/lib/dpkg/status", "Package\n\n\n:::")
    f = detect(host_for(machine))
    assert not f.errors, f.errors


def test_the_wheel_version_tag_decides_the_build(tmp_path: Path) -> None:
    site = "home/alice/v/lib/python3.10/site-packages"
    write(tmp_path, "home/alice/v/pyvenv.cfg", "")
    (tmp_path / site / "torch-2.5.1+rocm6.2.dist-info").mkdir(parents=True)
    write(tmp_path, f"{site}/torch/version.py", "__version__ = '2.5.1+rocm6.2'\nhip = None\n")
    env = detect(host_for(tmp_path)).python_envs[0]
    assert env.build == "rocm"


class _RootedWhich(LiveHost):
    """A machine root whose PATH lookups stay inside the root (LiveHost.which looks at the real disk)."""

    def which(self, program: str) -> str | None:
        for d in self.environ.get("PATH", "").split(":"):
            if d and self.exists(f"{d}/{program}"):
                return f"{d}/{program}"
        return None


def _python(root: Path, exe: str, target: str | None = None) -> None:
    p = root / exe.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    if target:
        (p.parent / target).write_text("")
        os.symlink(target, p)
    else:
        p.write_text("")


def test_system_python_version_without_torch(tmp_path: Path) -> None:
    _python(tmp_path, "/usr/bin/python3", "python3.12")
    f = detect(_RootedWhich(tmp_path, environ={"HOME": "/home/alice", "PATH": "/usr/bin"}))
    (env,) = f.python_envs
    assert (env.kind, env.path, env.python, env.python_version, env.torch) == ("system", "/usr", "/usr/bin/python3",
                                                                              "3.12", None)
    assert env.sources and "python3.12" in (env.sources[0].text or "")


def test_distro_packaged_torch_in_debian_dist_packages(tmp_path: Path) -> None:
    _python(tmp_path, "/usr/bin/python3", "python3.12")
    site = "usr/lib/python3/dist-packages"
    (tmp_path / site / "torch-2.4.0.dist-info").mkdir(parents=True)
    write(tmp_path, f"{site}/torch/version.py", "__version__ = '2.4.0'\nhip = '6.1.40093-0'\ncuda = None\n")
    f = detect(_RootedWhich(tmp_path, environ={"HOME": "/home/alice", "PATH": "/usr/bin"}))
    env = next(e for e in f.python_envs if e.kind == "system")
    assert (env.torch, env.build, env.python_version) == ("2.4.0", "rocm", "3.12")


def test_fedora_and_arch_system_site_packages(tmp_path: Path) -> None:
    _python(tmp_path, "/usr/bin/python3", "python3.13")
    site = "usr/lib64/python3.13/site-packages"
    (tmp_path / site / "torch-2.5.1.dist-info").mkdir(parents=True)
    write(tmp_path, f"{site}/torch/version.py", "__version__ = '2.5.1'\nhip = '6.3.0'\ncuda = None\n")
    f = detect(_RootedWhich(tmp_path, environ={"HOME": "/home/alice", "PATH": "/usr/bin"}))
    env = next(e for e in f.python_envs if e.kind == "system")
    assert (env.torch, env.build, env.python_version) == ("2.5.1", "rocm", "3.13")


def test_activated_venv_is_seen_without_torch(tmp_path: Path) -> None:
    _python(tmp_path, "/usr/bin/python3", "python3.10")
    write(tmp_path, "home/alice/work/.venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.10.12\n")
    _python(tmp_path, "/home/alice/work/.venv/bin/python3")
    host = _RootedWhich(tmp_path, environ={"HOME": "/home/alice", "VIRTUAL_ENV": "/home/alice/work/.venv",
                                           "PATH": "/home/alice/work/.venv/bin:/usr/bin"})
    f = detect(host)
    kinds = [(e.kind, e.path, e.python_version) for e in f.python_envs]
    assert kinds[0] == ("venv", "/home/alice/work/.venv", "3.10")
    assert ("system", "/usr", "3.10") in kinds


def test_conda_python_on_path(tmp_path: Path) -> None:
    (tmp_path / "home/alice/miniconda3/conda-meta").mkdir(parents=True)
    _python(tmp_path, "/home/alice/miniconda3/bin/python3", "python3.11")
    f = detect(_RootedWhich(tmp_path, environ={"HOME": "/home/alice", "PATH": "/home/alice/miniconda3/bin"}))
    env = next(e for e in f.python_envs if e.path == "/home/alice/miniconda3")
    assert (env.kind, env.python_version, env.torch) == ("conda", "3.11", None)


def test_arch_pacman_packages_are_distro_rocm(tmp_path: Path) -> None:
    write(tmp_path, "etc/os-release", "ID=arch\n")
    for entry in ("rocm-core-6.2.4-1", "hip-runtime-amd-6.2.4-1", "rocminfo-6.2.4-1", "bash-5.2.037-1"):
        write(tmp_path, f"var/lib/pacman/local/{entry}/desc", f"%NAME%\n{entry}\n")
    f = detect(host_for(tmp_path))
    assert f.rocm.version == "6.2.4" and f.rocm.stream == "distro"
    (install,) = f.rocm.installs
    assert "rocm-core" in install.packages and "bash" not in install.packages


def test_pyenv_shim_is_followed_without_running_it(tmp_path: Path) -> None:
    write(tmp_path, "root/.pyenv/shims/python3", "#!/bin/sh\nexit 99\n")
    write(tmp_path, "root/.pyenv/version", "3.11.7\n")
    _python(tmp_path, "/root/.pyenv/versions/3.11.7/bin/python3", "python3.11")
    f = detect(_RootedWhich(tmp_path, environ={"HOME": "/root", "PATH": "/root/.pyenv/shims"}))
    env = next(e for e in f.python_envs if e.path == "/root/.pyenv/versions/3.11.7")
    assert (env.kind, env.python_version) == ("system", "3.11")


def test_dpkg_status_keeps_the_whole_name_packages_mid_file(tmp_path: Path) -> None:
    """rdc, rvs and half are ROCm packages matched by their whole name: a stanza in the middle of the status file
    is one of them (the quick scan of the file once missed every one not at its very end), rdc-foo is not."""
    from wizard.probes.rocm import read_packages

    stanzas = [("rdc", "1.0.0.60401-83~24.04"), ("rdc-foo", "1"), ("rvs", "1.1.0.60401-83~24.04"),
               ("half", "1.12.0.60401-83~24.04"), ("bash", "5.2"), ("rocm-core", "6.4.1.60401-83~24.04")]
    write(tmp_path, "var/lib/dpkg/status", "".join(
        f"Package: {n}\nStatus: install ok installed\nVersion: {v}\nArchitecture: amd64\n\n" for n, v in stanzas))
    names = [p.name for p in read_packages(LiveHost(tmp_path, environ={}))]
    assert sorted(names) == ["half", "rdc", "rocm-core", "rvs"]


def test_site_packages_reads_every_name_it_wants_and_passes_over_the_rest(tmp_path: Path) -> None:
    """A site-packages is passed over by the first letters of each entry (python_envs._READ_PREFIXES): every
    distribution the reader reports, every PyPI placeholder and every device package starts so."""
    from wizard.probes import python_envs as pe

    names = [*pe._WANTED, *pe._PLACEHOLDER_SDK, "rocm_sdk_device_gfx1100", "amd_torch_device_gfx1100",
             "_rocm_sdk_device_gfx1100", "PyTorch_Triton_ROCm"]
    assert all(n.lower().lstrip("_.-").startswith(pe._READ_PREFIXES) for n in names)
    site = tmp_path / "lib/python3.12/site-packages"
    for entry in ("numpy-2.1.0.dist-info", "Torch-2.7.1+rocm6.3.dist-info", "pytorch_triton_rocm-3.3.1.dist-info",
                  "rocm_sdk_device_gfx1100", "requests-2.32.0.dist-info", "typing_extensions-4.12.dist-info"):
        (site / entry).mkdir(parents=True)
    info = pe.read_site_packages(LiveHost(tmp_path, environ={}), "/lib/python3.12/site-packages")
    assert info is not None
    assert (info["torch"], info["triton"], info["numpy"]) == ("2.7.1+rocm6.3", "3.3.1", "2.1.0")
    assert info["device_targets"] == ("gfx1100",)


@given(st.text(alphabet="python0123456789.t/x", max_size=14))
def test_python_name_version_reads_what_the_patterns_it_replaced_read(name: str) -> None:
    import re

    from wizard.probes.python_envs import _dotted_version, python_name_version

    any_version = re.match(r"^python(?:\d+(?:\.\d+)?)?t?\Z", name)
    assert (python_name_version(name) is not None) == bool(any_version)
    some = re.match(r"^python(\d+(?:\.\d+)?)t?\Z", name)
    assert (python_name_version(name) or None) == (some.group(1) if some else None)
    dotted = re.match(r"^python(\d+\.\d+)t?\Z", name)
    assert _dotted_version(name) == (dotted.group(1) if dotted else None)


@given(st.text(alphabet="ab1._-+distegnfo", max_size=24))
@example("torch-2.7.1+rocm6.3.dist-info")
@example("a-1.dist.dist-info")
@example("a-1.0-py3.8.egg-info")
@example("-1.dist-info")
@example("a-.dist-info")
@example("a.b_c-1.egg-info")
def test_dist_info_reads_what_the_pattern_it_replaced_read(entry: str) -> None:
    import re

    from wizard.probes.python_envs import dist_info

    m = re.match(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[^-]+?)\.(?:dist|egg)-info\Z", entry)
    assert dist_info(entry) == ((m.group("name"), m.group("version")) if m else None)


@given(st.text(alphabet="rocm-0123.a", max_size=16))
@example("rocm-6.2.4")
@example("rocm-6.2.4-123")
@example("rocm-5.7")
@example("rocm-6.2.4-")
@example("rocm-6.2.4.1")
def test_legacy_dir_version_reads_what_the_pattern_it_replaced_read(name: str) -> None:
    import re

    from wizard.probes.rocm import legacy_dir_version

    m = re.match(r"^rocm-(\d+\.\d+(?:\.\d+)?)(?:-\d+)?\Z", name)
    assert legacy_dir_version(name) == (m.group(1) if m else None)
