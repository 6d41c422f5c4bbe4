"""A throwaway OpenPGP signing key for the rehearsal mirror, made with gpg in a temporary GNUPGHOME.

The key signs the mirror's apt ``Release`` files (``InRelease`` and ``Release.gpg``) and is what the
mirror's ``amdgpu-install`` package installs as ``/etc/apt/keyrings/rocm.gpg``. It is not AMD's key and
says so in its user id. ``with signing_key(parent) as key:`` creates it; on exit the gpg-agent started
for it is stopped and the GNUPGHOME removed, so nothing outlives the build. A build killed outright (kill -9)
cannot do that: each GNUPGHOME names the process that made it, and the next one made sweeps away those whose
process is gone (stopping their agent first).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

from wizard.record import record


TEST_KEY_UID = "rocm-wizard rehearsal mirror (throwaway test key, not AMD's) <rehearsal-mirror@localhost>"


class SigningError(RuntimeError):
    """gpg failed; the message is one line with gpg's own last line."""


@record
class SigningKey:
    gnupghome: Path
    fingerprint: str  # 40 upper-case hex digits
    uid: str

    def _gpg(self, *args: str, stdin: bytes | None = None) -> bytes:
        return gpg(self.gnupghome, *args, stdin=stdin)

    def public_keyring(self) -> bytes:
        """The public key as a binary keyring (what ``gpg --dearmor`` gives; apt's signed-by format)."""
        return self._gpg("--export", self.fingerprint)

    def public_armored(self) -> str:
        return self._gpg("--armor", "--export", self.fingerprint).decode("ascii")

    def clearsign(self, src: Path, dst: Path) -> None:
        """``InRelease``: the file clear-signed."""
        dst.unlink(missing_ok=True)
        self._gpg("--local-user", self.fingerprint, "--digest-algo", "SHA512", "--clearsign", "--output",
                  str(dst), str(src))

    def detach_sign(self, src: Path, dst: Path) -> None:
        """``Release.gpg``: an armored detached signature."""
        dst.unlink(missing_ok=True)
        self._gpg("--local-user", self.fingerprint, "--digest-algo", "SHA512", "--armor", "--detach-sign",
                  "--output", str(dst), str(src))


def gpg(home: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {"GNUPGHOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    proc = subprocess.run(["gpg", "--batch", "--no-tty", "--quiet", *args], input=stdin, capture_output=True,
                          env=env, timeout=120)
    if proc.returncode != 0:
        last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise SigningError(f"gpg {' '.join(args[:2])}: exit {proc.returncode}: {last}")
    return proc.stdout


_HOME_PREFIX = "rw-gpg-"


def _gnupghome() -> Path:
    """A new private GNUPGHOME under the system temp dir, named after this process, once the homes of dead
    processes are swept away."""
    _sweep_dead_homes()
    home = Path(tempfile.mkdtemp(prefix=f"{_HOME_PREFIX}{os.getpid()}-"))
    os.chmod(home, 0o700)
    return home


def _stop_and_remove(home: Path) -> None:
    subprocess.run(["gpgconf", "--kill", "all"], env={"GNUPGHOME": str(home), "PATH": os.environ.get("PATH", "")},
                   capture_output=True, timeout=30, check=False)
    shutil.rmtree(home, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_dead_homes() -> None:
    """The GNUPGHOMEs (this user's) whose making process is gone: a build killed before its cleanup ran."""
    for home in Path(tempfile.gettempdir()).glob(f"{_HOME_PREFIX}*-*"):
        pid = home.name[len(_HOME_PREFIX):].split("-", 1)[0]
        try:
            mine = home.is_dir() and not home.is_symlink() and home.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and pid.isdigit() and not _alive(int(pid)):
            _stop_and_remove(home)


@contextlib.contextmanager
def signing_key(uid: str = TEST_KEY_UID) -> Iterator[SigningKey]:
    """A fresh ed25519 signing key in a short-lived GNUPGHOME under the system temp dir.

    The home is short on purpose: gpg-agent's socket lives in it when /run/user/UID does not exist,
    and a socket path may not exceed 107 bytes.
    """
    home = _gnupghome()
    try:
        gpg(home, "--pinentry-mode", "loopback", "--passphrase", "", "--quick-generate-key", uid, "ed25519",
            "sign", "never")
        listing = gpg(home, "--with-colons", "--list-secret-keys", uid).decode()
        fprs = [line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")]
        if not fprs:
            raise SigningError("gpg: the new key has no fingerprint in --list-secret-keys")
        yield SigningKey(home, fprs[0], uid)
    finally:
        _stop_and_remove(home)


def keyring_fingerprints(keyring: bytes) -> tuple[str, ...]:
    """Fingerprints of the primary keys in a binary or armored keyring (``gpg --show-keys``)."""
    home = _gnupghome()
    try:
        out = gpg(home, "--with-colons", "--show-keys", stdin=keyring).decode()
    finally:
        _stop_and_remove(home)
    fprs: list[str] = []
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("pub:") and i + 1 < len(lines) and lines[i + 1].startswith("fpr:"):
            fprs.append(lines[i + 1].split(":")[9])
    return tuple(fprs)
