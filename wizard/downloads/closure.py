"""The whole closure of a pip step's requirements, resolved at plan time to exact, hash-pinned files.

``resolve_closure(index_url, ["torch[device-gfx1100]==2.9.1+rocm7.10.0", ...], "3.12")`` picks each
requirement's wheel from the index's listing (:func:`wizard.downloads.listing.pick`), reads its
``Requires-Dist`` (:func:`wizard.downloads.metadata.read`: PEP 658 metadata or a few range requests, never
the whole wheel), keeps the dependencies whose environment markers hold for the target (CPython ``python``
on Linux ``arch``, with the extras asked of that package, nested ones such as ``rocm[libraries]`` included),
and resolves those on the same index (PyTorch's and TheRock's indexes mirror their dependencies), level by
level: every specifier a level collects for a project is merged before its newest fitting version is picked.

It is a simple resolver: it never backtracks. A later specifier that excludes the version already picked
raises :class:`~wizard.downloads.listing.ListingError` naming both askers (the plan then pins only the
requirements themselves and says so). A package only served as a source distribution (TheRock's ``rocm``
selector), a file without a published sha256 or an unreadable wheel raise the same way.

``installed`` (normalised name: version, what the venv keeps through the step): a dependency, not one
of the requirements themselves, whose installed version satisfies every specifier collected for it is left
as it is (:attr:`Closure.kept`), and its own dependencies, installed with it, are not followed.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from wizard.downloads import metadata
from wizard.downloads.listing import Link, ListingError, RemoteFile, pick, project_links, python_full, \
    remote_file, supported_tags
from wizard.record import record

MAX_CANDIDATES = 20  # files of one project tried when their METADATA's Requires-Python excludes the target


@record
class Closure:
    files: tuple[RemoteFile, ...]  # the requirements' files first, then their dependencies, level by level
    kept: tuple[tuple[str, str], ...]  # (project, version): installed, satisfying, left as they are


def marker_env(python: str, arch: str = "x86_64") -> dict[str, str]:
    """PEP 508 marker values of CPython ``python`` on Linux ``arch`` (the micro version unknown: .0)."""
    full = str(python_full(python))
    return {"implementation_name": "cpython", "implementation_version": full, "os_name": "posix",
            "platform_machine": arch, "platform_python_implementation": "CPython", "platform_release": "",
            "platform_system": "Linux", "platform_version": "", "python_full_version": full,
            "python_version": full.rsplit(".", 1)[0], "sys_platform": "linux", "extra": ""}


class _Pick:
    """One project's choice: a wheel (link, metadata) or the installed version (link None)."""

    def __init__(self, version: Version, link: Link | None, meta: metadata.CoreMetadata | None) -> None:
        self.version, self.link, self.meta = version, link, meta
        self.followed: set[str] = set()  # "" (the base requirements) and the extras already followed


def _requirement(text: str, who: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise ListingError(f"{who}: {text!r} is not a requirement ({exc})") from exc


def _applies(req: Requirement, env: dict[str, str], extras: set[str]) -> bool:
    if req.marker is None:
        return "" in extras
    try:
        return any(req.marker.evaluate({**env, "extra": e}) for e in extras)
    except UndefinedEnvironmentName as exc:
        raise ListingError(f"{req}: its marker names an unknown variable ({exc})") from exc


class _Resolver:
    def __init__(self, index_url: str, python: str, arch: str, installed: Mapping[str, str]) -> None:
        self.index_url, self.python = index_url, python
        self.tags = supported_tags(python, arch)
        self.env = marker_env(python, arch)
        self.installed = installed
        self.specs: dict[str, SpecifierSet] = {}
        self.askers: dict[str, list[tuple[str, SpecifierSet]]] = {}  # "torch 2.5.1 needs sympy>=1.13", its specifier
        self.extras: dict[str, set[str]] = {}
        self.picks: dict[str, _Pick] = {}

    def run(self, requirements: Sequence[str]) -> Closure:
        level = [(r, "the plan") for r in (_requirement(t, "the plan") for t in requirements)
                 if _applies(r, self.env, {""})]
        top = {canonicalize_name(r.name) for r, _ in level}
        while level:
            for req, who in level:
                name = canonicalize_name(req.name)
                self.specs[name] = self.specs.get(name, SpecifierSet()) & req.specifier
                self.askers.setdefault(name, []).append((f"{who} needs {req}", req.specifier))
                self.extras.setdefault(name, {""}).update(canonicalize_name(e) for e in req.extras)
            nxt: list[tuple[Requirement, str]] = []
            for name in dict.fromkeys(canonicalize_name(r.name) for r, _ in level):
                p = self.picks.get(name) or self._choose(name, name in top)
                self.picks[name] = p
                if not self.specs[name].contains(p.version, prereleases=True):
                    against = next(a for a, spec in self.askers[name] if not spec.contains(p.version, prereleases=True))
                    raise ListingError(f"{name} {p.version} was picked ({self.askers[name][0][0]}), but {against}; "
                                       "settling that needs backtracking, which the plan-time resolver does not do")
                nxt += self._follow(name, p)
            level = nxt
        files = tuple(remote_file(p.link) for p in self.picks.values() if p.link is not None)
        kept = tuple((n, str(p.version)) for n, p in self.picks.items() if p.link is None)
        return Closure(files, kept)

    def _choose(self, name: str, top: bool) -> _Pick:
        have = self.installed.get(name)
        if have is not None and not top and self.extras[name] == {""}:
            try:
                version = Version(have)
            except InvalidVersion:
                version = None
            if version is not None and self.specs[name].contains(version, prereleases=True):
                kept = _Pick(version, None, None)
                kept.followed.add("")  # its own dependencies came with it
                return kept
        req = _requirement(f"{name}{self.specs[name]}", name)
        links = project_links(self.index_url, name)
        skip: list[str] = []
        for _ in range(MAX_CANDIDATES):
            try:
                link = pick(links, req, self.tags, self.python, skip)
            except ListingError as exc:
                asked = list(dict.fromkeys(a for a, _ in self.askers[name]))
                if len(asked) < 2:
                    raise
                raise ListingError(f"no file of {name} takes every specifier asked of it: {'; '.join(asked)} "
                                   f"({exc})") from exc
            meta = metadata.read(link, link.size)
            if meta.requires_python and not _takes(meta.requires_python, self.python):
                skip.append(link.filename)  # the listing did not say; its METADATA does
                continue
            return _Pick(meta.version, link, meta)
        raise ListingError(f"{req}: none of {MAX_CANDIDATES} newest files takes Python {self.python}")

    def _follow(self, name: str, p: _Pick) -> list[tuple[Requirement, str]]:
        """The dependencies of ``p`` for the extras asked of it that were not followed yet."""
        todo = self.extras[name] - p.followed
        if not todo:
            return []
        if p.meta is None:  # installed and kept
            raise ListingError(f"{name} {p.version} is installed and kept, but {self.askers[name][-1][0]} "
                               "(its extras' dependencies are not known here)")
        p.followed |= todo
        who = f"{name} {p.version}"
        reqs = [_requirement(text, who) for text in p.meta.requires_dist]
        return [(r, who) for r in reqs if _applies(r, self.env, todo)]


def _takes(requires_python: str, python: str) -> bool:
    try:
        return SpecifierSet(requires_python).contains(python_full(python), prereleases=True)
    except InvalidSpecifier:
        return True  # as pip: an unreadable Requires-Python excludes nothing


def resolve_closure(index_url: str, requirements: Sequence[str], python: str, arch: str = "x86_64",
                    installed: Mapping[str, str] | None = None) -> Closure:
    """Every file the requirements need on ``index_url`` for CPython ``python`` on Linux ``arch``."""
    return _Resolver(index_url, python, arch, dict(installed or {})).run(requirements)
