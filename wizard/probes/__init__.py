"""detect(host) -> Facts: runs every probe, keeps the evidence, never raises.

A probe that fails is recorded as a ProbeError on Facts; the others still report.
"""

from __future__ import annotations

import re

from wizard.host import Host
from wizard.model import (
    Conflict,
    Docker,
    Driver,
    EnvSetting,
    Evidence,
    EvidenceText,
    Facts,
    Found,
    FoundBy,
    Gpu,
    OsInfo,
    ProbeError,
    PythonEnv,
    Rocm,
    RocmInstall,
    TorchShadow,
    values_in_force,
)
from wizard.parsers.uname import kernel_of_another_distribution
from wizard.record import replace

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Callable, TypeVar

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
    device: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()
    if pf:
        from wizard.probes.python_envs import pypi_placeholder

        placeholders = tuple(sorted(f"{p.name} {p.version}" for p in pf.packages if pypi_placeholder(p.name, p.version)))
        device = tuple(sorted({p.name.rsplit("-", 1)[-1] for p in pf.packages
                               if p.name.startswith(("rocm-sdk-device-gfx", "amd-torch-device-gfx"))}))
    return [PythonEnv(
        path=None, python=ce.python_short if ce else None, python_version=ce.python_short if ce else None,
        torch=torch, torchvision=pick("torchvision"), torchaudio=pick("torchaudio"),
        triton=pick("pytorch-triton-rocm") or pick("triton"), hip=hip, build=build,
        rocm_sdk=pick("rocm") or pick("rocm-sdk-core"), rocm_sdk_targets=device, gfx_targets=device,
        placeholders=placeholders, numpy=pick("numpy"), kind="recorded", sources=tuple(sources),
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
    shell = [s for s in facts.env if s.service is None]  # a service may run with its own value: no conflict
    for s in shell:
        values.setdefault(s.name, set()).add(s.value)
    for name, vals in values.items():
        if len(vals) > 1:
            where = ", ".join(f"{s.where}={s.value!r}" for s in shell if s.name == name)
            out.append(Conflict("env-set-differently", f"{name} is set to different values: {where}"))
    versions = {i.version for i in facts.rocm.installs if i.version and i.stream in ("legacy", "core-sdk")}
    if len(versions) > 1:
        out.append(Conflict("several-rocm", "several system ROCm releases are installed: " + ", ".join(sorted(versions))))
    streams = {i.stream for i in facts.rocm.installs}
    if "distro" in streams and ("legacy" in streams or "core-sdk" in streams):
        out.append(Conflict("distro-and-amd-rocm", "distribution-built ROCm packages are installed beside AMD's"))
    return out


def detect(host: Host | None, pythons: list[str] | tuple[str, ...] = (), paste: tuple[str, str] | None = None) -> Facts:
    """The machine's facts. ``host`` None with a ``paste`` (label, text): the machine the paste describes."""
    texts: list[EvidenceText] = []
    reading = None
    if host is None or not host.is_live or paste is not None:
        from wizard.probes.texts import gather

        texts, reading = gather(host, paste)
    probed = reading if reading is not None else host
    assert probed is not None
    facts = _detect(probed, pythons)
    if probed.is_live and facts.gpus:
        from wizard.probes.texts import kernel_log

        klog = kernel_log(probed)
        if klog is not None:
            texts.append(klog)
            facts = replace(facts, dmesg=tuple(klog.text.splitlines())[-200:])
    if texts:
        from wizard.probes.secondary import apply

        facts = replace(facts, texts=tuple(texts))
        facts = _guard_facts(facts, lambda f: apply(f, f.texts))
    os_ = facts.os
    if not probed.is_live and facts.in_container is None and kernel_of_another_distribution(os_.id, os_.kernel, os_.version):
        facts = replace(facts, in_container=True)  # a recorded userland on another system's kernel
    if reading is not None:
        facts = _relocate(facts, reading)
    return replace(facts, python_envs=tuple(_recorded_found(e) for e in facts.python_envs))


def _recorded_found(env: PythonEnv) -> PythonEnv:
    """A recorded environment (a bundle's collect_env.txt, a paste) was found where its first evidence is."""
    if env.found or env.kind != "recorded" or not env.sources:
        return env
    ev = env.sources[0]
    return replace(env, found=(Found(FoundBy.RECORDED, ev.source if ev.line is None else f"{ev.source}:{ev.line}",
                                     ev.text),))


def _guard_facts(facts: Facts, fn: Callable[[Facts], Facts]) -> Facts:
    try:
        return fn(facts)
    except Exception as exc:  # noqa: BLE001 - secondary evidence must never cost the primary facts
        return replace(facts, errors=facts.errors + (ProbeError("texts", f"{type(exc).__name__}: {exc}"),))


def _relocate(facts: Facts, reading: object) -> Facts:
    """Evidence that points into a paste's virtual file points at the pasted file and line instead."""
    from wizard.probes.texts import ReadingHost

    assert isinstance(reading, ReadingHost)

    def ev(e: Evidence) -> Evidence:
        where = reading.locate(e.source, e.line)
        return e if where is None else Evidence(where[0], where[1], e.text)

    def evs(items: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
        return tuple(ev(e) for e in items)

    def setting(s: EnvSetting) -> EnvSetting:
        name, _, line = s.where.rpartition(":")
        if name and line.isdigit():
            where = reading.locate(name, int(line))
            if where is not None:
                return replace(s, where=f"{where[0]}:{where[1]}" if where[1] else where[0])
        return s

    return replace(
        facts,
        os=replace(facts.os, sources=evs(facts.os.sources)),
        gpus=tuple(replace(g, sources=evs(g.sources)) for g in facts.gpus),
        driver=replace(facts.driver, sources=evs(facts.driver.sources)),
        rocm=replace(facts.rocm, sources=evs(facts.rocm.sources),
                     installs=tuple(replace(i, sources=evs(i.sources)) for i in facts.rocm.installs)),
        python_envs=tuple(replace(e, sources=evs(e.sources)) for e in facts.python_envs),
        env=tuple(setting(s) for s in facts.env),
        conflicts=tuple(replace(c, evidence=evs(c.evidence)) for c in facts.conflicts),
    )


def _smi_versions(host: Host, rocm: Rocm, driver: Driver) -> tuple[Rocm, Driver]:
    """The ROCm and amdgpu versions amd-smi / rocm-smi print, and the driver loaded where their output shows it was,
    where nothing more direct said them."""
    text = host.captured("amd-smi.txt")
    if text and (rocm.version is None or driver.version is None or driver.loaded is None):
        from wizard.parsers.amd_smi import parse_amd_smi

        smi = parse_amd_smi(text)
        if rocm.version is None and smi.rocm_version and re.match(r"\d+\.\d+", smi.rocm_version):
            from wizard.probes.secondary import stream_of

            rocm = replace(rocm, version=smi.rocm_version, stream=rocm.stream or stream_of(smi.rocm_version),
                           sources=rocm.sources + (Evidence("amd-smi.txt", None, f"ROCm version: {smi.rocm_version}"),))
        version = smi.amdgpu_version or next((g.driver_version for g in smi.gpus if g.driver_version), None)
        if driver.version is None and version and re.match(r"\d", version):
            driver = replace(driver, version=version,
                             sources=driver.sources + (Evidence("amd-smi.txt", None, f"amdgpu version {version}"),))
        if driver.loaded is None and (smi.gpus or (smi.amdgpu_version and re.match(r"\d|Linux ?ver", smi.amdgpu_version))):
            # amd-smi lists GPUs, and prints the amdgpu version, only through the loaded amdgpu driver (an in-tree
            # driver's as /proc/version with its blanks dropped, "Linuxversion6.8.0-79-generic(...)", which the
            # monitor's box header cuts to "Linuxver")
            driver = replace(driver, loaded=True, sources=driver.sources + (Evidence(
                "amd-smi.txt", None, f"amd-smi lists {len(smi.gpus)} GPU(s), amdgpu {smi.amdgpu_version or ''}".strip()),))
    text = host.captured("rocm-smi.txt")
    if text and (driver.version is None or driver.loaded is None):
        from wizard.parsers.rocm_smi import parse_rocm_smi

        rsmi = parse_rocm_smi(text)
        version = rsmi.driver_version
        if driver.version is None and version and re.match(r"\d", version):
            driver = replace(driver, version=version,
                             sources=driver.sources + (Evidence("rocm-smi.txt", None, f"Driver version: {version}"),))
        if driver.loaded is None and rsmi.driver_component and version and re.match(r"\d", version):
            # the library-based rocm-smi prints its "Version of System Component" only with amdgpu initialised
            driver = replace(driver, loaded=True, sources=driver.sources + (Evidence(
                "rocm-smi.txt", None, f"Version of System Component: Driver version: {version}"),))
        elif driver.loaded is None and rsmi.library_answered:
            # ... and answers for a GPU (even "not supported") only with amdgpu initialised
            driver = replace(driver, loaded=True, sources=driver.sources + (Evidence(
                "rocm-smi.txt", None, "rocm-smi (the library-based one) answered for the GPUs"),))
    return rocm, driver


def _detect(host: Host, pythons: list[str] | tuple[str, ...]) -> Facts:
    from wizard.probes.driver import probe_driver
    from wizard.probes.env_discovery import Candidate, ServiceUnits, discover, service_units
    from wizard.probes.env_settings import probe_env
    from wizard.probes.gpus import other_display_devices, probe_gpus
    from wizard.probes.os_info import probe_os
    from wizard.probes.python_envs import home_dirs, probe_live_envs
    from wizard.probes.rocm import Package, probe_rocm, read_packages

    errors: list[ProbeError] = []
    os_info = _guard(errors, "os", lambda: probe_os(host), OsInfo())
    # the services' unit files, walked and read once: the environments they run and the variables they set
    units: ServiceUnits = _guard(errors, "env", lambda: service_units(host, home_dirs(host)), [])
    found: list[list[Candidate]] = []

    def discovered() -> list[Candidate]:
        """The environments found on the machine (env_discovery.discover), looked for once: the environments read
        and the torch shadows both start from them."""
        if not found:
            found.append(discover(host, home_dirs(host), units))
        return found[0]

    listed = None
    if not host.is_live:  # a recording's listing of its environments (wizard.probes.bundle_envs)
        from wizard.probes.bundle_envs import read_listing

        listed = _guard(errors, "python", lambda: read_listing(host), None)
    if listed is not None:  # a bundle that lists the machine's environments: read those, as the machine did
        envs = listed
    elif host.is_live or pythons or any(host.listdir(d) for d in ("/home", "/opt", "/etc/systemd/system")):
        no_envs: tuple[list[PythonEnv], list[str]] = ([], [])
        envs, problems = _guard(errors, "python", lambda: probe_live_envs(host, list(pythons), discovered()), no_envs)
        errors.extend(ProbeError("python", p) for p in problems)
    else:
        envs = []
    if not host.is_live:
        recorded: list[PythonEnv] = _guard(errors, "python", lambda: _recorded_python(host), [])
        known = {e.torch for e in envs}
        envs = envs + [r for r in recorded if r.torch is None or r.torch not in known]
    envs = [_wheel_gfx_from_kb(e) for e in envs]

    venv_prefixes = [e.path for e in envs if e.path and e.kind in ("venv", "conda")]
    services: list[str] = []
    env: list[EnvSetting] = _guard(errors, "env", lambda: probe_env(host, venv_prefixes, services, units), [])
    in_force = values_in_force(env)  # a service's own setting is not what this process, nor a shell, runs with
    from wizard.probes.shadows import probe_shadows

    none: tuple[TorchShadow, ...] = ()
    shadows = _guard(errors, "python", lambda: probe_shadows(host, envs, env, discovered), none)

    no_gpus: tuple[list[Gpu], list[str]] = ([], [])
    gpus, notes = _guard(errors, "gpus", lambda: probe_gpus(host, in_force.get("HSA_OVERRIDE_GFX_VERSION")), no_gpus)
    others: list[str] = _guard(errors, "gpus", lambda: other_display_devices(host), [])
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
    rocm, driver = _guard(errors, "smi", lambda: _smi_versions(host, rocm, driver), (rocm, driver))

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
        torch_shadows=shadows,
        docker=docker, disk_free_bytes=disk, home_free_bytes=home_free, is_root=is_root, ssh_session=ssh,
        in_container=container, other_gpus=tuple(others), services=tuple(sorted(services)), dmesg=dmesg,
        error_text=host.captured("traceback.txt"), origin=host.name, errors=tuple(errors),
    )
    conflicts = _conflicts(facts) + [Conflict("sources-disagree", n) for n in notes]
    return replace(facts, conflicts=tuple(conflicts))


__all__ = ["detect"]
