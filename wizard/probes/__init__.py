"""detect(host) -> Facts: runs every probe, keeps the evidence, never raises.

A probe that fails is recorded as a ProbeError on Facts; the others still report.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, TypeVar

from wizard.host import Host
from wizard.model import Conflict, Docker, Driver, Evidence, Facts, OsInfo, ProbeError, PythonEnv, Rocm, RocmInstall

T = TypeVar("T")


def _guard(errors: list[ProbeError], probe: str, fn: Callable[[], T], default: T) -> T:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - one broken source must not hide the others
        errors.append(ProbeError(probe, f"{type(exc).__name__}: {exc}"))
        return default


def _recorded_python(host: Host) -> list[PythonEnv]:
    """A bundle's collect_env.txt / pip-freeze.txt describe one environment (path unknown)."""
    from wizard.parsers.collect_env import parse_collect_env
    from wizard.parsers.pip_freeze import parse_pip_freeze

    ce_text = host.captured("collect_env.txt")
    pf_text = host.captured("pip-freeze.txt")
    if not ce_text and not pf_text:
        return []
    ce = parse_collect_env(ce_text) if ce_text else None
    pf = parse_pip_freeze(pf_text) if pf_text else None

    def pick(name: str) -> str | None:
        return (pf.version(name) if pf else None) or (ce.library(name) if ce else None)

    torch = (ce.torch_version if ce else None) or pick("torch")
    hip = ce.rocm_build if ce else None
    cuda = ce.cuda_build if ce else None
    build = None
    if hip or (torch and "+rocm" in torch):
        build = "rocm"
    elif cuda or (torch and "+cu" in torch):
        build = "cuda"
    elif torch and "+cpu" in torch:
        build = "cpu"
    sources = []
    if ce_text:
        sources.append(Evidence("collect_env.txt", None, f"PyTorch version: {torch}"))
    if pf_text:
        sources.append(Evidence("pip-freeze.txt"))
    device = ()
    if pf:
        device = tuple(sorted({p.name.rsplit("-", 1)[-1] for p in pf.packages
                               if p.name.startswith(("rocm-sdk-device-gfx", "amd-torch-device-gfx"))}))
    return [PythonEnv(
        path=None, python=ce.python_short if ce else None, python_version=ce.python_short if ce else None,
        torch=torch, torchvision=pick("torchvision"), torchaudio=pick("torchaudio"),
        triton=pick("pytorch-triton-rocm") or pick("triton"), hip=hip, build=build,
        rocm_sdk=pick("rocm") or pick("rocm-sdk-core"), rocm_sdk_targets=device, gfx_targets=device,
        numpy=pick("numpy"), kind="recorded", sources=tuple(sources),
    )]


def _wheel_gfx_from_kb(env: PythonEnv) -> PythonEnv:
    """Recorded envs have no files to read: take the gfx list the KB gives for that exact wheel."""
    if env.gfx_targets or not env.torch or env.build != "rocm" or "+rocm" not in env.torch:
        return env
    from wizard.kb import load_kb

    public, _, local = env.torch.partition("+")
    index = local.replace("rocm", "rocm", 1)
    wheel = load_kb().wheel(public, index)
    if wheel is None or not wheel.gfx:
        return env
    return replace(env, gfx_targets=tuple(wheel.gfx), sources=env.sources + (Evidence("knowledge base", None,
                   f"gfx targets of torch {public} from {index}"),))


def _conflicts(facts: Facts) -> list[Conflict]:
    out: list[Conflict] = []
    for g in facts.gpus:
        if g.gfx and g.gfx_reported and g.gfx != g.gfx_reported:
            out.append(Conflict("gfx-reported-differs",
                                f"{g.name or g.pci_id}: hardware is {g.gfx}, the runtime reports {g.gfx_reported} "
                                "(an HSA_OVERRIDE_GFX_VERSION is in force)", g.sources[:2]))
    values: dict[str, set[str]] = {}
    for s in facts.env:
        values.setdefault(s.name, set()).add(s.value)
    for name, vals in values.items():
        if len(vals) > 1:
            where = ", ".join(f"{s.where}={s.value!r}" for s in facts.env if s.name == name)
            out.append(Conflict("env-set-differently", f"{name} is set to different values: {where}"))
    versions = {i.version for i in facts.rocm.installs if i.version and i.stream in ("legacy", "core-sdk")}
    if len(versions) > 1:
        out.append(Conflict("several-rocm", "several system ROCm releases are installed: " + ", ".join(sorted(versions))))
    streams = {i.stream for i in facts.rocm.installs}
    if "distro" in streams and ("legacy" in streams or "core-sdk" in streams):
        out.append(Conflict("distro-and-amd-rocm", "distribution-built ROCm packages are installed beside AMD's"))
    return out


def detect(host: Host, pythons: list[str] | tuple[str, ...] = ()) -> Facts:
    from wizard.probes.driver import probe_driver
    from wizard.probes.env_settings import probe_env
    from wizard.probes.gpus import other_display_devices, probe_gpus
    from wizard.probes.os_info import probe_os
    from wizard.probes.python_envs import probe_live_envs
    from wizard.probes.rocm import Package, probe_rocm, read_packages

    errors: list[ProbeError] = []
    os_info = _guard(errors, "os", lambda: probe_os(host), OsInfo())

    if host.is_live or host.listdir("/home") or pythons:
        envs, problems = _guard(errors, "python", lambda: probe_live_envs(host, list(pythons)), ([], []))
        errors.extend(ProbeError("python", p) for p in problems)
    else:
        envs = []
    if not host.is_live:
        recorded = _guard(errors, "python", lambda: _recorded_python(host), [])
        known = {e.torch for e in envs}
        envs = envs + [r for r in recorded if r.torch is None or r.torch not in known]
    envs = [_wheel_gfx_from_kb(e) for e in envs]

    venv_prefixes = [e.path for e in envs if e.path and e.kind in ("venv", "conda")]
    env = _guard(errors, "env", lambda: probe_env(host, venv_prefixes), [])
    in_force: dict[str, str] = {}
    for s in env:
        in_force.setdefault(s.name, s.value)

    gpus, notes = _guard(errors, "gpus", lambda: probe_gpus(host, in_force.get("HSA_OVERRIDE_GFX_VERSION")), ([], []))
    others = _guard(errors, "gpus", lambda: other_display_devices(host), [])
    packages: list[Package] = _guard(errors, "packages", lambda: read_packages(host), [])
    rocm = _guard(errors, "rocm", lambda: probe_rocm(host, packages), Rocm())
    pip_rocm = [RocmInstall(e.rocm_sdk, "pip", e.path, "pip", (), e.sources) for e in envs if e.rocm_sdk]
    if pip_rocm:
        rocm = replace(rocm, installs=rocm.installs + tuple(pip_rocm),
                       stream=rocm.stream or ("pip" if rocm.version is None else rocm.stream))

    rock_version = None
    rinfo = host.captured("rocminfo.txt")
    if rinfo:
        from wizard.parsers.rocminfo import parse_rocminfo

        rock_version = parse_rocminfo(rinfo).rock_version
    dkms = tuple(f"{p.name} {p.version}" for p in packages if p.name.startswith("amdgpu-dkms"))
    kfd_seen = any(g.kfd_node is not None or g.gfx_reported for g in gpus)
    driver = _guard(errors, "driver", lambda: probe_driver(host, dkms, rock_version, kfd_seen), Driver())

    docker = Docker()
    disk = home_free = None
    is_root = ssh = container = None
    if host.is_live:
        docker = Docker(docker=host.which("docker"), podman=host.which("podman"),
                        in_docker_group="docker" in driver.groups if driver.groups else None)
        disk = host.statvfs_free("/opt")
        home_free = host.statvfs_free(host.environ.get("HOME", "/"))
        uid = host.uid()
        is_root = uid == 0 if uid is not None else None
        ssh = bool(host.environ.get("SSH_CONNECTION") or host.environ.get("SSH_TTY"))
        container = host.exists("/.dockerenv") or host.exists("/run/.containerenv")
    dmesg = tuple(ln for ln in (host.captured("dmesg.txt") or "").splitlines() if "amdgpu" in ln or "kfd" in ln)[:200]

    facts = Facts(
        os=os_info, gpus=tuple(gpus), driver=driver, rocm=rocm, python_envs=tuple(envs), env=tuple(env),
        docker=docker, disk_free_bytes=disk, home_free_bytes=home_free, is_root=is_root, ssh_session=ssh,
        in_container=container, other_gpus=tuple(others), dmesg=dmesg,
        error_text=host.captured("traceback.txt"), origin=host.name, errors=tuple(errors),
    )
    conflicts = _conflicts(facts) + [Conflict("sources-disagree", n) for n in notes]
    return replace(facts, conflicts=tuple(conflicts))


__all__ = ["detect"]
