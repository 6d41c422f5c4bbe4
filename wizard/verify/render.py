"""The verify report as rich renderables (the CLI prints them; the TUI can show the same table)."""

from __future__ import annotations

from typing import Any

from wizard.verify.results import CheckResult, VerifyReport

STYLE = {"pass": "green", "fail": "bold red", "timeout": "bold magenta", "error": "bold red", "skip": "dim"}


def _detail(c: CheckResult) -> str:
    if c.status != "pass":
        return c.headline
    m = c.metrics
    if c.name == "import":
        bits = [f"torch {m.get('torch')}", f"{m.get('build')} build"]
        if m.get("hip"):
            bits.append(f"HIP {m['hip']}")
        if m.get("cuda"):
            bits.append(f"CUDA {m['cuda']}")
        if m.get("overrides"):
            bits.append(" ".join(f"{k}={v}" for k, v in m["overrides"].items() if k != "LD_LIBRARY_PATH"))
        return ", ".join(b for b in bits if b)
    if c.name == "devices":
        mem = m.get("memory_bytes")
        gib = f", {mem / (1 << 30):.0f} GiB" if isinstance(mem, (int, float)) else ""
        arch = f", {m['gcnArchName']}" if m.get("gcnArchName") else ""
        return f"{m.get('name')}{arch}{gib}"
    if c.name.startswith("matmul") and m.get("max_rel_err"):
        errs = ", ".join(f"{k} {v:.0e}" for k, v in m["max_rel_err"].items() if isinstance(v, (int, float)))
        return f"rel. error {errs}" + (f" ({m['blas']})" if m.get("blas") else "")
    if c.name == "conv2d" and "first_call_seconds" in m:
        steady = m.get("steady_seconds") or {}
        s = min(steady.values()) if steady else None
        return f"first call {m['first_call_seconds']:.3f} s" + (f", steady {s * 1000:.2f} ms" if s else "")
    if c.name == "train":
        return f"loss {m.get('first_loss', 0):.3f} -> {m.get('last_loss', 0):.3f}"
    if c.name == "alloc" and m.get("bytes"):
        return f"{m['bytes'] / (1 << 30):.2f} GiB allocated and released"
    if c.name == "throughput":
        s = f"matmul {m.get('matmul_tflops')} TFLOP/s ({m.get('matmul_dtype')} n={m.get('matmul_n')})"
        s += f", copy {m.get('copy_gb_s')} GB/s"
        if m.get("expected_peak_tflops"):
            s += f", {100 * m.get('fraction_of_peak', 0):.0f}% of stated peak {m['expected_peak_tflops']:g}"
        return s
    return ""


def table(report: VerifyReport) -> Any:
    from rich.table import Table

    where = f"image {report.image}" if report.image else (report.python or "?")
    t = Table(title=f"rocm-wizard verify: {where}", title_justify="left")
    t.add_column("check")
    t.add_column("device")
    t.add_column("status")
    t.add_column("time", justify="right")
    t.add_column("detail", overflow="fold")
    for c in report.checks:
        status = c.status.upper()
        if c.metrics.get("flag"):
            status += " (flag)"
        t.add_row(c.name, c.device, f"[{STYLE.get(c.status, '')}]{status}[/]", f"{c.seconds:.2f}s", _detail(c))
    return t


def print_report(report: VerifyReport, console: Any) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    console.print(table(report))
    for d in report.diagnosis:
        lines = [f"[bold]{escape(d.check)}[/] on {escape(d.device)}: {d.status}"]
        text = d.text.strip().splitlines()
        lines += [f"  [dim]{escape(x)}[/]" for x in text[:12]] + (["  [dim]...[/]"] if len(text) > 12 else [])
        if d.findings:
            for f in d.findings:
                check = f" [dim](to check: {escape(f.to_check)})[/]" if getattr(f, "to_check", None) else ""
                lines.append(f"  [bold yellow]{escape(f.id)}[/] ({f.severity}): {escape(f.title)}{check}")
                lines.append(f"    fix: {escape(f.fix)}")
                for s in list(f.sources)[:3]:
                    lines.append(f"    [dim]{escape(s)}[/]")
        else:
            lines.append("  no known issue matches this error"
                         + (f" ({escape(report.diagnoser)})" if report.diagnoser else "")
                         + ": `rocm-wizard report --bundle` collects the evidence for a bug report")
        console.print(Panel("\n".join(lines), border_style="red" if d.status in ("fail", "timeout", "error") else "yellow"))
    for n in report.notes:
        console.print(f"[yellow]note:[/] {escape(n)}")
    if report.problem:
        console.print(f"[bold red]the suite did not finish:[/] {escape(report.problem)}")
    counts = report.counts()
    summary = ", ".join(f"{counts[s]} {s}" for s in ("pass", "fail", "timeout", "error", "skip") if counts[s])
    verdict = "[bold green]OK[/]" if report.ok else "[bold red]FAILED[/]"
    console.print(f"{verdict}: {summary} in {report.seconds:.1f} s")
