"""GPU names and codenames as people and tools write them -> knowledge-base GPU rows.

``Radeon RX 7900 XTX``, ``RX7900XTX``, ``7900 XTX``, ``AMD Radeon(TM) RX 7900 XTX`` are one key
(``7900xtx``); ``Navi 31``, ``navi31`` and lspci's ``Navi 31 XTX`` are one codename key (``navi31``).
A key that names rows of different gfx targets resolves to all of them; the caller decides (it
keeps only unambiguous answers). Nothing here guesses: an unknown name resolves to nothing.
"""

from __future__ import annotations

import re
from typing import Iterable

from wizard import lazy_re

_NOISE = lazy_re.compile(r"\(tm\)|™|®|\(r\)|\bamd\b|\bati\b|\bradeon\b|\bgraphics\b|\bseries\b|\bgpu\b|\bcard\b"
                    r"|\bedition\b|\bwith\b|\baccelerator\b", re.IGNORECASE)
_PREFIXES = ("rx", "pro", "instinct", "firepro", "ai pro", "aipro")
# a Radeon R5/R7/R9 series word written apart from a three-digit model number ("R9 390X"), not "R9700"
_R_SERIES = lazy_re.compile(r"^r[579] (\d{3}x?)$")
# NVIDIA has no three-digit RTX card: "RTX 480" is a slip for AMD's Polaris RX 480 (RX 460-590)
_RTX_SLIP = lazy_re.compile(r"^rtx\s?(?=[45]\d0$)")
_VARIANT = lazy_re.compile(r"(?:\s+|-)(?:xtx|xt|xl|xle|pro|gl|le|gl-xl|xt[a-z]?|xl[a-z]?|lite|[A-Z]{1,2}-[A-Z]{1,3})$", re.I)


def name_keys(name: str) -> list[str]:
    """Lookup keys of one marketing name: "AMD Radeon RX 7900 XTX" -> ["rx7900xtx", "7900xtx"]."""
    s = _NOISE.sub(" ", name.lower())
    s = re.sub(r"\s+", " ", s).strip()
    if not s:
        return []
    s = _RTX_SLIP.sub("rx ", s)
    key = re.sub(r"[^a-z0-9+]", "", s)
    if key in ("vii", "viii") and re.search(r"radeon", name, re.I):
        key = "radeon" + key  # "Radeon VII": the brand is the name
    if not key or key.isalpha() and len(key) < 4:
        return []
    keys = [key]
    for p in _PREFIXES:
        p2 = p.replace(" ", "")
        if key.startswith(p2) and len(key) > len(p2) + 2:
            keys.append(key[len(p2):])
    series = _R_SERIES.match(s)
    if series:  # "R9 390": the 300 series dropped the R9 from some names ("AMD Radeon 390"), people keep it
        keys.append(series.group(1))
    return list(dict.fromkeys(keys))


def split_alternatives(names: str) -> list[str]:
    """"Radeon RX 7900 XT/7900 XTX/7900M" -> ["Radeon RX 7900 XT", "Radeon RX 7900 XTX", "Radeon RX 7900M"]."""
    parts = [p.strip() for p in re.split(r"\s*/\s*", names) if p.strip()]
    if not parts:
        return []
    out = [parts[0]]
    for p in parts[1:]:
        m = re.match(r"^(.*?)(?=\b[A-Z]{0,2}\d)", out[-1])
        prefix = m.group(1) if m else ""
        if prefix and re.match(r"^\d", p):
            out.append(prefix + p)
        else:
            out.append(p)
    return out


def codename_keys(codename: str) -> list[str]:
    """"Navi 31 XTX" -> ["navi31"]; "Picasso/Raven 2" -> ["picasso", "raven2"]; "Phoenix1" -> ["phoenix1", "phoenix"]."""
    out: list[str] = []
    for part in re.split(r"\s*/\s*", codename):
        p = part.strip()
        m = re.match(r"^(.*?)\s*\(([^)]*)\)\s*$", p)
        if m:
            inner = m.group(2)
            if re.search(r"series|MI\d", inner, re.I):
                p = f"{m.group(1)} {inner}"  # a qualifier: "Aqua Vanjaram (MI350 series)" is its own key
            else:
                out.extend(codename_keys(inner))
                p = m.group(1)
        prev = None
        while prev != p:
            prev, p = p, _VARIANT.sub("", p).strip()
        key = re.sub(r"[^a-z0-9]", "", _NOISE.sub(" ", p.lower()))
        if len(key) >= 4:
            out.append(key)
            if re.fullmatch(r"[a-z]+1", key):
                out.append(key[:-1])
    return list(dict.fromkeys(out))


def cpu_key(name: str) -> str:
    """"AMD Ryzen™ 7 PRO 7840U w/ Radeon 780M Graphics" -> "ryzen7pro7840u"; "Ryzen AI Max+ 395" -> "ryzenaimax+395"."""
    s = re.sub(r"[™®]|\(tm\)|\(r\)", "", name, flags=re.I)
    s = re.sub(r"\s+(?:w/|with)\s.*$|\s+\d+-Core.*$|\s+Processor.*$|\s*\(OEM Only\)", "", s, flags=re.I)
    s = re.sub(r"^\s*AMD\s+", "", s, flags=re.I)
    return re.sub(r"[^a-z0-9+]", "", s.lower())


def cpu_key_without_tier(key: str) -> str:
    """"ryzen97900" -> "ryzen7900", "ryzen5pro7640u" -> "ryzenpro7640u": the key people write without the tier."""
    return re.sub(r"^ryzen[3579](?=(?:pro)?\d{4})", "ryzen", key)


def cpu_keys_as_written(key: str) -> tuple[str, ...]:
    """The shorter keys people write for a processor: without the tier ("ryzenpro5650u"), and without the tier and
    PRO ("ryzen5650u" for "Ryzen 5 PRO 5650U")."""
    bare = cpu_key_without_tier(key)
    return tuple(dict.fromkeys(k for k in (bare, re.sub(r"^ryzenpro(?=\d{4})", "ryzen", bare)) if k != key))


def index_names(rows: Iterable[tuple[int, str]]) -> dict[str, set[int]]:
    """key -> row numbers, from (row, "name / name / ...") pairs."""
    idx: dict[str, set[int]] = {}
    for row, names in rows:
        for alt in split_alternatives(names):
            if "no marketing name" in alt.lower():
                continue
            for k in name_keys(alt):
                idx.setdefault(k, set()).add(row)
    return idx


def index_codenames(rows: Iterable[tuple[int, str]]) -> dict[str, set[int]]:
    idx: dict[str, set[int]] = {}
    for row, codename in rows:
        for k in codename_keys(codename):
            idx.setdefault(k, set()).add(row)
    return idx


__all__ = ["codename_keys", "cpu_key", "index_codenames", "index_names", "name_keys", "split_alternatives"]
