"""Where the Python environments are: every place users and their applications' installers keep one.

``discover(host) -> [Candidate]``: each environment worth reading (prefix, kind), most relevant first, with
every way it was found (``wizard.model.Found``: the evidence). Cheap by construction: no interpreter is
started and nothing is walked. A folder is listed once (``Host.subdirs``: one directory listing), the
depth is fixed and every count is bounded; a running process is read from ``/proc/PID`` (its ``exe`` and
``cwd`` links, ``cmdline``, ``environ``), never attached to. Everything goes through the ``Host``, so a
sandbox root, a real root and a bundle's ``root/`` are searched as the live machine is.

Looked at, in this order:

1. ``$VIRTUAL_ENV`` / ``$CONDA_PREFIX`` in force;
2. the interpreters of running Python processes (``/proc/*/exe`` named ``python*``), mapped to their
   environment through the command line (the interpreter path as typed, relative ones from the
   process's cwd), its ``VIRTUAL_ENV`` / ``CONDA_PREFIX`` / ``PATH``, or the binary's own prefix (a conda
   env's python is a real file in it);
3. systemd units' ``ExecStart`` (system: ``SYSTEM_UNITS``, the dbus API's, transient, generated, runtime, the
   administrator's, portable services' attached ones and the distribution's; user: ``user_unit_dirs``, each home's
   ~/.config/systemd/user, ~/.local/share/systemd/user and its runtime directory's, the XDG ones, /etc/systemd/user,
   /run/systemd/user, the packages' (/usr/lib/systemd/user ...); ``*.service.d/*.conf`` drop-ins too, a template's for
   its instances, ``service.d/*.conf`` for every service): an
   executable under ``<env>/bin/`` (the interpreter or a console script), ``bash -c`` strings included,
   relative paths from ``WorkingDirectory=``, ``%h`` expanded;
4. per home: its folders (a folder that is an environment; an environment inside an application folder,
   ``venv``, ``.venv``, ``env``, ``fooocus_env``..., ``installer_files/env``; one level below for folders
   without one: ``~/ai/ComfyUI/venv``, a uv project's ``~/code/app/.venv``), ~/venvs, ~/.venvs,
   ~/.virtualenvs, ~/.pyenv/versions, conda roots and their envs, ~/.conda/environments.txt, pipx's venvs,
   uv's tool environments, ~/.local (user site);
5. ``/opt`` as a home's folders (``/opt/<app>/venv``, ``/opt/<app>/.venv``, ``/opt/conda``), /opt/pipx;
6. /usr and /usr/local.
"""

from __future__ import annotations

from collections.abc import Mapping

from wizard.host import Host
from wizard.model import Found, FoundBy
from wizard.parsers.systemd_unit import continues_a_line, expand_specifiers, logical_lines
from wizard.probes.python_envs import python_name_version
from wizard.record import record

MAX_FOLDERS = 400  # folders of one home (or of /opt) looked into
MAX_BELOW = 64  # folders one level below a folder looked into
MAX_LISTINGS = 3000  # directory listings for one home (or /opt), all levels together
MAX_PROCESSES = 4096
MAX_UNITS = 1024  # unit files and drop-ins read
MAX_FOUND = 8  # ways one environment is recorded as found (a system python runs many daemons)

# one level below a folder: names that never hold a project's environment and can be large
SKIP_BELOW = frozenset({
    "node_modules", "__pycache__", "site-packages", "models", "outputs", "output", "input", "cache", "logs",
    "datasets", "checkpoints", "lib", "lib64", "include", "share", "bin", "src", "tests", "docs", "venvs",
})
COLLECTIONS = ("venvs", ".venvs", ".virtualenvs")
CONDA_ROOTS = ("anaconda3", "miniconda3", "miniforge3", "mambaforge", ".conda", "micromamba", ".micromamba")
# the system manager's unit directories, highest priority first (systemd.unit(5) "Unit File Load Path": the dbus API's,
# transient units, generators' early, the administrator's, runtime units, generators', the local administrator's
# installs, the distribution's, generators' late), with portable services' attached units (systemd-portabled's) after
# the administrator's and after the runtime units: systemd/systemd@0130cfdee0458d3a88ac7268b0f97dbd64167589:
# src/basic/path-lookup.c ``lookup_paths_init`` (``acquire_attached_dirs``: system scope only), as
# ``systemd-analyze unit-paths`` of systemd 252 lists them
SYSTEM_UNITS = ("/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
                "/run/systemd/generator.early", "/etc/systemd/system", "/etc/systemd/system.attached",
                "/run/systemd/system", "/run/systemd/system.attached", "/run/systemd/generator",
                "/usr/local/lib/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system",
                "/run/systemd/generator.late")
# a user manager's built-in package directories (path-lookup.c ``user_data_unit_paths``, Debian's USER_DATA_UNIT_DIR
# being /usr/lib/systemd/user)
USER_PACKAGE_UNITS = ("/usr/local/lib/systemd/user", "/usr/local/share/systemd/user", "/usr/lib/systemd/user",
                      "/usr/share/systemd/user")
_VENDOR_UNITS = ("/usr/lib/", "/lib/", "/usr/share/")  # a distribution's: its *.wants/ enable no administrator's instance
# a directory that is a link on most systems: /lib on a merged /usr; Debian's /etc/xdg/systemd/user -> /etc/systemd/user
_LINKED_UNITS = ("/lib/", "/etc/xdg/")
_SYSTEM_BIN = ("/usr/", "/bin/", "/sbin/", "/lib/")


@record
class Candidate:
    prefix: str
    kind: str  # "venv" | "conda" | "system" | "user-site"
    found: tuple[Found, ...] = ()
    python: str | None = None  # the interpreter a process or a unit names, when one does


class _Collected:
    """Candidates in the order first found; one per prefix, with every way it was found."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.kind: dict[str, str] = {}
        self.found: dict[str, list[Found]] = {}
        self.python: dict[str, str] = {}

    def add(self, prefix: str, kind: str, found: Found, python: str | None = None) -> None:
        prefix = prefix.rstrip("/") or "/"
        if prefix not in self.kind:
            self.order.append(prefix)
            self.kind[prefix] = kind
            self.found[prefix] = []
        ways = self.found[prefix]
        if found not in ways and len(ways) < MAX_FOUND:
            ways.append(found)
        if python and prefix not in self.python:
            self.python[prefix] = python

    def candidates(self) -> list[Candidate]:
        return [Candidate(p, self.kind[p], tuple(self.found[p]), self.python.get(p)) for p in self.order]


def env_kind(host: Host, prefix: str) -> str | None:
    """"venv" (a pyvenv.cfg), "conda" (a conda-meta folder), or None: not an environment's prefix."""
    if host.exists(f"{prefix}/pyvenv.cfg"):
        return "venv"
    if host.is_dir(f"{prefix}/conda-meta"):
        return "conda"
    return None


def _parent(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] or "/"


def app_of(prefix: str, homes: tuple[str, ...]) -> str | None:
    """The application folder an environment sits in (``~/ComfyUI`` for ``~/ComfyUI/venv``, the webui for
    ``installer_files/env``); None for one directly in a home, in /opt or in a collection of environments."""
    parent = _parent(prefix)
    if parent.endswith("/installer_files"):
        parent = _parent(parent)
    name = parent.rsplit("/", 1)[-1]
    if parent in homes or parent in ("/", "/opt", "/home", "/srv", "/usr", "/usr/local") or name in (
            *COLLECTIONS, "envs", "versions", "tools") or name.startswith("."):
        return None
    return parent


# --------------------------------------------------------------------------- folders


class _FolderScan:
    """The folders of one home (or /opt): each listed once, one level below where no environment showed."""

    def __init__(self, host: Host, c: _Collected, skip: tuple[str, ...] = ()) -> None:
        self.host, self.c, self.skip = host, c, skip
        self.listings = MAX_LISTINGS

    def run(self, base: str) -> None:
        host = self.host
        for name in host.subdirs(base)[:MAX_FOLDERS]:
            d = f"{base.rstrip('/')}/{name}"
            if name.startswith("."):  # hidden: only a folder that is itself an environment (~/.venv, ~/.torch)
                if host.exists(f"{d}/pyvenv.cfg"):
                    self.c.add(d, "venv", Found(FoundBy.FOLDER, d, "pyvenv.cfg"))
                elif host.exists(f"{d}/.venv/pyvenv.cfg"):
                    self.c.add(f"{d}/.venv", "venv", Found(FoundBy.APP, d, ".venv/pyvenv.cfg", d))
                continue
            if name in COLLECTIONS or name.startswith(self.skip):
                continue
            self.folder(d, below=True)

    def folder(self, d: str, *, below: bool) -> bool:
        """Whether ``d`` is an environment or holds one (then nothing under it is listed)."""
        if self.listings <= 0:
            return False
        self.listings -= 1
        host, c = self.host, self.c
        # a folder looked into below: its folders; else its names alone (a folder of thousands of files, a
        # download folder or a package mirror, then costs no look at each entry; ~2 ms of a detect here)
        sub = host.subdirs(d) if below else host.listdir(d)
        if "conda-meta" in sub and host.is_dir(f"{d}/conda-meta"):  # a conda root (~/miniforge3, /opt/conda) or env
            c.add(d, "conda", Found(FoundBy.CONDA, d, "conda-meta"))
            if "envs" in sub:
                for n in host.subdirs(f"{d}/envs"):
                    c.add(f"{d}/envs/{n}", "conda", Found(FoundBy.CONDA, f"{d}/envs"))
            return True
        if ("bin" in sub or "lib" in sub) and host.exists(f"{d}/pyvenv.cfg") and (
                host.is_dir(f"{d}/bin") or host.is_dir(f"{d}/lib")):
            c.add(d, "venv", Found(FoundBy.FOLDER, d, "pyvenv.cfg"))
            return True
        found = False
        for n in sub:  # a name that is no folder is no environment (env_kind)
            if "env" in n.lower() and n != "envs":  # venv, .venv, env, fooocus_env, sd-venv ...
                e = f"{d}/{n}"
                kind = env_kind(host, e)
                if kind:
                    c.add(e, kind, Found(FoundBy.APP, d, f"{n}/{'pyvenv.cfg' if kind == 'venv' else 'conda-meta'}", d))
                    found = True
        if "installer_files" in sub:  # text-generation-webui's and others' one-click installers (a conda env)
            e = f"{d}/installer_files/env"
            kind = env_kind(host, e)
            if kind:
                c.add(e, kind, Found(FoundBy.APP, d, "installer_files/env", d))
                found = True
        if found or not below or ".git" in sub:  # a checkout is one project: its folders are its own parts
            return found
        for n in [n for n in sub if not n.startswith(".") and n not in SKIP_BELOW][:MAX_BELOW]:
            found = self.folder(f"{d}/{n}", below=False) or found
        return found


def _home(host: Host, home: str, c: _Collected, user_home: str | None) -> None:
    env = host.environ if home == user_home else {}
    _FolderScan(host, c).run(home)
    for group in COLLECTIONS:
        for name in host.subdirs(f"{home}/{group}"):
            c.add(f"{home}/{group}/{name}", "venv", Found(FoundBy.VENVS, f"{home}/{group}"))
    for name in host.subdirs(f"{home}/.pyenv/versions"):
        c.add(f"{home}/.pyenv/versions/{name}", "venv", Found(FoundBy.PYENV, f"{home}/.pyenv/versions"))
    for root in CONDA_ROOTS:
        base = f"{home}/{root}"
        if host.is_dir(f"{base}/conda-meta"):
            c.add(base, "conda", Found(FoundBy.CONDA, base, "conda-meta"))
        for name in host.subdirs(f"{base}/envs"):
            c.add(f"{base}/envs/{name}", "conda", Found(FoundBy.CONDA, f"{base}/envs"))
    listed = f"{home}/.conda/environments.txt"
    for i, line in enumerate((host.read_text(listed, limit=1 << 16) or "").splitlines(), 1):
        if line.strip().startswith("/"):
            c.add(line.strip(), "conda", Found(FoundBy.CONDA, f"{listed}:{i}"))
    data = env.get("XDG_DATA_HOME") or f"{home}/.local/share"
    for pipx in dict.fromkeys(p for p in (env.get("PIPX_HOME"), f"{data}/pipx", f"{home}/.local/pipx") if p):
        for name in host.subdirs(f"{pipx}/venvs"):
            c.add(f"{pipx}/venvs/{name}", "venv", Found(FoundBy.PIPX, f"{pipx}/venvs"))
    for tools in dict.fromkeys(p for p in (env.get("UV_TOOL_DIR"), f"{data}/uv/tools") if p):
        for name in host.subdirs(tools):
            c.add(f"{tools}/{name}", "venv", Found(FoundBy.UV_TOOL, tools))


# --------------------------------------------------------------------------- processes


def _environ(host: Host, pid: str) -> dict[str, str]:
    raw = host.read_text(f"/proc/{pid}/environ", limit=1 << 17) or ""
    out: dict[str, str] = {}
    for item in raw.split("\0"):
        k, sep, v = item.partition("=")
        if sep and k in ("VIRTUAL_ENV", "CONDA_PREFIX", "PATH"):
            out[k] = v
    return out


def _process_env(host: Host, pid: str, exe: str, argv: list[str], cwd: str | None) -> tuple[str, str, str]:
    """(prefix, kind, interpreter) of a Python process: the interpreter as it was started decides the venv
    (Python finds pyvenv.cfg beside the path it was started by, not beside the binary a link leads to)."""
    argv0 = argv[0] if argv else ""
    if "/" in argv0:
        path = argv0 if argv0.startswith("/") else (f"{cwd.rstrip('/')}/{argv0}" if cwd else "")
        if path:
            prefix = _parent(_parent(path))
            kind = env_kind(host, prefix)
            if kind:
                return prefix, kind, path
    elif argv0:
        env = _environ(host, pid)
        for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            prefix = env.get(var, "").rstrip("/")
            if prefix and host.exists(f"{prefix}/bin/{argv0}"):
                kind = env_kind(host, prefix)
                if kind:
                    return prefix, kind, f"{prefix}/bin/{argv0}"
        for d in env.get("PATH", "").split(":"):
            if d.startswith("/") and host.exists(f"{d.rstrip('/')}/{argv0}"):
                prefix = _parent(d)
                kind = env_kind(host, prefix)
                if kind:
                    return prefix, kind, f"{d.rstrip('/')}/{argv0}"
                break
    prefix = _parent(_parent(exe))  # the binary's own prefix: a conda env's python, or the system's
    return prefix, env_kind(host, prefix) or "system", exe


def _process_app(argv: list[str], cwd: str | None, homes: tuple[str, ...]) -> str | None:
    """The folder of the script a process runs (``main.py`` in ~/ComfyUI), else its cwd for ``-m``/``-c``."""
    args = iter(argv[1:])
    for a in args:
        if a in ("-m", "-c"):
            break
        if a in ("-X", "-W", "-Q"):
            next(args, None)
            continue
        if a.startswith("-"):
            continue
        path = a if a.startswith("/") else (f"{cwd.rstrip('/')}/{a}" if cwd else None)
        app = _parent(path) if path else None
        return None if app is None or app.endswith("/bin") or app in homes or app == "/" else app
    return None if cwd is None or cwd in homes or cwd == "/" else cwd


def command_head(words: list[str], start: int = 0) -> str:
    """The program and what it runs (a script, ``-m module``, ``-c code``), never the arguments after it: a
    command line may carry a token (``--api-key ...``), and the evidence is shown and bundled."""
    shown: list[str] = []
    rest = words[start:]
    i = 0
    while i < len(rest):
        w = rest[i]
        shown.append(w if len(w) <= 80 else w[:77] + "...")
        i += 1
        if i == 1:
            continue
        if w in ("-m", "-c", "-X", "-W") and i < len(rest):
            nxt = rest[i]
            shown.append(nxt if len(nxt) <= 80 else nxt[:77] + "...")
            i += 1
            if w in ("-m", "-c"):
                break
            continue
        if not w.startswith("-"):
            break
    more = len(rest) - i
    import shlex  # here: only a process or unit that runs an environment needs it (~0.6 ms)

    line = " ".join(shlex.quote(w) for w in shown)
    return line + (f" (+{more} argument{'s' if more != 1 else ''})" if more > 0 else "")


def _processes(host: Host, c: _Collected, homes: tuple[str, ...]) -> None:
    own = host.readlink("/proc/self")
    for pid in [n for n in host.listdir("/proc") if n.isdigit()][:MAX_PROCESSES]:
        if pid == own:
            continue
        exe = host.readlink(f"/proc/{pid}/exe")
        if not exe:
            continue
        exe = exe.removesuffix(" (deleted)")
        if python_name_version(exe.rsplit("/", 1)[-1]) is None:
            continue
        argv = (host.read_text(f"/proc/{pid}/cmdline", limit=1 << 14) or "").split("\0")
        while argv and not argv[-1]:
            argv.pop()
        cwd = host.readlink(f"/proc/{pid}/cwd")
        prefix, kind, python = _process_env(host, pid, exe, argv, cwd)
        text = command_head(argv) + (f" (cwd {cwd})" if cwd else "")
        c.add(prefix, kind, Found(FoundBy.PROCESS, f"pid {pid}", text, _process_app(argv, cwd, homes)), python)


# --------------------------------------------------------------------------- systemd units


def _tokens(command: str, home: str | None) -> list[str]:
    import shlex

    command = expand_specifiers(command.lstrip("@-:+!|"), home)
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out = list(words)
    for i, w in enumerate(words[:-1]):
        if w == "-c" and i >= 1 and words[i - 1].rsplit("/", 1)[-1] in ("sh", "bash", "dash", "zsh"):
            try:
                out += shlex.split(words[i + 1])
            except ValueError:
                out += words[i + 1].split()
    return out


def _setting(line: str) -> tuple[str, str]:
    """(key, value) of a unit's line as systemd's parser reads it: cut at the first "=", each side stripped
    (systemd/systemd@2557246cc8e616977cc233f92b4e7fbc45d0946f:src/shared/conf-parser.c ``parse_line`` hands
    ``strstrip(l)`` and ``strstrip(e)`` on): ``ExecStart = ...`` is ``ExecStart=...``."""
    key, _, value = line.partition("=")
    return key.strip(), value.strip()


def _may_name_an_env(line: str) -> bool:
    """Cheaply: whether an ExecStart line can name an environment (most run a system program: no parse)."""
    if "python" in line or " cd " in line or "%h" in line:
        return True
    for word in line.partition("=")[2].split():
        word = word.lstrip("'\"@-:+!|")
        if "/bin/" in word and not word.startswith(_SYSTEM_BIN):
            return True
    return False


def _exec_start_lines(text: str) -> list[str]:
    """The ``ExecStart`` lines of a unit's text (``ExecStart=``, blanks around the sign or not), stripped: found by
    the word, not by walking every line (a unit is mostly other lines; ~100 units are read by every detect)."""
    out: list[str] = []
    i = text.find("ExecStart")
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        # the lines the unit's reader sees (logical_lines: str.splitlines, so "\r" and the other line ends too)
        out.extend(ln.strip() for ln in text[start:end].splitlines() if "=" in ln and _setting(ln)[0] == "ExecStart")
        i = text.find("ExecStart", end)
    return out


def _unit(host: Host, unit: UnitFile, c: _Collected, homes: tuple[str, ...]) -> None:
    """Collect the environments the unit file's ExecStart lines run."""
    text, path, home = unit.text, unit.path, unit.home
    if not text or "ExecStart" not in text:
        return
    if not continues_a_line(text) and not any(_may_name_an_env(ln) for ln in _exec_start_lines(text)):
        return  # every ExecStart runs a system program (no continuation line hides another word)
    settings = [(number, *_setting(ln)) for number, ln in logical_lines(text) if "=" in ln]
    workdir = next((value.lstrip("-") for _, key, value in settings if key == "WorkingDirectory"), None)
    if workdir:
        workdir = expand_specifiers(workdir, home)
    for number, key, value in settings:
        if key != "ExecStart" or not _may_name_an_env(f"={value}"):
            continue
        tokens = _tokens(value, home)
        wd = workdir
        for i, t in enumerate(tokens):
            if t == "cd" and i + 1 < len(tokens) and tokens[i + 1].startswith("/"):  # bash -c 'cd DIR && ...'
                wd = tokens[i + 1]
                continue
            path_ = t if t.startswith("/") else (f"{wd.rstrip('/')}/{t}" if wd and wd.startswith("/")
                                                 and "/" in t and not t.startswith("-") else None)
            if not path_ or "/bin/" not in path_:
                continue
            name = path_.rsplit("/", 1)[-1]
            prefix = path_.rsplit("/bin/", 1)[0] or "/"
            if path_.startswith(_SYSTEM_BIN):
                kind = "system" if python_name_version(name) is not None and prefix in ("/usr", "/usr/local") else None
            else:
                kind = env_kind(host, prefix)
            if kind:
                app = wd if wd and wd.startswith("/") and wd not in homes else app_of(prefix, homes)
                c.add(prefix, kind, Found(FoundBy.SERVICE, f"{path}:{number}", command_head(tokens, i), app), path_)
                break


def _xdg_dir(env: Mapping[str, str], name: str) -> str | None:
    """An XDG base directory variable's value where it is an absolute path (the specification: a relative one is
    invalid and ignored; systemd would take it from the manager's working directory, which is not known here)."""
    value = env.get(name, "")
    return value.rstrip("/") or "/" if value.startswith("/") else None


def _xdg_dirs(env: Mapping[str, str], name: str, default: tuple[str, ...]) -> list[str]:
    """An XDG list variable's absolute entries (``xdg_user_dirs``: split at ":"), its default where it is not set."""
    value = env.get(name)
    return [d.rstrip("/") or "/" for d in value.split(":") if d.startswith("/")] if value else list(default)


def user_unit_dirs(home: str | None, runtime: str | None, env: Mapping[str, str] | None = None) -> list[str]:
    """A user manager's unit directories, highest priority first, as systemd's src/basic/path-lookup.c ``user_dirs``
    lists them (systemd/systemd@0130cfdee0458d3a88ac7268b0f97dbd64167589; systemd.unit(5) "Unit File Load Path", user
    mode; ``systemd-analyze --user unit-paths`` of systemd 252): its dbus API's, transient units and generators' early,
    the user's own ($XDG_CONFIG_HOME/systemd/user, else ~/.config's), each $XDG_CONFIG_DIRS entry's (/etc/xdg's where
    it is not set), the administrator's (/etc/systemd/user: every user's), runtime units ($XDG_RUNTIME_DIR's, then
    /run/systemd/user: every user's), generators', the user's installed units ($XDG_DATA_HOME/systemd/user, else
    ~/.local/share's), each $XDG_DATA_DIRS entry's (/usr/local/share's and /usr/share's where it is not set), the
    built-in package directories (/usr/local/lib, /usr/local/share, /usr/lib, /usr/share: ``user_data_unit_paths``),
    generators' late; a directory named twice keeps its first place (``strv_uniq``). ``home`` None: the directories
    every user shares; ``runtime`` None (not known: a recording's other homes): the directories under $XDG_RUNTIME_DIR
    left out; ``env``: the user manager's XDG variables where known (the user detect runs as), else the defaults."""
    env = env or {}
    run = [f"{runtime}/systemd/{d}" for d in ("user.control", "transient", "generator.early", "user", "generator",
                                              "generator.late")] if runtime else []
    config = _xdg_dir(env, "XDG_CONFIG_HOME") or f"{home}/.config"
    data = _xdg_dir(env, "XDG_DATA_HOME") or f"{home}/.local/share"
    mine = [f"{config}/systemd/user.control", *run[:3], f"{config}/systemd/user"] if home else []
    dirs = [*mine, *(f"{d}/systemd/user" for d in _xdg_dirs(env, "XDG_CONFIG_DIRS", ("/etc/xdg",))),
            "/etc/systemd/user", *run[3:4], "/run/systemd/user", *run[4:5], *([f"{data}/systemd/user"] if home else []),
            *(f"{d}/systemd/user" for d in _xdg_dirs(env, "XDG_DATA_DIRS", ("/usr/local/share", "/usr/share"))),
            *USER_PACKAGE_UNITS, *run[5:]]
    return list(dict.fromkeys(dirs))


def runtime_dirs(host: Host, homes: list[str]) -> dict[str, str]:
    """Home -> its user's runtime directory ($XDG_RUNTIME_DIR, where its user manager keeps runtime and generated
    units), known for the user detect runs as: its $XDG_RUNTIME_DIR, else /run/user/UID (pam_systemd's)."""
    env = host.environ
    home = env.get("HOME")
    if home not in homes:
        return {}
    uid = host.uid()
    run = env.get("XDG_RUNTIME_DIR") or (f"/run/user/{uid}" if uid is not None else None)
    return {home: run.rstrip("/")} if run and run.startswith("/") else {}


def _scopes(homes: list[str], runtime: dict[str, str], env: Mapping[str, str]) -> list[list[tuple[str, str | None]]]:
    """The unit directories of each service manager, highest priority first, each with what ``%h`` stands for in its
    units: the system's (/root); each home's user manager (``user_unit_dirs``; ``env``, detect's environment, is the
    manager's of the home detect runs as); with no home, the ones every user shares. The one list both readers of units
    walk (the environments services run here; the variables they set, wizard.probes.env_settings)."""
    system: list[tuple[str, str | None]] = [(d, "/root") for d in SYSTEM_UNITS]
    users: list[list[tuple[str, str | None]]] = [
        [(d, h) for d in user_unit_dirs(h, runtime.get(h), env if h == env.get("HOME") else None)] for h in homes]
    shared: list[tuple[str, str | None]] = [(d, None) for d in user_unit_dirs(None, None)]
    return [system, *(users or [shared])]


def _masked(host: Host, path: str) -> bool:
    """The unit file masks its service (systemd.unit(5), systemd/systemd@00d0abd8bbaaef4a734f684e658cd3e8f25bff98:
    man/systemd.unit.xml: "If a unit file is empty (i.e. has the file size 0) or is symlinked to /dev/null, its
    configuration will not be loaded and it appears with a load state of "masked", and cannot be activated").
    Here: linked to /dev/null (only a link is resolved: resolving and opening every unit file cost ~8 ms of
    detect); an empty unit file is seen by ``service_units``, which reads it anyway (``_masked_by_text``)."""
    link = host.readlink(path)
    return link is not None and (link == "/dev/null" or host.realpath(path) == "/dev/null")


def _masked_by_text(text: str | None) -> bool:
    """The service's own unit file (or its template's) is empty: the service is masked."""
    return text == ""


def template_of(service: str) -> str | None:
    """``foo@.service`` for an instance ``foo@bar.service``; None for a name that is no instance."""
    stem, at, instance = service.partition("@")
    return f"{stem}@.service" if at and instance != ".service" and instance.endswith(".service") else None


def dropin_names(service: str) -> list[str]:
    """The names whose ``.d/`` directories hold drop-ins for ``service``, most specific first, as systemd's
    src/shared/dropin.c ``unit_file_find_dirs`` goes: the name, its template's names (an instance), then the name cut
    after its last inner dash ("given "foo-bar-waldo.service" we'll also search "foo-bar-.service" and "foo-.service"",
    since systemd 239), each in turn the same way."""
    out: list[str] = []

    def walk(name: str) -> None:
        if name in out or len(out) > 32:
            return
        out.append(name)
        template = template_of(name)
        if template:
            walk(template)
        stem, at, instance = name[:-len(".service")].partition("@")
        chopped = False
        while True:
            dash = stem.rfind("-")
            if dash <= 0:
                return
            if dash + 1 < len(stem) or chopped:
                stem = stem[:dash + 1]
                break
            stem, chopped = stem[:dash], True  # a trailing dash: cut once more
        walk(f"{stem}@{instance}.service" if at and instance else f"{stem}.service")

    walk(service)
    return out


def _unit_files(host: Host,
                scope: list[tuple[str, str | None]]) -> dict[str, tuple[bool, list[tuple[str, str | None]]]]:
    """Service -> (whether it has a unit file, its files in the order systemd applies them) (systemd.unit(5),
    systemd/systemd@00d0abd8bbaaef4a734f684e658cd3e8f25bff98:man/systemd.unit.xml): the unit file of the
    highest-priority directory holding one (an instance without its own: its template's, "systemd will look for
    getty@.service"), then the ``.conf`` drop-ins of its drop-in directories (``dropin_names``) in every directory "in
    lexicographic order, regardless of which of the directories they reside in", a drop-in's name in a higher-priority
    directory (and, within one directory, in a more specific drop-in directory) hiding the same name elsewhere. The
    top-level ``service.d/`` drop-ins (systemd 244, systemd/systemd@03a46b5ecabce700c198fda5e849336dc61910a5:NEWS:
    "Unit files now support top level dropin directories of the form <unit_type>.d/ (e.g. service.d/)") are every
    service's, after every name's: src/shared/dropin.c (systemd/systemd@8b1aa3a942b5527f5bbe9db4e2eca64f9f376c3b)
    adds the type's directories "last as it's the most generic and should be able to be overridden by more specific
    drop-ins", so a name's drop-in of the same name hides it from any directory. A masked service (``_masked``) has
    none. An instance is a service where it is known to run: a unit file or drop-in
    directory of its own, or enabled (a ``*.wants/`` or ``*.requires/`` entry of an administrator's directory), and its
    template is there; a template is read as a service of its own too."""
    units: dict[str, tuple[str, str | None]] = {}
    dropins: dict[str, dict[str, tuple[int, tuple[str, str | None]]]] = {}
    typed: dict[str, tuple[str, str | None]] = {}  # service.d/'s drop-ins: every service's
    enabled: set[str] = set()
    seen: set[str] = set()
    for rank, (d, home) in enumerate(scope):
        # /lib is /usr/lib on a merged /usr: one listing of the two (the one link resolved: a directory that is not
        # there costs a failed listing, not a resolving too); /etc/xdg/systemd/user, Debian's link to /etc/systemd/user,
        # is read under that name (the administrator's directory, as every other reader of it names it)
        real = host.realpath(d) if d.startswith(_LINKED_UNITS) else d
        if real in seen:
            continue
        if d.startswith("/etc/xdg/"):
            d = real
        names = host.listdir(d)
        if not names:
            continue
        seen.add(real)
        for name in names:
            if name.endswith(".service"):
                units.setdefault(name, (f"{d}/{name}", home))
            elif name.endswith(".service.d"):
                confs = dropins.setdefault(name[:-2], {})
                for x in host.listdir(f"{d}/{name}"):
                    if x.endswith(".conf"):
                        confs.setdefault(x, (rank, (f"{d}/{name}/{x}", home)))
            elif name == "service.d":
                for x in host.listdir(f"{d}/{name}"):
                    if x.endswith(".conf"):
                        typed.setdefault(x, (f"{d}/{name}/{x}", home))
            elif name.endswith((".wants", ".requires")) and not d.startswith(_VENDOR_UNITS):
                enabled.update(x for x in host.listdir(f"{d}/{name}") if "@" in x and template_of(x))
    out: dict[str, tuple[bool, list[tuple[str, str | None]]]] = {}
    instances = {n for n in enabled | set(dropins) if template_of(n) in units}
    # the stems of templates' and prefixes' drop-in directories ("foo-", "foo"): a service whose name begins with none
    # has no drop-in directory but its own (no name is walked for most of the few hundred services)
    shared = tuple({n[:-len(".service")].rstrip("@") for n in dropins if n.endswith(("-.service", "@.service"))})
    for service in sorted(set(units) | instances | {n for n in dropins if not n.endswith("-.service")}):
        template = template_of(service)
        main = units.get(service) or (units.get(template) if template else None)
        if main is not None and _masked(host, main[0]):
            continue  # the service cannot run: its drop-ins give no process anything
        chosen: dict[str, tuple[tuple[int, int], tuple[str, str | None]]] = {}
        for spec, name in enumerate(dropin_names(service) if shared and service.startswith(shared) else (service,)):
            for conf, (rank, file) in dropins.get(name, {}).items():
                if conf not in chosen or (rank, spec) < chosen[conf][0]:
                    chosen[conf] = ((rank, spec), file)
        for conf, file in typed.items():  # the type's drop-ins come after every name's: a name's own hides them
            chosen.setdefault(conf, ((len(scope), 0), file))
        files = [f for _, (_, f) in sorted(chosen.items())]
        out[service] = (main is not None, [main, *files] if main else files)
    return out


@record
class UnitFile:
    """One file of a service (its unit file or a drop-in), read once for every reader of units."""

    path: str
    home: str | None  # what %h stands for in it
    text: str | None  # None: not there, not a regular file, or unreadable
    main: bool = False  # the service's unit file (an instance's: its template's), not a drop-in


# every service with its files, in the order systemd applies them (``service_units``)
ServiceUnits = list[tuple[str, tuple[UnitFile, ...]]]


def service_units(host: Host, homes: list[str]) -> ServiceUnits:
    """Every service of each service manager (``_scopes``) with its files in the order systemd applies them
    (``_unit_files``), each file read once (a template's file serves its instances from the same read): the one walk
    and the one read of the unit directories, for the environments services run (``_services``) and for the variables
    they set (wizard.probes.env_settings); detect makes it once and hands it to both. A service whose unit file is
    empty is masked (``_masked_by_text``): left out. At most ``MAX_UNITS`` files are read in all: the walk ends where
    the budget does, and the service whose files it cuts is left out whole (an unread drop-in may reset what the
    rest set)."""
    out: ServiceUnits = []
    budget = MAX_UNITS
    texts: dict[str, str | None] = {}
    for scope in _scopes(homes, runtime_dirs(host, homes), host.environ):
        for service, (has_unit, files) in _unit_files(host, scope).items():
            read: list[UnitFile] = []
            for i, (path, home) in enumerate(files):
                if path not in texts:
                    budget -= 1
                    if budget < 0:  # a service cut here is left out: a drop-in unread may reset what the rest set
                        return out
                    texts[path] = host.read_text(path, limit=1 << 16)
                text = texts[path]
                main = has_unit and i == 0
                if main and _masked_by_text(text):
                    break  # an empty unit file: the service cannot run, its drop-ins give no process anything
                read.append(UnitFile(path, home, text, main))
            else:
                out.append((service, tuple(read)))
    return out


def _services(host: Host, units: ServiceUnits, homes: tuple[str, ...], c: _Collected) -> None:
    for _service, files in units:
        for unit in files:
            _unit(host, unit, c, homes)


# --------------------------------------------------------------------------- all of it


def discover(host: Host, homes: list[str], units: ServiceUnits | None = None) -> list[Candidate]:
    """Every environment worth reading on ``host``, most relevant first, each with how it was found; ``units`` is
    the machine's ``service_units`` where the caller has read them already."""
    env = host.environ
    c = _Collected()
    if env.get("VIRTUAL_ENV"):
        c.add(env["VIRTUAL_ENV"], "venv", Found(FoundBy.ACTIVE, "VIRTUAL_ENV"))
    if env.get("CONDA_PREFIX"):
        c.add(env["CONDA_PREFIX"], "conda", Found(FoundBy.ACTIVE, "CONDA_PREFIX"))
    home_set = tuple(homes)
    _processes(host, c, home_set)
    _services(host, service_units(host, homes) if units is None else units, home_set, c)
    user_home = env.get("HOME")
    for home in homes:
        _home(host, home, c, user_home)
    _FolderScan(host, c, skip=("rocm", "amdgpu", "pipx")).run("/opt")  # ROCm's trees hold no application
    pipx_global = env.get("PIPX_GLOBAL_HOME") or "/opt/pipx"
    for name in host.subdirs(f"{pipx_global}/venvs"):
        c.add(f"{pipx_global}/venvs/{name}", "venv", Found(FoundBy.PIPX, f"{pipx_global}/venvs"))
    for home in homes:
        if host.is_dir(f"{home}/.local/lib"):
            c.add(f"{home}/.local", "user-site", Found(FoundBy.USER_SITE, f"{home}/.local/lib"))
    for system in ("/usr", "/usr/local"):
        c.add(system, "system", Found(FoundBy.SYSTEM, system))
    return c.candidates()
