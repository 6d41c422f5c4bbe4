"""Rich renderables shared by the CLI commands (the TUI has its own widgets over the same data).

Every value from a machine, a bundle or a plan is shown as :class:`rich.text.Text` (or escaped), never
parsed as markup: a ``[/x]`` in a path is shown as it is and cannot hide what follows.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from rich import box
from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from wizard import lazy_re
from wizard.model import Facts, FoundBy, Gpu, PythonEnv, system_torch


PIPE_WIDTH = 200  # output that is not a terminal: wide enough that no path or command is cut mid-way


def console() -> Any:
    """The CLI's rich Console: the terminal's width on a terminal; else 200 columns (a shell's ``COLUMNS``
    is the terminal's, not the pipe's) and no colours, so a pasted output keeps its paths and commands whole."""
    import sys

    from rich.console import Console

    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(highlight=False, width=PIPE_WIDTH, no_color=True, soft_wrap=False)


def _gib(n: int | None) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n else "?"


def _short_list(items: tuple[str, ...], most: int = 4) -> str:
    if not items:
        return "-"
    shown = " ".join(items[-most:])
    return f"{shown} (+{len(items) - most} more)" if len(items) > most else shown


def _yn(v: bool | None, yes: str = "yes", no: str = "no") -> str:
    return "?" if v is None else (yes if v else no)


def _row(table: Table, *cells: str) -> None:
    """A row of literal text: each cell escaped (a str cell is parsed as rich markup), still highlighted."""
    table.add_row(*(escape(c) for c in cells))


_BRACKETED = lazy_re.compile(r"\[([^\[\]]*/[^\[\]]*)\]")  # lspci: "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"


def name_alternatives(name: str) -> list[str]:
    """The products a multi-product name stands for, each written out in full:
    "Navi 31 [Radeon RX 7900 XT/7900 XTX]" and "AMD Radeon RX 7900 XT / 7900 XTX" ->
    ["... RX 7900 XT", "... RX 7900 XTX"]; a single-product name -> []."""
    m = _BRACKETED.search(name)
    body = m.group(1) if m else name
    alts = [a.split() for a in body.split("/")]
    if len(alts) < 2 or not all(alts):
        return []
    first = alts[0]
    out = [" ".join(first)]
    for a in alts[1:]:
        keep = max(len(first) - len(a), 0)
        lead = re.match(r"\d+", a[0])  # "7900M" takes the place of "7900", "7900 XTX" of "7900 XT"
        for i, word in enumerate(first):
            if word == a[0] or (lead and re.match(r"\d+", word) and word.startswith(lead.group(0))):
                keep = i
                break
        out.append(" ".join(first[:keep] + a))
    return out


def _model(alt: str) -> str:
    """The words that tell one product from its siblings: "AMD Radeon RX 7900 XTX" -> "RX 7900 XTX"."""
    words = alt.split()
    while len(words) > 2 and words[0] in ("AMD", "ATI", "Radeon"):
        words = words[1:]
    return " ".join(words)


def gpu_display_name(g: Gpu, facts: Facts) -> str:
    """A GPU's name as a table shows it: a multi-product name ("Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/
    7900M]") becomes the one product the machine's own evidence names ("Radeon RX 7900 XT"); without such
    evidence the name stays whole, since guessing a model would claim more than the machine shows."""
    name = g.name or "?"
    alts = name_alternatives(name)
    if not alts:
        return name.removeprefix("AMD ") if name.startswith("AMD Radeon") else name
    said = [str(e) for e in g.sources] + [t.text for t in facts.texts if t.own]
    said = [line for text in said for line in text.splitlines() if "/" not in line or not _BRACKETED.search(line)]
    named = [a for a in alts if any(re.search(rf"(?<![\w/]){re.escape(_model(a))}(?![\w/])", line, re.IGNORECASE)
                                    for line in said)]
    if len(named) == 1:
        return named[0].removeprefix("AMD ")
    return name


def _bus(bdf: str | None) -> str:
    """"0000:03:00.0" -> "03:00.0" (PCI domain 0 is every desktop's)."""
    if not bdf:
        return "?"
    return bdf[5:] if bdf.startswith("0000:") else bdf


def facts_renderables(facts: Facts, evidence: bool = False) -> Iterable[RenderableType]:
    o = facts.os
    head = Text.assemble(("Machine ", "bold"), (facts.origin, "cyan"), "  ",
                         f"{o.pretty_name or (o.id or '?') + ' ' + (o.version or '')}",
                         f"  kernel {o.kernel or '?'}  {o.arch or ''}")
    yield head
    # no vertical rules: at 80 columns every column but the name keeps its full width (the name wraps)
    gpus = Table(title="GPUs", title_justify="left", expand=False, box=box.SIMPLE_HEAD, pad_edge=False,
                 collapse_padding=True)
    whole = ("#", "gfx", "PCI id", "bus", "kind", "VRAM", "family")  # never cut: what a user compares with the wheel, lspci
    overridden = any(g.gfx and g.gfx_reported and g.gfx != g.gfx_reported for g in facts.gpus)
    least = {"gfx": 7, "runtime": 9 if overridden else 7, "PCI id": 9, "bus": 7}
    for col in ("#", "name", "gfx", "runtime", "PCI id", "bus", "kind", "VRAM", "family"):
        gpus.add_column(col, no_wrap=col in whole, min_width=least.get(col))
    if evidence:
        gpus.add_column("evidence")
    for i, g in enumerate(facts.gpus):
        reported = g.gfx_reported or "?"
        if g.gfx and g.gfx_reported and g.gfx != g.gfx_reported:
            reported = f"{g.gfx_reported} override!"  # the note wraps below the target, never the target
        row = [str(g.hip_index if g.hip_index is not None else "-"), gpu_display_name(g, facts), g.gfx or "?",
               reported, g.pci_id or "?", _bus(g.bdf), _yn(g.integrated, "iGPU", "dGPU"), _gib(g.vram_bytes), g.family or "?"]
        if evidence:
            row.append("\n".join(str(e) for e in g.sources))
        _row(gpus, *row)
    if not facts.gpus:
        _row(gpus, "-", "no AMD GPU found", *[""] * (8 + evidence))
    yield gpus
    d = facts.driver
    drv = Table(title="Driver and access", title_justify="left", show_header=False)
    drv.add_column()
    drv.add_column()
    _row(drv, "amdgpu loaded", _yn(d.loaded))
    _row(drv, "driver", f"{d.kind or '?'} {d.version or ''}".strip())
    _row(drv, "/dev/kfd", f"{_yn(d.kfd_present, 'present', 'missing')}, accessible: {_yn(d.kfd_accessible)}")
    pending = f" (not in this login session yet: {', '.join(d.groups_pending)})" if d.groups_pending else ""
    _row(drv, "user / groups", f"{d.user or '?'}: render {_yn(d.in_render_group)}, video {_yn(d.in_video_group)}"
         + pending)
    _row(drv, "Secure Boot", _yn(o.secure_boot, "on", "off"))
    yield drv
    rocm = Table(title=f"ROCm (in use: {escape(facts.rocm.version or 'none')})", title_justify="left")
    for col in ("version", "stream", "where", "packages"):
        rocm.add_column(col)
    for inst in facts.rocm.installs:
        pk = ", ".join(inst.packages[:4]) + (f" +{len(inst.packages) - 4}" if len(inst.packages) > 4 else "")
        _row(rocm, inst.version or "?", inst.stream, inst.path or inst.how, pk)
    if not facts.rocm.installs:
        _row(rocm, "-", "", "no system ROCm found", "")
    yield rocm
    # as the GPUs: no vertical rules; a path, a version or a HIP build wraps, never cut short
    py = Table(title="Python environments", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
               collapse_padding=True)
    for col in ("path", "python", "torch", "build", "HIP", "gfx in wheel", "found"):
        py.add_column(col, overflow="fold", no_wrap=col in ("python", "torch", "build"))
    for e in facts.python_envs:
        _row(py, e.path or "(recorded)", e.python_version or "?", e.torch or "-", e.build or "?", e.hip or "-",
             _short_list(e.gfx_targets), found_label(e))
    if not facts.python_envs:
        _row(py, "-", "", "no environment with torch found", "", "", "", "")
    yield py
    if evidence and facts.python_envs:
        how = Table(title="How each Python environment was found, and what was read", title_justify="left",
                    box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        how.add_column("environment", overflow="fold")
        how.add_column("evidence", overflow="fold")
        for e in facts.python_envs:
            _row(how, e.path or "(recorded)",
                 "\n".join(dict.fromkeys([*(str(f) for f in e.found), *(str(x) for x in e.sources)])) or "-")
        yield how
    for e in facts.python_envs:
        if e.placeholders:
            yield Text(f"! {e.path or '(recorded)'}: PyPI's empty placeholders installed, not ROCm: "
                       f"{', '.join(e.placeholders)}", style="bold yellow")
    shadowing = system_torch(facts.python_envs)
    if shadowing is not None and facts.torch_shadows:
        yield Text(f"! the system's torch {shadowing.torch} ({shadowing.path}, a distribution package) is what "
                   f"`import torch` loads for: " + "; ".join(f"{s.how} {s.where}" for s in facts.torch_shadows),
                   style="bold yellow")
    if facts.env:
        env = Table(title="Environment", title_justify="left")
        env.add_column("variable")
        env.add_column("value")
        env.add_column("set in")
        for s in facts.env:
            _row(env, s.name, s.value if s.value else '"" (empty!)',
                 s.where if s.service is None else f"{s.where} (service {s.service} only)")
        yield env
    for c in facts.conflicts:
        yield Text(f"! {c.message}", style="bold yellow")
    for err in facts.errors:
        yield Text(f"probe {err.probe}: {err.message}", style="dim")


def found_label(e: PythonEnv) -> str:
    """How an environment was found, shortly: "running (pid 4242), app ComfyUI", "service comfyui.service"."""
    out: list[str] = []
    for f in e.found:
        if f.how is FoundBy.PROCESS:
            out.append(f"running ({f.where})")
        elif f.how is FoundBy.SERVICE:
            out.append("service " + f.where.rsplit("/", 1)[-1].rsplit(":", 1)[0])
        elif f.how is FoundBy.APP and f.app:
            out.append("app " + f.app.rstrip("/").rsplit("/", 1)[-1])
        else:
            out.append(f.how.value)
    return ", ".join(dict.fromkeys(out)) or "-"


_SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "cyan"}


def findings_renderables(findings: list[Any], *, headline: bool = True) -> Iterable[RenderableType]:
    """The causes first, then apart what only might apply ("to check"). ``headline``: say first when no known
    problem matches (False where the view's own summary line already says it)."""
    causes, checks, shown = split_findings(findings)
    if not causes and headline:
        yield (Text(f"No cause is established: this machine shows {_failures(len(shown))} whose cause is to check "
                    "below.", style="yellow") if shown else
               Text("No known problem matches this machine" + ("; a few things to check below." if checks else "."),
                    style="green"))
    yield from _finding_panels(causes)
    if checks:
        yield Text("To check: failures this machine shows whose cause is not established, and what might apply"
                   if shown else "To check: these might apply, but nothing on this machine shows them yet",
                   style="bold")
        yield from _finding_panels(checks)


def split_findings(findings: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """(causes, to check, the to-check findings whose failure a line of the machine's own text shows): what the
    CLI's list and the TUI's summary line head with."""
    causes = [f for f in findings if getattr(f, "to_check", None) is None]
    checks = [f for f in findings if getattr(f, "to_check", None) is not None]
    return causes, checks, [f for f in checks if getattr(f, "shows_failure", False)]


def _failures(n: int) -> str:
    return "a failure" if n == 1 else f"{n} failures"


def kernel_args_line(args: Any) -> str | None:
    """A fix's kernel command-line parameters as one line of advice (the grubby commands, where the machine has
    grubby, are among the fix's commands)."""
    if not args:
        return None
    said = ([f"add {' '.join(args.add)}"] if args.add else []) + (
        [f"remove {' '.join(args.remove)}"] if args.remove else [])
    return (f"kernel command line: {'; '.join(said)} (GRUB: GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then "
            "update-grub or grub-mkconfig; Fedora/RHEL: grubby; their ostree variants (Silverblue, Kinoite, CoreOS): "
            "rpm-ostree kargs), then reboot")


def move_to_line(move: Any) -> str | None:
    """A fix's move of the kernel or linux-firmware as one line of advice."""
    if not move:
        return None
    said = ([f"boot a{'n' if move.kernel == 'older' else ''} {move.kernel} kernel"] if move.kernel else []) + (
        [f"install a {move.firmware} linux-firmware"] if move.firmware else [])
    return "system: " + "; ".join(said) + ", then reboot"


def _finding_panels(findings: list[Any]) -> Iterable[RenderableType]:
    from rich.panel import Panel

    for f in findings:
        body = Text()
        if getattr(f, "to_check", None):
            body.append("To check: ", style="bold")
            body.append(f"{f.to_check}\n")
        body.append("Cause: ", style="bold")
        body.append(f.cause + "\n")
        body.append("Fix: ", style="bold")
        body.append(f.fix + "\n")
        for cmd in f.fix_commands:
            body.append(f"  $ {cmd}\n", style="green")
        for name, value in f.fix_env:
            body.append(f"  export {name}={value}\n", style="green")
        if line := kernel_args_line(getattr(f, "fix_kernel_args", None)):
            body.append(f"  {line}\n", style="green")
        if line := move_to_line(getattr(f, "fix_move_to", None)):
            body.append(f"  {line}\n", style="green")
        if f.fix_plan:
            body.append(f"  plan: rocm-wizard --plan {f.fix_plan} --dry-run\n", style="green")
        if f.evidence:
            body.append("Evidence:\n", style="bold")
            for e in dict.fromkeys(str(e) for e in f.evidence):  # a line said twice is said once
                body.append(f"  - {e}\n")
        if f.sources:
            body.append("Sources:\n", style="bold")
            for s in dict.fromkeys(f.sources):
                body.append(f"  {s}\n", style="blue")
        style = _SEVERITY_STYLE.get(f.severity, "")
        body.rstrip()
        yield Panel(body, title=Text.assemble((f.severity.upper(), style), " ", f.title), title_align="left",
                    subtitle=Text(f.id), subtitle_align="right", border_style=style)
