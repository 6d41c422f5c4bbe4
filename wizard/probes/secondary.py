"""Facts from secondary evidence: what logs, errors, paths and banners state beside the tool outputs.

The structured probes run first. This pass reads every text the machine came with
(:func:`wizard.parsers.mentions.read_mentions`) and fills only what is still unknown, each value
with the line that said it; where the texts disagree with each other or with a probe, it records a
Conflict instead of choosing silently. Texts of other people's posts in a pasted thread are never
read for facts (they describe other machines).
"""

from __future__ import annotations

import re
from typing import Any

from wizard import lazy_re
from wizard.model import Conflict, Driver, EnvSetting, Evidence, EvidenceText, Facts, Gpu, OsInfo, PythonEnv, Rocm
from wizard.parsers.mentions import Mention, read_mentions
from wizard.record import field, record, replace

# How a ROCm version was stated, most direct first.
_ROCM_RANK = {"version-file": 0, "path": 1, "package": 2, "distro-package": 2, "tool": 3, "compiler": 4, "build-path": 5,
              "stated": 6, "installer": 7, None: 3}


@record
class Said:
    """One mention, placed in the file it came from."""

    m: Mention
    ev: Evidence
    first_post: bool = True  # said in the first own post of a pasted thread (the machine as reported)
    prose: bool = False  # said in a person's text (prose, a log), not in a tool's output the paste holds


def _evidence(t: EvidenceText, m: Mention) -> Evidence:
    return Evidence(t.source, t.first_line + m.line - 1, m.text)


def collect(texts: tuple[EvidenceText, ...] | list[EvidenceText]) -> list[Said]:
    """Mentions of every own text, in reading order."""
    out: list[Said] = []
    first = min((t.post for t in texts if t.own), default=0)
    for t in texts:
        if not t.own:
            continue
        mentions: tuple[Mention, ...] = read_mentions(t.text, t.command)
        for m in mentions:
            out.append(Said(m, _evidence(t, m), t.post == first, t.kind == "text"))
    return out


# --------------------------------------------------------------------------- GPUs


@record(frozen=False)
class _Device:
    gfx: set[str] = field(default_factory=set)  # hardware gfx claims
    reported: set[str] = field(default_factory=set)  # runtime gfx claims
    pci: set[str] = field(default_factory=set)
    names: list[str] = field(default_factory=list)
    bdf: str | None = None
    index: str | None = None
    integrated: set[bool] = field(default_factory=set)
    codenames: set[str] = field(default_factory=set)
    evidence: list[Evidence] = field(default_factory=list)

    def identity(self) -> set[str]:
        return self.gfx | self.reported

    def absorb(self, other: _Device) -> None:
        self.gfx |= other.gfx
        self.reported |= other.reported
        self.pci |= other.pci
        self.names += [n for n in other.names if n not in self.names]
        self.bdf = self.bdf or other.bdf
        self.index = self.index if self.index is not None else other.index
        self.integrated |= other.integrated
        self.codenames |= other.codenames
        self.evidence += other.evidence


def _resolve_name(kb: object, name: str, detail: str | None) -> list[object]:
    from wizard.kb import KnowledgeBase

    assert isinstance(kb, KnowledgeBase)
    if detail == "cpu":  # a processor named where the GPU is asked: its integrated GPU (apus.json)
        row = kb.gpu_for_cpu(name)
        return [row] if row is not None else []
    if detail == "codename":
        hits: list[object] = list(kb.gpus_by_codename(name))
        if hits:
            return hits
    if detail == "lspci":
        from wizard.kb.names import split_alternatives

        found: list[object] = []
        for alt in split_alternatives(name):
            found.extend(kb.gpus_by_name(alt))
        return found
    return list(kb.gpus_by_name(name)) or (list(kb.gpus_by_codename(name)) if detail in (None, "label") else [])


def _card_over_written_target(said: list[Said], kb: object, override_gfx: str | None = None) -> list[Said]:
    """A target a person writes beside a card ("RX 9070 XT (gfx1200)") that the PCI-id table gives another target is
    the person's slip: the line claims the card's own target. Only where the line names one card, its name stands for
    one target, and the line writes one other target; a tool's output is read as it is. Where the written target is
    the one the HSA_OVERRIDE_GFX_VERSION in force gives, it is what the runtime reports for that card: the line claims
    both."""
    lines: dict[tuple[str, int | None], list[Said]] = {}
    for s in said:
        if s.prose:
            lines.setdefault((s.ev.source, s.ev.line), []).append(s)
    swap: dict[int, str] = {}
    for on_line in lines.values():
        names = {s.m.value for s in on_line if s.m.kind == "gpu_prose"
                 or (s.m.kind == "gpu_name" and s.m.detail in (None, "label"))}
        written = [s for s in on_line if s.m.kind in ("gfx_hw", "gfx_rt") and s.m.detail not in ("prose", "support")]
        if len(names) != 1 or not written or len({s.m.value for s in written}) != 1:
            continue
        if any(s.m.kind in ("pci_id", "kfd_added", "env") for s in on_line):
            continue  # an id or an override on the line: the written target may be what the runtime was told
        hits = _resolve_name(kb, next(iter(names)), None)
        card = {h.gfx for h in hits if h.gfx}  # type: ignore[attr-defined]
        if len(card) == 1 and written[0].m.value not in card:
            swap.update((id(s), next(iter(card))) for s in written)
    if not swap:
        return said
    out: list[Said] = []
    for s in said:
        if id(s) not in swap:
            out.append(s)
            continue
        card_claim = replace(s, m=replace(s.m, kind="gfx_hw", value=swap[id(s)], detail="card"))
        out.extend((s, card_claim) if s.m.value == override_gfx else (card_claim,))
    return out


def _line_devices(said: list[Said], kb: object) -> list[_Device]:
    """One device claim per line that names a GPU (its gfx, id, name, place or index)."""
    by_line: dict[tuple[object, ...], _Device] = {}
    order: list[tuple[object, ...]] = []
    for s in said:
        m = s.m
        if m.kind not in ("gfx_hw", "gfx_rt", "pci_id", "gpu_name", "bdf", "gpu_index", "kfd_added"):
            continue
        if m.kind == "gfx_rt" and m.detail in ("prose", "support"):
            continue
        # several products on one labelled line ("GPU: MI210 + W6800") are several devices
        key: tuple[str, int | None] | tuple[str, int | None, str] = (s.ev.source, s.ev.line)
        if m.kind == "gpu_name" and (m.detail == "label" or _stated_index(m) is not None):
            key = (s.ev.source, s.ev.line, m.value)
        d = by_line.get(key)
        if d is None:
            d = by_line[key] = _Device()
            order.append(key)
        if m.kind == "gfx_hw":
            d.gfx.add(m.value)
        elif m.kind == "gfx_rt":
            d.reported.add(m.value)
        elif m.kind in ("pci_id", "kfd_added"):
            info = kb.gpu_by_pci(m.value)  # type: ignore[attr-defined]
            if info is not None:
                d.pci.add(m.value)
                if info.codename:
                    d.codenames.add(info.codename)
                if info.gfx:
                    d.gfx.add(info.gfx)
                if info.integrated is not None:
                    d.integrated.add(info.integrated)
                d.names.append(info.name)
        elif m.kind == "gpu_name":
            hits = _resolve_name(kb, m.value, m.detail)
            gfxs = {h.gfx for h in hits if h.gfx}  # type: ignore[attr-defined]
            if len(gfxs) == 1:
                d.gfx |= gfxs
                kinds = {h.integrated for h in hits if h.integrated is not None}  # type: ignore[attr-defined]
                if len(kinds) == 1:
                    d.integrated |= kinds
                codes = {h.codename for h in hits if h.codename}  # type: ignore[attr-defined]
                if len(codes) == 1:
                    d.codenames |= codes
                if m.detail == "cpu":
                    apu = kb.apu_for_cpu(m.value)  # type: ignore[attr-defined]
                    d.names.append(apu.graphics if apu is not None else m.value)
                elif m.detail != "codename":
                    d.names.append(m.value)
        elif m.kind == "bdf":
            d.bdf = m.value
        elif m.kind == "gpu_index":
            d.index = m.value
        if m.kind == "gpu_name" and _stated_index(m) is not None:
            d.index = _stated_index(m)
        if s.ev not in d.evidence:
            d.evidence.append(s.ev)
    # a line with only a place or an index names no GPU by itself; keep it only as a place
    return [by_line[k] for k in order]


def _stated_index(m: Mention) -> str | None:
    """The device index a comment gives a named GPU ("HIP_VISIBLE_DEVICES=0  # or 1 for 680M": detail "index 1")."""
    return m.detail[6:] if m.detail and m.detail.startswith("index ") else None


def _in_stated_order(devices: list[_Device]) -> list[_Device]:
    """GPUs only the texts show, at the device indexes the texts give them; the others fill the free places in the
    order they were named. Unchanged where the indexes do not fit (repeated, or beyond the GPUs named)."""
    indexed = {int(d.index): d for d in devices if d.index is not None and d.index.isdigit()}
    if not indexed or len(indexed) != sum(d.index is not None for d in devices) or max(indexed) >= len(devices):
        return devices
    rest = iter(d for d in devices if d.index is None)
    return [indexed[i] if i in indexed else next(rest) for i in range(len(devices))]


def _merge_devices(claims: list[_Device]) -> list[_Device]:
    devices: list[_Device] = []
    for c in claims:
        target = None
        if c.bdf:
            target = next((d for d in devices if d.bdf == c.bdf), None)
        if target is None and c.identity():
            same = [d for d in devices if d.identity() & c.identity() and not _apart(d, c)]
            target = same[0] if same else None
        if target is None and c.index is not None and c.identity():
            target = next((d for d in devices if d.index == c.index and not d.identity() - c.identity()
                           and not _apart(d, c)), None)
        if target is None and not c.identity() and not c.bdf:
            continue  # an index alone is not a device
        if target is None:
            devices.append(c)
        else:
            target.absorb(c)
    return devices


def _place_devices(devices: list[_Device]) -> list[_Device]:
    """Lines that name only a place (``amdgpu 0000:01:00.0: ...``) and lines that name only a GPU describe the
    same devices when there are as many of each: pair them in order. Otherwise each place is a device of its own."""
    places = [d for d in devices if d.bdf and not d.identity()]
    unplaced = [d for d in devices if d.identity() and not d.bdf]
    if places and len(places) == len(unplaced):
        for p, d in zip(places, unplaced):
            d.absorb(p)
        return [d for d in devices if d not in places]
    return devices


def _apart(a: _Device, b: _Device) -> bool:
    """Two claims that cannot be one device: different places or different indexes of one listing."""
    if a.bdf and b.bdf and a.bdf != b.bdf:
        return True
    return a.index is not None and b.index is not None and a.index != b.index


def _gpu_count(said: list[Said]) -> tuple[int, Evidence | None]:
    best, where = 0, None
    for s in said:
        if s.m.kind == "gpu_count" and s.m.value.isdigit() and 0 < int(s.m.value) <= 64 and int(s.m.value) > best:
            best, where = int(s.m.value), s.ev
    probes = {(s.m.value, s.m.detail) for s in said if s.m.kind == "kfd_probe"}
    if len(probes) > best:
        best = len(probes)
        where = next(s.ev for s in said if s.m.kind == "kfd_probe")
    bdfs = {s.m.value for s in said if s.m.kind == "bdf"}
    if len(bdfs) > best:
        best = len(bdfs)
        where = next(s.ev for s in said if s.m.kind == "bdf")
    return best, where


def thread_title(texts: tuple[EvidenceText, ...] | list[EvidenceText]) -> list[Said]:
    """Mentions of a stored thread's title where the opening post is missing (the title is then not an own text).

    The title names what the whole thread is about; it stands for the machine only where the posts name no GPU.
    """
    out: list[Said] = []
    for t in texts:
        if not t.own and t.kind == "text" and t.first_line <= 3 and t.text.startswith("# ") and "\n" not in t.text.strip():
            out.extend(Said(m, _evidence(t, m)) for m in read_mentions(t.text))
    return out


def _prose_device(said: list[Said], kb: object, header: list[Said] | None = None) -> _Device | None:
    """The GPU the prose names, when it names exactly one target: the title first, then the posts, then the title
    of a thread whose opening post is missing (``header``: what the thread is about, where its posts name no GPU),
    then the one target whose missing support the texts speak of."""
    title: list[Said] = []
    body: list[Said] = []
    for s in said:
        if s.m.kind == "gpu_prose" or (s.m.kind == "gfx_rt" and s.m.detail == "prose"):
            (title if (s.ev.line or 99) <= 3 and s.m.text.startswith("# ") else body).append(s)
    other = [s for s in header or () if s.m.kind == "gpu_prose" or (s.m.kind == "gfx_rt" and s.m.detail == "prose")]
    support = [s for s in said if s.m.kind == "gfx_rt" and s.m.detail == "support"]  # "until gfx1151 support is enabled"
    for tier in (title, body, other, support):
        d = _Device()
        for s in tier:
            if s.m.kind == "gfx_rt":
                d.reported.add(s.m.value)
            else:
                hits = _resolve_name(kb, s.m.value, None)
                gfxs = {h.gfx for h in hits if h.gfx}  # type: ignore[attr-defined]
                if len(gfxs) != 1:
                    continue
                d.gfx |= gfxs
                kinds = {h.integrated for h in hits if h.integrated is not None}  # type: ignore[attr-defined]
                d.integrated |= kinds if len(kinds) == 1 else set()
                codes = {h.codename for h in hits if h.codename}  # type: ignore[attr-defined]
                d.codenames |= codes if len(codes) == 1 else set()
                d.names.append(s.m.value)
            d.evidence.append(s.ev)
        if len(d.gfx | d.reported) == 1 and len(d.integrated) <= 1:
            d.gfx = d.gfx or d.reported  # a person naming their card's target names the hardware's
            return d
        if d.gfx or d.reported:
            return None  # the prose names several GPUs: none is taken
    return _title_processor_igpu(said, kb)


def _title_processor_igpu(said: list[Said], kb: object) -> _Device | None:
    """Where no text names a GPU, the integrated GPU of the one processor the thread's title names (apus.json)."""
    named = [s for s in said if s.m.kind == "cpu_title"]
    found = _one_apu([s.m.value for s in named], kb)
    if found is None:
        return None
    apu, row = found
    return _Device(gfx={row.gfx}, integrated={True}, codenames={row.codename} if row.codename else set(),
                   names=[apu.graphics], evidence=[named[0].ev])


def _fill_gpus(facts: Facts, said: list[Said], override_gfx: str | None, conflicts: list[Conflict],
               header: list[Said] | None = None) -> tuple[Gpu, ...]:
    from wizard.kb import load_kb

    kb = load_kb()
    claims = _line_devices(_card_over_written_target(said, kb, override_gfx), kb)
    devices = _merge_devices(_merge_devices(claims))  # twice: a later line can join two earlier ones
    devices = _join_card_and_its_override_target(devices, facts, said, kb)
    if not any(d.identity() for d in devices) and not any(g.gfx or g.gfx_reported or g.pci_id for g in facts.gpus):
        prose = _prose_device(said, kb, header)
        if prose is not None:
            devices.append(prose)
    elif (masked := _masked_by_override(devices, facts, override_gfx, kb)) is not None:
        # the runtime reports the override's target, which says nothing of the card: the one card the prose names is it
        prose = _prose_device(said, kb, header)
        if prose is not None and prose.names and prose.gfx and not prose.pci and (  # a card named, not a target written
                override_gfx is not None or _runs_as_override_target(prose.gfx, masked.reported, kb)):
            masked.absorb(replace(prose, reported=set()))
    devices = _place_devices(devices)
    gpus = list(facts.gpus)
    used: set[int] = set()
    # 1. claims that match a GPU the probes found add what it lacks (a place first, then an id, then a target)
    def same_place(d: _Device, g: Gpu) -> bool:
        return bool(d.bdf and g.bdf and (g.bdf == d.bdf or g.bdf.endswith(d.bdf[5:])))

    for d in devices:
        order = sorted(range(len(gpus)), key=lambda i: (i in used, i))
        match = next((i for i in order if same_place(d, gpus[i])), None)
        if match is None:
            match = next((i for i in order if not (d.bdf and gpus[i].bdf) and (
                (d.pci and gpus[i].pci_id in d.pci) or (d.identity() & {gpus[i].gfx, gpus[i].gfx_reported} - {None}))),
                None)
        if match is None:
            continue
        used.add(match)
        gpus[match] = _complete(gpus[match], d, override_gfx, conflicts)
        d.names.append("\0matched")
    rest = [d for d in devices if "\0matched" not in d.names]
    # 2. GPUs the probes saw without an identity take the unmatched claims, in order; one claim stated on as
    #    many lines as there are such GPUs (a `rocminfo | grep` of each) names all of them
    blank = [i for i, g in enumerate(gpus) if i not in used and not (g.gfx or g.gfx_reported or g.pci_id)]
    named = [d for d in rest if d.identity()]
    if blank and len(named) == 1 and len({(e.source, e.line) for e in named[0].evidence}) >= len(blank) > 1:
        for i in blank:
            gpus[i] = _complete(gpus[i], named[0], override_gfx, conflicts)
        rest.remove(named[0])
        blank = []
    for i in blank:
        if not rest:
            break
        d = rest.pop(0)
        if not d.identity():
            rest.insert(0, d)
            break
        used.add(i)
        gpus[i] = _complete(gpus[i], d, override_gfx, conflicts)
    # 2b. a discrete model that is the only GPU anything names: the GPUs the probes saw without an identity
    #     (rocm-smi's rows of a 4-GPU server) are that model, as the count below makes GPUs it counts. Not
    #     where an integrated GPU may be among them (a processor with one, an APU word) or a claim is left over.
    _fill_blanks_with_the_one_model(gpus, rest, said, kb)
    # 3. GPUs only the texts show, in the order of the device indexes the texts give them
    if not gpus:
        rest = _in_stated_order([d for d in rest if d.identity() or d.bdf])
    for d in rest:
        if not d.identity() and not d.bdf:
            continue
        if not d.identity() and gpus:
            continue  # a place alone adds a GPU only when nothing else names one
        gpus.append(_complete(Gpu(), d, override_gfx, conflicts))
    count, where = _gpu_count(said)
    if count > len(gpus) and where is not None:
        igpu = _processor_igpu(said, kb) if gpus and all(g.integrated is False for g in gpus) else None
        if igpu is not None:  # a discrete GPU and one more: the processor's own integrated GPU
            gpus.append(igpu)
    if count > len(gpus) and where is not None:
        if len(gpus) and all(g.gfx == gpus[0].gfx and g.gfx_reported == gpus[0].gfx_reported for g in gpus) \
                and len({g.bdf for g in gpus if g.bdf}) <= 1 and len(gpus) == 1:
            base = gpus[0]
            gpus += [replace(base, bdf=None, hip_index=None, kfd_node=None, render_node=None, vram_bytes=None,
                             sources=(where,)) for _ in range(count - len(gpus))]
        else:
            gpus += [Gpu(sources=(where,)) for _ in range(count - len(gpus))]
    return tuple(gpus)


def _masked_by_override(devices: list[_Device], facts: Facts, override_gfx: str | None, kb: Any) -> _Device | None:
    """The one GPU the texts know only by the target the runtime reports under HSA_OVERRIDE_GFX_VERSION (which is the
    override's own; where the variable is not shown, a target overrides set), where nothing else names a GPU; None
    otherwise."""
    named = [d for d in devices if d.identity() or d.pci]
    if len(named) != 1 or any(g.gfx or g.gfx_reported or g.pci_id for g in facts.gpus):
        return None
    d = named[0]
    targets = {override_gfx} if override_gfx is not None else _override_targets(kb)
    return d if not d.gfx and not d.pci and len(d.reported) == 1 and d.reported <= targets else None


def _join_card_and_its_override_target(devices: list[_Device], facts: Facts, said: list[Said], kb: Any) -> list[_Device]:
    """A GPU known only by the target the runtime reports and one card named, of a target that reports it only under
    an override (an installer's "AMD ROCm (gfx1030)" over "GPU: AMD Radeon RX 6600"), are one GPU where nothing else
    names one and no count says two."""
    named = [d for d in devices if d.identity() or d.pci]
    if len(named) != 2 or any(g.gfx or g.gfx_reported or g.pci_id for g in facts.gpus) or _gpu_count(said)[0] > 1:
        return devices
    runtime = next((d for d in named if not d.gfx and not d.pci), None)
    card = next((d for d in named if d.gfx and not d.reported), None)
    if runtime is None or card is None or _apart(runtime, card) or not _runs_as_override_target(card.gfx, runtime.reported, kb):
        return devices
    card.absorb(runtime)
    return [d for d in devices if d is not runtime]


def _override_targets(kb: Any) -> set[str]:
    """The targets the knowledge base's HSA_OVERRIDE_GFX_VERSION values make a GPU report (gfx1030, gfx1100)."""
    from wizard.probes.gpus import override_gfx

    return {t for o in kb.hsa_overrides() if (t := override_gfx(o.value)) is not None}


def _runs_as_override_target(hardware: set[str], reported: set[str], kb: Any) -> bool:
    """Whether a card of target ``hardware`` can report ``reported`` only under an override: a target people override
    (the knowledge base's override rows, a safe value or not) of the same generation (gfx11xx run as gfx1100)."""
    if len(hardware) != 1 or len(reported) != 1 or hardware == reported:
        return False
    hw, rep = next(iter(hardware)), next(iter(reported))
    return kb.override_entry(hw) is not None and rep in _override_targets(kb) and hw[:5] == rep[:5]


def _one_apu(cpus: list[str], kb: object) -> tuple[Any, Any] | None:
    """The one processor row (apus.json) the named processors agree on, with its GPU's gpus.json row; None when
    they name none, several, or a GPU without a gfx target."""
    apus = {kb.apu_for_cpu(c) for c in cpus}  # type: ignore[attr-defined]
    if len(apus) != 1 or None in apus:
        return None
    apu = next(iter(apus))
    row = kb.gpu_by_pci(apu.pci_id)  # type: ignore[attr-defined]
    return None if row is None or not row.gfx else (apu, row)


def _processor_igpu(said: list[Said], kb: object) -> Gpu | None:
    """The integrated GPU of the one processor the texts name as the machine's (an issue template's CPU field)."""
    from wizard.kb.families import family_of_gfx

    cpus = {s.m.value: s for s in said if s.m.kind == "cpu"}
    found = _one_apu(list(cpus), kb)
    if found is None:
        return None
    apu, row = found
    return Gpu(name=apu.graphics, gfx=row.gfx, integrated=True, family=family_of_gfx(row.gfx), codename=row.codename,
               sources=(next(iter(cpus.values())).ev,))


def _fill_blanks_with_the_one_model(gpus: list[Gpu], rest: list[_Device], said: list[Said], kb: Any) -> None:
    named = [g for g in gpus if g.gfx or g.gfx_reported or g.pci_id]
    blank = [i for i, g in enumerate(gpus) if not (g.gfx or g.gfx_reported or g.pci_id)]
    if not blank or not named or any(d.identity() for d in rest):
        return
    base = named[0]
    if any((g.gfx, g.gfx_reported) != (base.gfx, base.gfx_reported) for g in named) or \
            any(g.integrated is not False for g in named):
        return
    if any(s.m.kind == "apu" or (s.m.kind == "cpu" or (s.m.kind == "gpu_name" and s.m.detail == "cpu"))
           and not kb.cpu_without_graphics(s.m.value) for s in said):
        return  # a processor named (one AMD lists with graphics, or not at all): a blank GPU may be its integrated GPU
    for i in blank:
        gpus[i] = replace(gpus[i], name=base.name, gfx=base.gfx, gfx_reported=base.gfx_reported, integrated=False,
                          family=base.family, codename=base.codename,
                          sources=gpus[i].sources + tuple(e for e in base.sources[:1] if e not in gpus[i].sources))


def _complete(g: Gpu, d: _Device, override_gfx: str | None, conflicts: list[Conflict]) -> Gpu:
    from wizard.kb import load_kb

    kb = load_kb()
    hw = g.gfx
    claims_hw = set(d.gfx)
    if hw is None and len(claims_hw) == 1:
        hw = next(iter(claims_hw))
    elif hw is None and len(claims_hw) > 1:
        conflicts.append(Conflict("gfx-sources-disagree", f"the texts name different GPUs for one device: "
                                  f"{', '.join(sorted(claims_hw))}", tuple(d.evidence[:4])))
    elif hw is not None and claims_hw and claims_hw != {hw}:
        conflicts.append(Conflict("gfx-sources-disagree", f"{g.name or g.pci_id or 'GPU'}: probes say {hw}, the texts "
                                  f"say {', '.join(sorted(claims_hw))}", tuple(d.evidence[:4]) + g.sources[:1]))
    reported = g.gfx_reported
    if reported is None and len(d.reported) == 1:
        reported = next(iter(d.reported))
    if hw is None and reported is not None and override_gfx is None:
        hw = reported  # no override in force: the runtime reports the hardware's own target
    pci = g.pci_id or (next(iter(d.pci)) if len(d.pci) == 1 else None)
    info = kb.gpu_by_pci(pci) if pci else None
    integrated = g.integrated
    if integrated is None:
        if info is not None and info.integrated is not None:
            integrated = info.integrated
        elif len(d.integrated) == 1:
            integrated = next(iter(d.integrated))
        else:
            kinds = {x.integrated for x in kb.gpus() if hw and x.gfx == hw}
            integrated = next(iter(kinds)) if len(kinds) == 1 else None
    name = g.name or (info.name if info else None) or next((n for n in d.names if not n.startswith("\0")), None)
    family = g.family or (info.family if info and info.family else kb.family_of_gfx(hw))
    codename = g.codename or (info.codename if info else None) or (next(iter(d.codenames)) if len(d.codenames) == 1 else None)
    sources = g.sources + tuple(e for e in d.evidence if e not in g.sources)
    return replace(g, gfx=hw, gfx_reported=reported, pci_id=pci, name=name, integrated=integrated, family=family,
                   codename=codename, bdf=g.bdf or d.bdf, sources=sources[:8])


# --------------------------------------------------------------------------- the rest


def _first(said: list[Said], kind: str) -> Said | None:
    return next((s for s in said if s.m.kind == kind), None)


def _rocm(facts: Facts, said: list[Said], conflicts: list[Conflict]) -> Rocm:
    rocm = facts.rocm
    amdgpu_pro = rocm.amdgpu_pro
    pro = _first(said, "amdgpu_pro")
    if amdgpu_pro is None and pro is not None:
        amdgpu_pro = pro.m.value
    if rocm.version is not None:
        return replace(rocm, amdgpu_pro=amdgpu_pro)
    versions = [s for s in said if s.m.kind == "rocm"]
    if not versions:
        return replace(rocm, amdgpu_pro=amdgpu_pro)
    best_rank = min(_ROCM_RANK.get(s.m.detail, 3) for s in versions)
    top = [s for s in versions if _ROCM_RANK.get(s.m.detail, 3) == best_rank]
    distinct = _dedupe_versions([s.m.value for s in top])
    if len(distinct) != 1:
        conflicts.append(Conflict("rocm-versions-differ", "the texts name several ROCm versions: "
                                  + ", ".join(distinct), tuple(s.ev for s in top[:4])))
        return replace(rocm, amdgpu_pro=amdgpu_pro)
    version = distinct[0]
    if version.count(".") == 1:
        # a release line ("rocm-rel-6.4" in an index's URL) that a weaker statement of the same line makes precise
        # ("rocm libs v 6.4.0 installed"): the precise one, where it is one
        finer = _dedupe_versions([s.m.value for s in versions if s.m.value.startswith(version + ".")])
        version = finer[0] if len(finer) == 1 else version
    ev = next(s.ev for s in (*(x for x in versions if x.m.value == version), *top)
              if version.startswith(s.m.value) or s.m.value.startswith(version))
    distro = all(s.m.detail == "distro-package" for s in top)
    return replace(rocm, version=version, stream=rocm.stream or ("distro" if distro else stream_of(version)),
                   amdgpu_pro=amdgpu_pro, sources=rocm.sources + (ev,))


def _dedupe_versions(values: list[str]) -> list[str]:
    """"6.1" and "6.1.0" (and "6.1.3") are one statement of release 6.1; the most precise wins."""
    out: list[str] = []
    for v in sorted(set(values), key=lambda x: (-x.count("."), x)):
        if any(o == v or o.startswith(v + ".") for o in out):
            continue
        out.append(v)
    return out


def stream_of(version: str) -> str | None:
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return None
    return "core-sdk" if major >= 10 or (major == 7 and minor >= 14) else "legacy"


_SDK_TARGETS_CMD = lazy_re.compile(r"\brocm-sdk\s+targets\b")
_SDK_TARGETS_LINE = lazy_re.compile(r"^\s*(gfx[0-9a-f]{3,4}(?:\s*[;,]\s*gfx[0-9a-f]{3,4})*)\s*$", re.I)


def _sdk_targets(texts: tuple[EvidenceText, ...]) -> tuple[tuple[str, ...], Evidence] | None:
    """TheRock's `rocm-sdk targets` output ("gfx1100;gfx1101;gfx1102"): the device targets installed in that env."""
    for t in texts:
        if not t.own or not t.command or not _SDK_TARGETS_CMD.search(t.command):
            continue
        for i, line in enumerate(t.text.splitlines()):
            m = _SDK_TARGETS_LINE.match(line)
            if m:
                gfx = tuple(dict.fromkeys(g.lower() for g in re.findall(r"gfx[0-9a-f]+", m.group(1), re.I)))
                return gfx, Evidence(t.source, t.first_line + i, line.strip())
    return None


# `rocm-sdk version` prints the version of the env's `rocm` package and nothing else (TheRock
# build_tools/packaging/python/templates/rocm/src/rocm_sdk/__main__.py, _do_version)
_SDK_VERSION_CMD = lazy_re.compile(r"\brocm-sdk\s+version\b|\brocm_sdk\s+version\b")
_SDK_VERSION_LINE = lazy_re.compile(r"^\s*(\d+\.\d+\.\d+(?:(?:a|b|rc|\.dev)\d+)*(?:\.dev\d+)?)\s*$")


def _sdk_version(texts: tuple[EvidenceText, ...]) -> tuple[str, Evidence] | None:
    for t in texts:
        if not t.own or not t.command or not _SDK_VERSION_CMD.search(t.command):
            continue
        for i, line in enumerate(t.text.splitlines()):
            if line.strip():
                m = _SDK_VERSION_LINE.match(line)
                if m:
                    return m.group(1), Evidence(t.source, t.first_line + i, line.strip())
                break  # the first line is the version, or the command failed
    return None


def _with_sdk_cli(envs: list[PythonEnv], texts: tuple[EvidenceText, ...]) -> list[PythonEnv]:
    """What TheRock's `rocm-sdk targets` and `rocm-sdk version` printed, on the one env they can be about."""
    targets = _sdk_targets(texts)
    if targets is not None and not any(e.rocm_sdk_targets for e in envs):
        gfx, ev = targets
        envs = _on_therock_env(envs, ev, rocm_sdk_targets=gfx)
    version = _sdk_version(texts)
    if version is not None and not any(e.rocm_sdk for e in envs):
        v, ev = version
        envs = _on_therock_env(envs, ev, rocm_sdk=v)
    return envs


def _on_therock_env(envs: list[PythonEnv], ev: Evidence, **fields: Any) -> list[PythonEnv]:
    therock = [i for i, e in enumerate(envs) if e.rocm_sdk or e.rocm_sdk_targets or e.kind == "recorded"]
    if len(therock) == 1:
        i = therock[0]
        envs[i] = replace(envs[i], sources=envs[i].sources + (ev,), **fields)
    elif not therock:
        envs.append(PythonEnv(path=None, kind="recorded", sources=(ev,), **fields))
    return envs


def _envs(facts: Facts, said: list[Said]) -> tuple[PythonEnv, ...]:
    envs = list(_torch_env(facts, said))
    envs = _with_sdk_cli(envs, facts.texts)
    hip = _first(said, "hip")
    if hip is not None and len(envs) == 1 and envs[0].hip is None and envs[0].build in ("rocm", None):
        envs[0] = replace(envs[0], hip=hip.m.value, sources=envs[0].sources + (hip.ev,))
    return tuple(envs)


_PIP_INSTALL_LINE = lazy_re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b")


def _torch_env(facts: Facts, said: list[Said]) -> tuple[PythonEnv, ...]:
    envs = list(facts.python_envs)
    if any(e.torch for e in envs):
        return tuple(envs)
    # a version a `pip install` asks for after the machine as first reported (a later post, or past the fix the
    # reporter introduces) is the fix tried, not the torch that failed
    torches = [s for s in said if s.m.kind == "torch" and re.match(r"\d+\.\d+\.\d+", s.m.value)
               and (s.first_post or not _PIP_INSTALL_LINE.search(s.ev.text or ""))]
    if not torches:
        return tuple(envs)
    s = torches[0]
    value = s.m.value
    from wizard.probes.python_envs import build_of

    cuda = _first(said, "torch_cuda")  # pip show's requirements: NVIDIA's runtime wheels
    build = build_of(value, None, cuda.m.value if cuda is not None else None, False)
    pyver = _first(said, "python_version")
    env = PythonEnv(path=s.m.detail.rsplit("/lib/", 1)[0] if s.m.detail and "/lib/" in s.m.detail else None,
                    python_version=pyver.m.value if pyver else None, torch=value, build=build, kind="recorded",
                    sources=(s.ev,))
    recorded = next((i for i, e in enumerate(envs) if e.kind == "recorded" and not e.torch), None)
    if recorded is not None:
        envs[recorded] = replace(envs[recorded], torch=value, build=envs[recorded].build or build,
                                 sources=envs[recorded].sources + (s.ev,))
    else:
        envs.append(env)
    return tuple(envs)


def _env_settings(facts: Facts, said: list[Said]) -> tuple[EnvSetting, ...]:
    have = {s.name for s in facts.env if s.service is None}
    out = list(facts.env)
    added: set[str] = set()
    for s in said:
        if s.m.kind != "env":
            continue
        name, _, value = s.m.value.partition("=")
        if name in have or name in added:
            continue
        if not s.first_post and s.m.detail != "stated":
            continue  # a later post's setting is the fix being tried, not the machine as reported
        added.add(name)
        if s.m.detail == "unset":
            continue  # the text first clears it: not in force
        out.append(EnvSetting(name, value, f"{s.ev.source}:{s.ev.line}"))
    return tuple(out)


# The distributions each one is built on (its os-release ID_LIKE): users name the base beside the derivative
# ("installed from the archlinux repo" on Manjaro), never the other way round.
_BASES: dict[str, set[str]] = {"manjaro": {"arch"}, "endeavouros": {"arch"}, "pop": {"ubuntu", "debian"},
                               "linuxmint": {"ubuntu", "debian"}}


def _os(facts: Facts, said: list[Said], conflicts: list[Conflict]) -> OsInfo:
    os_ = facts.os
    kernel, sources = os_.kernel, os_.sources
    os_id, version = os_.id, os_.version
    if os_id is None:
        named = [s for s in said if s.m.kind == "os" and s.m.detail in ("label", "package")] \
            or [s for s in said if s.m.kind == "os"]
        ids = {s.m.value.split()[0] for s in named}
        derived = [i for i in ids if ids - {i} <= _BASES.get(i, set())]
        if len(ids) > 1 and len(derived) == 1:  # "manjaro (may also work for archlinux)": the derivative is the machine's
            named = [s for s in named if s.m.value.split()[0] == derived[0]]
            ids = {derived[0]}
        if len(ids) == 1:
            os_id = ids.pop()
            stated = [s for s in named if len(s.m.value.split()) > 1]
            versions = {s.m.value.split()[1] for s in stated}
            if len(versions) == 1 or (stated and stated[0].m.detail == "label"):
                version = stated[0].m.value.split()[1]
            elif versions:  # several releases of one distribution: the first statement is the machine's
                version = stated[0].m.value.split()[1]
                conflicts.append(Conflict("os-versions-differ", f"the texts name several {os_id} releases: "
                                          + ", ".join(sorted(versions)) + f"; the first ({version}) is taken",
                                          tuple(s.ev for s in stated[:4])))
            sources = sources + (named[0].ev,)
        elif len(ids) > 1:
            conflicts.append(Conflict("os-names-differ", "the texts name several distributions: " + ", ".join(sorted(ids)),
                                      tuple(s.ev for s in named[:4])))
    if kernel is None:
        stated = [s for s in said if s.m.kind == "kernel" and s.m.detail != "token"]
        tokens = [s for s in said if s.m.kind == "kernel" and s.m.detail == "token"]
        if stated:
            kernel, sources = stated[0].m.value, sources + (stated[0].ev,)
        elif len({s.m.value for s in tokens}) == 1:  # a bare release token only when every one names the same kernel
            kernel, sources = tokens[0].m.value, sources + (tokens[0].ev,)
        elif tokens:
            conflicts.append(Conflict("kernels-differ", "the texts name several kernels: "
                                      + ", ".join(sorted({s.m.value for s in tokens})) + "; none is taken",
                                      tuple(s.ev for s in tokens[:4])))
    wsl = os_.wsl
    if wsl is None:
        w = _first(said, "wsl")
        if w is not None or (kernel and "microsoft" in kernel.lower()):
            wsl = True
            if w is not None:
                sources = sources + (w.ev,)
        elif kernel:
            wsl = False  # every WSL kernel names Microsoft in its release
    return replace(os_, id=os_id, version=version, kernel=kernel, wsl=wsl, sources=sources)


def _driver(facts: Facts, said: list[Said]) -> Driver:
    d = facts.driver
    loaded, kfd_present, kfd_ok, kfd_error = d.loaded, d.kfd_present, d.kfd_accessible, d.kfd_error
    version, kind, user = d.version, d.kind, d.user
    in_render, in_video = d.in_render_group, d.in_video_group
    sources = list(d.sources)
    for s in said:
        k, v = s.m.kind, s.m.value
        if k in ("rock", "driver_bound") and loaded is None:
            loaded = v == "true"
            sources.append(s.ev)
        elif k == "kfd_added":
            if loaded is None or kfd_present is None:
                sources.append(s.ev)
            loaded = True if loaded is None else loaded
            kfd_present = True if kfd_present is None else kfd_present
        elif k == "user" and user is None and (s.m.detail != "prompt" or not any(
                x.m.kind == "user" and x.m.detail != "prompt" for x in said)):
            user = v  # rocminfo's own "<user> is member of ..." first, else the first shell prompt's user
            sources.append(s.ev)
        elif k == "kfd" and v == "present":
            if kfd_present is None:
                kfd_present = True
                sources.append(s.ev)
        elif k == "kfd" and kfd_ok is None:
            sources.append(s.ev)
            if v == "ok":
                kfd_present, kfd_ok = True, True
            else:
                kfd_ok, kfd_error = False, v
                if "no such file" in v.lower():
                    kfd_present = False
                elif kfd_present is None:
                    kfd_present = True
        elif k == "driver_version" and version is None and re.match(r"\d", v):
            version = v
            sources.append(s.ev)
            if s.m.detail in ("rock", "sysfs", "modinfo") and kind is None:
                # /sys/module/amdgpu/version, as read or as rocminfo prints it ("ROCk module version X is loaded", ROCm/
                # rocminfo c6f7a17c85e0 rocminfo.cc), or modinfo's "version:" of the module file: only an out-of-tree
                # (amdgpu-dkms) build has it, as probe_driver reads it
                kind = "dkms"
            if s.m.detail == "sysfs" and loaded is None:
                loaded = True  # /sys/module/amdgpu is there while the module is loaded
        elif k == "dkms" and kind is None:
            kind = "dkms"
            sources.append(s.ev)
        elif k == "in_tree" and kind is None:
            kind = "in-tree"
            sources.append(s.ev)
        elif k in ("render_group", "video_group") and (s.m.detail is None or s.m.detail):
            # a user named (rocminfo's "<user> is member of ..."): the first one named is the machine's user; none
            # named: the reporter on themself, the machine's user as the thread reports it
            if s.m.detail and user is None:
                user = s.m.detail
            if s.m.detail is None or user == s.m.detail:
                if k == "render_group" and in_render is None:
                    in_render = v == "true"
                    sources.append(s.ev)
                elif k == "video_group" and in_video is None:
                    in_video = v == "true"
                    sources.append(s.ev)
    if d.groups and user is not None:
        in_render = "render" in d.groups if in_render is None else in_render
        in_video = "video" in d.groups if in_video is None else in_video
    if loaded is None and kfd_present:
        # /dev/kfd is made when the driver loads (kfd_init -> kfd_chardev_init, drivers/gpu/drm/amd/amdkfd/kfd_module.c,
        # called from amdgpu's init), with or without a GPU it can drive
        loaded = True
    return replace(d, loaded=loaded, kfd_present=kfd_present, kfd_accessible=kfd_ok, kfd_error=kfd_error,
                   version=version, kind=kind, user=user, in_render_group=in_render, in_video_group=in_video,
                   sources=tuple(dict.fromkeys(sources)))


def apply(facts: Facts, texts: tuple[EvidenceText, ...]) -> Facts:
    """Facts with what the texts add; conflicts where they disagree."""
    said = collect(texts)
    header = thread_title(texts) if any(t.own for t in texts) else []
    if not said and not header:
        envs = tuple(_with_sdk_cli(list(facts.python_envs), texts))
        return facts if envs == facts.python_envs else replace(facts, python_envs=envs)
    conflicts: list[Conflict] = []
    # the title of a thread whose opening post is missing names the settings the thread is about, where no post sets them
    env = _env_settings(facts, said + [h for h in header if h.m.kind == "env"])
    override = next((s.value for s in env if s.name == "HSA_OVERRIDE_GFX_VERSION"), None)
    from wizard.probes.gpus import override_gfx

    gpus = _fill_gpus(replace(facts, env=env), said, override_gfx(override), conflicts, header)
    container = facts.in_container
    if container is None and _first(said, "container") is not None:
        container = True
    return replace(
        facts, gpus=gpus, env=env, os=_os(facts, said, conflicts), driver=_driver(facts, said), rocm=_rocm(facts, said, conflicts),
        python_envs=_envs(facts, said), in_container=container,
        conflicts=facts.conflicts + tuple(c for c in conflicts if c not in facts.conflicts),
    )


__all__ = ["Said", "apply", "collect"]
