#!/usr/bin/env python3
"""rocm-wizard verification suite: does this PyTorch compute the right numbers on this GPU, fast enough?

Self-contained: the standard library and torch only. It is run BY PATH by the interpreter under test
(``python3 suite.py --json``), or inside a container; the rocm-wizard process never imports it.

Process layout (the wizard's invariant: a hang or a crash in the stack under test is a result, never
the end of the suite):

* the *driver* (this script's main) never imports torch. It plans the checks, gives each a deadline,
  and prints one JSON line per finished check;
* a *zygote* (``--zygote``) imports torch once and forks one child per check, so every check runs in
  its own process (its own session, so the whole group can be killed) without paying for the torch
  import each time. If torch initialised the GPU during import (forking would then be unsafe), or
  with ``--isolation spawn``, each check is a fresh ``--run-check`` process instead.

A check that outlives ``--timeout`` seconds is killed with its process group and reported as
``timeout``; a child that dies without a verdict (abort, segfault) as ``error`` with the tail of its
stderr; wrong numbers, NaNs or an exception from torch as ``fail``.

Output (``--json``): JSON lines. ``{"type": "suite", ...}`` first, one ``{"type": "check", "name",
"device", "status", "seconds", "error", "metrics"}`` per check, ``{"type": "summary", ...}`` last.
Exit status: 0 when every check that ran passed, 1 otherwise, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback

SCHEMA = 1
STATUSES = ("pass", "fail", "timeout", "skip", "error")
CHECKS = ("import", "devices", "tensor", "matmul", "matmul-blaslt", "matmul-blas", "conv2d", "train",
          "autocast", "alloc", "p2p", "throughput")
QUICK = ("import", "devices", "tensor", "matmul", "conv2d")
# Variables that change what the GPU stack does; reported by the import check when set.
OVERRIDE_VARS = (
    "HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL", "PYTORCH_ROCM_ARCH", "TORCH_BLAS_PREFER_HIPBLASLT", "TORCH_BLAS_PREFER_CUBLASLT",
    "MIOPEN_FIND_MODE", "MIOPEN_USER_DB_PATH", "MIOPEN_DEBUG_DISABLE_FIND_DB", "HSA_ENABLE_SDMA",
    "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "AMD_SERIALIZE_KERNEL", "HIP_LAUNCH_BLOCKING",
    "CUDA_LAUNCH_BLOCKING", "LD_LIBRARY_PATH", "ROCM_PATH",
)
STDERR_TAIL = 2000
# Relative Frobenius error allowed against a float64 reference computed from the same (rounded) inputs.
MATMUL_TOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2}
CONV_TOL = {"float32": 1e-4, "float16": 1e-2}


class CheckFailed(Exception):
    """The stack answered wrongly (wrong numbers, NaN, loss not falling)."""

    def __init__(self, message: str, metrics: dict | None = None) -> None:
        super().__init__(message)
        self.metrics = metrics or {}


class CheckSkipped(Exception):
    """The check does not apply here (one GPU for p2p, no BLAS choice in this build)."""


# =========================================================================== checks (need torch)


def _sync(torch, dev: str) -> None:
    if dev.startswith("cuda"):
        torch.cuda.synchronize(dev)


def _rel_err(torch, out, ref) -> float:
    """||out - ref|| / ||ref|| in float64 on the CPU; inf when out has a NaN or an Inf."""
    o = out.detach().to("cpu", torch.float64)
    r = ref.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(o).all()):
        return float("inf")
    denom = float(r.norm())
    return float((o - r).norm()) / (denom if denom > 0 else 1.0)


def _nonfinite(torch, t) -> bool:
    return not bool(torch.isfinite(t.detach()).all())


def _dtype(torch, name: str):
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def check_import(torch, dev: str, params: dict) -> dict:
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    build = "rocm" if hip else ("cuda" if cuda else "cpu")
    m: dict = {
        "torch": torch.__version__, "hip": hip, "cuda": cuda, "build": build,
        "python": sys.version.split()[0], "executable": sys.executable,
        "torch_path": os.path.dirname(getattr(torch, "__file__", "") or ""),
        "import_seconds": params.get("import_seconds"),
        "overrides": {k: os.environ[k] for k in OVERRIDE_VARS if k in os.environ},
        "warnings": [],
    }
    if build != "cpu":
        try:
            m["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            m["arch_list"] = None
            m["warnings"].append(f"torch.cuda.get_arch_list() failed: {exc}")
    else:
        m["arch_list"] = []
    available = bool(torch.cuda.is_available())
    count = int(torch.cuda.device_count()) if available else 0
    m["gpu_available"] = available
    m["device_count"] = count
    try:
        m["blas_library"] = str(torch.backends.cuda.preferred_blas_library()) if available else None
    except Exception:  # noqa: BLE001 - older torch: no such API
        m["blas_library"] = None
    if not available:
        if build == "cpu":
            m["gpu_unavailable"] = (f"torch {torch.__version__} is a CPU build: it has no ROCm (HIP) "
                                    f"support, so it cannot use a GPU")
        else:
            m["gpu_unavailable"] = (f"torch {torch.__version__} is a {build.upper()} build but "
                                    f"torch.cuda.is_available() is False: no GPU is visible to it")
    if build == "cpu":
        m["warnings"].append(f"verify: torch {torch.__version__} is a CPU build, not a ROCm build")
    elif build == "cuda":
        m["warnings"].append(f"verify: torch {torch.__version__} is a CUDA build, not a ROCm build")
    devs = []
    problems = []
    arch_list = m.get("arch_list") or []
    for i in range(count):
        p = torch.cuda.get_device_properties(i)
        gcn = getattr(p, "gcnArchName", None) if build == "rocm" else None
        d = {"index": i, "name": p.name, "gcnArchName": gcn, "capability": f"{p.major}.{p.minor}"}
        if build == "rocm" and gcn:
            base = gcn.split(":")[0]
            d["gfx"] = base
            d["in_arch_list"] = base in arch_list if arch_list else None
            if arch_list and base not in arch_list:
                problems.append(f"verify: cuda:{i} ({p.name}) reports {base}, which is not among the GPU "
                                f"targets of this torch build ({', '.join(arch_list)})")
        elif build == "cuda":
            sm = f"sm_{p.major}{p.minor}"
            d["in_arch_list"] = sm in arch_list if arch_list else None
            if arch_list and sm not in arch_list:
                m["warnings"].append(f"cuda:{i} is {sm}, not among this build's targets {arch_list} "
                                     f"(PTX may still cover it)")
        devs.append(d)
    m["devices"] = devs
    if problems:
        raise CheckFailed("; ".join(problems), m)
    return m


def check_devices(torch, dev: str, params: dict) -> dict:
    if dev == "cpu":
        import platform

        mem = None
        try:
            with open("/proc/meminfo") as fh:
                for line in fh:
                    if line.startswith("MemTotal:"):
                        mem = int(line.split()[1]) * 1024
        except OSError:
            pass
        return {"name": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
                "threads": torch.get_num_threads(), "memory_bytes": mem}
    i = torch.device(dev).index or 0
    p = torch.cuda.get_device_properties(i)
    free, total = torch.cuda.mem_get_info(i)
    m = {"ordinal": i, "name": p.name, "memory_bytes": int(p.total_memory), "free_bytes": int(free),
         "capability": f"{p.major}.{p.minor}", "multiprocessors": p.multi_processor_count,
         "gcnArchName": getattr(p, "gcnArchName", None) if getattr(torch.version, "hip", None) else None}
    if int(p.total_memory) <= 0:
        raise CheckFailed(f"verify: {dev} reports no memory", m)
    return m


def check_tensor(torch, dev: str, params: dict) -> dict:
    errors = []
    n = 1 << 16
    a = torch.randn(n, dtype=torch.float32)
    b = torch.randn(n, dtype=torch.float32)
    da, db = a.to(dev), b.to(dev)
    # elementwise and reductions against the CPU in float64
    ref = a.double() * b.double() + torch.sin(a.double())
    out = da * db + torch.sin(da)
    e = _rel_err(torch, out, ref)
    if e > 1e-5:
        errors.append(f"verify: tensor elementwise wrong results (relative error {e:.1e})")
    s, s_ref = float(da.sum()), float(a.double().sum())
    if not math.isfinite(s) or abs(s - s_ref) > 1e-3 * max(1.0, float(a.double().abs().sum())):
        errors.append(f"verify: tensor reduction wrong results (sum {s} vs {s_ref})")
    if int(da.argmax()) != int(a.argmax()) or float(da.max()) != float(a.max()):
        errors.append("verify: tensor reduction wrong results (max/argmax)")
    # host <-> device round trips, several dtypes, a non-contiguous source
    for t in (torch.arange(1000, dtype=torch.int64), torch.rand(37, 41) > 0.5,
              torch.randn(129, 65).half(), torch.randn(64, 33).t()):
        back = t.to(dev).cpu()
        if not torch.equal(back, t):
            errors.append(f"verify: host<->device copy changed a {t.dtype} tensor")
    z = torch.zeros(17, 19, device=dev)
    o = torch.ones(17, 19, device=dev)
    if float((z + o).sum()) != 17 * 19:
        errors.append("verify: tensor creation wrong results (zeros + ones)")
    m = {"elementwise_rel_err": e}
    if errors:
        raise CheckFailed("; ".join(errors), m)
    return m


def _set_blas(torch, params: dict) -> str | None:
    """Select the BLAS path asked for; returns what torch reports it uses (None: no choice)."""
    want = params.get("blas")
    if not want:
        try:
            return str(torch.backends.cuda.preferred_blas_library())
        except Exception:  # noqa: BLE001
            return None
    fn = getattr(torch.backends.cuda, "preferred_blas_library", None)
    if fn is None:
        raise CheckSkipped(f"torch {torch.__version__} has no torch.backends.cuda.preferred_blas_library")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = fn(want)
        except Exception as exc:  # noqa: BLE001 - an unknown backend name in this build
            raise CheckSkipped(f"this build cannot select the {want} BLAS path: {exc}") from None
    params["_blas_warnings"] = [str(w.message) for w in caught]
    return str(got)


def check_matmul(torch, dev: str, params: dict) -> dict:
    quick = params.get("quick")
    lib = None
    if dev.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False
        lib = _set_blas(torch, params)
    if dev == "cpu":
        shapes = [(64, 64, 64), (127, 255, 63)] if quick else [(127, 255, 63), (256, 256, 256), (1, 513, 257),
                                                                 (384, 96, 640)]
    else:
        shapes = [(64, 64, 64), (127, 255, 63)] if quick else [(127, 255, 63), (1024, 1024, 1024),
                                                                 (1, 4097, 511), (2048, 33, 1025), (777, 1537, 319)]
    batched = None if quick else (4, 129, 65, 33)
    res: dict = {"blas": lib, "shapes": [list(s) for s in shapes], "max_rel_err": {}}
    if params.get("_blas_warnings"):
        res["blas_warnings"] = params["_blas_warnings"][:3]
    errors = []
    for dname in ("float32", "float16", "bfloat16"):
        dt = _dtype(torch, dname)
        worst = 0.0
        cases = [((m_, k_), (k_, n_)) for (m_, n_, k_) in shapes]
        if batched:
            bsz, m_, n_, k_ = batched
            cases.append(((bsz, m_, k_), (bsz, k_, n_)))
        for sa, sb in cases:
            a = torch.randn(*sa, device=dev, dtype=dt)  # fresh inputs every time
            b = torch.randn(*sb, device=dev, dtype=dt)
            c = torch.matmul(a, b)
            ref = torch.matmul(a.detach().to("cpu", torch.float64), b.detach().to("cpu", torch.float64))
            shape = "x".join(str(x) for x in (*sa, sb[-1]))
            if _nonfinite(torch, c):
                errors.append(f"verify: matmul wrong results (NaN/Inf in the {dname} {shape} product on {dev})")
                worst = float("inf")
                continue
            e = _rel_err(torch, c, ref)
            worst = max(worst, e)
            if e > MATMUL_TOL[dname]:
                errors.append(f"verify: matmul wrong results ({dname} {shape} on {dev}: relative error "
                              f"{e:.1e} > {MATMUL_TOL[dname]:.0e})")
        res["max_rel_err"][dname] = worst if math.isfinite(worst) else None
    if errors:
        raise CheckFailed("; ".join(errors[:4]) + (f" (+{len(errors) - 4} more)" if len(errors) > 4 else ""), res)
    return res


def check_conv2d(torch, dev: str, params: dict) -> dict:
    import torch.nn.functional as F

    quick = params.get("quick")
    if dev.startswith("cuda"):
        torch.backends.cudnn.allow_tf32 = False
    # (input NCHW, weight OIHW, stride, padding)
    configs = [((4, 16, 32, 32), (32, 16, 3, 3), 1, 1)]
    if not quick:
        configs.append(((3, 5, 33, 31), (7, 5, 5, 3), 2, (2, 1)))
    res: dict = {"miopen_find_mode": os.environ.get("MIOPEN_FIND_MODE")}
    errors = []
    first = True
    for dname in ("float32", "float16"):
        dt = _dtype(torch, dname)
        worst = 0.0
        for xs, ws, stride, pad in configs:
            x = torch.randn(*xs, device=dev, dtype=dt, requires_grad=True)
            w = (torch.randn(*ws, device=dev, dtype=dt) * 0.1).requires_grad_(True)
            _sync(torch, dev)
            t0 = time.perf_counter()
            y = F.conv2d(x, w, stride=stride, padding=pad)
            _sync(torch, dev)
            t_first = time.perf_counter() - t0
            g = torch.randn_like(y)
            t0 = time.perf_counter()
            y.backward(g)
            _sync(torch, dev)
            t_first_bwd = time.perf_counter() - t0
            if first:
                res["first_call_seconds"] = round(t_first, 6)
                res["first_backward_seconds"] = round(t_first_bwd, 6)
                first = False
            steady = []
            for _ in range(3 if quick else 5):
                t0 = time.perf_counter()
                F.conv2d(x, w, stride=stride, padding=pad)
                _sync(torch, dev)
                steady.append(time.perf_counter() - t0)
            steady.sort()
            res.setdefault("steady_seconds", {})[f"{dname} {'x'.join(map(str, xs))}"] = round(steady[len(steady) // 2], 6)
            res.setdefault("first_seconds", {})[f"{dname} {'x'.join(map(str, xs))}"] = round(t_first, 6)
            xr = x.detach().to("cpu", torch.float64).requires_grad_(True)
            wr = w.detach().to("cpu", torch.float64).requires_grad_(True)
            yr = F.conv2d(xr, wr, stride=stride, padding=pad)
            yr.backward(g.detach().to("cpu", torch.float64))
            tag = f"{dname} {'x'.join(map(str, xs))} on {dev}"
            for what, out, ref in (("forward", y, yr), ("grad input", x.grad, xr.grad), ("grad weight", w.grad, wr.grad)):
                if out is None or _nonfinite(torch, out):
                    errors.append(f"verify: conv2d wrong results (NaN/Inf in the {what}, {tag})")
                    worst = float("inf")
                    continue
                e = _rel_err(torch, out, ref)
                worst = max(worst, e)
                if e > CONV_TOL[dname]:
                    errors.append(f"verify: conv2d wrong results ({what}, {tag}: relative error {e:.1e} > "
                                  f"{CONV_TOL[dname]:.0e})")
        res.setdefault("max_rel_err", {})[dname] = worst if math.isfinite(worst) else None
    if errors:
        raise CheckFailed("; ".join(errors[:4]) + (f" (+{len(errors) - 4} more)" if len(errors) > 4 else ""), res)
    return res


def check_train(torch, dev: str, params: dict) -> dict:
    nn = torch.nn
    gen = torch.Generator().manual_seed(1234)
    n = 256
    x = torch.randn(n, 3, 16, 16, generator=gen) * 0.5
    y = torch.randint(0, 2, (n,), generator=gen)
    x[:, :, :, :8] += (y * 2 - 1).float().view(n, 1, 1, 1)  # class 1: bright left half
    x, y = x.to(dev), y.to(dev)
    torch.manual_seed(1234)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2),
    ).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    m = {"first_loss": losses[0], "last_loss": losses[-1], "steps": len(losses)}
    if not all(math.isfinite(v) for v in losses):
        raise CheckFailed(f"verify: training produced NaN/Inf loss ({losses[0]:.4f} -> {losses[-1]})", m)
    if not losses[-1] < 0.5 * losses[0]:
        raise CheckFailed(f"verify: training loss did not fall ({losses[0]:.4f} -> {losses[-1]:.4f} in "
                          f"{len(losses)} steps)", m)
    return m


def check_autocast(torch, dev: str, params: dict) -> dict:
    kind = "cuda" if dev.startswith("cuda") else "cpu"
    low = torch.float16 if kind == "cuda" else torch.bfloat16
    tol = 1e-2 if low == torch.float16 else 5e-2
    if kind == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    lin = torch.nn.Linear(256, 128).to(dev)
    x = torch.randn(64, 256, device=dev)
    with torch.autocast(device_type=kind, dtype=low):
        y = lin(x)
        z = torch.matmul(y, y.t())
    ref_y = lin(x).double()
    ref_z = ref_y @ ref_y.t()
    m = {"dtype": str(y.dtype), "expected_dtype": str(low)}
    if y.dtype != low:
        raise CheckFailed(f"verify: autocast did not run in {low} (got {y.dtype})", m)
    loss = z.float().pow(2).mean()
    loss.backward()
    e = _rel_err(torch, z, ref_z)
    m["rel_err"] = e if math.isfinite(e) else None
    if _nonfinite(torch, z) or _nonfinite(torch, lin.weight.grad):
        raise CheckFailed("verify: autocast wrong results (NaN/Inf)", m)
    if e > tol:
        raise CheckFailed(f"verify: autocast wrong results (relative error {e:.1e} > {tol:.0e})", m)
    return m


def check_alloc(torch, dev: str, params: dict) -> dict:
    if dev == "cpu":
        size = 256 << 20
        t0 = time.perf_counter()
        big = torch.empty(size // 4, dtype=torch.float32)
        big.fill_(1.0)
        ok = float(big[-1]) == 1.0 and float(big[: 1 << 20].sum()) == float(1 << 20)
        del big
        m = {"bytes": size, "seconds_fill": round(time.perf_counter() - t0, 6)}
        if not ok:
            raise CheckFailed("verify: large allocation wrong contents", m)
        return m
    i = torch.device(dev).index or 0
    free0, total = torch.cuda.mem_get_info(i)
    size = min(int(free0 * 0.5), 8 << 30) // (1 << 20) * (1 << 20)
    t0 = time.perf_counter()
    big = torch.empty(size // 4, dtype=torch.float32, device=dev)
    big.fill_(1.0)
    _sync(torch, dev)
    last = float(big[-1])
    part = float(big[: 1 << 20].sum())
    held = torch.cuda.memory_allocated(i)
    del big
    torch.cuda.empty_cache()
    _sync(torch, dev)
    free1, _ = torch.cuda.mem_get_info(i)
    m = {"bytes": size, "free_before": int(free0), "free_after": int(free1), "allocated": int(held),
         "seconds": round(time.perf_counter() - t0, 6)}
    if last != 1.0 or part != float(1 << 20):
        raise CheckFailed(f"verify: large allocation wrong contents on {dev}", m)
    if free1 < free0 - max(256 << 20, size // 10):
        raise CheckFailed(f"verify: large allocation not released on {dev} ({free0 - free1} bytes still held)", m)
    return m


def check_p2p(torch, dev: str, params: dict) -> dict:
    n = torch.cuda.device_count()
    if n < 2:
        raise CheckSkipped("one GPU: no device-to-device copy to test")
    size = (64 << 20) // 4
    m: dict = {"pairs": {}}
    errors = []
    for i in range(n):
        j = (i + 1) % n
        src = torch.randn(size, device=f"cuda:{i}")
        torch.cuda.synchronize(i)
        t0 = time.perf_counter()
        dst = src.to(f"cuda:{j}")
        torch.cuda.synchronize(j)
        dt = time.perf_counter() - t0
        back = dst.to(f"cuda:{i}")
        same = bool(torch.equal(back, src))
        try:
            peer = bool(torch.cuda.can_device_access_peer(i, j))
        except Exception:  # noqa: BLE001
            peer = None
        m["pairs"][f"cuda:{i}->cuda:{j}"] = {"gb_s": round(size * 4 / dt / 1e9, 3), "equal": same, "peer": peer}
        if not same:
            errors.append(f"verify: device-to-device copy changed the data (cuda:{i} -> cuda:{j})")
    if errors:
        raise CheckFailed("; ".join(errors), m)
    return m


def _timed_loop(torch, dev: str, fn, budget: float, batches: int = 3, max_batch: int = 50) -> tuple[float, int]:
    """Seconds per call of fn, as a direct measurement takes it: a short warm-up (at least 3 calls, about
    budget/10 s), then `batches` runs of calls back to back, each of about budget/4 s (at most
    max_batch calls), timed with device events on a GPU; the fastest run counts. Short runs measure
    the rate the card reaches, not how it throttles under a long load."""
    fn()
    _sync(torch, dev)
    t0 = time.perf_counter()
    n_warm = 0
    while n_warm < 3 or time.perf_counter() - t0 < budget / 10:
        fn()
        _sync(torch, dev)
        n_warm += 1
    one = max((time.perf_counter() - t0) / n_warm, 1e-6)
    n = int(min(max_batch, max(2, (budget / 4) / one)))
    best = float("inf")
    for _ in range(batches):
        if dev.startswith("cuda"):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) / 1000.0 / n)
        else:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = min(best, (time.perf_counter() - t0) / n)
    return best, n * batches


def check_throughput(torch, dev: str, params: dict) -> dict:
    budget = float(params.get("budget", 1.0))
    if dev == "cpu":
        n, dt, dname = int(params.get("n", 1024)), torch.float32, "float32"
    else:
        n, dt, dname = int(params.get("n", 8192)), torch.float16, "float16"
    a = torch.randn(n, n, device=dev, dtype=dt)
    b = torch.randn(n, n, device=dev, dtype=dt)
    out = torch.empty(n, n, device=dev, dtype=dt)
    t, iters = _timed_loop(torch, dev, lambda: torch.matmul(a, b, out=out), budget)
    tflops = 2.0 * n ** 3 / t / 1e12
    m: dict = {"matmul_dtype": dname, "matmul_n": n, "matmul_tflops": round(tflops, 3), "matmul_iters": iters}
    if _nonfinite(torch, out):
        raise CheckFailed(f"verify: matmul wrong results (NaN/Inf in the throughput {dname} {n}x{n}x{n} product on {dev})", m)
    del a, b, out
    nbytes = int(params.get("copy_bytes", (256 << 20) if dev == "cpu" else (1 << 30)))
    src = torch.empty(nbytes // 4, device=dev, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    t, _ = _timed_loop(torch, dev, lambda: dst.copy_(src), budget / 2)
    m["copy_bytes"] = nbytes
    m["copy_gb_s"] = round(2.0 * nbytes / t / 1e9, 3)  # bytes read + bytes written
    del src, dst
    if dev.startswith("cuda"):
        host = torch.empty((256 << 20) // 4, dtype=torch.float32).pin_memory()
        gpu = torch.empty_like(host, device=dev)
        t, _ = _timed_loop(torch, dev, lambda: gpu.copy_(host, non_blocking=True), budget / 2)
        m["h2d_gb_s"] = round((256 << 20) / t / 1e9, 3)
    return m


CHECK_FUNCS = {
    "import": check_import, "devices": check_devices, "tensor": check_tensor, "matmul": check_matmul,
    "matmul-blaslt": check_matmul, "matmul-blas": check_matmul, "conv2d": check_conv2d, "train": check_train,
    "autocast": check_autocast, "alloc": check_alloc, "p2p": check_p2p, "throughput": check_throughput,
}


def run_check_inline(torch, name: str, dev: str, params: dict) -> dict:
    """Run one check in this process; returns a result record (never raises)."""
    t0 = time.perf_counter()
    status, error, metrics = "pass", None, {}
    try:
        metrics = CHECK_FUNCS[name](torch, dev, params) or {}
    except CheckSkipped as exc:
        status, error = "skip", str(exc)
    except CheckFailed as exc:
        status, error, metrics = "fail", str(exc), exc.metrics
    except Exception as exc:  # noqa: BLE001 - torch's own errors are the result
        status = "fail"
        error = f"{type(exc).__name__}: {exc}".strip()
        metrics = {"traceback": traceback.format_exc(limit=6)[-STDERR_TAIL:]}
    return {"status": status, "error": error, "metrics": _jsonable(metrics),
            "check_seconds": round(time.perf_counter() - t0, 6)}


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)


# =========================================================================== child processes


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies, so no check outlives the suite."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort (not Linux)
        pass


def _import_torch():
    import torch  # noqa: PLC0415 - the only place torch is imported

    return torch


def zygote_main() -> int:
    """Import torch once, then fork a child per request read on stdin."""
    _die_with_parent()
    out = sys.stdout
    t0 = time.perf_counter()
    try:
        torch = _import_torch()
    except BaseException as exc:  # noqa: BLE001 - report any import failure
        out.write(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}",
                              "traceback": traceback.format_exc()[-STDERR_TAIL:],
                              "import_seconds": round(time.perf_counter() - t0, 6)}) + "\n")
        out.flush()
        return 0
    import_s = round(time.perf_counter() - t0, 6)
    initialised = False
    try:
        initialised = bool(torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001
        pass
    out.write(json.dumps({"ready": True, "import_seconds": import_s, "gpu_initialised": initialised}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        r, w = os.pipe()
        out.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the check's own process
            try:
                os.setsid()
                _die_with_parent()
                os.close(r)
                fd = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                rec = run_check_inline(torch, req["check"], req["device"], req.get("params") or {})
                data = json.dumps(rec).encode()
                while data:
                    data = data[os.write(w, data):]
            finally:
                os._exit(0)
        os.close(w)
        out.write(json.dumps({"pid": pid}) + "\n")
        out.flush()
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        _, st = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(st) if hasattr(os, "waitstatus_to_exitcode") else st
        try:
            rec = json.loads(b"".join(chunks).decode()) if chunks else None
        except ValueError:
            rec = None
        out.write(json.dumps({"done": True, "rc": rc, "result": rec}) + "\n")
        out.flush()
    return 0


def run_check_main(args) -> int:
    """--run-check NAME: one check in this fresh process (the spawn isolation)."""
    _die_with_parent()
    params = json.loads(args.params or "{}")
    t0 = time.perf_counter()
    try:
        torch = _import_torch()
    except BaseException as exc:  # noqa: BLE001
        rec = {"status": "fail", "error": f"{type(exc).__name__}: {exc}",
               "metrics": {"traceback": traceback.format_exc()[-STDERR_TAIL:]}, "check_seconds": 0.0}
    else:
        params.setdefault("import_seconds", round(time.perf_counter() - t0, 6))
        rec = run_check_inline(torch, args.run_check, args.device, params)
    with open(args.result_file, "w") as fh:
        json.dump(rec, fh)
    return 0


# =========================================================================== driver (no torch)


class _Lines:
    """Read JSON lines from a pipe with deadlines (select + os.read, no threads)."""

    def __init__(self, fh) -> None:
        self.fd = fh.fileno()
        self.buf = b""
        self.eof = False

    def read(self, deadline: float):
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                try:
                    return json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    continue
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
            self.buf += chunk


def _tail(path: str, n: int = STDERR_TAIL) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - n))
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _kill_group(pid: int) -> None:
    for fn in (os.killpg, os.kill):
        try:
            fn(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except (ValueError, TypeError):
        return f"signal {-rc}"


class Driver:
    def __init__(self, args) -> None:
        self.args = args
        self.timeout = float(args.timeout)
        self.tmp = tempfile.mkdtemp(prefix="rocm-wizard-verify-")
        self.zygote = None
        self.lines = None
        self.isolation = args.isolation
        self.import_seconds = None
        self.import_failure = None  # (status, error) when torch cannot be imported
        self.current_child = None
        self.results = []
        self.env = dict(os.environ)
        self.env.setdefault("PYTHONUNBUFFERED", "1")

    # -- output
    def emit(self, rec: dict) -> None:
        self.results.append(rec)
        if self.args.json:
            sys.stdout.write(json.dumps(dict({"type": "check"}, **rec)) + "\n")
        else:
            err = f"  {rec['error']}" if rec.get("error") else ""
            sys.stdout.write(f"{rec['status'].upper():8} {rec['name']:14} {rec['device']:16} "
                             f"{rec['seconds']:7.2f}s{err}\n")
        sys.stdout.flush()

    # -- zygote
    def start_zygote(self) -> None:
        err = open(os.path.join(self.tmp, "zygote.err"), "wb")
        self.zygote = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--zygote"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                       env=self.env, close_fds=True)
        err.close()
        self.lines = _Lines(self.zygote.stdout)
        t0 = time.monotonic()
        try:
            hello = self.lines.read(t0 + self.timeout)
        except TimeoutError:
            self.import_seconds = round(time.monotonic() - t0, 3)
            self.stop_zygote(kill=True)
            tail = _tail(os.path.join(self.tmp, "zygote.err"))
            self.import_failure = ("timeout", f"verify: import torch timed out after {self.timeout:g} s (hang or stall)"
                                   + ("\n" + tail if tail else ""))
            return
        self.import_seconds = round(time.monotonic() - t0, 3)
        if hello is None:
            rc = self.zygote.wait()
            tail = _tail(os.path.join(self.tmp, "zygote.err"))
            why = f"killed by {_signal_name(rc)}" if rc < 0 else f"exit status {rc}"
            self.import_failure = ("error", f"verify: python died while importing torch ({why})\n{tail}".strip())
            self.zygote = None
        elif not hello.get("ready"):
            tail = _tail(os.path.join(self.tmp, "zygote.err"))
            self.import_failure = ("fail", (hello.get("error") or "import torch failed") + ("\n" + tail if tail else ""))
            self.stop_zygote()
        else:
            self.import_seconds = hello.get("import_seconds", self.import_seconds)
            if hello.get("gpu_initialised"):  # forking after GPU init is unsafe
                self.isolation = "spawn"
                self.stop_zygote()

    def stop_zygote(self, kill: bool = False) -> None:
        z, self.zygote = self.zygote, None
        if z is None:
            return
        if kill:
            z.kill()
            z.wait()
            return
        try:
            z.stdin.close()
        except OSError:
            pass
        try:
            z.wait(timeout=2)
        except subprocess.TimeoutExpired:
            z.kill()
            z.wait()

    def _via_zygote(self, name: str, dev: str, params: dict, errpath: str):
        """-> (record or None, rc, timed_out)."""
        req = {"check": name, "device": dev, "params": params, "stderr": errpath}
        self.zygote.stdin.write((json.dumps(req) + "\n").encode())
        self.zygote.stdin.flush()
        start = time.monotonic()
        msg = self.lines.read(start + 30)
        if msg is None or "pid" not in msg:
            raise RuntimeError("the zygote stopped answering")
        pid = self.current_child = msg["pid"]
        try:
            done = self.lines.read(start + self.timeout)
        except TimeoutError:
            _kill_group(pid)
            done = self.lines.read(time.monotonic() + 30)
            self.current_child = None
            return None, (done or {}).get("rc"), True
        self.current_child = None
        if done is None:
            raise RuntimeError("the zygote died")
        return done.get("result"), done.get("rc"), False

    def _via_spawn(self, name: str, dev: str, params: dict, errpath: str):
        resfile = errpath + ".json"
        with open(errpath, "wb") as err:
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--run-check", name, "--device", dev,
                                  "--params", json.dumps(params), "--result-file", resfile],
                                 stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=self.env,
                                 start_new_session=True, close_fds=True)
        self.current_child = p.pid
        try:
            rc = p.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(p.pid)
            p.wait()
            self.current_child = None
            return None, p.returncode, True
        self.current_child = None
        try:
            with open(resfile) as fh:
                return json.load(fh), rc, False
        except (OSError, ValueError):
            return None, rc, False

    def run(self, name: str, dev: str, params: dict | None = None) -> dict:
        params = dict(params or {})
        params["quick"] = bool(self.args.quick)
        errpath = os.path.join(self.tmp, f"{len(self.results):02d}-{name}.err")
        t0 = time.monotonic()
        rec, rc, timed_out = None, None, False
        if self.isolation == "fork" and self.zygote is None and self.import_failure is None:
            self.start_zygote()
        if self.import_failure is not None and name != "import":
            return self.emit_rec(name, dev, "skip", 0.0, "torch could not be imported", {})
        try:
            if self.isolation == "fork" and self.zygote is not None:
                rec, rc, timed_out = self._via_zygote(name, dev, params, errpath)
            else:
                rec, rc, timed_out = self._via_spawn(name, dev, params, errpath)
        except RuntimeError as exc:  # the zygote broke: carry on with fresh processes
            self.stop_zygote()
            self.isolation = "spawn"
            rec, rc, timed_out = None, None, False
            tail = _tail(errpath)
            return self.emit_rec(name, dev, "error", time.monotonic() - t0,
                                 f"verify: {name} check process lost ({exc})\n{tail}".strip(), {})
        seconds = time.monotonic() - t0
        tail = _tail(errpath)
        if timed_out:
            err = f"verify: {name} timed out after {self.timeout:g} s (hang or stall)"
            return self.emit_rec(name, dev, "timeout", seconds, (err + ("\n" + tail if tail else "")), {})
        if rec is None:
            why = (f"killed by {_signal_name(rc)}" if isinstance(rc, int) and rc < 0
                   else f"exit status {rc}")
            err = f"verify: {name} check process died without a result ({why})"
            return self.emit_rec(name, dev, "error", seconds, err + ("\n" + tail if tail else ""), {})
        error = rec.get("error")
        if rec["status"] in ("fail", "error") and tail:
            error = (error or "") + "\n" + tail
        metrics = rec.get("metrics") or {}
        metrics.setdefault("check_seconds", rec.get("check_seconds"))
        if name == "import" and self.isolation == "fork" and self.import_seconds:
            seconds += self.import_seconds  # torch was imported once, by the zygote
        return self.emit_rec(name, dev, rec["status"], seconds, error, metrics)

    def emit_rec(self, name, dev, status, seconds, error, metrics) -> dict:
        rec = {"name": name, "device": dev, "status": status, "seconds": round(seconds, 3),
               "error": error, "metrics": metrics}
        self.emit(rec)
        return rec

    def skip(self, name: str, dev: str, reason: str) -> None:
        self.emit_rec(name, dev, "skip", 0.0, reason, {})

    # -- plan
    def main(self) -> int:
        wall0 = time.monotonic()
        only = set(self.args.only.split(",")) if self.args.only else None
        wanted = [c for c in (QUICK if self.args.quick else CHECKS) if only is None or c in only]
        if self.args.json:
            sys.stdout.write(json.dumps({"type": "suite", "schema": SCHEMA, "python": sys.executable,
                                         "python_version": sys.version.split()[0], "device": self.args.device,
                                         "quick": bool(self.args.quick), "timeout": self.timeout,
                                         "isolation": self.isolation, "checks": wanted}) + "\n")
            sys.stdout.flush()
        try:
            if self.isolation == "fork":
                self.start_zygote()
            dev0 = "cpu" if self.args.device == "cpu" else "auto"
            if self.import_failure is not None:
                status, error = self.import_failure
                imp = self.emit_rec("import", dev0, status, self.import_seconds or 0.0, error,
                                    {"import_seconds": self.import_seconds})
            else:
                imp = self.run("import", dev0, {"import_seconds": self.import_seconds})
            meta = imp.get("metrics") or {}
            rest = [c for c in wanted if c != "import"]
            if imp["status"] not in ("pass", "fail") or (imp["status"] == "fail" and not meta.get("build")):
                for c in rest:
                    self.skip(c, self.args.device, "torch could not be imported (see the import check)")
            elif self.args.device == "cpu":
                for c in rest:
                    if c in ("matmul-blaslt", "matmul-blas", "p2p"):
                        self.skip(c, "cpu", "GPU only")
                    else:
                        self.run(c, "cpu", self.params_for(c))
            elif not meta.get("gpu_available") or not meta.get("device_count"):
                reason = meta.get("gpu_unavailable") or "no GPU visible to torch"
                for c in rest:
                    self.skip(c, "gpu", reason + " (use --device cpu to run the checks on the CPU)")
            else:
                devs = [f"cuda:{i}" for i in range(int(meta["device_count"]))]
                for c in rest:
                    if c == "p2p":
                        if len(devs) < 2:
                            self.skip(c, devs[0], "one GPU: no device-to-device copy to test")
                        else:
                            self.run(c, ",".join(devs), {})
                        continue
                    for d in devs:
                        self.run(c, d, self.params_for(c))
        finally:
            self.stop_zygote()
        counts = {s: sum(1 for r in self.results if r["status"] == s) for s in STATUSES}
        ok = counts["fail"] == counts["timeout"] == counts["error"] == 0
        summary = dict(counts, total=len(self.results), ok=ok, seconds=round(time.monotonic() - wall0, 3),
                       import_seconds=self.import_seconds, isolation=self.isolation)
        if self.args.json:
            sys.stdout.write(json.dumps(dict({"type": "summary"}, **summary)) + "\n")
        else:
            sys.stdout.write(" ".join(f"{k}={counts[k]}" for k in STATUSES) + f" in {summary['seconds']:.1f}s\n")
        sys.stdout.flush()
        return 0 if ok else 1

    def params_for(self, name: str) -> dict:
        if name == "matmul-blaslt":
            return {"blas": "cublaslt"}  # hipBLASLt on ROCm builds
        if name == "matmul-blas":
            return {"blas": "cublas"}  # hipBLAS / rocBLAS on ROCm builds
        if name == "throughput" and self.args.throughput_n:
            return {"n": self.args.throughput_n}
        return {}

    def abort(self, *_a) -> None:
        if self.current_child:
            _kill_group(self.current_child)
        if self.zygote is not None:
            self.zygote.kill()
        sys.exit(130)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="suite.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("auto", "cpu"), default="auto",
                   help="auto: the GPUs torch sees (GPU checks skip when none); cpu: every check on the CPU")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds allowed to each check (default 120)")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, small sizes")
    p.add_argument("--json", action="store_true", help="JSON lines on stdout")
    p.add_argument("--only", metavar="NAMES", help="comma-separated subset of: " + ", ".join(CHECKS))
    p.add_argument("--isolation", choices=("fork", "spawn"), default="fork",
                   help="fork: one torch import, a forked process per check; spawn: a fresh process per check")
    p.add_argument("--throughput-n", type=int, default=None, help="matrix size of the throughput probe")
    p.add_argument("--zygote", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--run-check", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--params", help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    if args.zygote:
        return zygote_main()
    if args.run_check:
        return run_check_main(args)
    if args.timeout <= 0:
        sys.stderr.write("suite.py: --timeout must be positive\n")
        return 2
    if args.only:
        bad = [c for c in args.only.split(",") if c not in CHECKS]
        if bad:
            sys.stderr.write(f"suite.py: unknown check(s): {', '.join(bad)} (known: {', '.join(CHECKS)})\n")
            return 2
    if not hasattr(os, "fork"):
        args.isolation = "spawn"
    d = Driver(args)
    signal.signal(signal.SIGTERM, d.abort)
    signal.signal(signal.SIGINT, d.abort)
    try:
        return d.main()
    except BrokenPipeError:  # the reader went away (| head): nothing left to say
        return 1
    finally:
        import shutil

        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
