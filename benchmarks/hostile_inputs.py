"""Each hostile input of issue 16 against the real command line: how long the answer takes, and what it is.

Runs, each in a child process with a hard timeout, with ``$TMPDIR`` a fresh directory:

* a 2 GiB decompression bomb (a ~2 MB ``.tar.gz``) and a member-count bomb, via ``diagnose --from``;
* the CVE-2025-4517 archive (built as CPython's own test builds it), via ``diagnose --from``;
* a 100,000-character ``verify --image``;
* 1 GiB on stdin for ``diagnose --error-file -``;
* a directory bundle whose evidence files are FIFOs, via ``detect --from``;
* the second review's ReDoS lines (B5: a 4 KB markdown heading, an amd-smi version part, a kfd header, and the
  heading padded to 1 MB), via ``diagnose --paste`` and as a bundle's ``notes.txt`` via ``diagnose --from``;
* a GNU long-name member of 50 MB in a small ``.tar.gz`` (B6), via ``diagnose --from``;
* 8 MiB of short lines that reach the readers' patterns, via ``diagnose --paste``: stopped by the parse's time
  budget (2 s of CPU), exit 2 with one line;

and, as the baseline of the same run, ``diagnose --from seed-7900xt`` (an ordinary recorded machine).
Prints, per input: seconds, the ratio to the baseline, the exit code, the first stderr line, and whether
anything was left in ``$TMPDIR``. Target: every hostile input answered with exit 2 (the FIFO bundle: 0),
nothing left behind, each within a few baselines; the ReDoS pastes and bundle are read (exit 0), each within 2 s
of the baseline, with one line on stderr at most.

    python benchmarks/hostile_inputs.py [--timeout 60]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the test modules import their helpers (runner_helpers) by plain name

from tests.test_security_bundles import GOOD_LSPCI, bomb, cve_2025_4517_archive  # noqa: E402
from wizard.inputs.archive import PREFIX  # noqa: E402


def _run(argv: list[str], tmpdir: Path, timeout: float, stdin: int | None = None) -> tuple[float, int | None, str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    t = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-m", "wizard", *argv], stdin=stdin, capture_output=True, text=True,
                             timeout=timeout, env=env)
        code: int | None = res.returncode
        line = (res.stderr.strip().splitlines() or [""])[0]
    except subprocess.TimeoutExpired:
        code, line = None, f"TIMED OUT after {timeout:g} s"
    return time.perf_counter() - t, code, line


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds each input may take at most")
    a = ap.parse_args()
    rows: list[tuple[str, str, float, int | None, str, bool]] = []
    with tempfile.TemporaryDirectory() as work_s:
        work = Path(work_s)
        cases: list[tuple[str, str, list[str], object]] = []

        bomb_path = work / "bomb.tar.gz"
        bomb(bomb_path)
        cases.append(("2 GiB bomb", f"{bomb_path.stat().st_size >> 10} KiB", ["diagnose", "--from", str(bomb_path)],
                      None))

        many = work / "many.tar.gz"
        with tarfile.open(many, "w:gz") as tf:
            for i in range(30_000):
                tf.addfile(tarfile.TarInfo(f"b/f{i}"))
        cases.append(("30,000 members", f"{many.stat().st_size >> 10} KiB", ["diagnose", "--from", str(many)], None))

        cve_tmp = work / "cve-tmp"
        cve_tmp.mkdir()
        cve = work / "cve.tar.gz"
        cve_2025_4517_archive(cve, len(str(cve_tmp)) + 1 + len(PREFIX) + 8)
        cases.append(("CVE-2025-4517 archive", f"{cve.stat().st_size >> 10} KiB", ["diagnose", "--from", str(cve)],
                      cve_tmp))

        cases.append(("100k-char --image", "100,000 chars", ["verify", "--image", "a" * 100_000], None))
        cases.append(("1 GiB stdin error file", "1 GiB", ["diagnose", "--from", "seed-7900xt", "--error-file", "-"],
                      "stdin"))

        fifo_bundle = work / "fifo-bundle"
        (fifo_bundle / "root" / "etc").mkdir(parents=True)
        (fifo_bundle / "lspci.txt").write_text(GOOD_LSPCI)
        for name in ("dpkg.txt", "traceback.txt", "rocminfo.txt", "root/etc/os-release"):
            os.mkfifo(fifo_bundle / name)
        cases.append(("FIFOs in a directory bundle", "4 FIFOs", ["detect", "--from", str(fifo_bundle)], None))

        heading = "## " + "a" * 10 + " " * 4000 + "#x\n"
        redos = {"4 KB heading (paste)": heading,
                 "4 KB amd-smi version part": "ROCm version: 6.2 | a" + " " * 4000 + "b\n",
                 "4 KB kfd header": "==> " + " " * 4000 + "x\n",
                 "1 MB heading (paste)": "## " + "a" * 10 + " " * (1 << 20) + "#x\n"}
        for label, text in redos.items():
            f = work / f"redos-{len(cases)}.txt"
            f.write_text(text * 3)
            cases.append((label, f"{len(text) >> 10} KiB", ["diagnose", "--paste", str(f)], "read"))
        redos_bundle = work / "redos-bundle"
        shutil.copytree(ROOT / "wizard" / "examples" / "seed-7900xt", redos_bundle)
        (redos_bundle / "notes.txt").write_text(heading * 3)
        (redos_bundle / "traceback.txt").write_text(heading)
        cases.append(("4 KB heading in a bundle", "12 KiB", ["diagnose", "--from", str(redos_bundle)], "read"))
        short = work / "short-lines.txt"  # B5: no line is long, the whole costs (48 s in one bundle file before)
        block = "## GPU\nGPU: gfx1100 x\n==> /sys/x <==\n$ rocminfo\nHSA_OVERRIDE_GFX_VERSION=11.0.0\nAgent 2\n"
        short.write_text(block * ((8 << 20) // len(block)))
        cases.append(("8 MiB of short lines (paste)", "8 MiB", ["diagnose", "--paste", str(short)], None))

        longname = work / "longname.tar.gz"
        info = tarfile.TarInfo("../" + "a" * (50 << 20))
        with tarfile.open(longname, "w:gz", format=tarfile.GNU_FORMAT) as tf:
            tf.addfile(info)
        cases.append(("50 MB GNU long name", f"{longname.stat().st_size >> 10} KiB",
                      ["diagnose", "--from", str(longname)], None))

        base_tmp = work / "base-tmp"
        base_tmp.mkdir()
        base, code, _ = _run(["diagnose", "--from", "seed-7900xt"], base_tmp, a.timeout)
        assert code == 0, "the baseline must succeed"
        for label, size, argv, extra in cases:
            tmpdir = extra if isinstance(extra, Path) else work / f"tmp-{len(rows)}"
            tmpdir.mkdir(exist_ok=True)
            if extra == "stdin":
                gen = subprocess.Popen(["head", "-c", str(1 << 30), "/dev/zero"], stdout=subprocess.PIPE)
                try:
                    secs, code, line = _run(argv, tmpdir, a.timeout, stdin=gen.stdout.fileno() if gen.stdout else None)
                finally:
                    gen.kill()
                    gen.wait()
            else:
                secs, code, line = _run(argv, tmpdir, a.timeout)
            left = any(n.startswith(PREFIX) for n in os.listdir(tmpdir))
            rows.append((label, size, secs, code, line, left))
        readers = {label for label, _s, _a, extra in cases if extra == "read"}

    print(f"baseline: diagnose --from seed-7900xt {base:.2f} s (same run)")
    print(f"{'input':30} {'size':>14} {'seconds':>8} {'x base':>7} {'exit':>5}  left  answer")
    ok = True
    for label, size, secs, code, line, left in rows:
        print(f"{label:30} {size:>14} {secs:8.2f} {secs / base:7.2f} {str(code):>5}  {'YES' if left else 'no':4}  "
              f"{line[:110]}")
        read = label in readers
        want = 0 if label.startswith("FIFOs") or read else 2
        ok = ok and code == want and not left and (not read or secs < base + 2.0)
    print("all answered as they should, nothing left behind" if ok else "SOME INPUT WAS NOT HANDLED AS IT SHOULD")
    return 0 if ok else 1


if __name__ == "__main__":
    from results import main_with_results  # benchmarks/results.py: --write-results

    raise SystemExit(main_with_results(main, "hostile_inputs.txt"))
