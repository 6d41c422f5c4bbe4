"""Python environments and the torch stack inside them, read from installed files.

Never imports torch and never runs the interpreter of an environment we can read from disk:
versions come from ``*.dist-info`` folder names and ``torch/version.py``; the gfx targets a ROCm
wheel carries come from the rocBLAS / hipBLASLt kernel library file names shipped inside it
(``torch/lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat`` ...), and for TheRock wheels from
the device packages installed beside it (``rocm_sdk_device_gfx1100``, ``amd_torch_device_gfx1100``).
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.host import Host, acting_user
from wizard.model import Evidence, Found, FoundBy, PythonEnv
from wizard.parsers._text import ascii_number
from wizard.record import replace

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from wizard.probes.env_discovery import Candidate

_GFX = lazy_re.compile(r"gfx[0-9]{2,4}[0-9a-f]?(?![0-9a-z])")
_GFX_IN_NAME = lazy_re.compile(r"gfx([0-9]{2,4}[0-9a-f]?)(?:[^0-9a-z]|$)")
_VERSION_PY_FIELD = lazy_re.compile(r"^(?P<key>__version__|hip|cuda|git_version)\s*(?::\s*[^=]+)?=\s*(?P<val>.+?)\s*$", re.M)
# matched against _norm_name's lower-case names only
_DEVICE_PKG = lazy_re.compile(r"^(?:rocm_sdk_device|amd_torch_device|_rocm_sdk_device)_(gfx[0-9a-f]+)$")

# Distributions we report, by normalised name.
_WANTED = {
    "torch": "torch",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "pytorch_triton_rocm": "triton",
    "triton": "triton",
    "numpy": "numpy",
    "rocm": "rocm_sdk",
    "rocm_sdk_core": "rocm_sdk",
}

# How every name read from a site-packages starts (lower case, after any leading '_', '.' or '-': _norm_name folds
# "__rocm_sdk_device_gfx1100" to the device package "_rocm_sdk_device_gfx1100"): _WANTED's, the placeholders' and
# the device packages'. An entry that starts otherwise (nearly all of a site-packages) is passed over unparsed.
_READ_PREFIXES = ("torch", "pytorch", "triton", "numpy", "rocm", "amd")

# PyPI's projects under ROCm's names hold one empty placeholder release each (recorded copies of their JSON
# in tests/fixtures/pypi): https://pypi.org/project/rocm/ (and rocm-sdk, rocm-sdk-core, rocm-sdk-libraries)
# 0.1.0; https://pypi.org/project/rocm-sdk-device-gfx1201/ (and every rocm-sdk-device-gfx*,
# amd-torch-device-gfx*) 0.0.1.dev0. A pip that reached PyPI for these names installed nothing of ROCm.
_PLACEHOLDER_SDK = ("rocm", "rocm_sdk", "rocm_sdk_core", "rocm_sdk_libraries")
_PLACEHOLDER_SDK_VERSION = "0.1.0"
_PLACEHOLDER_DEVICE = lazy_re.compile(r"^(?:rocm_sdk_device|amd_torch_device)_gfx[0-9a-z]+$")
_PLACEHOLDER_DEVICE_VERSION = "0.0.1.dev0"


_DIST_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")


def dist_info(entry: str) -> tuple[str, str] | None:
    """(name, version) of a site-packages entry ``NAME-VERSION.dist-info`` (or ``.egg-info``), else None: a name of
    letters, digits, '_' and '.', a version without '-' (an egg's ``-py3.8`` tag makes it none)."""
    for suffix in (".dist-info", ".egg-info"):
        if entry.endswith(suffix):
            name, dash, version = entry[: -len(suffix)].partition("-")
            if dash and name and version and "-" not in version and _DIST_NAME_CHARS.issuperset(name):
                return name, version
    return None


def pypi_placeholder(name: str, version: str | None) -> bool:
    """``name`` (any spelling) at ``version`` is one of PyPI's empty placeholders under ROCm's names."""
    n = _norm_name(name)
    if n in _PLACEHOLDER_SDK:
        return version == _PLACEHOLDER_SDK_VERSION
    return version == _PLACEHOLDER_DEVICE_VERSION and bool(_PLACEHOLDER_DEVICE.match(n))


_SEPARATORS = str.maketrans("-.", "__")


def _norm_name(name: str) -> str:
    """PEP 503's normalised name, with underscores: "Torch-Vision" -> "torch_vision"."""
    out = name.lower().translate(_SEPARATORS)
    while "__" in out:
        out = out.replace("__", "_")
    return out


def python_name_version(name: str) -> str | None:
    """The version an interpreter's name, or its lib folder's, carries: "python3.12" -> "3.12", "python3.13t" (free
    threaded) -> "3.13", "python3" -> "3", "python" -> ""; None for any other name. (String tests, not a pattern:
    the six patterns this replaced cost ~1 ms of every detect to compile.)"""
    if not name.startswith("python"):
        return None
    version = name[6:].removesuffix("t")
    major, dot, minor = version.partition(".")
    if not version or (ascii_number(major) and (not dot or ascii_number(minor))):
        return version
    return None


def _dotted_version(name: str) -> str | None:
    """python_name_version for an X.Y name only ("python3.12t" -> "3.12"; "python3" -> None)."""
    version = python_name_version(name)
    return version if version and "." in version else None


def site_packages_dirs(host: Host, prefix: str) -> list[str]:
    """lib/pythonX.Y/site-packages (and dist-packages) under a prefix, newest Python first."""
    out: list[str] = []
    for lib in ("lib", "lib64", "local/lib"):
        base = f"{prefix.rstrip('/')}/{lib}"
        for d in sorted(host.listdir(base), reverse=True):
            if python_name_version(d):
                for leaf in ("site-packages", "dist-packages"):
                    p = f"{base}/{d}/{leaf}"
                    if host.is_dir(p) and p not in out:
                        out.append(p)
    debian = f"{prefix.rstrip('/')}/lib/python3/dist-packages"  # Debian/Ubuntu's python3-* packages (no version dir)
    if host.is_dir(debian):
        out.append(debian)
    return out


def gfx_targets_in_torch(host: Host, torch_dir: str) -> tuple[str, ...]:
    """gfx targets whose BLAS kernel libraries ship inside a ROCm torch wheel."""
    found: set[str] = set()
    for sub in ("lib/rocblas/library", "lib/hipblaslt/library"):
        for name in host.listdir(f"{torch_dir}/{sub}"):
            for m in _GFX_IN_NAME.finditer(name):
                found.add("gfx" + m.group(1))
    return tuple(sorted(found, key=_gfx_sort_key))


def _gfx_sort_key(gfx: str) -> tuple[int, str]:
    digits = gfx[3:]
    return (len(digits), digits)


def _read_version_py(host: Host, torch_dir: str) -> dict[str, str | None]:
    text = host.read_text(f"{torch_dir}/version.py", limit=64 << 10) or ""
    out: dict[str, str | None] = {}
    for m in _VERSION_PY_FIELD.finditer(text):
        raw = m.group("val").strip()
        if raw in ("None", "''", '""'):
            out[m.group("key")] = None
        else:
            out[m.group("key")] = raw.strip("'\"")
    return out


def build_of(version: str, hip: str | None, cuda: str | None, have_version_py: bool) -> str | None:
    """rocm / cuda / cpu: the wheel's local version tag first (+rocm6.2, +cu124, +cpu), then version.py."""
    local = version.partition("+")[2]
    if local.startswith("rocm"):
        return "rocm"
    if local.startswith("cu"):
        return "cuda"
    if local.startswith("cpu"):
        return "cpu"
    if hip:
        return "rocm"
    if cuda:
        return "cuda"
    return "cpu" if have_version_py else None


def read_site_packages(host: Host, site: str) -> dict[str, object] | None:
    """What a site-packages directory holds of interest, or None when it has no torch/rocm."""
    versions: dict[str, str] = {}
    device_targets: set[str] = set()
    placeholders: set[str] = set()
    for entry in host.listdir(site):
        if not entry.lower().lstrip("_.-").startswith(_READ_PREFIXES):
            continue
        dist = dist_info(entry)
        if dist:
            name, version = _norm_name(dist[0]), dist[1]
            if pypi_placeholder(name, version):
                placeholders.add(f"{name.replace('_', '-')} {version}")
            key = _WANTED.get(name)
            if key and key not in versions:
                versions[key] = version
            dm = _DEVICE_PKG.match(name) if "device" in name else None
            if dm:
                device_targets.add(dm.group(1).lower())
        elif "device" in entry.lower():  # a device package's own directory (rocm_sdk_device_gfx1100)
            dm = _DEVICE_PKG.match(_norm_name(entry))
            if dm:
                device_targets.add(dm.group(1).lower())
    if "torch" not in versions and "rocm_sdk" not in versions and not placeholders:
        return None
    info: dict[str, object] = dict(versions)
    info["placeholders"] = tuple(sorted(placeholders))
    torch_dir = f"{site}/torch"
    if "torch" in versions and host.is_dir(torch_dir):
        vp = _read_version_py(host, torch_dir)
        info["torch"] = vp.get("__version__") or versions["torch"]
        hip, cuda = vp.get("hip"), vp.get("cuda")
        info["hip"] = hip
        info["build"] = build_of(str(info["torch"]), hip, cuda, "__version__" in vp)
        info["gfx_targets"] = gfx_targets_in_torch(host, torch_dir)
    info["device_targets"] = tuple(sorted(device_targets, key=_gfx_sort_key))
    return info


def _python_version_of(site: str) -> str | None:
    return next((v for part in site.split("/")[1:] if (v := _dotted_version(part))), None)


def env_from_prefix(host: Host, prefix: str, kind: str, python: str | None = None) -> PythonEnv | None:
    for site in site_packages_dirs(host, prefix):
        info = read_site_packages(host, site)
        if info is None:
            continue
        targets: tuple[str, ...] = tuple(info.get("gfx_targets", ()))  # type: ignore[arg-type]
        device: tuple[str, ...] = tuple(info.get("device_targets", ()))  # type: ignore[arg-type]
        return PythonEnv(
            path=prefix,
            python=python or (f"{prefix.rstrip('/')}/bin/python" if kind in ("venv", "conda") else None),
            python_version=_python_version_of(site),
            torch=info.get("torch"),  # type: ignore[arg-type]
            torchvision=info.get("torchvision"),  # type: ignore[arg-type]
            torchaudio=info.get("torchaudio"),  # type: ignore[arg-type]
            triton=info.get("triton"),  # type: ignore[arg-type]
            hip=info.get("hip"),  # type: ignore[arg-type]
            build=info.get("build"),  # type: ignore[arg-type]
            gfx_targets=targets or device,
            rocm_sdk=info.get("rocm_sdk"),  # type: ignore[arg-type]
            rocm_sdk_targets=device,
            placeholders=tuple(info.get("placeholders", ())),  # type: ignore[arg-type]
            numpy=info.get("numpy"),  # type: ignore[arg-type]
            kind=kind,
            sources=(Evidence(site),),
        )
    return None


def home_dirs(host: Host) -> list[str]:
    """Homes to look in: the user's (HOME; SUDO_USER's when root through sudo), else every /home/* on a recording."""
    homes: list[str] = []
    env = host.environ
    if host.is_live:
        user = acting_user(env)
        if user and user != env.get("USER") and user != "root":  # root through sudo: the caller's home first
            homes.append(f"/home/{user}")
        if env.get("HOME"):
            homes.append(env["HOME"])
    else:
        homes.extend(f"/home/{d}" for d in host.listdir("/home"))
        homes.append("/root")
    seen: list[str] = []
    for h in homes:
        if h not in seen and host.is_dir(h):
            seen.append(h)
    return seen


def resolve_python_arg(host: Host, spec: str) -> tuple[str, str] | None:
    """--python PATH: an interpreter or an environment directory -> (prefix, interpreter)."""
    path = spec.rstrip("/")
    if host.is_dir(path):
        for exe in ("bin/python", "bin/python3"):
            if host.exists(f"{path}/{exe}"):
                return path, f"{path}/{exe}"
        return (path, f"{path}/bin/python") if site_packages_dirs(host, path) else None
    if not host.exists(path):
        return None
    parent = path.rsplit("/", 1)[0]
    grand = parent.rsplit("/", 1)[0] or "/"
    if parent.endswith("/bin") and (host.exists(f"{grand}/pyvenv.cfg") or site_packages_dirs(host, grand)):
        return grand, path
    if host.is_live:  # a system interpreter: ask it where its prefix is (not importing torch)
        res = host.run([path, "-I", "-S", "-c", "import sys; print(sys.prefix)"], timeout=5.0)
        if res.ok and res.stdout.strip():
            return res.stdout.strip().splitlines()[-1], path
    return None


_PYVENV_VERSION = lazy_re.compile(r"^\s*(?:version|version_info)\s*=\s*(\d+\.\d+)", re.M)


def path_python(host: Host, exe: str | None = None) -> tuple[str, str, str, str | None, Evidence] | None:
    """(prefix, interpreter, kind, "X.Y", evidence) of the python3 a command typed now would run (or of ``exe``).

    The version comes from files (pyvenv.cfg, the interpreter's versioned name, the one stdlib directory);
    no interpreter is started (a pyenv shim is followed through pyenv's own version files).
    """
    exe = exe or host.which("python3") or host.which("python")
    if exe and "/shims/" in exe:
        exe = _pyenv_interpreter(host, exe)
    if not exe or not host.exists(exe):  # a sandbox's PATH may name the real machine's interpreter
        return None
    bindir = exe.rsplit("/", 1)[0]
    prefix = bindir.rsplit("/", 1)[0] or "/"
    version: str | None = None
    evidence = Evidence(exe)
    cfg = host.read_text(f"{prefix}/pyvenv.cfg", limit=8192)
    if cfg is not None:
        kind = "venv"
        m = _PYVENV_VERSION.search(cfg)
        if m:
            version, evidence = m.group(1), Evidence(f"{prefix}/pyvenv.cfg", None, m.group(0).strip())
    elif host.is_dir(f"{prefix}/conda-meta"):
        kind = "conda"
    else:
        kind = "system"
    if version is None:
        real = host.realpath(exe)
        if "/" in real and (named := _dotted_version(real.rsplit("/", 1)[-1])):
            version, evidence = named, Evidence(exe, None, f"-> {real}")
    if version is None:
        stdlib = [d for d in host.listdir(f"{prefix}/lib") if _dotted_version(d)
                  and host.exists(f"{prefix}/lib/{d}/os.py")]
        if len(stdlib) == 1:
            version = _dotted_version(stdlib[0])
            evidence = Evidence(f"{prefix}/lib/{stdlib[0]}")
    # no interpreter is started: where no file tells, the version stays unknown
    return prefix, exe, kind, version, evidence


def _pyenv_interpreter(host: Host, shim: str) -> str | None:
    """The interpreter a pyenv shim runs, from the files pyenv itself reads (never by running the shim)."""
    root = shim.split("/shims/", 1)[0]
    if not host.is_dir(f"{root}/versions"):
        return None
    env = host.environ
    name = (env.get("PYENV_VERSION") or "").split(":")[0].strip()
    if not name:
        d = env.get("PWD") or ""
        while d.startswith("/") and not name:
            text = host.read_text(f"{d.rstrip('/')}/.python-version", limit=4096)
            name = text.split()[0] if text and text.split() else ""
            d = "" if d in ("/", "") else (d.rsplit("/", 1)[0] or "/")
    if not name:
        text = host.read_text(f"{root}/version", limit=4096)
        name = text.split()[0] if text and text.split() else "system"
    if name == "system":
        return "/usr/bin/python3" if host.exists("/usr/bin/python3") else None
    for exe in (f"{root}/versions/{name}/bin/python3", f"{root}/versions/{name}/bin/python"):
        if host.exists(exe):
            return exe
    return None


def probe_live_envs(host: Host, pythons: list[str],
                    discovered: list[Candidate] | None = None) -> tuple[list[PythonEnv], list[str]]:
    """Environments named with --python first (all kept), then discovered ones that hold torch/ROCm; each
    says how it was found (``PythonEnv.found``); ``discovered`` is ``env_discovery.discover``'s answer where the
    caller has it already."""
    from wizard.probes.env_discovery import Candidate, discover

    envs: list[PythonEnv] = []
    problems: list[str] = []
    seen: set[str] = set()
    candidates = list(discover(host, home_dirs(host)) if discovered is None else discovered)
    by_prefix = {c.prefix: c for c in candidates}

    def also(prefix: str) -> tuple[Found, ...]:
        cand = by_prefix.get(prefix)
        return cand.found if cand is not None else ()

    for spec in pythons:
        resolved = resolve_python_arg(host, spec)
        if resolved is None:
            problems.append(f"--python {spec}: not an interpreter or environment")
            continue
        prefix, exe = resolved
        kind = "venv" if host.exists(f"{prefix}/pyvenv.cfg") else "system"
        env = env_from_prefix(host, prefix, kind, python=exe) or PythonEnv(path=prefix, python=exe, kind=kind)
        envs.append(replace(env, found=(Found(FoundBy.NAMED, spec),) + also(prefix)))
        seen.add(prefix)
    # python3 on PATH, and the system's own /usr/bin/python3, are environments even without torch: a pip plan
    # needs their Python version
    always: dict[str, tuple[str, str, str, str | None, Evidence]] = {}
    if host.is_live:
        for found in (path_python(host), path_python(host, "/usr/bin/python3")):
            if found is not None and found[0] not in always:
                always[found[0]] = found
    for prefix, found in always.items():
        if prefix not in by_prefix:
            candidates.append(Candidate(prefix, found[2]))
    for cand in candidates:
        prefix, kind = cand.prefix, cand.kind
        if prefix in seen:
            continue
        found_env: PythonEnv | None
        if prefix in always:
            _p, exe, kind, version, ev = always[prefix]
            found_env = env_from_prefix(host, prefix, kind, python=exe)
            if found_env is None:
                found_env = PythonEnv(path=prefix, python=exe, python_version=version, kind=kind, sources=(ev,))
            elif version and found_env.python_version != version:
                found_env = replace(found_env, python_version=version, sources=found_env.sources + (ev,))
            ways = (Found(FoundBy.PATH, exe),) + cand.found
        else:
            found_env = env_from_prefix(host, prefix, kind, python=cand.python if kind == "system" else None)
            ways = cand.found
        if found_env is not None:
            seen.add(prefix)
            envs.append(replace(found_env, found=ways))
    if not any(e.kind == "system" and e.python_version for e in envs):
        system = system_python(host)  # a recorded or sandboxed root: read where /usr/bin/python3 points
        if system is not None:
            envs.append(replace(system, found=(Found(FoundBy.SYSTEM, system.python or "/usr/bin/python3"),)))
    return envs, problems


def system_python(host: Host) -> PythonEnv | None:
    """The distro's python3 and its version, read from where /usr/bin/python3 points (never run): the
    interpreter a new venv is made with, so a planner can refuse a wheel that has no build for it."""
    for exe in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not host.exists(exe):
            continue
        real = host.realpath(exe).rsplit("/", 1)[-1]
        named = _dotted_version(real)
        if named:
            return PythonEnv(path=exe.rsplit("/bin/", 1)[0], python=exe, python_version=named, kind="system",
                             sources=(Evidence(exe, None, f"-> {real}"),))
    return None


def with_gfx_fallback(env: PythonEnv, kb_targets: tuple[str, ...] | None) -> PythonEnv:
    """Recorded envs carry no files: take the gfx list the KB gives for that exact wheel."""
    if env.gfx_targets or not kb_targets:
        return env
    return replace(env, gfx_targets=kb_targets)
