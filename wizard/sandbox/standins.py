"""Stand-in programs of the sandbox. Each writes what the real tool writes, under the sandbox root,
and fails the way the real one does when asked something impossible. Every call is recorded in
ROOT/.sandbox/calls.log. Paths in arguments are paths of the sandbox machine: they are mapped under
ROOT (except /dev/*), so nothing outside ROOT is ever written.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from wizard import lazy_re
from wizard.sandbox import machine as m

MAPPED_TOOLS = ("cat", "cp", "mv", "rm", "mkdir", "rmdir", "ln", "install", "test", "[", "grep", "ls", "touch",
                "chmod", "chown", "tee", "tar", "gzip", "find", "head", "tail", "sort", "uniq", "wc", "cut", "tr",
                "sed", "awk", "env", "true", "false", "echo", "printf", "sha256sum", "stat", "readlink", "realpath",
                "dirname", "basename", "xargs", "date", "sleep", "seq", "diff", "cmp", "bash", "flock", "timeout")
OWN_TOOLS = ("apt-get", "apt", "apt-mark", "dpkg", "dpkg-query", "rpm", "amdgpu-install", "dkms", "modprobe", "mokutil", "usermod",
             "pip", "pip3", "python3", "python", "docker", "systemctl", "reboot", "shutdown", "sudo", "sh", "wget",
             "curl", "id", "update-initramfs", "update-alternatives", "ldconfig", "update-secureboot-policy",
             "rocminfo", "gpg")
SCRIPT_PATH = lazy_re.compile(r"(?<![\w./$\-])(/(?:etc|opt|var|home|sys|proc|usr|srv|root|boot|lib|run|dev/kfd|dev/dri)"
                               r"(?=[/\s'\";|&)<>]|$)[^\s'\";|&)<>]*)")
# any absolute path in a script (what is left after SCRIPT_PATH's mapping must be a device or a program)
ANY_PATH = lazy_re.compile(r"(?<![\w./$\-:])(/+[\w.][^\s'\";|&)<>]*)(?=[\s'\";|&)<>]|$)")  # "//tmp" too
# the file operands of awk and sed programs (the only parts of them that are paths)
AWK_FILE = lazy_re.compile(r'(?:>>?|<|\|)[ \t]*"([^"\n]*)"')
SED_FILE = lazy_re.compile(r"(?:^|[;\n{}])[ \t]*[0-9$,]*[ \t]*[wWrR][ \t]+([^;\n}]+)"
                           r"|s(?P<d>[^\w\s\\])(?:\\.|(?!(?P=d)).)*(?P=d)(?:\\.|(?!(?P=d)).)*(?P=d)[gpiImMeE0-9]*w[ \t]+([^;\n}]+)")
UNMAPPED_TOPS = ("dev", "bin", "sbin")  # the real machine's devices and programs a script may name as they are
# the machine's "/" on its own: a shell word (``cd /``, ``find / ...``; shell arithmetic ``$((v / 100))`` aside), or
# a quoted string in code (``os.chdir('/')``; a bare ``/`` there divides)
BARE_ROOT = lazy_re.compile(r"\$\(\([^)]*\)\)|(?<![\w./$\-:~*])/+(?=[\s'\";|&)<>]|$)")
# a ".." path component in a script word (``cd ..``, ``> ../x``, ``a/../b``); ``{1..9}`` and ``x..y`` are text
DOTDOT = lazy_re.compile(r"(?:^|(?<=[\s'\"/=;&|(<>]))\.\.(?=[/\s'\";|&)<>]|$)")
# a change of directory the guard below cannot see
HIDDEN_CD = lazy_re.compile(r"\b(?:builtin|command|exec|eval)\s+(?:cd|pushd|popd)\b|\bCDPATH\b")


class Fail(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _root_of(script: str) -> Path:
    env = os.environ.get("ROCM_WIZARD_SANDBOX_ROOT")
    if env:
        return Path(env)
    p = Path(script).resolve()
    for parent in p.parents:
        if (parent / m.SANDBOX_DIR / "machine.json").is_file():
            return parent
    raise SystemExit("sandbox stand-in: cannot find the sandbox root")


def map_arg(root: Path, arg: str) -> str:
    """An argument that is an absolute path of the sandbox machine -> the real path under ROOT, except the host's
    /dev (:func:`machine.host_device`: /dev/null, /dev/fd/N, /dev/tty), left as it is; the GPU's nodes (/dev/kfd,
    /dev/dri/...) are the machine's. A /dev path with ``..`` is taken where it lands (``/dev/../etc`` is the
    machine's /etc). ``--opt=/path`` maps its value."""
    if arg.startswith("/"):
        if m.host_device(arg):
            return arg if ".." not in arg.split("/") else m.machine_path(arg)
        return str(m.inside(root, arg))
    if arg.startswith("--") and "=/" in arg:
        k, v = arg.split("=", 1)
        return f"{k}={map_arg(root, v)}"
    return arg


def real_tool(name: str) -> str | None:
    for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _exec(argv: list[str], env: dict[str, str] | None = None) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env if env is not None else dict(os.environ))


# ------------------------------------------------------------------------------ entry


def main(tool: str, venv: str | None = None) -> None:
    root = _root_of(sys.argv[0])
    args = sys.argv[1:]
    m.record_call(root, tool if venv is None else f"{venv}/bin/{tool}", args)
    try:
        work_inside(root)
        _injected_failure(root, tool, args)
        if tool in MAPPED_TOOLS:
            _mapped(root, tool, args)
        fn = HANDLERS.get(tool)
        if fn is None:
            raise Fail(f"{tool}: no sandbox stand-in", 127)
        code = fn(root, args, venv) if tool in ("pip", "venv-python", "pip3") else fn(root, args)  # type: ignore[operator]  # two signatures by tool: HANDLERS is heterogeneous on purpose
        sys.exit(code or 0)
    except Fail as exc:
        print(str(exc), file=sys.stderr)
        sys.exit(exc.code)
    except m.Escape as exc:
        print(str(exc), file=sys.stderr)
        sys.exit(126)
    except BrokenPipeError:
        sys.exit(141)


def _injected_failure(root: Path, tool: str, args: list[str]) -> None:
    """Fault injection for rehearsals and tests: ROOT/.sandbox/fail/<tool> holds a line that must occur
    in the arguments (empty: any call), then the message; exit 100 (apt's code for a failed install)."""
    p = root / m.SANDBOX_DIR / "fail" / tool
    if not p.is_file():
        return
    match, _, message = p.read_text().partition("\n")
    if match.strip() in " ".join(args):
        raise Fail(message.strip() or f"{tool}: injected failure", 100)


def _mapped(root: Path, tool: str, args: list[str]) -> None:
    exe = real_tool(tool)
    if exe is None:
        raise Fail(f"{tool}: command not found", 127)
    if tool == "bash":  # its -c script is a script like sh's
        _shell(root, args, exe)
    if tool in ("awk", "sed"):  # a program may name files (print > "/x", sed's w /x): those are checked as paths
        _exec([exe, *(a if a.startswith("-") else map_arg(root, a) if a.startswith("/") else _program(root, tool, a)
                      for a in args)])
    out, symlink = [], tool == "ln" and any(a.startswith("-") and "s" in a.lstrip("-") for a in args if not a.startswith("--"))
    targets_seen = 0
    for a in args:
        if symlink and not a.startswith("-"):
            targets_seen += 1
            if targets_seen == 1:  # the link's target stays a path of the sandbox machine
                out.append(a)
                continue
        out.append(map_relative(root, map_arg(root, a)))
    _exec([exe, *out])


# ------------------------------------------------------------------------------ shells and pythons


def sh(root: Path, args: list[str]) -> int:
    _shell(root, args, "/bin/sh")
    return 0


def _shell(root: Path, args: list[str], exe: str) -> None:
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-c" and i + 1 < len(args):
            out += ["-c", map_script(root, args[i + 1], shell=True)]
            out += [map_arg(root, x) for x in args[i + 2:]]
            break
        out.append(map_arg(root, a) if not a.startswith("-") else a)
        i += 1
    _exec([exe, *out])


def _program(root: Path, tool: str, program: str) -> str:
    """An awk or sed program with the files it reads or writes (awk's ``> "F"``, ``>> "F"``, ``< "F"``,
    ``| "CMD"``; sed's ``w F``, ``r F`` and an ``s`` command's ``w F`` flag) mapped and checked like a
    script's paths; the rest of the program (``s/a/b/g``, regexes) is text, not paths."""
    pattern = AWK_FILE if tool == "awk" else SED_FILE
    out, last = [], 0
    for mo in pattern.finditer(program):
        g = next(i for i in range(1, (mo.lastindex or 0) + 1) if mo.group(i) is not None and i != mo.re.groupindex.get("d"))
        out += [program[last:mo.start(g)], map_script(root, mo.group(g))]
        last = mo.end(g)
    return "".join([*out, program[last:]])


def cd_guard(root: Path) -> str:
    """Shell functions put before a sandbox script: ``cd`` and ``pushd`` that stop the script (exit 126)
    when they land outside ROOT (``cd ~``, ``cd ..`` from ROOT), so a relative path after them never
    reaches the host. A script that goes around them (``builtin cd``, ``command cd``, ``CDPATH``) is
    refused by :func:`map_script` before it runs."""
    import shlex

    top = os.path.realpath(root).rstrip("/")
    check = (f'case "$(pwd -P)/" in {shlex.quote(top)}/*) ;; *) echo "sandbox: cd to $(pwd -P), outside the sandbox '
             f'{top}; nothing outside it is touched" >&2; exit 126;; esac')
    return (f"cd() {{ command cd \"$@\" || return; {check}; }}\n"
            f"pushd() {{ builtin pushd \"$@\" || return; {check}; }} 2>/dev/null\n")


def work_inside(root: Path) -> None:
    """A stand-in started in a directory outside ROOT (a script run by hand from anywhere, or code that changed
    directory where :func:`cd_guard` cannot see) works from ROOT, the machine's ``/``: a relative operand
    names a file of the sandbox, never one of the host."""
    top = os.path.realpath(root)
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    if here != top and not here.startswith(top.rstrip("/") + "/"):
        os.chdir(top)


def map_relative(root: Path, arg: str) -> str:
    """A relative operand stays relative (the working directory is inside ROOT, see :func:`work_inside`), but
    one that climbs out of ROOT (``../../x``) is refused."""
    if arg.startswith("/") or ".." not in arg.split("/"):
        return arg
    m.check_within(root, os.path.join(os.getcwd(), os.path.normpath(arg)))
    return arg


def map_script(root: Path, script: str, *, shell: bool = False) -> str:
    """A ``sh -c`` script with the sandbox machine's paths mapped under ROOT (normalised, checked to
    stay inside it). A path left outside ROOT afterwards (``/tmp/x``, ``/x/../y``) is refused: only
    devices and the real programs (/dev, /bin, /sbin) may be named as they are. The machine's ``/`` alone
    (``cd /``) is ROOT; a ``..`` component is refused (from ROOT it climbs out). A shell script (``shell``)
    also gets :func:`cd_guard` in front, so a ``cd`` that lands outside ROOT stops it."""
    mapped = SCRIPT_PATH.sub(lambda mo: map_arg(root, mo.group(1)), script)
    if shell:
        top = str(root).rstrip("/") or "/"
        mapped = BARE_ROOT.sub(lambda mo: mo.group(0) if mo.group(0).startswith("$") else top, mapped)
    r = str(root).rstrip("/")
    for mo in ANY_PATH.finditer(mapped):
        p = mo.group(1)
        if p == r or p.startswith(r + "/"):
            m.check_within(root, os.path.normpath(p))
            continue
        parts = p.split("/")
        top = os.path.normpath(p).lstrip("/").split("/")[0]
        if ".." in parts or top not in UNMAPPED_TOPS or m.gpu_device(p):  # (a GPU node spelt //dev/kfd, /dev/./dri)
            raise m.Escape(f"sandbox: the script names {p}, a path outside the sandbox {root}; "
                           "nothing outside it is touched")
    if DOTDOT.search(mapped) or HIDDEN_CD.search(mapped):  # (the absolute paths are normalised by now)
        raise m.Escape(f"sandbox: the script names a relative '..' or changes directory around the sandbox's guard "
                       f"({script[:80]!r}): it may mean a path outside the sandbox {root}; nothing outside it is "
                       "touched")
    return cd_guard(root) + mapped if shell else mapped


def chdir_guard(root: Path) -> str:
    """A line put before ``python -c`` code: an audit hook that refuses an ``os.chdir`` outside ROOT (a relative
    path after it would name the host's files; ``/`` in code is too often a division or a separator to map)."""
    top = os.path.realpath(root).rstrip("/")
    msg = f"sandbox: a chdir outside the sandbox {top}; nothing outside it is touched"
    return (f"import sys as _rw_sys, os as _rw_os; _rw_sys.addaudithook(lambda e, a, t={top!r}: None "
            f"if e != 'os.chdir' or isinstance(a[0], int) or (_rw_os.path.realpath(a[0]) + '/').startswith(t + '/') "
            f"else (_ for _ in ()).throw(PermissionError({msg!r})))\n")


def _run_python(root: Path, args: list[str], site: Path | None) -> int:
    env = dict(os.environ)
    pre = []
    while args and args[0] in ("-I", "-E", "-s", "-S"):  # isolation flags pass through
        pre.append(args[0])
        args = args[1:]
    if site is not None:
        env["PYTHONPATH"] = str(site)
        env["PYTHONNOUSERSITE"] = "1"
        pre = ["-S"]
    if args and args[0] == "-c":  # the code is checked like a script: a path it names stays inside the sandbox
        code = chdir_guard(root) + map_script(root, args[1])
        _exec([sys.executable, *pre, "-c", code, *[map_arg(root, a) for a in args[2:]]], env)
    if args and not args[0].startswith("-"):
        _exec([sys.executable, *pre, map_arg(root, args[0]), *[map_arg(root, a) for a in args[1:]]], env)
    raise Fail(f"python: sandbox stand-in does not support {' '.join(args[:2])}", 2)


def python3(root: Path, args: list[str]) -> int:
    if args[:1] in (["--version"], ["-V"]):
        print(f"Python {m.config(root).get('python', '3')}.0")
        return 0
    if args[:2] == ["-m", "wizard"]:
        return _wizard(root, args[2:])
    if args[:2] == ["-m", "venv"]:
        targets = [a for a in args[2:] if not a.startswith("-")]
        if not targets:
            raise Fail("usage: venv [-h] ENV_DIR [ENV_DIR ...]\nvenv: error: the following arguments are required: ENV_DIR", 2)
        for t in targets:
            make_venv(root, t, m.config(root).get("python", "3"))
        return 0
    if args[:2] == ["-m", "pip"]:
        raise Fail("error: externally-managed-environment\n\n× This environment is externally managed\n"
                   "╰─> To install Python packages system-wide, try apt install python3-xyz, or use a venv.", 1)
    return _run_python(root, args, None)


def _wizard(root: Path, args: list[str]) -> int:
    """The wizard installed on the sandbox machine: the real one, acting on this sandbox (a verify step
    runs it; the CPU torch that plays the venv's torch comes through the executor's environment)."""
    _exec([sys.executable, "-m", "wizard", "--sandbox", str(root), *args])
    return 0


def make_venv(root: Path, venv: str, pyver: str) -> None:
    d = m.inside(root, venv)
    site = d / "lib" / f"python{pyver}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    m.atomic_write(d / "pyvenv.cfg", f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {pyver}\n")
    for name, tool in (("python", "venv-python"), ("python3", "venv-python"), (f"python{pyver}", "venv-python"),
                       ("pip", "pip"), ("pip3", "pip")):
        m.atomic_write(d / "bin" / name, standin_script(tool, venv), 0o755)
    m.atomic_write(d / "bin" / "activate", f'# sandbox venv\nVIRTUAL_ENV="{venv}"\nexport VIRTUAL_ENV\n'
                   f'PATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n')


def standin_script(tool: str, venv: str | None = None) -> str:
    extra = f", venv={venv!r}" if venv else ""
    return f"#!{sys.executable}\nfrom wizard.sandbox.standins import main\nmain({tool!r}{extra})\n"


def _site(root: Path, venv: str) -> Path:
    libs = sorted((m.inside(root, venv) / "lib").glob("python*/site-packages"))
    if not libs:
        raise Fail(f"{venv}: not a virtual environment", 1)
    return libs[0]


def venv_python(root: Path, args: list[str], venv: str | None) -> int:
    assert venv is not None
    if args[:1] in (["--version"], ["-V"]):
        print(f"Python {_site(root, venv).parent.name.replace('python', '')}.0")
        return 0
    if args[:2] == ["-m", "wizard"]:
        return _wizard(root, args[2:])
    if args[:2] == ["-m", "pip"]:
        return pip(root, args[2:], venv)
    if args[:2] == ["-m", "venv"]:
        return python3(root, args)
    return _run_python(root, args, _site(root, venv))


# ------------------------------------------------------------------------------ pip


def _norm(name: str) -> str:
    from packaging.utils import canonicalize_name  # PEP 503; imported by the pip stand-in only

    return canonicalize_name(name)


def _dists(site: Path) -> dict[str, tuple[str, Path]]:
    out = {}
    for d in site.glob("*.dist-info"):
        meta = d / "METADATA"
        try:
            text = meta.read_text()
        except OSError:
            continue
        name = re.search(r"^Name: (.+)$", text, re.M)
        ver = re.search(r"^Version: (.+)$", text, re.M)
        if name and ver:
            out[_norm(name.group(1))] = (ver.group(1).strip(), d)
    return out


def _uninstall(site: Path, name: str) -> bool:
    import shutil  # here: every stand-in call imports this module, few remove files

    dists = _dists(site)
    if _norm(name) not in dists:
        return False
    _, d = dists[_norm(name)]
    try:
        files = [line.split(",")[0] for line in (d / "RECORD").read_text().splitlines() if line]
    except OSError:
        files = []
    shutil.rmtree(d)  # metadata first: a half-removed package reads as not installed
    for f in files:
        p = site / f
        if p.is_file():
            p.unlink()
    for top in {f.split("/")[0] for f in files if "/" in f}:
        if (site / top).is_dir():
            shutil.rmtree(site / top, ignore_errors=True)
    return True


def _install(site: Path, name: str, version: str) -> None:
    import shutil

    _uninstall(site, name)
    pkg = name.replace("-", "_").lower()
    files = {f"{pkg}/__init__.py": f"__version__ = {version!r}\n"}
    if _norm(name) == "torch":
        local = version.partition("+")[2]  # what the real wheel's version.py says, in kind: hip for +rocm, cuda for +cu
        hip = f"{local[4:]}-sandbox" if local.startswith("rocm") else None
        cuda = "sandbox" if local.startswith("cu") else None
        files["torch/version.py"] = f"__version__ = {version!r}\nhip = {hip!r}\ncuda = {cuda!r}\n"
    for rel, content in files.items():
        m.atomic_write(site / rel, content)
    dist = site / f"{pkg}-{version}.dist-info"
    tmp = site / f".{pkg}-{version}.dist-info.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    (tmp / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (tmp / "INSTALLER").write_text("pip\n")
    rec = [*files, f"{dist.name}/METADATA", f"{dist.name}/INSTALLER", f"{dist.name}/RECORD"]
    (tmp / "RECORD").write_text("".join(f"{r},,\n" for r in rec))
    os.replace(tmp, dist)


# AMD's nightly indexes publish a build every night; the knowledge base records none of their versions. The
# sandbox serves this stand-in there (never a real build's number), so a nightly plan rehearses to the end.
NIGHTLY_STANDIN = "0+rocmnightly"
_NIGHTLY_NAMES = ("torch", "torchvision", "torchaudio", "rocm")


def _nightly_index(index: str | None) -> bool:
    """An AMD nightly index of the knowledge base whose builds it does not record."""
    if not index:
        return False
    try:
        from wizard.kb import load_kb

        kb = load_kb()
    except Exception:  # noqa: BLE001 - without a knowledge base, no index is known
        return False
    ix = kb.wheel_index(index)
    return (ix is not None and ix.vendor == "amd" and ix.channel == "nightly"
            and not any(v.index == ix.name for v in kb.vendor_wheels()))


def _index_tag(url: str | None) -> str | None:
    if not url:
        return None
    mo = re.search(r"download\.pytorch\.org/whl/(?:nightly/)?([a-z0-9.]+)/?$", url)
    return mo.group(1) if mo else None


def _resolve(root: Path, name: str, version: str | None, index: str | None, pyver: str) -> str:
    nname = _norm(name)
    tag = _index_tag(index)
    if version is None and nname in _NIGHTLY_NAMES and _nightly_index(index):
        return NIGHTLY_STANDIN
    if version is None:
        raise Fail(f"ERROR: sandbox pip needs pinned requirements (name==version); got {name}", 1)
    if nname in ("torch", "torchvision", "torchaudio") and tag:
        _check_kb(nname, version.split("+")[0], tag, pyver)
        return version if "+" in version else f"{version}+{tag}"
    return version


def _check_kb(name: str, version: str, tag: str, pyver: str) -> None:
    try:
        from wizard.kb import load_kb

        kb = load_kb()
        rows = [w for w in kb.wheels() if w.index == tag]
    except Exception:  # noqa: BLE001 - without a knowledge base, accept
        return
    key = {"torch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}[name]
    match = [w for w in rows if getattr(w, key, None) == version]
    if not match:
        have = sorted({str(getattr(w, key)) for w in rows if getattr(w, key, None)})
        raise Fail(f"ERROR: Could not find a version that satisfies the requirement {name}=={version} "
                   f"(from versions: {', '.join(have) or 'none'})\n"
                   f"ERROR: No matching distribution found for {name}=={version}", 1)
    pys: set[str] = set()
    for w in match:
        pys.update(getattr(w, "python", ()) or ())
    if pys and pyver not in pys:
        raise Fail(f"ERROR: Could not find a version that satisfies the requirement {name}=={version} "
                   f"(from versions: none)\nERROR: No matching distribution found for {name}=={version}", 1)


def pip(root: Path, args: list[str], venv: str | None) -> int:
    if venv is None:
        raise Fail("error: externally-managed-environment", 1)
    site = _site(root, venv)
    pyver = site.parent.name.replace("python", "")
    if not args:
        raise Fail("Usage: pip <command> [options]", 1)
    cmd, rest = args[0], [a for a in args[1:] if a not in ("-q", "--quiet", "--no-cache-dir", "--disable-pip-version-check",
                                                           "--no-input", "-y", "--yes", "--progress-bar=off")]
    if cmd == "freeze":
        for n, (v, d) in sorted(_dists(site).items()):
            named = re.search(r"^Name: (.+)$", (d / "METADATA").read_text(), re.M)
            print(f"{named.group(1) if named else n}=={v}")
        return 0
    if cmd == "list":
        print("Package Version\n------- -------")
        for n, (v, _) in sorted(_dists(site).items()):
            print(f"{n} {v}")
        return 0
    if cmd == "show":
        dists = _dists(site)
        missing = [a for a in rest if _norm(a) not in dists]
        for a in rest:
            if _norm(a) in dists:
                print(f"Name: {a}\nVersion: {dists[_norm(a)][0]}\nLocation: {site}")
        if missing:
            print(f"WARNING: Package(s) not found: {', '.join(missing)}", file=sys.stderr)
            return 1
        return 0
    if cmd == "uninstall":
        for a in rest:
            if a.startswith("-"):
                continue
            if _uninstall(site, a):
                print(f"Successfully uninstalled {a}")
            else:
                print(f"WARNING: Skipping {a} as it is not installed.", file=sys.stderr)
        return 0
    if cmd == "install":
        index, reqs, i = None, [], 0
        links: str | None = None
        while i < len(rest):
            a = rest[i]
            if a in ("--index-url", "-i", "--extra-index-url", "-c", "--constraint", "-r", "--requirement",
                     "--find-links", "-f"):
                val = rest[i + 1]
                if a in ("--find-links", "-f"):
                    links = val
                elif a in ("--index-url", "-i"):
                    index = val
                elif a in ("-r", "--requirement"):
                    for line in m.inside(root, val).read_text().splitlines():
                        line = line.split("#")[0].strip()
                        if line.startswith(("--index-url", "-i ")):
                            index = line.split()[-1]
                        elif line and not line.startswith("-"):
                            reqs.append(line)
                i += 2
                continue
            if a.startswith("--index-url="):
                index = a.split("=", 1)[1]
            elif not a.startswith("-"):
                reqs.append(a)
            i += 1
        if links is not None and "--no-index" in rest:
            return _install_wheels(root, site, links, reqs)
        plan: list[tuple[str, str]] = []
        for r in reqs:
            mo = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(?:==\s*([^\s;]+))?", r)
            if not mo:
                raise Fail(f"ERROR: Invalid requirement: '{r}'", 1)
            plan.append((mo.group(1), _resolve(root, mo.group(1), mo.group(3), index, pyver)))
            plan += _device_packages(mo.group(1), mo.group(2), plan[-1][1])
        for name, version in plan:  # everything resolved before anything changes, as pip does
            _install(site, name, version)
        if plan:
            print("Successfully installed " + " ".join(f"{n}-{v}" for n, v in plan))
        return 0
    raise Fail(f'ERROR: unknown command "{cmd}"', 1)


def _install_wheels(root: Path, site: Path, links: str, reqs: list[str]) -> int:
    """``pip install --no-index --find-links DIR REQ...``: the requirements and what they require, each from its
    wheel in DIR (the machine's DIR), unpacked into the venv as pip installs a pure-Python wheel; a requirement no
    wheel there satisfies fails before anything changes, with pip's message."""
    import zipfile

    from packaging.requirements import InvalidRequirement, Requirement

    found: dict[str, tuple[str, Path]] = {}
    for w in sorted(m.inside(root, links).glob("*.whl")):
        parts = w.name[:-4].split("-")
        if len(parts) >= 5:
            found[_norm(parts[0])] = (parts[1], w)
    chosen: dict[str, Path] = {}
    todo = list(reqs)
    while todo:
        text = todo.pop(0)
        try:
            req = Requirement(text)
        except InvalidRequirement:
            raise Fail(f"ERROR: Invalid requirement: '{text}'", 1) from None
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        key = _norm(req.name)
        if key in chosen:
            continue
        have = found.get(key)
        if have is None or not req.specifier.contains(have[0], prereleases=True):
            raise Fail(f"ERROR: Could not find a version that satisfies the requirement {text} (from versions: "
                       f"{have[0] if have else 'none'})\nERROR: No matching distribution found for {req.name}", 1)
        chosen[key] = have[1]
        with zipfile.ZipFile(have[1]) as z:
            meta = next((n for n in z.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)), None)
            text_meta = z.read(meta).decode("utf-8", "replace") if meta else ""
        todo += [r.strip() for r in re.findall(r"^Requires-Dist:(.+)$", text_meta, re.M)]
    for key, wheel in chosen.items():  # everything found before anything changes, as pip does
        _uninstall(site, key)
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            if any(n.startswith("/") or ".." in n.split("/") for n in names):
                raise Fail(f"ERROR: {wheel.name}: a file of the wheel leaves the install directory", 1)
            z.extractall(site)
            info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        (site / info / "INSTALLER").write_text("pip\n")
    print("Successfully installed " + " ".join(w.name.split("-")[0] + "-" + w.name.split("-")[1] for w in chosen.values()))
    return 0


# ------------------------------------------------------------------------------ apt, dpkg, amdgpu-install


def _read_deb(root: Path, path: str) -> dict[str, str]:
    try:
        text = m.inside(root, path).read_text()
    except (OSError, UnicodeDecodeError):
        raise Fail(f"dpkg-deb: error: '{path}' is not a Debian format archive", 2) from None
    if not text.startswith("rocm-wizard sandbox package"):
        raise Fail(f"dpkg-deb: error: '{path}' is not a Debian format archive", 2)
    return dict(line.split(": ", 1) for line in text.splitlines()[1:] if ": " in line)


def _install_deb(root: Path, path: str) -> str:
    d = _read_deb(root, path)
    codename = m.config(root).get("codename")
    if d.get("Codename") != codename:
        raise Fail(f"E: {d.get('Package')} for {d.get('Codename')} cannot be installed on {codename}: "
                   f"Depends: distribution-release ({d.get('Codename')}) but it is not installable", 100)
    if "Driver" in d:
        return _install_driver_deb(root, d, codename)
    rel = d["Release"]
    files = {
        "/etc/apt/sources.list.d/amdgpu.list":
            f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/{rel}/ubuntu {codename} main\n",
        "/etc/apt/sources.list.d/rocm.list":
            f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/{rel} {codename} main\n",
    }
    files["/etc/apt/keyrings/rocm.gpg"] = f"rocm-wizard sandbox key\nfpr: {_amd_fingerprint()}\n"
    m.install_package(root, d["Package"], d["Version"], files)
    print(f"Setting up {d['Package']} ({d['Version']}) ...")
    return d["Package"]


def _amd_fingerprint() -> str:
    """The fingerprint the step library pins for AMD's key (what the real package ships)."""
    try:
        from wizard.steps.rocm_install import ROCM_KEY_FINGERPRINT

        return str(ROCM_KEY_FINGERPRINT)
    except Exception:  # noqa: BLE001
        return "unknown"


def gpg(root: Path, args: list[str]) -> int:
    files = [a for a in args if not a.startswith("-")]
    if "--show-keys" in args and files:
        p = m.inside(root, files[-1])
        try:
            text = p.read_text()
        except (OSError, UnicodeDecodeError):
            raise Fail(f"gpg: can't open '{files[-1]}': No such file or directory", 2) from None
        mo = re.search(r"^fpr: (\S+)$", text, re.M)
        if not mo:
            raise Fail("gpg: no valid OpenPGP data found.", 2)
        print(f"pub:-:4096:1:{mo.group(1)[-16:]}:::::::scESC::::::23::0:")
        print(f"fpr:::::::::{mo.group(1)}:")
        return 0
    raise Fail("gpg: sandbox stand-in only does --show-keys", 2)


def _dpkg_locked(root: Path) -> None:
    """apt and dpkg refuse while another process holds the package lock, as the real ones do (a real
    fcntl lock on the sandbox's /var/lib/dpkg/lock-frontend, or the .sandbox/dpkg-locked marker)."""
    if (root / m.SANDBOX_DIR / "dpkg-locked").exists():
        raise Fail("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)", 100)
    import fcntl

    for name in ("lock-frontend", "lock"):
        p = root / "var/lib/dpkg" / name
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(fd, fcntl.LOCK_UN)
        except OSError:
            raise Fail(f"E: Could not get lock /var/lib/dpkg/{name}. It is held by another process", 100) from None
        finally:
            os.close(fd)


def apt_get(root: Path, args: list[str]) -> int:
    opts = [a for a in args if a.startswith("-")]
    words = [a for a in args if not a.startswith("-")]
    yes = any(o in ("-y", "--yes", "--assume-yes") or (o.startswith("-") and not o.startswith("--") and "y" in o) for o in opts)
    sim = any(o in ("-s", "--simulate", "--dry-run", "--just-print") for o in opts)
    if not words:
        raise Fail("E: Invalid operation", 100)
    op, names = words[0], words[1:]
    if op == "check":
        print("Reading package lists... Done")
        return 0
    if op == "update":
        codename = m.config(root).get("codename")
        for line in m.apt_source_lines(root):
            if codename and f" {codename} " not in f" {line} ":
                raise Fail(f"E: The repository '{line}' does not have a Release file.", 100)
        print("Reading package lists... Done")
        return 0
    if op in ("install", "reinstall"):
        have = m.installed(root)
        avail = {**m.available(root), **_core_sdk_available(root)}
        todo = []
        for n in names:
            if n.endswith(".deb"):
                todo.append(("deb", n))
            elif "=" in n:
                todo.append(("pkg", n.split("=")[0]))
            elif n in avail or n.startswith(("linux-headers-", "linux-modules-extra-")):
                todo.append(("pkg", n))
            else:
                raise Fail(f"E: Unable to locate package {n}", 100)
        for kind, n in todo:
            if kind == "pkg" and n in have and op == "install":
                print(f"{n} is already the newest version ({have[n]}).")
        if sim:
            for kind, n in todo:
                print(f"Inst {n} ({avail.get(n, 'sandbox')})")
            return 0
        if not yes:
            print("Do you want to continue? [Y/n] Abort.")
            return 1
        _dpkg_locked(root)
        for kind, n in todo:
            if kind == "deb":
                _install_deb(root, n)
            elif n not in have or op == "reinstall":
                ver = avail.get(n, "sandbox")
                files, links = _core_sdk_files(n, ver) if n.startswith("amdrocm") else m.package_files(n, ver)
                m.install_package(root, n, ver, files, links)
                print(f"Setting up {n} ({ver}) ...")
        return 0
    if op in ("remove", "purge", "autoremove"):
        have = m.installed(root)
        if sim:
            for n in names:
                if n in have:
                    print(f"{'Purg' if op == 'purge' else 'Remv'} {n} [{have[n]}]")
                else:
                    print(f"Package '{n}' is not installed, so not removed")
            return 0
        if names and not yes:
            print("Do you want to continue? [Y/n] Abort.")
            return 1
        _dpkg_locked(root)
        known = {n: f.get("Version", "") for n, f in m.dpkg_status(root).items()}  # a half-configured one too
        for n in names:
            if m.remove_package(root, n):
                print(f"Removing {n} ({known.get(n, '')}) ...")
            else:
                print(f"Package '{n}' is not installed, so not removed")
        return 0
    raise Fail(f"E: sandbox apt-get does not implement '{op}'", 100)


def apt_mark(root: Path, args: list[str]) -> int:
    """``apt-mark hold|unhold|showhold [PKG...]``: holds kept in ROOT/.sandbox/holds."""
    words = [a for a in args if not a.startswith("-")]
    if not words:
        raise Fail("apt-mark: need a command", 100)
    store = root / m.SANDBOX_DIR / "holds"
    holds = set(store.read_text().split()) if store.exists() else set()
    op, names = words[0], words[1:]
    if op == "showhold":
        for n in sorted(holds):
            if not names or n in names:
                print(n)
        return 0
    if op in ("hold", "unhold"):
        holds = holds | set(names) if op == "hold" else holds - set(names)
        m.atomic_write(store, "".join(f"{n}\n" for n in sorted(holds)))
        for n in names:
            print(f"{n} set on hold." if op == "hold" else f"Canceled hold on {n}.")
        return 0
    raise Fail(f"apt-mark: sandbox does not implement '{op}'", 100)


def dpkg(root: Path, args: list[str]) -> int:
    if not args:
        raise Fail("dpkg: error: need an action option", 2)
    a, rest = args[0], args[1:]
    if a in ("-i", "--install"):
        _dpkg_locked(root)
        for f in rest:
            _install_deb(root, f)
        return 0
    if a in ("-r", "--remove", "-P", "--purge"):
        _dpkg_locked(root)
        for n in rest:
            if not m.remove_package(root, n):
                print(f"dpkg: warning: ignoring request to remove {n} which isn't installed")
        return 0
    if a == "--print-architecture":
        print("amd64")
        return 0
    if a in ("--audit", "-C"):
        return 0  # the stand-in's dpkg never leaves half-installed packages
    if a == "--configure":
        return 0
    return dpkg_query(root, args)


RPM_TAG = lazy_re.compile(r"%(-?\d*)\{(\w+)\}")


def rpm(root: Path, args: list[str]) -> int:
    """Queries only (``-qa [--qf FMT]``, ``-q NAME...``): the sandbox's package database, as an RPM
    system would list it. Installing and removing goes through dnf, which has no stand-in yet."""
    fmt, names, query_all, query = "%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\n", [], False, False
    it = iter(args)
    for x in it:
        if x in ("--qf", "--queryformat"):
            fmt = next(it, fmt)
        elif x.startswith(("--qf=", "--queryformat=")):
            fmt = x.split("=", 1)[1]
        elif x.startswith("-") and not x.startswith("--"):
            query |= "q" in x
            query_all |= "a" in x
        elif not x.startswith("-"):
            names.append(x)
    if not query:
        raise Fail("rpm: the sandbox stand-in answers queries only (-q, -qa)", 1)
    fmt = fmt.encode().decode("unicode_escape")
    have = m.installed(root)

    def show(name: str) -> str:
        version, _, release = have[name].rpartition("-") if "-" in have[name] else (have[name], "", "1")
        tags = {"NAME": name, "VERSION": version, "RELEASE": release, "ARCH": "x86_64"}
        return RPM_TAG.sub(lambda mo: format(tags.get(mo.group(2).upper(), "(none)"),
                                             (mo.group(1).replace("-", "<") if mo.group(1) else "")), fmt)

    if query_all:
        sys.stdout.write("".join(show(n) for n in sorted(have)))
        return 0
    code = 0
    for n in names:
        if n in have:
            sys.stdout.write(show(n))
        else:
            print(f"package {n} is not installed")
            code = 1
    return code


def dpkg_query(root: Path, args: list[str]) -> int:
    st = m.dpkg_status(root)
    fmt, names, mode = "${binary:Package}\t${Version}\n", [], "-W"
    it = iter(args)
    for x in it:
        if x in ("-f", "--showformat"):
            fmt = next(it, fmt)
        elif x.startswith(("-f=", "--showformat=")):
            fmt = x.split("=", 1)[1]
        elif x in ("-W", "--show", "-l", "--list", "-s", "--status", "-L", "--listfiles", "--get-selections"):
            mode = x
        elif not x.startswith("-"):
            names.append(x)
    fmt = fmt.encode().decode("unicode_escape")
    if mode == "--get-selections":
        for n in sorted(st):
            print(f"{n}\t\t\t\t\t\tinstall")
        return 0
    import fnmatch

    pats = names or ["*"]
    missing, shown = [], 0
    for pat in pats:
        hits = [n for n in sorted(st) if fnmatch.fnmatchcase(n, pat)]
        if not hits and names:
            missing.append(pat)
        for n in hits:
            f = st[n]
            shown += 1
            if mode in ("-l", "--list"):
                print(f"ii  {n}  {f.get('Version', '')}  amd64  (sandbox)")
            elif mode in ("-s", "--status"):
                print("\n".join(f"{k}: {v}" for k, v in f.items()) + "\n")
            elif mode in ("-L", "--listfiles"):
                print((root / "var/lib/dpkg/info" / f"{n}.list").read_text(), end="")
            else:
                out = fmt
                for k, v in (("binary:Package", n), ("Package", n), ("Version", f.get("Version", "")),
                             ("Status", f.get("Status", "")), ("db:Status-Abbrev", "ii ")):
                    out = out.replace("${" + k + "}", v)
                sys.stdout.write(out)
    for pat in missing:
        print(f"dpkg-query: no packages found matching {pat}", file=sys.stderr)
    return 1 if missing else 0


def amdgpu_install(root: Path, args: list[str]) -> int:
    if "amdgpu-install" not in m.installed(root):
        raise Fail("amdgpu-install: command not found", 127)
    yes = "-y" in args or "--accept-eula" in args
    if "--uninstall" in args:
        have = m.installed(root)
        gone = [n for n in have if n in m.ROCM_PACKAGES or n == "amdgpu-dkms" or n.startswith(("rocm", "hip"))]
        if gone and not yes:
            print("Do you want to continue? [Y/n] Abort.")
            return 1
        _dpkg_locked(root)
        for n in gone:
            m.remove_package(root, n)
            print(f"Removing {n} ({have[n]}) ...")
        return 0
    usecases = next((a.split("=", 1)[1] for a in args if a.startswith("--usecase=")), "graphics")
    rel = m.rocm_release_in_sources(root)
    if rel is None and _driver_repo(root):
        return _amdgpu_install_driver_only(root, args, yes)
    if rel is None:
        raise Fail("E: Unable to locate package rocm", 100)
    if not yes:
        print("Do you want to continue? [Y/n] Abort.")
        return 1
    _dpkg_locked(root)
    pkgs = list(m.ROCM_PACKAGES) if "rocm" in usecases or "hip" in usecases else []
    if "--no-dkms" not in args:
        pkgs.append("amdgpu-dkms")
    avail = m.available(root)
    have = m.installed(root)
    for n in pkgs:
        ver = avail.get(n)
        if ver is None:
            raise Fail(f"E: Unable to locate package {n}", 100)
        if have.get(n) != ver:
            files, links = m.package_files(n, ver)
            m.install_package(root, n, ver, files, links)
            print(f"Setting up {n} ({ver}) ...")
    return 0


def wget(root: Path, args: list[str]) -> int:
    """The sandbox's network: AMD's and PyTorch's servers answered from the knowledge base (the same
    model the stand-in pip and amdgpu-install use), 127.0.0.1 reached for real (a test's server)."""
    out, url, spider, i = None, None, False, 0
    while i < len(args):
        a = args[i]
        if a in ("-O", "-o", "--output-document", "--output"):
            out = args[i + 1]
            i += 2
            continue
        if a.startswith("--output-document="):
            out = a.split("=", 1)[1]
        elif a == "--spider":
            spider = True
        elif a.startswith(("http://", "https://")):
            url = a
        i += 1
    if url is None:
        raise Fail("wget: missing URL", 1)
    body = _loopback(url) if re.match(r"^https?://(127\.0\.0\.1|localhost)[:/]", url) else _model_answer(root, url)
    if body is None:
        raise Fail(f"{url}:\n2026-01-01 00:00:00 ERROR 404: Not Found.", 8)
    if spider:
        return 0
    if out == "-":
        sys.stdout.write(body.decode("utf-8", "replace"))
        return 0
    name = url.rstrip("/").rsplit("/", 1)[-1] or "index.html"
    dest = m.inside(root, out) if out else Path.cwd() / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(body)
    return 0


def _loopback(url: str) -> bytes | None:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as resp:  # noqa: S310 - loopback only (checked above)
            data: bytes = resp.read()
            return data
    except (urllib.error.URLError, OSError):
        return None


def _model_answer(root: Path, url: str) -> bytes | None:
    """What AMD's and PyTorch's servers would answer, as far as the knowledge base knows them."""
    mo = re.search(r"repo\.radeon\.com/amdgpu-install/([0-9.]+)/ubuntu/([a-z]+)/amdgpu-install_([0-9.]+)-(\d+)_all\.deb$",
                   url)
    if mo:
        if url not in _known_urls():
            return None
        if _driver_numbered(mo.group(1)):
            return (f"rocm-wizard sandbox package\nPackage: amdgpu-install\nVersion: {mo.group(3)}-{mo.group(4)}\n"
                    f"Driver: {mo.group(1)}\nCodename: {mo.group(2)}\nURL: {url}\n").encode()
        rel = _release_from_pkgver(mo.group(3))
        return (f"rocm-wizard sandbox package\nPackage: amdgpu-install\nVersion: {mo.group(3)}-{mo.group(4)}\n"
                f"Release: {rel}\nCodename: {mo.group(2)}\nURL: {url}\n").encode()
    page = _index_page(url)
    if page is not None:
        return page.encode()
    if ("repo.radeon.com" in url or "repo.amd.com" in url) and url in _known_urls():
        return f"sandbox download of {url}\n".encode()
    return None


def _known_urls() -> set[str]:
    try:
        from wizard.kb import load_kb

        rels = load_kb().releases()
        return {u for r in rels for u in r.amdgpu_install.values()} | _core_sdk_urls(rels)
    except Exception:  # noqa: BLE001 - without a knowledge base nothing is known to exist
        return set()


def _index_page(url: str) -> str | None:
    """A PEP 503 page of a wheel index the knowledge base lists: ``<index>/<name>/``."""
    mo = re.match(r"^(https?://.+?)/([A-Za-z0-9_.-]+)/?$", url)
    if not mo:
        return None
    index, name = mo.group(1).rstrip("/"), _norm(mo.group(2))
    try:
        from wizard.kb import load_kb

        kb = load_kb()
        rows = [w for w in kb.wheels() if w.index_url.rstrip("/") == index]
    except Exception:  # noqa: BLE001
        return None
    if not rows:
        return _vendor_index_page(kb, index, name)
    files = []
    for w in rows:
        version = {"torch": w.torch, "torchvision": w.torchvision, "torchaudio": w.torchaudio}.get(name)
        if not version:
            continue
        for py in w.python:
            tag = "cp" + py.rstrip("t").replace(".", "") + ("t" if py.endswith("t") else "")
            files.append(f"{name.replace('-', '_')}-{version}%2B{w.index}-{tag}-{tag}-linux_x86_64.whl")
    if not files:
        return None
    links = "".join(f'<a href="{f}">{f.replace("%2B", "+")}</a><br/>\n' for f in sorted(set(files)))
    return f"<!DOCTYPE html>\n<html><body>\n<h1>Links for {name}</h1>\n{links}</body></html>\n"


def _vendor_index_page(kb: object, index: str, name: str) -> str | None:
    """AMD's index pages for its own torch builds (``vendor_wheels``) and the Core SDK's ``rocm`` packages.
    The knowledge base records no Python tags for them: ``py3-none`` stands in, as in the rehearsal mirror."""
    from wizard.kb import KnowledgeBase

    assert isinstance(kb, KnowledgeBase)
    ix = kb.wheel_index(index)
    if ix is None or ix.vendor != "amd":
        return None
    versions: set[str] = set()
    for v in kb.vendor_wheels():
        if v.index != ix.name:
            continue
        got = {"torch": v.torch, "torchvision": v.torchvision, "torchaudio": v.torchaudio, "rocm": v.sdk}.get(name)
        if got:
            versions.add(got)
    if not versions and name in _NIGHTLY_NAMES and _nightly_index(index):
        versions.add(NIGHTLY_STANDIN)
    if not versions:
        return None
    files = [f"{name.replace('-', '_')}-{ver.replace('+', '%2B')}-py3-none-linux_x86_64.whl" for ver in sorted(versions)]
    links = "".join(f'<a href="{f}">{f.replace("%2B", "+")}</a><br/>\n' for f in files)
    return f"<!DOCTYPE html>\n<html><body>\n<h1>Links for {name}</h1>\n{links}</body></html>\n"


def _release_from_pkgver(v: str) -> str:
    parts = v.split(".")
    tag = parts[-1]
    return f"{int(tag[0])}.{int(tag[1:3])}.{int(tag[3:5])}"


# ------------------------------------------------------------------------------ system tools


def systemctl(root: Path, args: list[str]) -> int:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        raise Fail("systemctl: sandbox needs a verb", 1)
    verb, units = words[0], words[1:]
    wants = root / "etc/systemd/system/multi-user.target.wants"
    if verb in ("reboot",):
        return reboot(root, [])
    if verb == "enable":
        for u in units:
            if not (root / "etc/systemd/system" / u).is_file():
                raise Fail(f"Failed to enable unit: Unit file {u} does not exist.", 1)
            wants.mkdir(parents=True, exist_ok=True)
            link = wants / u
            if not link.is_symlink():
                os.symlink(f"/etc/systemd/system/{u}", link)
                print(f"Created symlink /etc/systemd/system/multi-user.target.wants/{u} → /etc/systemd/system/{u}.")
        return 0
    if verb == "disable":
        for u in units:
            link = wants / u
            if link.is_symlink():
                link.unlink()
                print(f"Removed /etc/systemd/system/multi-user.target.wants/{u}.")
        return 0
    if verb == "is-enabled":
        ok = all((wants / u).is_symlink() for u in units)
        print("enabled" if ok else "disabled")
        return 0 if ok else 1
    if verb in ("daemon-reload", "start", "stop", "restart", "status", "is-active"):
        return 0
    raise Fail(f"systemctl: sandbox does not implement '{verb}'", 1)


def reboot(root: Path, args: list[str]) -> int:
    _load_installed_driver(root)
    bid = m.new_boot_id(root)
    with open(root / m.SANDBOX_DIR / "reboots.log", "a") as fh:
        fh.write(bid + "\n")
    print(f"sandbox: rebooted (new boot id {bid})")
    return 0


def sudo(root: Path, args: list[str]) -> int:
    """Like sudo with a password (when ROOT/.sandbox/sudo-password exists) or passwordless.

    With a password: a good one, typed at the ``[sudo] password for USER:`` prompt on the terminal,
    leaves a ticket valid for 15 minutes; ``-n`` then works and without one fails as sudo does;
    ``-k`` drops the ticket; three wrong tries fail. The password never reaches the wizard.
    """
    i, noninteractive, validate, kill = 0, False, False, False
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in ("-u", "-g"):
            i += 2
            continue
        if not a.startswith("-"):
            break
        short = "" if a.startswith("--") else a[1:]
        noninteractive |= a == "--non-interactive" or "n" in short
        validate |= a == "--validate" or "v" in short
        kill |= a in ("--reset-timestamp", "--remove-timestamp") or "k" in short or "K" in short
        i += 1
    ticket = root / m.SANDBOX_DIR / m.SUDO_TICKET
    if kill:
        ticket.unlink(missing_ok=True)
        if i >= len(args) and not validate:
            return 0
    if m.sudo_password_required(root):
        if _ticket_valid(ticket):
            if validate:
                ticket.touch()
        elif noninteractive:
            raise Fail("sudo: a password is required", 1)
        else:
            _ask_password(root, ticket)
    if validate or i >= len(args):
        return 0
    cmd = args[i:]
    prog = cmd[0]
    if prog.startswith("/"):
        inside = m.inside(root, prog)
        if inside.is_file():
            prog = str(inside)
        else:
            prog = os.path.basename(prog)
    if "/" in prog:
        exe: str | None = prog
    else:
        import shutil

        exe = shutil.which(prog, path=os.environ.get("PATH", ""))
    if exe is None:
        raise Fail(f"sudo: {cmd[0]}: command not found", 1)
    _exec([exe, *cmd[1:]])
    return 0


def _ticket_valid(ticket: Path) -> bool:
    import time

    try:
        return time.time() - ticket.stat().st_mtime < m.SUDO_TICKET_SECONDS
    except OSError:
        return False


def _ask_password(root: Path, ticket: Path) -> None:
    """Read the password on the controlling terminal, as sudo does (never from stdin)."""
    import getpass

    want = (root / m.SANDBOX_DIR / m.SUDO_PASSWORD).read_text().splitlines()[:1] or [""]
    user = m.config(root).get("user", "user")
    try:
        tty = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        raise Fail("sudo: a terminal is required to read the password; either use the -S option to read from "
                   "standard input or configure an askpass helper", 1) from None
    try:
        for _ in range(3):
            try:
                got = getpass.getpass(f"[sudo] password for {user}: ")  # reads /dev/tty, echo off
            except (EOFError, KeyboardInterrupt):
                os.write(tty, b"\n")
                raise Fail("sudo: a password is required", 1) from None
            if got == want[0]:
                ticket.write_text("")
                return
            os.write(tty, b"Sorry, try again.\n")
    finally:
        os.close(tty)
    raise Fail("sudo: 3 incorrect password attempts", 1)


def usermod(root: Path, args: list[str]) -> int:
    append, grps, user, i = False, None, None, 0
    while i < len(args):
        a = args[i]
        if a in ("-a", "--append"):
            append = True
        elif a in ("-G", "--groups", "-aG"):
            append = append or a == "-aG"
            grps = args[i + 1].split(",")
            i += 1
        elif not a.startswith("-"):
            user = a
        i += 1
    rows = m.groups(root)
    users = [line.split(":")[0] for line in (root / "etc/passwd").read_text().splitlines() if line]
    if user not in users:
        raise Fail(f"usermod: user '{user}' does not exist", 6)
    names = {r[0] for r in rows}
    for g in grps or []:
        if g not in names:
            raise Fail(f"usermod: group '{g}' does not exist", 6)
    for r in rows:
        members = [x for x in r[3].split(",") if x] if len(r) > 3 else []
        if r[0] in (grps or []):
            if user not in members:
                members.append(user)
        elif not append and user in members:
            members.remove(user)
        while len(r) < 4:
            r.append("")
        r[3] = ",".join(members)
    m.write_groups(root, rows)
    return 0


def id_(root: Path, args: list[str]) -> int:
    user = next((a for a in args if not a.startswith("-")), m.config(root).get("user", "user"))
    grps = [r[0] for r in m.groups(root) if len(r) > 3 and user in r[3].split(",")]
    if "-nG" in args or ("-G" in args and "-n" in args):
        print(" ".join([user, *grps]))
    elif "-un" in args:
        print(user)
    elif "-u" in args:
        print(1000)
    else:
        print(f"uid=1000({user}) gid=1000({user}) groups=1000({user})" + "".join(f",{g}" for g in grps))
    return 0


def dkms(root: Path, args: list[str]) -> int:
    if args[:1] == ["status"]:
        for n, v in m.installed(root).items():
            if n == "amdgpu-dkms":
                print(f"amdgpu/{v.split(':')[-1]}, (sandbox kernel), x86_64: installed")
        return 0
    raise Fail(f"dkms: sandbox does not implement {' '.join(args[:1])}", 1)


def modprobe(root: Path, args: list[str]) -> int:
    mods = [a for a in args if not a.startswith("-")]
    for mod in mods:
        if mod not in ("amdgpu", "kfd"):
            raise Fail(f"modprobe: FATAL: Module {mod} not found in directory /lib/modules/sandbox", 1)
    cfg = m.config(root)
    if "-r" not in args and cfg.get("secure_boot") and "amdgpu-dkms" in m.installed(root) \
            and not (root / m.SANDBOX_DIR / "mok-enrolled").exists():
        raise Fail("modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service", 1)
    return 0


def mokutil(root: Path, args: list[str]) -> int:
    cfg = m.config(root)
    if "--sb-state" in args:
        print("SecureBoot enabled" if cfg.get("secure_boot") else "SecureBoot disabled")
        return 0
    if "--import" in args:
        if not any(a.startswith(("--root-pw", "--hash-file")) for a in args) and not sys.stdin.isatty():
            raise Fail("Failed to get password", 1)
        (root / m.SANDBOX_DIR / "mok-pending").write_text(" ".join(args) + "\n")
        return 0
    if "--list-new" in args:
        p = root / m.SANDBOX_DIR / "mok-pending"
        print(p.read_text() if p.exists() else "MokNew is empty")
        return 0
    raise Fail("mokutil: sandbox does not implement this", 1)


def docker(root: Path, args: list[str]) -> int:
    store = root / "var/lib/docker/sandbox-images.json"
    images = json.loads(store.read_text()) if store.exists() else []
    if not args:
        raise Fail("Usage:  docker [OPTIONS] COMMAND", 1)
    if args[0] == "pull":
        tag = args[-1]
        known = _known_tags()
        if known is not None and tag not in known:
            raise Fail(f"Error response from daemon: manifest for {tag} not found: manifest unknown", 1)
        if tag not in images:
            images.append(tag)
            m.atomic_write(store, json.dumps(images))
        print(f"Status: Downloaded newer image for {tag}")
        return 0
    if args[:2] in (["image", "inspect"], ["image", "rm"]) or args[0] in ("rmi", "inspect"):
        return _docker_image_op(root, store, images, args)
    if args[0] in ("images", "image"):
        for t in images:
            print(t)
        return 0
    if args[0] in ("info", "version", "ps"):
        print("sandbox docker")
        return 0
    if args[0] == "run":
        img = next((a for a in args[1:] if a in images), None)
        if img is None:
            raise Fail("Unable to find image locally; sandbox docker has no network", 125)
        at = args.index(img)
        _docker_devices(root, args[1:at])
        _play_verify_suite(args[1:at], args[at + 1:])
        print(f"sandbox: {img} is not really run")
        return 0
    raise Fail(f"docker: sandbox does not implement '{args[0]}'", 1)


# The daemon's answer for an image it does not have (moby/moby@03885e1b00798819d7c6158b716892589307f4c9:
# daemon/images/image.go ErrImageDoesNotExist, "No such image: %s"), as the client shows a daemon's error
# (moby/moby@04472304f61784403033f6241a520bd41e5d723b:client/request.go, "Error response from daemon: %s").
NO_SUCH_IMAGE = "Error response from daemon: No such image: {}"
# A --device the host does not have (moby/moby@0ee5518e766d5f509d405d86fb9d71dec70e0ed6:oci/devices_linux.go,
# "error gathering device information while adding custom device %q: %s"); `docker run` prints it after "docker: "
# and exits 125 (the daemon refused the container).
NO_DEVICE = 'docker: Error response from daemon: error gathering device information while adding custom device "{}": ' \
            "no such file or directory."


def _docker_image_op(root: Path, store: Path, images: list[str], args: list[str]) -> int:
    """``docker image inspect``/``inspect`` (exit 1 naming each image not there) and ``rmi``/``image rm`` (the
    image is gone after it; one not there is an error, as the daemon's)."""
    remove = args[0] == "rmi" or args[1] == "rm"
    names = [a for a in args[1 if args[0] in ("rmi", "inspect") else 2:] if not a.startswith("-")]
    missing = [n for n in names if n not in images]
    for n in names:
        if n in images and remove:
            images.remove(n)
            print(f"Untagged: {n}")
        elif n in images:
            print(json.dumps([{"RepoTags": [n]}]))
    if remove:
        m.atomic_write(store, json.dumps(images))
    if missing:
        raise Fail("\n".join(NO_SUCH_IMAGE.format(n) for n in missing), 1)
    return 0


def _docker_devices(root: Path, opts: list[str]) -> None:
    """``--device HOST[:CONTAINER[:PERMS]]``: the host's node must be there, on the sandbox machine for the GPU's
    (/dev/kfd, /dev/dri), as ``map_arg`` reads every path."""
    for i, a in enumerate(opts):
        value = a.split("=", 1)[1] if a.startswith("--device=") else opts[i + 1] if a == "--device" and \
            i + 1 < len(opts) else None
        if value is None:
            continue
        host = value.split(":", 1)[0]
        if not os.path.lexists(map_arg(root, host)):
            raise Fail(NO_DEVICE.format(host), 125)


def _play_verify_suite(opts: list[str], command: list[str]) -> None:
    """``docker run ... IMAGE python3 SUITE ARGS`` where SUITE is the wizard's own verify suite mounted with ``-v``
    (verify --image): with a CPU torch given for the rehearsal (SANDBOX_VERIFY_PYTHON), it plays the image's torch
    and runs the suite (wizard.verify.launch.docker_argv); any other command is not run."""
    from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON
    from wizard.verify.launch import SUITE_PATH

    python = os.environ.get(SANDBOX_VERIFY_PYTHON)
    if not python or len(command) < 2 or command[0] not in ("python3", "python"):
        return
    mounts: dict[str, str] = {}
    for i, a in enumerate(opts):
        value = a.split("=", 1)[1] if a.startswith(("-v=", "--volume=")) else opts[i + 1] \
            if a in ("-v", "--volume") and i + 1 < len(opts) else None
        if value and ":" in value:
            src, dst = value.split(":")[:2]
            mounts[dst] = src
    mounted = mounts.get(command[1])
    if mounted and os.path.realpath(mounted) == str(SUITE_PATH):
        _exec([python, str(SUITE_PATH), *command[2:]])


def _known_tags() -> set[str] | None:
    try:
        from wizard.kb import load_kb

        return {i.tag for i in load_kb().docker_images()}
    except Exception:  # noqa: BLE001
        return None


def noop(root: Path, args: list[str]) -> int:
    return 0


def rocminfo(root: Path, args: list[str]) -> int:
    if not (root / "opt/rocm/.info/version").exists():
        raise Fail("rocminfo: command not found", 127)
    print("ROCk module is loaded")
    for props in sorted((root / "sys/class/kfd/kfd/topology/nodes").glob("*/properties")):
        mo = re.search(r"gfx_target_version (\d+)", props.read_text())
        if mo and int(mo.group(1)):
            v = int(mo.group(1))
            print(f"  Name:                    gfx{v // 10000}{(v // 100) % 100:x}{v % 100:x}")
    return 0


# ------------------------------------------------------------------------------ issue 13: the Core SDK
# repository, the driver-numbered amdgpu-install (31.x) and device extras. The sandbox's model of them: the
# package names and URLs come from the knowledge base; what the knowledge base does not say (which ROCm
# packages the driver-numbered installer's "rocm" usecase brings, the files of amdrocm packages) is not
# modelled beyond what the wizard reads back (the kernel driver; the install directory).


def _driver_numbered(directory: str) -> bool:
    """amdgpu-install/31.50/...: numbered by driver version (7.14 and later), not by ROCm release."""
    try:
        return int(directory.split(".")[0]) >= 30
    except ValueError:
        return False


def _install_driver_deb(root: Path, d: dict[str, str], codename: str | None) -> str:
    driver = d["Driver"]
    files = {"/etc/apt/sources.list.d/amdgpu.list":
             f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/{driver}/ubuntu "
             f"{codename} main\n",
             "/etc/apt/keyrings/rocm.gpg": f"rocm-wizard sandbox key\nfpr: {_amd_fingerprint()}\n"}
    m.install_package(root, d["Package"], d["Version"], files)
    print(f"Setting up {d['Package']} ({d['Version']}) ...")
    return d["Package"]


def _driver_repo(root: Path) -> str | None:
    for line in m.apt_source_lines(root):
        mo = re.search(r"repo\.radeon\.com/amdgpu/([0-9][0-9.]*)/", line)
        if mo and _driver_numbered(mo.group(1)):
            return mo.group(1)
    return None


def _amdgpu_install_driver_only(root: Path, args: list[str], yes: bool) -> int:
    if not yes:
        print("Do you want to continue? [Y/n] Abort.")
        return 1
    _dpkg_locked(root)
    print(f"sandbox: amdgpu-install {_driver_repo(root)}: only the kernel driver is modelled (the knowledge base "
          "does not list what its other usecases install)")
    if "--no-dkms" in args:
        return 0
    ver = m.available(root).get("amdgpu-dkms")
    if ver is None:
        raise Fail("E: Unable to locate package amdgpu-dkms", 100)
    if m.installed(root).get("amdgpu-dkms") != ver:
        files, links = m.package_files("amdgpu-dkms", ver)
        m.install_package(root, "amdgpu-dkms", ver, files, links)
        print(f"Setting up amdgpu-dkms ({ver}) ...")
    return 0


def _load_installed_driver(root: Path) -> None:
    """A machine that booted without the amdgpu driver gets it at the next boot once amdgpu-dkms is installed:
    /dev/kfd, the KFD topology and the render nodes appear (the profile's tree with the driver loaded)."""
    if (root / "dev/kfd").exists() or "amdgpu-dkms" not in m.installed(root):
        return
    from wizard.profiles import PROFILES, machine_tree

    prof = PROFILES.get(str(m.config(root).get("profile", "")))
    if prof is None:
        return
    machine_tree(prof, driver=True).lay(root)


def _core_sdk_urls(rels: tuple[object, ...]) -> set[str]:
    out: set[str] = set()
    for r in rels:
        routes = getattr(r, "routes", None)
        if routes is None:
            continue
        for repo in (routes.apt, routes.rpm):
            if repo is not None:
                out.add(repo.key_url)
                out.update(repo.repos.values())
    return out


def _apt_uris(root: Path) -> list[str]:
    """Repository URLs of the sandbox's apt sources: one-line .list files and deb822 .sources files."""
    uris = []
    for line in m.apt_source_lines(root):
        uris += [w for w in line.split() if w.startswith(("http://", "https://"))]
    for p in sorted((root / "etc/apt/sources.list.d").glob("*.sources")):
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("URIs:"):
                uris += line.split()[1:]
    return uris


def _core_sdk_available(root: Path) -> dict[str, str]:
    """The packages a configured Core SDK repository offers: the release's meta package and its per-gfx ones."""
    try:
        from wizard.kb import load_kb

        rels = load_kb().releases("core-sdk")
    except Exception:  # noqa: BLE001 - without a knowledge base no repository is known
        return {}
    uris = {u.rstrip("/") for u in _apt_uris(root)}
    out: dict[str, str] = {}
    for r in rels:
        apt = r.routes.apt if r.routes is not None else None
        if apt is None or not uris & {u.rstrip("/") for u in apt.repos.values()}:
            continue
        ver = f"{r.version}-sandbox"
        if r.routes is not None and r.routes.meta_package:
            out[r.routes.meta_package] = ver
        if r.routes is not None and r.routes.gfx_package and r.gfx is not None:
            out.update({r.routes.gfx_package.replace("{gfx}", g): ver for g in r.gfx.official})
    return out


def _core_sdk_files(name: str, version: str) -> tuple[dict[str, str], dict[str, str]]:
    """The install directory the release's packages fill (what the wizard's probe reads back)."""
    try:
        from wizard.kb import load_kb

        rel = load_kb().release(version.split("-")[0])
    except Exception:  # noqa: BLE001
        rel = None
    if rel is None or not rel.install_path:
        return {}, {}
    return {f"{rel.install_path}/.info/version": f"{rel.version}\n"}, {}


def _device_packages(name: str, extras: str | None, version: str) -> list[tuple[str, str]]:
    """torch[device-gfxNNNN] brings amd-torch-device-gfxNNNN and rocm[device-gfxNNNN] rocm-sdk-device-gfxNNNN
    (TheRock's package names, knowledge base therock notes), at the requested version."""
    if not extras:
        return []
    prefix = {"torch": "amd-torch-device", "rocm": "rocm-sdk-device"}.get(_norm(name))
    if prefix is None:
        return []
    return [(f"{prefix}-{e.strip()[len('device-'):]}", version) for e in extras.strip("[]").split(",")
            if e.strip().startswith("device-") and e.strip() != "device-all"]


HANDLERS = {
    "apt-get": apt_get, "apt": apt_get, "apt-mark": apt_mark, "dpkg": dpkg, "dpkg-query": dpkg_query, "rpm": rpm, "amdgpu-install": amdgpu_install,
    "dkms": dkms, "modprobe": modprobe, "mokutil": mokutil, "usermod": usermod, "pip": pip, "pip3": pip,
    "venv-python": venv_python, "python3": python3, "python": python3, "docker": docker, "systemctl": systemctl,
    "reboot": reboot, "shutdown": reboot, "sudo": sudo, "sh": sh, "wget": wget, "curl": wget, "id": id_,
    "update-initramfs": noop, "update-alternatives": noop, "ldconfig": noop, "update-secureboot-policy": noop,
    "rocminfo": rocminfo, "gpg": gpg,
}
