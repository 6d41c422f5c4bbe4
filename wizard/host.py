"""The only door to the machine.

A Host reads files relative to a root and runs argv lists with a timeout. Three kinds:

* ``LiveHost()``: root ``/``, commands run for real (read-only ones only, during detection).
* ``LiveHost(root=DIR, path_prefix=DIR/bin)``: the sandbox, a root directory plus stand-in programs.
* ``BundleHost(PATH)``: a recorded machine (evidence bundle directory or ``.tar.gz``). Files are read
  under ``PATH/root/``, captured command outputs come from ``PATH/<name>.txt``; it never runs anything.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path

from wizard.inputs.confined import read_regular
from wizard.record import record

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Mapping, Protocol
else:
    Protocol = object  # Host is a structural type for the checker; at run time a plain base


class HostError(Exception):
    """The host itself cannot be used (unreadable bundle, missing root)."""


@record
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None  # None: timed out or could not start
    stdout: str
    stderr: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Host(Protocol):
    name: str  # "live", "bundle:<path>", "sandbox:<path>"

    def read_text(self, path: str, limit: int = 4 << 20) -> str | None: ...
    def exists(self, path: str) -> bool: ...
    def is_dir(self, path: str) -> bool: ...
    def listdir(self, path: str) -> list[str]: ...
    def subdirs(self, path: str) -> list[str]: ...
    def readlink(self, path: str) -> str | None: ...
    def glob(self, pattern: str) -> list[str]: ...
    def realpath(self, path: str) -> str: ...
    def access(self, path: str, mode: int) -> bool | None: ...
    def statvfs_free(self, path: str) -> int | None: ...
    def captured(self, name: str) -> str | None: ...
    def run(self, argv: list[str], timeout: float = 5.0) -> CommandResult: ...
    def which(self, program: str) -> str | None: ...
    @property
    def environ(self) -> Mapping[str, str]: ...
    @property
    def is_live(self) -> bool: ...
    def uid(self) -> int | None: ...
    def session_groups(self) -> tuple[str, ...] | None: ...


# open for reading without waiting (a FIFO with no writer), without taking a terminal as controlling one
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def _norm(path: str) -> str:
    """Absolute POSIX path -> path relative to a root ('/etc/x' -> 'etc/x')."""
    return path.lstrip("/")


class _RootedFiles:
    """File access under a root directory; never follows a path outside it via '..'."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._base = str(root).rstrip("/")  # root as _p joins it ("" for "/")

    def _p(self, path: str) -> str:
        """The path on this machine's file system (a string: detect calls this hundreds of times)."""
        rel = os.path.normpath(_norm(path))
        if rel.startswith(".."):
            rel = rel.lstrip("./")
        return f"{self._base}/{rel}" if rel != "." else self._base or "/"

    def read_text(self, path: str, limit: int = 4 << 20) -> str | None:
        """Up to ``limit`` bytes of a regular file, as text; None for anything missing and for anything else: a FIFO,
        a device or a socket a path names (an EnvironmentFile=, a unit file) is opened without waiting and never
        read, as no writer may ever come (/dev/stdin, a named pipe)."""
        try:
            fd = os.open(self._p(path), _READ_FLAGS)
        except (OSError, ValueError):
            return None
        data = read_regular(fd, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        try:
            return os.path.lexists(self._p(path))
        except (OSError, ValueError):
            return False

    def is_dir(self, path: str) -> bool:
        try:
            return os.path.isdir(self._p(path))
        except (OSError, ValueError):
            return False

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(self._p(path)))
        except (OSError, ValueError):
            return []

    def subdirs(self, path: str) -> list[str]:
        """The names of the directories in a directory (links to one included), from one listing: no stat
        per entry except for links."""
        try:
            with os.scandir(self._p(path)) as it:
                return sorted(e.name for e in it if e.is_dir())
        except (OSError, ValueError):
            return []

    def readlink(self, path: str) -> str | None:
        """A link's target as written (an absolute target names a path of this machine), None if no link."""
        try:
            return os.readlink(self._p(path))
        except (OSError, ValueError):
            return None

    def glob(self, pattern: str) -> list[str]:
        """Glob an absolute pattern under the root; returns absolute (root-relative) paths."""
        parts = [p for p in _norm(pattern).split("/") if p]
        found = ["/"]
        for part in parts:
            nxt: list[str] = []
            for base in found:
                if any(ch in part for ch in "*?["):
                    for name in self.listdir(base):
                        if fnmatch.fnmatchcase(name, part):
                            nxt.append(base.rstrip("/") + "/" + name)
                else:
                    cand = base.rstrip("/") + "/" + part
                    if self.exists(cand):
                        nxt.append(cand)
            found = nxt
            if not found:
                break
        return sorted(found)

    def realpath(self, path: str) -> str:
        """Resolve symlinks inside the root (an absolute link target is taken relative to the root)."""
        cur = "/"
        for part in [p for p in _norm(path).split("/") if p]:
            cand = cur.rstrip("/") + "/" + part
            for _ in range(20):
                p = self._p(cand)
                if not os.path.islink(p):
                    break
                target = os.readlink(p)
                cand = target if target.startswith("/") else os.path.normpath(cur.rstrip("/") + "/" + target)
            cur = cand
        return cur

    def statvfs_free(self, path: str) -> int | None:
        p = self._p(path)
        while True:
            try:
                st = os.statvfs(p)
                return st.f_bavail * st.f_frsize
            except OSError:
                if p == (self._base or "/") or os.path.dirname(p) == p:
                    return None
                p = os.path.dirname(p)


class LiveHost(_RootedFiles):
    """The running machine, or a sandbox root with stand-in programs first on PATH."""

    def __init__(
        self,
        root: Path | str = "/",
        *,
        path_prefix: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(Path(root))
        self._environ = dict(os.environ if environ is None else environ)
        if path_prefix:
            self._environ["PATH"] = path_prefix + os.pathsep + self._environ.get("PATH", "")
        self.name = "live" if str(root) == "/" else f"sandbox:{root}"

    @property
    def environ(self) -> Mapping[str, str]:
        return self._environ

    @property
    def is_live(self) -> bool:
        return True

    def access(self, path: str, mode: int) -> bool | None:
        try:
            return os.access(self._p(path), mode)
        except (OSError, ValueError):
            return None

    def uid(self) -> int | None:
        return os.getuid()

    def session_groups(self) -> tuple[str, ...] | None:
        """Names of the groups this process holds (its login session's), on the running machine only; None in a
        sandbox root or run through sudo (root's groups are not the user's session)."""
        if self.name != "live" or self._environ.get("SUDO_USER"):
            return None
        import grp

        names = []
        for gid in dict.fromkeys([os.getgid(), *os.getgroups()]):
            try:
                names.append(grp.getgrgid(gid).gr_name)
            except KeyError:
                continue
        return tuple(names)

    def captured(self, name: str) -> str | None:
        return None

    def which(self, program: str) -> str | None:
        for d in self._environ.get("PATH", "").split(os.pathsep):
            if not d:
                continue
            cand = os.path.join(d, program)
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand
        return None

    def run(self, argv: list[str], timeout: float = 5.0) -> CommandResult:
        import subprocess

        env = dict(self._environ)
        env.update({"LC_ALL": "C", "LANG": "C"})
        exe = self.which(argv[0]) if "/" not in argv[0] else argv[0]
        if exe is None:
            return CommandResult(tuple(argv), None, "", f"{argv[0]}: not found")
        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=env, start_new_session=True,  # its own process group: a timeout kills all of it
                cwd=None if str(self.root) == "/" else self.root,  # a sandbox's relative paths are its own
            )
        except OSError as exc:
            return CommandResult(tuple(argv), None, "", str(exc))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            try:  # a process stuck in the kernel (a wedged driver) may never die: do not wait for it
                out, err = proc.communicate(timeout=1.0)
            except subprocess.TimeoutExpired:
                out, err = b"", b""
            return CommandResult(tuple(argv), None, out.decode("utf-8", "replace"), "timed out", timed_out=True)
        return CommandResult(tuple(argv), proc.returncode, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"))


def acting_user(environ: Mapping[str, str], euid: int | None = None) -> str | None:
    """The user a wizard running on this machine acts for: run as root through sudo, the one who ran sudo
    (``SUDO_USER``); otherwise this process's own user (``USER``, ``LOGNAME``). So a wizard started with ``sudo -u
    USER`` (Ansible's ``become_user``, connected as an admin) reads USER's venvs and groups, not the admin's."""
    root = (os.geteuid() if euid is None else euid) == 0
    sudo_user = environ.get("SUDO_USER")
    if root and sudo_user and sudo_user != "root":
        return sudo_user
    return environ.get("USER") or environ.get("LOGNAME")


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class BundleHost(_RootedFiles):
    """A recorded machine. Reads only, never outside the bundle (:mod:`wizard.inputs.confined`); runs nothing.

    A ``.tar.gz`` is extracted by :mod:`wizard.inputs.archive` (files, directories and links inside it
    only, bounded in size, count and time) into a private temporary directory removed at exit.
    """

    def __init__(self, path: Path | str) -> None:
        from wizard.inputs.confined import ConfinedDir

        p = Path(path)
        self.extracted: Path | None = None
        try:
            st = p.stat()
        except OSError as exc:
            raise HostError(f"{path}: {exc.strerror or exc}") from None
        if stat.S_ISREG(st.st_mode):
            p = self._extract(p, str(path))
        elif stat.S_ISDIR(st.st_mode):
            p = Path(os.path.realpath(p))  # the path the user named may be a link; nothing inside it is followed out
        else:
            raise HostError(f"{path}: neither a directory nor a .tar.gz file; an evidence bundle is one of those")
        top = ConfinedDir(p)
        if not any(top.is_file("/" + n) or (n == "root" and top.is_dir("/root")) for n in top.listdir("/")):
            what = "an archive with no evidence file" if self.extracted else "an empty directory"
            if self.extracted is not None:
                from wizard.inputs.archive import remove

                remove(self.extracted)
            raise HostError(f"{path}: {what}, not an evidence bundle (expected files such as lspci.txt, "
                            "rocminfo.txt, or a root/ directory)")
        self.bundle = p
        self._files = top
        self._root = ConfinedDir(p / "root")
        super().__init__(p / "root")
        self.name = f"bundle:{path}"

    def _extract(self, p: Path, shown: str) -> Path:
        from wizard.inputs.archive import ArchiveError, extract

        try:
            with open(p, "rb") as fh:
                magic = fh.read(2)
        except OSError as exc:
            raise HostError(f"{shown}: {exc.strerror or exc}") from None
        if magic != b"\x1f\x8b":
            what = ("not a readable .tar.gz bundle (not gzip data)" if p.name.endswith((".tar.gz", ".tgz"))
                    else "a file that is not a .tar.gz")
            raise HostError(f"{shown}: {what}; an evidence bundle is a directory or a .tar.gz of one")
        try:
            base = self.extracted = extract(p)
        except ArchiveError as exc:
            raise HostError(f"{shown}: bundle refused: {exc}") from None
        entries = os.listdir(base)
        if len(entries) == 1 and (base / entries[0]).is_dir() and not (base / entries[0]).is_symlink():
            base = base / entries[0]
        return base

    # -- reads stay inside the bundle: links resolved within it, only regular files read
    def read_text(self, path: str, limit: int = 4 << 20) -> str | None:
        data = self._root.read(path, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        return self._root.lstat(path) is not None

    def is_dir(self, path: str) -> bool:
        return self._root.is_dir(path)

    def listdir(self, path: str) -> list[str]:
        return self._root.listdir(path)

    def subdirs(self, path: str) -> list[str]:
        base = path.rstrip("/")
        return [n for n in self._root.listdir(path) if self._root.is_dir(f"{base}/{n}")]

    def readlink(self, path: str) -> str | None:
        return self._root.readlink(path)

    def realpath(self, path: str) -> str:
        return self._root.resolve(path)

    @property
    def environ(self) -> Mapping[str, str]:
        return {}

    @property
    def is_live(self) -> bool:
        return False

    def access(self, path: str, mode: int) -> bool | None:
        return None

    def uid(self) -> int | None:
        return None

    def session_groups(self) -> tuple[str, ...] | None:
        return None

    def captured(self, name: str) -> str | None:
        data = self._files.read("/" + name, 8 << 20)
        return None if data is None else data.decode("utf-8", errors="replace")

    def which(self, program: str) -> str | None:
        return None

    def run(self, argv: list[str], timeout: float = 5.0) -> CommandResult:
        return CommandResult(tuple(argv), None, "", "recorded machine: commands are not run")


BUILTIN_EXAMPLES = Path(__file__).parent / "examples"


def example_names() -> list[str]:
    try:
        return sorted(p.name for p in BUILTIN_EXAMPLES.iterdir() if p.is_dir())
    except OSError:
        return []


def open_recorded(spec: str) -> BundleHost:
    """--from PATH: a bundle directory, a .tar.gz, or the name of a built-in example machine."""
    p = Path(spec).expanduser()
    if p.exists():
        return BundleHost(p)
    if (BUILTIN_EXAMPLES / spec).is_dir():
        return BundleHost(BUILTIN_EXAMPLES / spec)
    names = ", ".join(example_names()) or "none"
    raise HostError(f"{spec}: no such bundle (built-in examples: {names})")
