"""Start suite.py in the interpreter under test (or in a container) and read its JSON lines.

The wizard never imports torch: the suite runs as a separate program, in its own session, and a
watchdog kills its whole process group when it goes silent for longer than a check may take.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from wizard.record import record
from wizard.verify.results import CheckResult, SuiteOutputError

SUITE_PATH = Path(__file__).resolve().with_name("suite.py")
CONTAINER_SUITE = "/opt/rocm-wizard/verify/suite.py"
DEFAULT_TIMEOUT = 120.0
# AMD's documented flags for a GPU container ("docker run ... --device=/dev/kfd --device=/dev/dri
# --group-add video --security-opt seccomp=unconfined --ipc=host"):
# https://github.com/ROCm/rocm-install-on-linux/blob/docs/6.2.4/docs/install/3rd-party/pytorch-install.rst
AMD_DOCKER_FLAGS = ("--device=/dev/kfd", "--device=/dev/dri", "--group-add", "video",
                    "--security-opt", "seccomp=unconfined", "--ipc=host")
# Variables handed into the container when set here (by name only: docker copies the value).
PASS_ENV = ("HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
            "MIOPEN_FIND_MODE", "TORCH_BLAS_PREFER_HIPBLASLT", "PYTORCH_HIP_ALLOC_CONF")
WATCHDOG_SLACK = 30.0  # seconds of silence beyond one check's timeout before the suite is killed


class VerifyUsageError(ValueError):
    """Bad input to verify (not an interpreter, no docker client): exit 2."""


@record
class SuiteOptions:
    device: str = "auto"  # "auto" | "cpu"
    timeout: float = DEFAULT_TIMEOUT  # per check
    quick: bool = False
    only: tuple[str, ...] = ()  # a subset of suite.CHECKS (tests, the TUI's re-run of one check)
    isolation: str | None = None  # "fork" (suite default) | "spawn"
    throughput_n: int | None = None

    def args(self) -> list[str]:
        out = ["--json", "--device", self.device, "--timeout", f"{self.timeout:g}"]
        if self.quick:
            out.append("--quick")
        if self.only:
            out += ["--only", ",".join(self.only)]
        if self.isolation:
            out += ["--isolation", self.isolation]
        if self.throughput_n:
            out += ["--throughput-n", str(self.throughput_n)]
        return out


# --------------------------------------------------------------------------- argv


def local_argv(python: str, opts: SuiteOptions) -> list[str]:
    return [python, str(SUITE_PATH), *opts.args()]


def docker_argv(image: str, opts: SuiteOptions, *, python: str | None = None, name: str | None = None,
                environ: Mapping[str, str] | None = None, docker: str = "docker") -> list[str]:
    """`docker run` with AMD's flags, the suite mounted read-only, the interpreter of the image."""
    env = os.environ if environ is None else environ
    argv = [docker, "run", "--rm"]
    if name:
        argv += ["--name", name]
    argv += [*AMD_DOCKER_FLAGS, "-v", f"{SUITE_PATH}:{CONTAINER_SUITE}:ro", "-e", "PYTHONUNBUFFERED=1"]
    for var in PASS_ENV:
        if var in env:
            argv += ["-e", var]
    argv += [image, python or "python3", CONTAINER_SUITE, *opts.args()]
    return argv


def command_argv(python: str | None = None, *, image: str | None = None, device: str = "auto",
                 timeout: float | None = None, quick: bool = False, wizard_python: str | None = None) -> list[str]:
    """The `rocm-wizard verify ... --json` command line a plan's verify step runs."""
    argv = [wizard_python or sys.executable, "-m", "wizard", "verify"]
    if python:
        argv += ["--python", python]
    if image:
        argv += ["--image", image]
    argv += ["--device", device]
    if timeout is not None:
        argv += ["--timeout", f"{timeout:g}"]
    if quick:
        argv.append("--quick")
    argv.append("--json")
    return argv


# --------------------------------------------------------------------------- interpreter


def default_python(environ: Mapping[str, str] | None = None) -> str | None:
    """The active venv's python (VIRTUAL_ENV), else `python3` on PATH."""
    env = os.environ if environ is None else environ
    venv = env.get("VIRTUAL_ENV")
    if venv:
        for name in ("python", "python3"):
            cand = os.path.join(venv, "bin", name)
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand
    return shutil.which("python3", path=env.get("PATH", os.defpath))


def resolve_python(spec: str) -> str:
    """A path given by the user (an interpreter or a venv directory) -> a checked interpreter path.

    Raises VerifyUsageError with a one-line reason when it is not a working Python.
    """
    p = Path(spec).expanduser()
    if p.is_dir():
        for name in ("bin/python", "bin/python3"):
            if (p / name).is_file():
                p = p / name
                break
        else:
            raise VerifyUsageError(f"{spec}: a directory without bin/python (not a venv)")
    elif not p.exists():
        found = shutil.which(spec) if "/" not in spec else None
        if not found:
            raise VerifyUsageError(f"{spec}: no such file")
        p = Path(found)
    if not os.access(p, os.X_OK) or not p.is_file():
        raise VerifyUsageError(f"{spec}: not an executable file")
    try:
        out = subprocess.run([str(p), "-c", "import sys; print(sys.hexversion)"], capture_output=True,
                             timeout=20, stdin=subprocess.DEVNULL, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VerifyUsageError(f"{spec}: not a Python interpreter ({exc})") from None
    text = out.stdout.decode("utf-8", "replace").strip()
    if out.returncode != 0 or not text.isdigit():
        raise VerifyUsageError(f"{spec}: not a Python interpreter")
    if int(text) < 0x03080000:
        raise VerifyUsageError(f"{spec}: Python {int(text) >> 24}.{(int(text) >> 16) & 0xFF} is too old "
                               f"for the suite (3.8 or newer)")
    return str(p)


# --------------------------------------------------------------------------- running


@record
class SuiteRun:
    header: Mapping[str, Any]  # the suite's first line
    checks: tuple[CheckResult, ...]
    summary: Mapping[str, Any] | None  # the suite's last line; None when it never came
    returncode: int | None
    stderr: str  # the tail of the suite's stderr
    seconds: float
    problem: str | None  # the run itself broke: watchdog, no output, unparsable lines


def _kill(proc: subprocess.Popen[bytes], docker_name: str | None, docker: str) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    if docker_name:  # the container outlives its client
        subprocess.run([docker, "kill", docker_name], capture_output=True, timeout=30,
                       stdin=subprocess.DEVNULL, check=False)


def run_suite(argv: Sequence[str], *, watchdog: float, on_check: Callable[[CheckResult], None] | None = None,
              env: Mapping[str, str] | None = None, docker_name: str | None = None,
              docker: str = "docker") -> SuiteRun:
    """Run the suite program, streaming its checks to on_check; kill it after `watchdog` s of silence."""
    t0 = time.monotonic()
    header: dict[str, Any] = {}
    summary: dict[str, Any] | None = None
    checks: list[CheckResult] = []
    problem: str | None = None
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                    env=None if env is None else dict(env), start_new_session=True)
        except OSError as exc:
            return SuiteRun({}, (), None, None, "", 0.0, f"could not start {argv[0]}: {exc}")
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = b""
        last = time.monotonic()
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], 1.0)
                if not ready:
                    if time.monotonic() - last > watchdog:
                        problem = f"the suite said nothing for {watchdog:g} s and was killed"
                        _kill(proc, docker_name, docker)
                        break
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                last = time.monotonic()
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    rec = _parse(raw)
                    if rec is None:
                        continue
                    kind = rec.get("type")
                    if kind == "suite":
                        header = rec
                    elif kind == "summary":
                        summary = rec
                    elif kind == "check":
                        try:
                            c = CheckResult.from_json(rec)
                        except SuiteOutputError as exc:
                            problem = f"unreadable suite output: {exc}"
                            continue
                        checks.append(c)
                        if on_check is not None:
                            on_check(c)
            rc = proc.wait()
        except BaseException:
            _kill(proc, docker_name, docker)
            raise
        finally:
            proc.stdout.close()
        err.seek(0, os.SEEK_END)
        size = err.tell()
        err.seek(max(0, size - 4000))
        tail = err.read().decode("utf-8", "replace").strip()
    if problem is None and summary is None:
        why = f"exit status {rc}" if rc is None or rc >= 0 else f"killed by signal {-rc}"
        problem = f"the suite stopped before its summary ({why})" + (f": {tail.splitlines()[-1]}" if tail else "")
    return SuiteRun(header, tuple(checks), summary, rc, tail, time.monotonic() - t0, problem)


def _parse(raw: bytes) -> dict[str, Any] | None:
    line = raw.decode("utf-8", "replace").strip()
    if not line.startswith("{"):
        return None  # a stray print from an image's entrypoint, a banner
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def container_name() -> str:
    return f"rocm-wizard-verify-{os.getpid()}-{uuid.uuid4().hex[:8]}"
