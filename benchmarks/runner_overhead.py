"""The runner's overhead on an action printing 100,000 lines, against the same command run alone.

"Alone" is the command with its output going to a file, the cheapest way a script would run it
(`cmd > log`). "Runner" is the full engine path: journal records (fsync), the per-step log file,
line splitting, and OutputLines events to a subscriber. Prints the median of N runs and the ratio
(target: at most 1.2).

    python benchmarks/runner_overhead.py [--lines 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()

    from wizard.host import LiveHost
    from wizard.model import Action, ResolvedPlan, StepPlan
    from wizard.runner import events as ev
    from wizard.runner import runs
    from wizard.runner.engine import Engine
    from wizard.runner.executor import BASE_ENV, LiveExecutor
    from wizard.runner.privilege import Privilege

    code = f"import sys\nw = sys.stdout.write\nfor i in range({a.lines}): w(f'line {{i}} of the flood\\n')"
    argv = [sys.executable, "-c", code]
    env = {**__import__("os").environ, **BASE_ENV}
    alone, runner = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.repeat):
            with open(Path(tmp) / f"alone{i}.log", "wb") as fh:
                t0 = time.perf_counter()
                subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, check=True)
                alone.append(time.perf_counter() - t0)
            plan = ResolvedPlan("bench", "bench", "", (), (StepPlan("flood", "flood", (Action(tuple(argv)),)),))
            run = runs.create(Path(tmp) / f"s{i}", Path(tmp) / f"l{i}", plan)
            seen = [0]

            def sink(e: object) -> None:
                if isinstance(e, ev.OutputLines):
                    seen[0] += len(e.lines)

            host = LiveHost()
            eng = Engine(host, plan, run, executor=LiveExecutor(host.environ, Privilege(is_root=True)), on_event=sink)
            t0 = time.perf_counter()
            out = eng.execute()
            runner.append(time.perf_counter() - t0)
            assert out.state == "done" and seen[0] == a.lines, (out, seen)
    ma, mr = statistics.median(alone), statistics.median(runner)
    print(f"lines: {a.lines}, runs: {a.repeat}")
    print(f"command alone (output to a file): median {ma:.3f}s")
    print(f"through the runner:               median {mr:.3f}s")
    print(f"ratio: {mr / ma:.2f} (target <= 1.2)")
    return 0


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "runner_overhead.txt"))
