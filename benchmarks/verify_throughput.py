#!/usr/bin/env python3
"""Is the verify suite's throughput probe honest? Compare it with a direct torch measurement.

Runs ``wizard/verify/suite.py --only import,throughput`` (the probe as users get it) and then times
the same shapes directly in this process with device events (10 warm-ups, 50 timed products; a
1 GiB device-to-device copy counted as bytes read + written). Prints both and the ratio; exit 0
when every ratio is within --tolerance (default 15 %). Needs a GPU that torch sees.

    python3 benchmarks/verify_throughput.py [--n 8192] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "wizard" / "verify" / "suite.py"


def suite_probe(n: int) -> dict:
    out = subprocess.run([sys.executable, str(SUITE), "--json", "--only", "import,throughput",
                          "--throughput-n", str(n)], capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("type") == "check" and rec["name"] == "throughput" and rec["device"] == "cuda:0":
            if rec["status"] != "pass":
                sys.exit(f"the suite's throughput check did not pass: {rec['status']}: {rec['error']}")
            return rec["metrics"]
    sys.exit("the suite reported no throughput for cuda:0:\n" + out.stdout + out.stderr)


def direct(n: int) -> dict:
    import torch

    dev = "cuda:0"
    a = torch.randn(n, n, device=dev, dtype=torch.float16)
    b = torch.randn(n, n, device=dev, dtype=torch.float16)
    c = torch.empty(n, n, device=dev, dtype=torch.float16)
    for _ in range(10):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    iters = 50
    start.record()
    for _ in range(iters):
        torch.matmul(a, b, out=c)
    end.record()
    torch.cuda.synchronize()
    t = start.elapsed_time(end) / 1000 / iters
    tflops = 2.0 * n ** 3 / t / 1e12
    del a, b, c
    nbytes = 1 << 30
    src = torch.empty(nbytes // 4, device=dev).uniform_()
    dst = torch.empty_like(src)
    for _ in range(5):
        dst.copy_(src)
    torch.cuda.synchronize()
    start.record()
    for _ in range(20):
        dst.copy_(src)
    end.record()
    torch.cuda.synchronize()
    t = start.elapsed_time(end) / 1000 / 20
    return {"matmul_tflops": round(tflops, 3), "copy_gb_s": round(2.0 * nbytes / t / 1e9, 3),
            "device": torch.cuda.get_device_name(0), "torch": torch.__version__}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--json-out")
    args = ap.parse_args()
    before = direct(args.n)  # the GPU warm and then cool between the two: measure on both sides
    import torch

    torch.cuda.empty_cache()
    t0 = time.perf_counter()
    probe = suite_probe(args.n)
    probe_wall = time.perf_counter() - t0
    after = direct(args.n)
    ref = dict(after)
    for key in ("matmul_tflops", "copy_gb_s"):
        ref[key] = round((before[key] + after[key]) / 2, 3)
        print(f"direct {key}: before the suite {before[key]}, after it {after[key]}")
    rows = []
    ok = True
    for key, unit in (("matmul_tflops", "TFLOP/s"), ("copy_gb_s", "GB/s")):
        ratio = probe[key] / ref[key]
        ok &= abs(ratio - 1) <= args.tolerance
        rows.append({"metric": key, "unit": unit, "suite": probe[key], "direct": ref[key], "ratio": round(ratio, 3)})
    print(f"device: {ref['device']}, torch {ref['torch']}, fp16 matmul n={args.n}")
    print(f"{'metric':14} {'suite':>10} {'direct':>10} {'ratio':>7}")
    for r in rows:
        print(f"{r['metric']:14} {r['suite']:>10} {r['direct']:>10} {r['ratio']:>7}  {r['unit']}")
    print(f"within {args.tolerance:.0%}: {'yes' if ok else 'NO'} (suite subprocess wall {probe_wall:.1f} s)")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"device": ref["device"], "torch": ref["torch"], "n": args.n,
                                                   "rows": rows, "within_tolerance": ok,
                                                   "direct_before": before, "direct_after": after,
                                                   "suite_metrics": probe}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
