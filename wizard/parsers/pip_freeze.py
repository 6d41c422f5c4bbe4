"""``pip freeze`` and ``pip list`` output: packages, direct URLs, editables and index options.

Names are normalised per PEP 503 (as ``packaging.utils.canonicalize_name`` does). For
``name @ URL`` lines pointing at a wheel, the version is read from the wheel's file name.
"""

from __future__ import annotations

from urllib.parse import unquote

from wizard import lazy_re
from wizard.parsers._text import canonical_name, lines, never_raises, prompt_command
from wizard.record import record

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_PIN_RE = lazy_re.compile(rf"^({_NAME})\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;#]+)")
_URL_RE = lazy_re.compile(rf"^({_NAME})\s*(?:\[[^\]]*\])?\s*@\s*(\S+)")
_LIST_RE = lazy_re.compile(rf"^({_NAME})\s+(\d[0-9A-Za-z.+!_-]*)(?:\s+(\S.*))?$")
_OPTION_RE = lazy_re.compile(r"^(--index-url|-i|--extra-index-url|--find-links|-f|--trusted-host)(?:\s+|=)(\S+)")
_EDITABLE_RE = lazy_re.compile(r"^(?:-e|--editable)(?:\s+|=)(\S+)")
_EGG_RE = lazy_re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_HEADER_RE = lazy_re.compile(r"^Package\s+Version\b")
_DASHES_RE = lazy_re.compile(r"^-{3,}(?:\s+-{3,})+\s*$")


@record
class PipPackage:
    name: str  # normalised: "pytorch-triton-rocm"
    raw_name: str
    version: str | None  # "2.5.1+rocm6.2"
    url: str | None = None  # for "name @ url" and editable VCS/paths
    editable: bool = False
    line: int = 0


@record
class PipFreeze:
    packages: tuple[PipPackage, ...] = ()
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()

    def get(self, name: str) -> PipPackage | None:
        key = canonical_name(name)
        for p in self.packages:
            if p.name == key:
                return p
        return None

    def version(self, name: str) -> str | None:
        p = self.get(name)
        return p.version if p else None


def wheel_version(url: str) -> str | None:
    """Version from a wheel URL's file name: ``torch-2.5.1%2Brocm6.2-cp310-...whl`` -> 2.5.1+rocm6.2."""
    path = unquote(url.split("?", 1)[0].split("#", 1)[0])
    filename = path.rstrip("/").rsplit("/", 1)[-1]
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    return parts[1] if len(parts) >= 5 and parts[1][:1].isdigit() else None


@never_raises(PipFreeze)
def parse_pip_freeze(text: object) -> PipFreeze:
    packages: dict[str, PipPackage] = {}
    index_url: str | None = None
    extra: list[str] = []
    links: list[str] = []
    for no, line in lines(text):
        s = line.strip()
        if not s or s.startswith("#") or _HEADER_RE.match(s) or _DASHES_RE.match(s):
            continue
        if prompt_command(s) is not None and not s.startswith("-"):
            continue
        om = _OPTION_RE.match(s)
        if om:
            opt, value = om.group(1), om.group(2)
            if opt in ("--index-url", "-i"):
                index_url = value
            elif opt == "--extra-index-url":
                extra.append(value)
            elif opt in ("--find-links", "-f"):
                links.append(value)
            continue
        em = _EDITABLE_RE.match(s)
        if em:
            target = em.group(1)
            egg = _EGG_RE.search(target)
            if egg:
                pkg = PipPackage(canonical_name(egg.group(1)), egg.group(1), None, target, True, no)
                packages.setdefault(pkg.name, pkg)
            continue
        pm = _PIN_RE.match(s)
        um = None if pm else _URL_RE.match(s)
        lm = None if pm or um else _LIST_RE.match(s)
        if pm:
            pkg = PipPackage(canonical_name(pm.group(1)), pm.group(1), pm.group(2), None, False, no)
        elif um:
            url = um.group(2)
            pkg = PipPackage(canonical_name(um.group(1)), um.group(1), wheel_version(url), url, False, no)
        elif lm:
            extra_col = (lm.group(3) or "").strip()
            editable = bool(extra_col) and extra_col.startswith("/")
            pkg = PipPackage(
                canonical_name(lm.group(1)), lm.group(1), lm.group(2), extra_col if editable else None, editable, no
            )
        else:
            continue
        packages.setdefault(pkg.name, pkg)
    return PipFreeze(tuple(packages.values()), index_url, tuple(extra), tuple(links))
