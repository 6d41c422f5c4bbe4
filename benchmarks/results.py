"""What every benchmark writes into benchmarks/results/: its figures under a header naming the command that
produced them, when, and on which machine (so a figure the README quotes can be traced to its run)."""

from __future__ import annotations

import datetime
import io
import os
import platform
import sys
from pathlib import Path
from typing import Callable

RESULTS = Path(__file__).resolve().parent / "results"


def machine_line() -> str:
    """CPU model and count, load at the start, Python: enough to tell a quiet 2-core VM from a busy one."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = "load %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "load unknown"
    return (f"# machine: {os.cpu_count()} CPU(s), {model}; {load} at the start; "
            f"Python {platform.python_version()} on {platform.system()} {platform.release()}")


def command_line() -> str:
    script = Path(sys.argv[0]).resolve()
    try:
        shown = str(script.relative_to(RESULTS.parent.parent))
    except ValueError:
        shown = str(script)
    return " ".join(["python", shown, *sys.argv[1:]])


def write_results(name: str, body: str, command: str | None = None) -> Path:
    """benchmarks/results/NAME: a header (date, command, machine) and ``body``."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = f"# {now}: {command or command_line()}\n"
    if not body.startswith("# machine:"):
        head += machine_line() + "\n"
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / name
    path.write_text(head + body, encoding="utf-8")
    print(f"wrote {path}")
    return path


class _Tee:
    def __init__(self, *streams: object) -> None:
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)  # type: ignore[attr-defined]
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()  # type: ignore[attr-defined]


def main_with_results(main: Callable[[], int], name: str) -> int:
    """Run a benchmark's ``main``; with ``--write-results`` among the arguments (taken out before ``main``
    parses them) what it prints also goes to benchmarks/results/NAME, under the header."""
    if "--write-results" not in sys.argv[1:]:
        return main()
    command, machine = command_line(), machine_line()
    sys.argv.remove("--write-results")
    buf = io.StringIO()
    real = sys.stdout
    sys.stdout = _Tee(real, buf)  # type: ignore[assignment]
    try:
        code = main()
    finally:
        sys.stdout = real
    body = machine + "\n" + buf.getvalue() + ("" if code == 0 else f"(exit {code})\n")
    write_results(name, body, command=command)
    return code
