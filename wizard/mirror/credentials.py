"""Mirror credentials kept out of plans and argv.

A mirror URL may carry a login (``https://bob:PASS@mirror.example/pt``). The plan, its ``plan.json``, the
journal, the dry-run script, exports and every command line name the mirror without it
(:func:`public_url`): a command line is world-readable (``/proc/PID/cmdline``). The login goes into the run's
own 0600 file beside its state (:data:`FILE`, written when the run starts, read again on resume), and each
action whose command names the mirror is handed it through files the action's user alone can read, named by
environment variables (a process's environment is its owner's and root's only):

* ``NETRC``: a netrc file, which pip reads (``PIP_CONFIG_FILE=/dev/null`` and ``--isolated`` stay: pip's
  configuration files and ``PIP_*`` variables are still ignored);
* ``WGETRC``: a wgetrc with ``user`` and ``password`` (GNU wget reads no ``NETRC``);
* ``ROCM_WIZARD_APT_AUTH``: lines for apt's ``/etc/apt/auth.conf.d``, which the action that points AMD's apt
  sources at the mirror installs as :data:`APT_AUTH` (0600, root's).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

from wizard.model import Action, ResolvedPlan
from wizard.record import record, replace

FILE = "credentials.json"  # in the run's state dir, 0600
APT_AUTH = "/etc/apt/auth.conf.d/rocm-wizard-mirrors.conf"
ENV_NETRC, ENV_WGETRC, ENV_APT = "NETRC", "WGETRC", "ROCM_WIZARD_APT_AUTH"


class CredentialError(ValueError):
    """A login that cannot be handed over without a command line (white space or quotes in it). One line."""


@record
class Credential:
    scheme: str  # "https"
    host: str  # "mirror.example.com" (lower case)
    port: int | None
    login: str
    password: str

    @property
    def prefix(self) -> str:
        """What a command names when it reaches this mirror: ``https://host[:port]``."""
        return f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port else "")


def public_url(url: str) -> str:
    """``url`` without its login: what plans, scripts, logs and command lines carry."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def from_url(url: str, source: str) -> Credential | None:
    """The login a mirror URL carries (None: none, or a login without a password, which the URL keeps out too)."""
    parts = urlsplit(url)
    if parts.password is None or parts.username is None or not parts.hostname:
        return None
    login, password = unquote(parts.username), unquote(parts.password)
    for word in (login, password):
        if not word or any(c.isspace() or c in "\"'\\#" for c in word):
            raise CredentialError(f"{source}: the login of mirror {public_url(url)} has white space, a quote, a "
                                  "backslash or '#': it cannot be handed to pip, wget and apt without a command line")
    return Credential(parts.scheme, parts.hostname.lower(), parts.port, login, password)


def dumps(creds: Sequence[Credential]) -> str:
    return json.dumps([[c.scheme, c.host, c.port, c.login, c.password] for c in creds]) + "\n"


def loads(text: str) -> tuple[Credential, ...]:
    out = []
    for row in json.loads(text):
        scheme, host, port, login, password = row
        out.append(Credential(str(scheme), str(host), int(port) if port is not None else None, str(login),
                              str(password)))
    return tuple(out)


def save(run_dir: Path, creds: Sequence[Credential]) -> None:
    """The run's credentials file (0600); nothing when no mirror has a login."""
    if not creds:
        return
    path = run_dir / FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(dumps(creds))


def load(run_dir: Path) -> tuple[Credential, ...]:
    try:
        text = (run_dir / FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise CredentialError(f"{run_dir / FILE}: cannot read ({exc.strerror or exc})") from None
    try:
        return loads(text)
    except (ValueError, TypeError):
        raise CredentialError(f"{run_dir / FILE}: not a credentials file of this wizard") from None


def needed(creds: Iterable[Credential], action: Action) -> tuple[Credential, ...]:
    """The logins of the mirrors ``action``'s command names."""
    text = "\n".join(action.argv)
    out = []
    for c in creds:
        i = text.find(c.prefix)
        while i >= 0:
            end = i + len(c.prefix)
            if end == len(text) or text[end] in "/\"'\n ]":  # not a longer host or another port
                out.append(c)
                break
            i = text.find(c.prefix, end)
    return tuple(out)


def needed_by(plan: ResolvedPlan, creds: Sequence[Credential]) -> tuple[Credential, ...]:
    """The logins any action of ``plan`` (its done-checks and undos included) needs: what its run keeps."""
    argv = [w for s in plan.steps for a in (*s.actions, *((s.check,) if s.check else ()))
            for w in (*a.argv, *(a.check or ()), *(a.undo or ()))]
    probe = Action(tuple(argv))
    return needed(creds, probe)


def netrc_text(creds: Sequence[Credential]) -> str:
    return "".join(f"machine {c.host} login {c.login} password {c.password}\n" for c in creds)


def apt_text(creds: Sequence[Credential]) -> str:
    return "".join(f"machine {c.host}" + (f":{c.port}" if c.port else "") + f" login {c.login} password {c.password}\n"
                   for c in creds)


def wgetrc_text(cred: Credential) -> str:
    return f"user = {cred.login}\npassword = {cred.password}\n"


@record
class Handed:
    """Where an action's credentials files lie: ``directory`` as this process reaches it, ``machine`` as the
    action names it (a real root's path inside its root), and the uid that must own them."""

    directory: Path
    machine: str
    uid: int | None = None


@contextmanager
def handed(action: Action, creds: Sequence[Credential], place: Handed) -> Iterator[Action]:
    """``action`` with its credentials files written under ``place`` and named in its environment (the files
    are removed when the block ends). The action itself when it names no mirror with a login."""
    mine = needed(creds, action)
    if not mine:
        yield action
        return
    d = Path(tempfile.mkdtemp(prefix="rocm-wizard-login-", dir=place.directory))
    try:
        files = {ENV_NETRC: netrc_text(mine), ENV_WGETRC: wgetrc_text(mine[0]), ENV_APT: apt_text(mine)}
        env = []
        for name, text in files.items():
            p = d / name.lower()
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            if place.uid is not None and place.uid != os.geteuid():
                os.chown(p, place.uid, -1)
            env.append((name, f"{place.machine.rstrip('/')}/{d.name}/{p.name}"))
        if place.uid is not None and place.uid != os.geteuid():
            os.chown(d, place.uid, -1)
        yield replace(action, env=(*action.env, *env))
    finally:
        shutil.rmtree(d, ignore_errors=True)
