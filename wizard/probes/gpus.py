"""AMD GPUs: the physical view (PCI) reconciled with the runtime view (KFD, rocminfo, SMI tools).

Order: the runtime's enumeration order (KFD node order = rocminfo agent order = HIP ordinal
before any *_VISIBLE_DEVICES masking), then PCI devices the runtime did not list.
``gfx`` is the hardware's target (KFD topology, else the PCI-id table); ``gfx_reported`` is what
the runtime says (rocminfo, collect_env; live: the override in force, else the hardware's).
"""

from __future__ import annotations


from wizard import lazy_re
from wizard.host import Host
from wizard.model import Evidence, Gpu
from wizard.parsers.kfd import gfx_from_target_version, parse_kfd_properties
from wizard.record import field, record

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from wizard.kb import GpuInfo

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
_BARE_DEVICE = lazy_re.compile(r"^Device ([0-9a-fA-F]{4})$")
PCI_DEVICES = "/sys/bus/pci/devices"


@record(frozen=False)
class _Draft:
    name: str | None = None
    name_rank: int = 99
    gfx: str | None = None
    gfx_reported: str | None = None
    pci_id: str | None = None
    bdf: str | None = None
    short_bdf: str | None = None
    vram_bytes: int | None = None
    vram_rank: int = 99
    hip_index: int | None = None
    kfd_node: int | None = None
    render_node: str | None = None
    kb_by_name: str | None = None  # a board name to look up when no PCI id is known
    sources: list[Evidence] = field(default_factory=list)

    def set_name(self, name: str | None, rank: int) -> None:
        if name and rank < self.name_rank:
            self.name, self.name_rank = name.strip(), rank

    def set_vram(self, value: int | None, rank: int) -> None:
        if value and value > 0 and rank < self.vram_rank:
            self.vram_bytes, self.vram_rank = value, rank

    def matches(self, bdf: str | None, short: str | None, pci_id: str | None) -> bool:
        if bdf and self.bdf:
            return bdf == self.bdf
        if short and (self.short_bdf or self.bdf):
            return short == (self.short_bdf or (self.bdf or "")[5:])
        return False


def override_gfx(value: str | None) -> str | None:
    """HSA_OVERRIDE_GFX_VERSION "10.3.0" -> "gfx1030"; None when unset, empty or malformed."""
    if not value:
        return None
    parts = value.strip().split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    major, minor, step = (int(p) for p in parts)
    if minor > 15 or step > 15:
        return None
    return gfx_from_target_version(major * 10000 + minor * 100 + step)


def compact_name(name: str | None) -> str | None:
    """"AMD Radeon RX 7900 XTX / AMD Radeon RX 7900 XT" -> "AMD Radeon RX 7900 XTX / 7900 XT"."""
    if not name or " / " not in name:
        return name
    alts = [a.split() for a in name.split(" / ")]
    common = 0
    while all(len(a) > common + 1 and a[common] == alts[0][common] for a in alts):
        common += 1
    return " / ".join([" ".join(alts[0])] + [" ".join(a[common:]) for a in alts[1:]])


def _kb_by_name(board: str) -> GpuInfo | None:
    """The PCI-id table entry a board name stands for, when every entry with that name agrees on gfx and kind."""
    from wizard.kb import load_kb

    hits = load_kb().gpus_by_name(board)
    if hits and len({(h.gfx, h.integrated) for h in hits}) == 1:
        return hits[0]
    return None


def _integrated_by_gfx(gfx: str | None) -> bool | None:
    """True for a gfx target that only APUs have, per the PCI-id table (e.g. gfx1103, gfx1151)."""
    if not gfx:
        return None
    from wizard.kb import load_kb

    kinds = {g.integrated for g in load_kb().gpus() if g.gfx == gfx}
    return True if kinds == {True} else (False if kinds == {False} else None)


def _kfd_text(host: Host) -> tuple[str | None, str]:
    """Concatenated KFD node properties with `==> path <==` headers, and where they came from."""
    captured = host.captured("kfd-properties.txt")
    if captured:
        return captured, "kfd-properties.txt"
    chunks = []
    for node in sorted(host.listdir(KFD_NODES), key=lambda n: (len(n), n)):
        path = f"{KFD_NODES}/{node}/properties"
        text = host.read_text(path, limit=64 << 10)
        if text is not None:
            chunks.append(f"==> {path} <==\n{text}")
    return ("\n".join(chunks) if chunks else None), KFD_NODES


def _sysfs_pci(host: Host) -> list[tuple[str, str, str]]:
    """(bdf, pci_id, class) of AMD display controllers under /sys/bus/pci/devices."""
    out = []
    for bdf in host.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{bdf}"
        vendor = (host.read_text(f"{base}/vendor", 64) or "").strip().lower()
        cls = (host.read_text(f"{base}/class", 64) or "").strip().lower()
        if vendor != "0x1002" or not cls.startswith("0x03"):
            continue
        device = (host.read_text(f"{base}/device", 64) or "").strip().lower().removeprefix("0x")
        out.append((bdf, f"1002:{device}" if device else "", cls))
    return out


def _int_file(host: Host, path: str) -> int | None:
    text = (host.read_text(path, 64) or "").strip()
    return int(text) if text.isdigit() else None


def probe_gpus(host: Host, override: str | None) -> tuple[list[Gpu], list[str]]:
    """GPUs in runtime order, and notes on disagreements between the sources."""
    drafts: list[_Draft] = []
    notes: list[str] = []

    # 1. KFD topology (live sysfs, a bundle's root/ tree, or kfd-properties.txt)
    kfd_text, kfd_src = _kfd_text(host)
    if kfd_text:
        topo = parse_kfd_properties(kfd_text)
        for idx, node in enumerate(topo.gpus):
            d = _Draft(gfx=node.gfx, pci_id=node.pci_id, bdf=node.bdf, short_bdf=node.bus_devfn,
                       hip_index=idx, kfd_node=node.node, render_node=node.render_node)
            d.set_vram(node.local_mem_size, 3)
            src = kfd_src if node.node is None or kfd_src.endswith(".txt") else f"{KFD_NODES}/{node.node}/properties"
            d.sources.append(Evidence(src, node.line, f"gfx_target_version {node.gfx_target_version}"))
            drafts.append(d)

    # 2. rocminfo agents (recorded): runtime names, marketing names, chip ids
    rinfo_text = host.captured("rocminfo.txt")
    if rinfo_text:
        from wizard.parsers.rocminfo import parse_rocminfo

        rinfo = parse_rocminfo(rinfo_text)
        for idx, agent in enumerate(rinfo.gpus):
            pci = f"1002:{agent.pci_device_id}" if agent.pci_device_id else None
            if idx < len(drafts) and (not pci or not drafts[idx].pci_id or drafts[idx].pci_id == pci):
                d = drafts[idx]
            else:
                d = _Draft(hip_index=idx, pci_id=pci, short_bdf=agent.bus_devfn)
                drafts.append(d)
            d.pci_id = d.pci_id or pci
            d.short_bdf = d.short_bdf or agent.bus_devfn
            d.gfx_reported = agent.gfx or d.gfx_reported
            d.set_name(agent.marketing_name, 1)
            if agent.vram_kb:
                d.set_vram(agent.vram_kb * 1024, 4)
            d.sources.append(Evidence("rocminfo.txt", agent.line, f"Name: {agent.name}"))

    # 3. PCI: live sysfs, or a recorded lspci
    pci_devices: list[tuple[str | None, str | None, str | None, int | None, str]] = []
    if host.is_live or host.listdir(PCI_DEVICES):
        for bdf, sys_pci, _cls in _sysfs_pci(host):
            pci_devices.append((bdf, bdf[5:], sys_pci or None, None, f"{PCI_DEVICES}/{bdf}"))
    lspci_text = host.captured("lspci.txt")
    if lspci_text and not pci_devices:
        from wizard.parsers.lspci import parse_lspci

        for dev in parse_lspci(lspci_text):
            if dev.is_amd:
                pci_devices.append((dev.bdf, dev.bdf[5:], dev.pci_id, dev.line, dev.name))
    for dev_bdf, short, pci_id, line, label in pci_devices:
        target = next((d for d in drafts if d.matches(dev_bdf, short, pci_id)), None)
        if target is None:  # match by device id when it is unique among unmatched drafts
            cands = [d for d in drafts if pci_id and d.pci_id == pci_id and not (d.bdf or d.short_bdf)]
            target = cands[0] if len(cands) == 1 else None
        if target is None:
            target = _Draft(pci_id=pci_id)
            drafts.append(target)
        target.bdf = target.bdf or dev_bdf
        target.short_bdf = target.short_bdf or short
        target.pci_id = target.pci_id or pci_id
        if label.startswith("/sys/"):
            base = label
            target.set_vram(_int_file(host, f"{base}/mem_info_vram_total"), 0)
            if not target.render_node:
                rn = [n for n in host.listdir(f"{base}/drm") if n.startswith("renderD")]
                target.render_node = rn[0] if rn else None
            target.sources.append(Evidence(base, None, f"device {pci_id}"))
        else:
            target.set_name(label, 5)
            target.sources.append(Evidence("lspci.txt", line, label))

    # 4. SMI tools (recorded): VRAM, gfx, names by index / bus
    _merge_smi(host, drafts)

    # 5. collect_env GPU lines: last resort for names / reported gfx; dmesg when nothing else
    _merge_collect_env(host, drafts)
    _merge_clinfo(host, drafts)
    _merge_dmesg(host, drafts)

    gpus: list[Gpu] = []
    if drafts:  # the knowledge base is read only when there is a GPU to look up
        from wizard.kb import load_kb

        kb = load_kb()
    for d in drafts:
        if not d.pci_id and not d.kb_by_name and d.name:
            d.kb_by_name = d.name  # a marketing name (rocminfo, an SMI tool) names the hardware when no id does
        info = kb.gpu_by_pci(d.pci_id) if d.pci_id else (_kb_by_name(d.kb_by_name) if d.kb_by_name else None)
        hw_gfx = d.gfx or (info.gfx if info else None)
        if hw_gfx is None and not override and d.gfx_reported:
            hw_gfx = d.gfx_reported  # no override in force: the runtime reports the hardware's own
        reported = d.gfx_reported
        if reported is None and host.is_live and hw_gfx:
            reported = override_gfx(override) or hw_gfx
        if d.gfx and info and info.gfx and d.gfx != info.gfx:
            notes.append(f"{d.pci_id}: KFD says {d.gfx}, the PCI-id table says {info.gfx}")
        integrated = info.integrated if info else _integrated_by_gfx(hw_gfx)
        if info:
            d.set_name(compact_name(info.name), 2)
        gpus.append(Gpu(
            name=d.name, gfx=hw_gfx, gfx_reported=reported, pci_id=d.pci_id,
            bdf=d.bdf or (f"0000:{d.short_bdf}" if d.short_bdf and host.is_live else d.short_bdf),
            integrated=integrated,
            vram_bytes=d.vram_bytes if integrated is not True or d.vram_rank == 0 else d.vram_bytes,
            family=(info.family if info and info.family else kb.family_of_gfx(hw_gfx)) if hw_gfx or info else None,
            codename=info.codename if info else None,
            hip_index=d.hip_index, kfd_node=d.kfd_node, render_node=d.render_node,
            sources=tuple(d.sources),
        ))
    return gpus, notes


def _smi_target(drafts: list[_Draft], i: int, bus: str | None, pci_id: str | None) -> _Draft:
    short = bus[5:] if bus and len(bus) == 12 else bus
    target = next((d for d in drafts if short and d.matches(bus if bus and len(bus) == 12 else None, short, None)), None)
    if target is None and i < len(drafts) and (not pci_id or not drafts[i].pci_id or drafts[i].pci_id == pci_id):
        target = drafts[i]
    if target is None:
        target = _Draft()
        drafts.append(target)
    target.pci_id = target.pci_id or pci_id
    if bus and len(bus) == 12:
        target.bdf = target.bdf or bus
    target.short_bdf = target.short_bdf or short
    return target


def _merge_smi(host: Host, drafts: list[_Draft]) -> None:
    """rocm-smi / amd-smi: their gfx comes from the KFD topology, i.e. the hardware's target."""
    text = host.captured("rocm-smi.txt")
    if text:
        from wizard.parsers.rocm_smi import parse_rocm_smi

        for i, g in enumerate(parse_rocm_smi(text).gpus):
            t = _smi_target(drafts, i, g.bus, f"1002:{g.device_id}" if g.device_id else None)
            t.gfx = t.gfx or g.gfx_version
            t.set_name(g.card_series or g.card_model, 3)
            t.set_vram(g.vram_total_bytes, 1)
            t.sources.append(Evidence("rocm-smi.txt", None, f"GPU[{g.index}] {g.card_series or g.gfx_version or ''}"))
    text = host.captured("amd-smi.txt")
    if text:
        from wizard.parsers.amd_smi import parse_amd_smi

        for i, a in enumerate(parse_amd_smi(text).gpus):
            t = _smi_target(drafts, i, a.bdf, f"1002:{a.device_id}" if a.device_id else None)
            t.gfx = t.gfx or a.gfx
            t.set_name(a.market_name, 3)
            t.set_vram(a.vram_bytes, 1)
            t.sources.append(Evidence("amd-smi.txt", None, f"GPU {a.index} {a.market_name or a.gfx or ''}"))


def _merge_clinfo(host: Host, drafts: list[_Draft]) -> None:
    """clinfo: board names and the gfx the OpenCL runtime reports (overrides apply to it too)."""
    text = host.captured("clinfo.txt")
    if not text:
        return
    from wizard.parsers.clinfo import parse_clinfo

    for i, dev in enumerate(parse_clinfo(text).devices):
        t = drafts[i] if i < len(drafts) else None
        if t is None:
            t = _Draft(hip_index=i)
            drafts.append(t)
        t.gfx_reported = t.gfx_reported or dev.gfx
        t.set_name(dev.board_name, 3)
        if t.pci_id is None and dev.board_name:
            t.kb_by_name = dev.board_name
        t.sources.append(Evidence("clinfo.txt", dev.line, f"{dev.board_name or ''} {dev.gfx or ''}".strip()))


def _merge_dmesg(host: Host, drafts: list[_Draft]) -> None:
    """`kfd kfd: added device 1002:744c` lines name the GPUs the kernel driver brought up."""
    text = host.captured("dmesg.txt")
    if not text or drafts:
        return
    from wizard.parsers.dmesg import parse_dmesg

    seen: list[str] = []
    for ev in parse_dmesg(text).events:
        if ev.kind == "kfd_added" and ev.detail and ev.detail.startswith("1002:"):
            d = _Draft(pci_id=ev.detail, hip_index=len(seen), bdf=ev.bdf)
            d.sources.append(Evidence("dmesg.txt", ev.line, ev.text))
            drafts.append(d)
            seen.append(ev.detail)


def _merge_collect_env(host: Host, drafts: list[_Draft]) -> None:
    text = host.captured("collect_env.txt")
    if not text:
        return
    from wizard.parsers.collect_env import parse_collect_env

    ce = parse_collect_env(text)
    amd = [g for g in ce.gpus if not g.name.upper().startswith(("NVIDIA", "INTEL"))]
    for i, g in enumerate(amd):
        target = drafts[i] if i < len(drafts) else None
        if target is None:
            target = _Draft(hip_index=i)
            drafts.append(target)
        target.gfx_reported = target.gfx_reported or getattr(g, "gfx", None)
        target.set_name(getattr(g, "name", None), 4)
        # a ROCm torch names a GPU that libdrm's amdgpu.ids does not know by its PCI device id ("Device 66a1")
        bare = _BARE_DEVICE.match(g.name)
        if bare and ce.rocm_build and not target.pci_id:
            target.pci_id = f"1002:{bare.group(1).lower()}"
        target.sources.append(Evidence("collect_env.txt", getattr(g, "line", None), getattr(g, "name", None)))



def other_display_devices(host: Host) -> list[str]:
    """Non-AMD display controllers ("10de:2684 NVIDIA ..."): a multi-vendor machine matters to plans."""
    out: list[str] = []
    for bdf in host.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{bdf}"
        vendor = (host.read_text(f"{base}/vendor", 64) or "").strip().lower().removeprefix("0x")
        cls = (host.read_text(f"{base}/class", 64) or "").strip().lower()
        if vendor and vendor != "1002" and cls.startswith("0x03"):
            device = (host.read_text(f"{base}/device", 64) or "").strip().lower().removeprefix("0x")
            out.append(f"{vendor}:{device} {bdf}")
    text = host.captured("lspci.txt")
    if text and not out:
        from wizard.parsers.lspci import parse_lspci

        out.extend(f"{d.pci_id or '?'} {d.name}" for d in parse_lspci(text) if not d.is_amd)
    return out
