"""Mirror configuration: which origin (AMD's repositories, the wheel indexes, a Docker registry) is served
from which site mirror, and which signing key a mirror may use.

Given on the command line as ``--mirror ORIGIN=URL`` (repeatable) and ``--mirror-key ORIGIN=FINGERPRINT``,
and in ``mirrors.toml`` files: ``/etc/rocm-wizard/mirrors.toml`` (system) and
``$XDG_CONFIG_HOME/rocm-wizard/mirrors.toml`` (user; ``~/.config`` when unset). A later source replaces an
earlier one origin by origin: system, then user, then the command line::

    [mirrors."repo.radeon.com"]
    url = "https://artifactory.example.com/radeon"
    key_fingerprint = "0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567"   # optional
    key_url = "https://artifactory.example.com/radeon/site.gpg"              # optional

    [mirrors."docker.io"]
    url = "registry.example.com:5000"          # a registry: host[:port][/path], no scheme

An origin is a host, optionally with a path (``download.pytorch.org/whl``); the longest origin that
matches a URL wins and the rest of the path is kept, so a mirror that copies the origin's paths maps
1:1. A mirror's own signing key is trusted only when its full fingerprint is given; without one, the
origin's own key (AMD's, pinned by the steps) must verify what the mirror serves. Every malformed
entry is a :class:`MirrorConfigError` with a one-line message naming where it came from.
Pure: nothing here reads the network or changes the machine; files are read only by :func:`load_config`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from wizard import lazy_re
from wizard.record import record, replace

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Mapping, Sequence

    from wizard.mirror.credentials import Credential


SYSTEM_CONFIG = Path("/etc/rocm-wizard/mirrors.toml")
CONFIG_NAME = "mirrors.toml"
# Hosts the wizard's URLs reach (knowledge base: rocm_releases.json, torch_wheels.json, docker_images.json).
KNOWN_ORIGINS = (
    "repo.radeon.com",  # amdgpu-install packages, the legacy apt/yum repositories
    "repo.amd.com",  # TheRock multi-arch wheel index, Core SDK packages
    "stable.repo.amd.com",  # ROCm 10 wheel index (whl-next)
    "rocm.nightlies.amd.com",  # TheRock nightly indexes
    "download.pytorch.org",  # upstream ROCm wheels
    "pypi.org",  # the index a rollback reinstalls unsuffixed wheels from
    "docker.io",  # rocm/pytorch images
)
REGISTRY_ORIGINS = frozenset({"docker.io"})
URL_SCHEMES = ("http", "https", "file")
_HOST = lazy_re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$")
_REGISTRY = lazy_re.compile(r"^[A-Za-z0-9.-]+(:\d{1,5})?(/[A-Za-z0-9._/-]+)?$")
_URL_IN_TEXT = lazy_re.compile(r"\b(?:https?|file)://[^\s\"'<>\]]+")
_FILE_KEYS = frozenset({"url", "key_fingerprint", "key_url", "insecure"})
# Origins root installs packages from (the amdgpu-install package, AMD's apt/yum repositories, the Core SDK's): a
# mirror of one must be https://, or pin its signing key, or say insecure = true (shown wherever mirrors are)
ROOT_SOURCES = ("repo.radeon.com", "repo.amd.com")


class MirrorConfigError(ValueError):
    """A malformed mirror entry. The message is one line and names its source."""


@record
class Mirror:
    origin: str  # "repo.radeon.com" or "download.pytorch.org/whl"
    url: str  # "https://mirror.example/radeon" (no trailing slash); a registry: "host:5000/path"
    source: str  # where it was given: "--mirror", "/etc/rocm-wizard/mirrors.toml"
    key_fingerprint: str | None = None  # 40 or 64 upper-case hex digits, no spaces
    key_url: str | None = None
    insecure: bool = False  # mirrors.toml's insecure = true: a plain http:// or file:// root source, knowingly

    @property
    def host(self) -> str:
        return self.origin.split("/", 1)[0]

    @property
    def path(self) -> str:
        """The origin's path prefix: "" or "/whl"."""
        rest = self.origin.partition("/")[2]
        return f"/{rest}" if rest else ""

    @property
    def is_registry(self) -> bool:
        return self.host in REGISTRY_ORIGINS


@record
class MirrorConfig:
    mirrors: tuple[Mirror, ...] = ()

    def origins_in_force(self) -> tuple[Mirror, ...]:
        """Every mirror in force, by origin name (what ``detect`` reports)."""
        return tuple(sorted(self.mirrors, key=lambda m: m.origin))

    def mirror_for(self, url: str) -> Mirror | None:
        """The mirror serving ``url`` (the longest matching origin), or None."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return None
        host = (parts.hostname or "").lower()
        best: Mirror | None = None
        for m in self.mirrors:
            if m.is_registry or m.host != host:
                continue
            if m.path and parts.path != m.path and not parts.path.startswith(m.path + "/"):
                continue
            if best is None or len(m.path) > len(best.path):
                best = m
        return best

    def rewrite(self, url: str) -> str:
        """``url`` as the mirror serves it; unchanged when no mirror covers its origin."""
        m = self.mirror_for(url)
        if m is None:
            return url
        from wizard.mirror.credentials import public_url

        parts = urlsplit(url)
        out = public_url(m.url) + parts.path[len(m.path):]
        if parts.query:
            out += "?" + parts.query
        if parts.fragment:
            out += "#" + parts.fragment
        return out

    def credentials(self) -> tuple[Credential, ...]:
        """The logins the mirrors' URLs carry (kept out of every plan and command line: wizard.mirror.credentials)."""
        from wizard.mirror.credentials import from_url

        found = (from_url(m.url, m.source) for m in self.mirrors if not m.is_registry)
        return tuple(c for c in found if c is not None)

    def rewrite_text(self, text: str) -> str:
        """Every http(s)/file URL in ``text`` rewritten (apt source lines, repo files, scripts)."""
        return _URL_IN_TEXT.sub(lambda mo: self.rewrite(mo.group(0)), text)

    def rewrite_image(self, image: str) -> str:
        """A Docker image name through the registry mirror: "rocm/pytorch:tag" -> "reg:5000/rocm/pytorch:tag"."""
        first, sep, rest = image.partition("/")
        explicit = bool(sep) and ("." in first or ":" in first or first == "localhost")
        registry = first if explicit else "docker.io"
        name = rest if explicit else image
        if registry in ("index.docker.io", "registry-1.docker.io"):
            registry = "docker.io"
        m = next((m for m in self.mirrors if m.is_registry and m.host == registry), None)
        if m is None:
            return image
        if registry == "docker.io" and "/" not in name:
            name = f"library/{name}"
        return f"{m.url}/{name}"

    def merged(self, later: Sequence[Mirror]) -> MirrorConfig:
        """This config with ``later`` entries replacing same-origin ones (later sources win)."""
        by_origin = {m.origin: m for m in self.mirrors}
        for m in later:
            prior = by_origin.get(m.origin)
            if not m.url:  # a key-only entry (--mirror-key) completes a mirror given before it
                if prior is None:
                    raise MirrorConfigError(f"{m.source}: no mirror is given for {m.origin} "
                                            f"(add --mirror {m.origin}=URL)")
                m = replace(prior, key_fingerprint=m.key_fingerprint, key_url=m.key_url or prior.key_url,
                            source=f"{prior.source}, {m.source}")
            by_origin[m.origin] = m
        return MirrorConfig(tuple(by_origin.values()))


def normalise_origin(text: str, source: str, known: Sequence[str] = KNOWN_ORIGINS) -> str:
    origin = text.strip().lower().rstrip("/")
    if "://" in origin:
        raise MirrorConfigError(f"{source}: origin {text.strip()!r} is a host name, not a URL "
                                f"(e.g. repo.radeon.com)")
    host, _, path = origin.partition("/")
    if not _HOST.match(host):
        raise MirrorConfigError(f"{source}: origin {text.strip()!r} is not a host name")
    if host not in known:
        raise MirrorConfigError(f"{source}: unknown origin {host!r} (known: {', '.join(known)})")
    if path and (not re.fullmatch(r"[a-z0-9._~-]+(/[a-z0-9._~-]+)*", path) or host in REGISTRY_ORIGINS):
        raise MirrorConfigError(f"{source}: origin {text.strip()!r}: a path must be plain segments "
                                f"(and a registry takes none)")
    return origin


def normalise_url(text: str, origin: str, source: str) -> str:
    url = text.strip()
    if not url:
        raise MirrorConfigError(f"{source}: mirror for {origin} has an empty URL")
    if any(c.isspace() for c in url):
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} contains white space")
    if origin.split("/", 1)[0] in REGISTRY_ORIGINS:
        if "://" in url or not _REGISTRY.match(url):
            raise MirrorConfigError(f"{source}: registry mirror {url!r} for {origin} must be host[:port][/path] "
                                    "without a scheme")
        return url.rstrip("/")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} is not a URL") from None
    if parts.scheme not in URL_SCHEMES:
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} must start with "
                                f"{', '.join(s + '://' for s in URL_SCHEMES)}")
    if parts.scheme != "file" and not parts.hostname:
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} has no host")
    if parts.scheme == "file" and (parts.netloc not in ("", "localhost") or not parts.path.startswith("/")):
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} must be an absolute file:// path "
                                "(file:///srv/mirror)")
    if parts.password is not None:
        from wizard.mirror.credentials import CredentialError, from_url

        try:
            from_url(url, source)
        except CredentialError as exc:
            raise MirrorConfigError(str(exc)) from None
    if parts.query or parts.fragment:
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} must not have a query or fragment")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise MirrorConfigError(f"{source}: mirror URL {url!r} for {origin} has a bad port") from None
    return url.rstrip("/")


def normalise_fingerprint(text: str, origin: str, source: str) -> str:
    fpr = re.sub(r"\s+", "", text).upper()
    if fpr.startswith("0X"):
        fpr = fpr[2:]
    if not re.fullmatch(r"[0-9A-F]{40}|[0-9A-F]{64}", fpr):
        raise MirrorConfigError(f"{source}: key fingerprint for {origin} must be the full 40 (or 64) hex digits "
                                f"of the key, not {text.strip()!r}")
    return fpr


def _split_pair(text: str, flag: str, what: str) -> tuple[str, str]:
    if "=" not in text:
        raise MirrorConfigError(f"{flag} {text!r}: expected ORIGIN={what}")
    origin, _, value = text.partition("=")
    return origin, value


def parse_mirror_arg(text: str) -> Mirror:
    """``--mirror ORIGIN=URL``."""
    origin, url = _split_pair(text, "--mirror", "URL")
    o = normalise_origin(origin, "--mirror")
    return Mirror(origin=o, url=normalise_url(url, o, "--mirror"), source="--mirror")


def parse_mirror_key_arg(text: str) -> Mirror:
    """``--mirror-key ORIGIN=FINGERPRINT``: a key-only entry; its origin must have a mirror URL somewhere."""
    origin, fpr = _split_pair(text, "--mirror-key", "FINGERPRINT")
    o = normalise_origin(origin, "--mirror-key")
    return Mirror(origin=o, url="", source="--mirror-key",
                  key_fingerprint=normalise_fingerprint(fpr, o, "--mirror-key"))


def parse_mirrors_toml(text: str, source: str) -> tuple[Mirror, ...]:
    """The ``[mirrors."ORIGIN"]`` tables of one mirrors.toml."""
    import tomllib  # here, not at the top: most machines have no mirrors.toml, and detect starts faster

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MirrorConfigError(f"{source}: invalid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise MirrorConfigError(f"{source}: invalid TOML: nested too deeply") from None
    unknown = sorted(set(data) - {"mirrors"})
    if unknown:
        raise MirrorConfigError(f"{source}: unknown key {unknown[0]!r} (a mirrors.toml has only [mirrors.\"ORIGIN\"] "
                                "tables)")
    table = data.get("mirrors", {})
    if not isinstance(table, dict):
        raise MirrorConfigError(f"{source}: 'mirrors' must be a table of [mirrors.\"ORIGIN\"] tables")
    out: list[Mirror] = []
    seen: set[str] = set()
    for raw_origin, entry in table.items():
        where = f"{source}: mirrors.{raw_origin!r}"
        origin = normalise_origin(raw_origin, where)
        if origin in seen:
            raise MirrorConfigError(f"{where}: origin given twice")
        seen.add(origin)
        if not isinstance(entry, dict):
            raise MirrorConfigError(f"{where}: must be a table with url = \"...\"")
        bad = sorted(set(entry) - _FILE_KEYS)
        if bad:
            raise MirrorConfigError(f"{where}: unknown key {bad[0]!r} (keys: {', '.join(sorted(_FILE_KEYS))})")
        for key, value in entry.items():
            if key == "insecure":
                if not isinstance(value, bool):
                    raise MirrorConfigError(f"{where}: insecure must be true or false")
            elif not isinstance(value, str):
                raise MirrorConfigError(f"{where}: {key} must be a string")
        if "url" not in entry:
            raise MirrorConfigError(f"{where}: url is missing")
        url = normalise_url(entry["url"], origin, where)
        fpr = entry.get("key_fingerprint")
        key_url = entry.get("key_url")
        if key_url is not None and fpr is None:
            raise MirrorConfigError(f"{where}: key_url given without key_fingerprint (a key is trusted only by "
                                    "its fingerprint)")
        out.append(Mirror(origin=origin, url=url, source=source,
                          key_fingerprint=normalise_fingerprint(fpr, origin, where) if fpr is not None else None,
                          key_url=normalise_url(key_url, origin, where + " key_url") if key_url else None,
                          insecure=entry.get("insecure") is True))
    return tuple(out)


def unsafe_root_source(m: Mirror) -> str | None:
    """Why root must not install packages from ``m`` (a plain http:// or file:// mirror of a root source with no
    key pinned and no ``insecure = true``), as one line; None when it may."""
    if m.host not in ROOT_SOURCES or m.is_registry or m.key_fingerprint or m.insecure:
        return None
    scheme = m.url.partition("://")[0].lower()
    if scheme == "https":
        return None
    from wizard.mirror.credentials import public_url

    return (f"{m.source}: mirror {public_url(m.url)} for {m.origin} is {scheme}://: root installs packages from it, "
            "and anyone on the way (or who can write the directory) could change them; use https://, pin its key "
            f"(key_fingerprint, --mirror-key {m.origin}=FPR) or set insecure = true in mirrors.toml")


def check_root_sources(config: MirrorConfig) -> MirrorConfig:
    """``config``, or MirrorConfigError naming the first mirror root must not install packages from."""
    for m in config.mirrors:
        why = unsafe_root_source(m)
        if why:
            raise MirrorConfigError(why)
    return config


def config_paths(environ: Mapping[str, str]) -> tuple[Path, Path | None]:
    """(system file, user file): the user's under $XDG_CONFIG_HOME (else ~/.config; None without a home)."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return SYSTEM_CONFIG, Path(xdg) / "rocm-wizard" / CONFIG_NAME
    home = environ.get("HOME", "").strip()
    user = Path(home) / ".config" / "rocm-wizard" / CONFIG_NAME if home and os.path.isabs(home) else None
    return SYSTEM_CONFIG, user


MAX_BYTES = 1 << 20  # a mirrors.toml is a few tables


def _foreign(st: os.stat_result) -> bool:
    """Root must not read a file someone else can change: owned by another user, or writable by group or others."""
    return st.st_uid != 0 or bool(st.st_mode & 0o022)


def _read(path: Path, *, system: bool = False) -> str | None:
    """The file's text; None when absent. Run as root, a user's file that is not root's alone is ignored (``sudo
    -E`` and ``su`` keep HOME / XDG_CONFIG_HOME: its mirrors and key pins would choose what root installs), and a
    system file that is not root's alone is refused."""
    try:
        with open(path, "rb") as fh:
            if os.geteuid() == 0 and _foreign(os.fstat(fh.fileno())):
                if not system:
                    return None
                raise MirrorConfigError(f"{path}: not root's alone (owned by another user, or writable by group or "
                                        "others): root does not read it")
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MirrorConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise MirrorConfigError(f"{path}: larger than {MAX_BYTES >> 20} MiB; not a mirrors.toml")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MirrorConfigError(f"{path}: not UTF-8 text") from None


def load_config(mirror_args: Sequence[str] = (), key_args: Sequence[str] = (), *,
                environ: Mapping[str, str] | None = None,
                paths: Sequence[Path | None] | None = None) -> MirrorConfig:
    """System file, then user file, then ``--mirror`` / ``--mirror-key`` arguments (later wins per origin)."""
    env = os.environ if environ is None else environ
    files = config_paths(env) if paths is None else tuple(paths)
    config = MirrorConfig()
    for path in files:
        if path is None:
            continue
        text = _read(path, system=path == SYSTEM_CONFIG)
        if text is not None:
            config = config.merged(parse_mirrors_toml(text, str(path)))
    cli = [parse_mirror_arg(a) for a in mirror_args]
    seen: dict[str, str] = {}
    for m in cli:
        if m.origin in seen and seen[m.origin] != m.url:
            raise MirrorConfigError(f"--mirror: origin {m.origin} given twice with different URLs")
        seen[m.origin] = m.url
    config = config.merged(cli)
    return config.merged([parse_mirror_key_arg(a) for a in key_args])
