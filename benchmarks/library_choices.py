"""The figures behind the README's "Libraries, and what the wizard does itself".

1. Import cost, each in a fresh interpreter (``python -X importtime``, median of N, one interpreter for both):
   ``packaging.utils`` (what the parsers on detect's path would pay for PEP 503 names) and ``msgspec`` (the
   evaluated replacement of the hand-written readers; not a dependency: pass an interpreter that has it).
2. 100,000 lines streamed by the runner's shell (``wizard.runner.shell.run``: ``os.read`` of 64 KiB chunks from
   one merged pipe) against ``sh`` used as designed (``_out=callback``, ``_out_bufsize=65536``), in pairs.

    python benchmarks/library_choices.py [--repeat 5] [--import-python PATH] [--write-results]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def import_ms(python: str, module: str) -> float | None:
    """Cumulative import time of ``module`` in ms (None when it cannot be imported)."""
    res = subprocess.run([python, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True)
    if res.returncode != 0:
        return None
    for line in reversed(res.stderr.splitlines()):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1000
    return None


def stream_pair(lines: int) -> tuple[float, float]:
    import sh

    from wizard.runner import shell

    code = f"import sys\nw = sys.stdout.write\nfor i in range({lines}): w(f'line {{i}} of the flood\\n')"
    argv = [sys.executable, "-c", code]
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # as the runner runs every action
    seen = [0, 0]

    def ours_cb(b: bytes) -> None:
        seen[0] += b.count(b"\n")

    def sh_cb(chunk: str) -> None:
        seen[1] += chunk.count("\n")

    t0 = time.perf_counter()
    shell.run(argv, env=env, on_output=ours_cb)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    sh.Command(argv[0])(*argv[1:], _out=sh_cb, _err_to_out=True, _out_bufsize=65536, _bg=True, _new_group=True,
                        _env=env, _return_cmd=True).wait()
    theirs = time.perf_counter() - t0
    assert seen == [lines, lines], seen
    return ours, theirs


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--import-python", default=sys.executable,
                    help="the interpreter whose imports are timed: one with packaging and msgspec (msgspec is not "
                         "a dependency of the wizard)")
    a = ap.parse_args()
    python = a.import_python
    for module in ("packaging.utils", "msgspec"):
        got = [import_ms(python, module) for _ in range(a.repeat)]
        if None in got:
            print(f"import {module}: not importable by {python}")
            continue
        ms = sorted(g for g in got if g is not None)
        print(f"import {module}: median {statistics.median(ms):.1f} ms (min {ms[0]:.1f}, max {ms[-1]:.1f}) "
              f"over {a.repeat} fresh interpreters ({python})")
    pairs = [stream_pair(a.lines) for _ in range(a.repeat)]
    ours, theirs = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    print(f"{a.lines:,} lines: wizard.runner.shell {ours:.3f} s, sh _out callback {theirs:.3f} s "
          f"(median of {a.repeat} pairs; sh / runner = {theirs / ours:.2f})")
    return 0


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "library_choices.txt"))
