"""Verify, wizard side, without torch: argv construction, JSON-line parsing, watchdog, diagnosis, band."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from wizard.cli import main as cli_main
from wizard.record import record, replace
from wizard.verify import SuiteOptions, VerifyUsageError, command_argv, docker_argv, local_argv, run_verify
from wizard.verify.diagnosis import build_notes, diagnose_checks, expected_peak, flag_throughput, texts_for
from wizard.verify.launch import (
    AMD_DOCKER_FLAGS,
    CONTAINER_SUITE,
    SUITE_PATH,
    default_python,
    resolve_python,
    run_suite,
)
from wizard.verify.results import CheckResult, SuiteOutputError, VerifyReport

pytestmark = pytest.mark.integration

SUITE_CHECKS = ("import", "devices", "tensor", "matmul", "matmul-blaslt", "matmul-blas", "conv2d", "train",
                "autocast", "alloc", "p2p", "throughput")


def _report(*checks: CheckResult, problem: str | None = None) -> VerifyReport:
    return VerifyReport(checks=checks, python="/x/python", image=None, device="auto", quick=False,
                        timeout=120.0, seconds=1.0, problem=problem)


def _c(name: str, status: str, device: str = "cuda:0", error: str | None = None, **metrics) -> CheckResult:
    return CheckResult(name, device, status, 0.5, error, metrics)


# --------------------------------------------------------------------------- argv


def test_local_argv_runs_the_suite_by_path_with_json() -> None:
    argv = local_argv("/venv/bin/python", SuiteOptions(device="cpu", timeout=7.5, quick=True))
    assert argv[:2] == ["/venv/bin/python", str(SUITE_PATH)]
    assert argv[2:] == ["--json", "--device", "cpu", "--timeout", "7.5", "--quick"]
    assert SUITE_PATH.is_file() and SUITE_PATH.name == "suite.py"


def test_docker_argv_has_amd_flags_and_mounts_the_suite_read_only() -> None:
    env = {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HOME": "/root"}
    argv = docker_argv("rocm/pytorch:latest", SuiteOptions(timeout=60), name="rw-1", environ=env)
    assert argv[:3] == ["docker", "run", "--rm"]
    joined = " ".join(argv)
    for flag in ("--device=/dev/kfd", "--device=/dev/dri", "--group-add video", "--security-opt seccomp=unconfined",
                 "--ipc=host", "--name rw-1"):
        assert flag in joined
    assert argv[argv.index("-v") + 1] == f"{SUITE_PATH}:{CONTAINER_SUITE}:ro"
    # the override is passed by name (docker copies the value), HOME is not passed
    assert ["-e", "HSA_OVERRIDE_GFX_VERSION"] == argv[argv.index("HSA_OVERRIDE_GFX_VERSION") - 1:
                                                      argv.index("HSA_OVERRIDE_GFX_VERSION") + 1]
    assert "HOME" not in joined
    i = argv.index("rocm/pytorch:latest")
    assert argv[i + 1:i + 3] == ["python3", CONTAINER_SUITE]
    assert argv[i + 3:] == ["--json", "--device", "auto", "--timeout", "60"]
    # every AMD flag comes before the image (after it they would be the container's arguments)
    assert all(argv.index(f) < i for f in AMD_DOCKER_FLAGS)


def test_docker_argv_python_inside_image() -> None:
    argv = docker_argv("img:1", SuiteOptions(), python="/opt/conda/bin/python", environ={})
    assert argv[argv.index("img:1") + 1] == "/opt/conda/bin/python"


def test_command_argv_for_the_plan_step() -> None:
    assert command_argv("/v/bin/python", wizard_python="/usr/bin/python3") == [
        "/usr/bin/python3", "-m", "wizard", "verify", "--python", "/v/bin/python", "--device", "auto", "--json"]
    argv = command_argv(image="rocm/pytorch:x", timeout=30, quick=True, wizard_python="p")
    assert argv == ["p", "-m", "wizard", "verify", "--image", "rocm/pytorch:x", "--device", "auto",
                    "--timeout", "30", "--quick", "--json"]


def test_command_argv_parses_with_the_real_cli() -> None:
    from wizard.cli import build_parser

    args = build_parser().parse_args(command_argv("/v/bin/python", timeout=9, quick=True)[3:])
    assert args.command == "verify" and args.pythons == ["/v/bin/python"]
    assert args.timeout == 9 and args.quick and args.json and args.device == "auto"


# --------------------------------------------------------------------------- interpreter


def test_default_python_prefers_the_active_venv(tmp_path: Path) -> None:
    py = tmp_path / "venv" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)
    assert default_python({"VIRTUAL_ENV": str(tmp_path / "venv"), "PATH": ""}) == str(py)
    other = tmp_path / "bin" / "python3"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert default_python({"PATH": str(other.parent)}) == str(other)
    assert default_python({"PATH": str(tmp_path / "nothing")}) is None


def test_resolve_python_accepts_an_interpreter_and_a_venv_dir(tmp_path: Path) -> None:
    assert resolve_python(sys.executable) == sys.executable
    venv = Path(sys.prefix)
    if (venv / "bin" / "python").exists():
        assert resolve_python(str(venv)).startswith(str(venv))


@pytest.mark.parametrize("kind", ["missing", "text", "not-python", "dir"])
def test_resolve_python_refuses_what_is_not_an_interpreter(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x"
    if kind == "text":
        path.write_text("hello")
    elif kind == "not-python":
        path.write_text("#!/bin/sh\necho nope\n")
        path.chmod(0o755)
    elif kind == "dir":
        path.mkdir()
    with pytest.raises(VerifyUsageError):
        resolve_python(str(path))


def test_verify_command_exits_2_for_a_python_that_is_not_an_interpreter(tmp_path: Path, capsys) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    assert cli_main(["verify", "--python", str(fake), "--json"]) == 2
    err = capsys.readouterr().err
    assert "not a Python interpreter" in err and len(err.strip().splitlines()) == 1
    for argv, needle in [(["--python", str(tmp_path / "nope")], f"--python {tmp_path / 'nope'}: no such file"),
                         (["--timeout", "-1"], "argument --timeout: must be positive: '-1'"),
                         (["--device", "gpu0"], "argument --device: invalid choice: 'gpu0'"),
                         (["--python", sys.executable, "--python", sys.executable], "verify takes one --python PATH")]:
        try:
            code = cli_main(["verify", *argv])
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, (argv, code, err)


def test_verify_command_refuses_a_recorded_machine(capsys) -> None:
    from wizard.host import example_names

    names = example_names()
    if not names:
        pytest.skip("no built-in example machine in this checkout")
    assert cli_main(["--from", names[0], "verify", "--python", sys.executable]) == 2
    assert "recorded" in capsys.readouterr().err


def test_verify_command_image_without_docker_is_a_one_line_error(monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli_main(["verify", "--image", "rocm/pytorch:latest"]) == 1
    assert "docker" in capsys.readouterr().err


# --------------------------------------------------------------------------- results


def test_check_result_round_trip_and_bad_records() -> None:
    rec = {"type": "check", "name": "matmul", "device": "cuda:0", "status": "fail", "seconds": 1.5,
           "error": "boom\nmore", "metrics": {"a": 1}}
    c = CheckResult.from_json(rec)
    assert c.to_json() == {k: v for k, v in rec.items() if k != "type"}
    assert c.headline == "boom" and c.bad
    with pytest.raises(SuiteOutputError):
        CheckResult.from_json({"name": "x", "device": "cpu", "status": "weird", "seconds": 0})
    with pytest.raises(SuiteOutputError):
        CheckResult.from_json({"name": "x"})


@pytest.mark.parametrize("statuses,ok", [
    (("pass", "pass", "skip"), True),
    (("pass", "fail"), False),
    (("pass", "timeout"), False),
    (("pass", "error"), False),
    (("skip", "skip"), False),  # nothing ran: not a pass
])
def test_exit_code_is_zero_only_when_every_check_that_ran_passed(statuses, ok) -> None:
    r = _report(*[_c(f"c{i}", s) for i, s in enumerate(statuses)])
    assert r.ok is ok and r.exit_code == (0 if ok else 1)


def test_a_broken_run_is_never_ok() -> None:
    assert not _report(_c("import", "pass"), problem="the suite stopped").ok


def test_report_json_shape() -> None:
    r = _report(_c("import", "pass", "auto", torch="2.5.1+rocm6.2", build="rocm", hip="6.2.41133"),
                _c("matmul", "fail", error="HIPBLAS_STATUS_ALLOC_FAILED"), _c("p2p", "skip", error="one GPU"))
    j = json.loads(json.dumps(r.to_json()))
    assert set(j) >= {"checks", "summary", "findings", "notes", "environment"}
    for c in j["checks"]:
        assert set(c) == {"name", "device", "status", "seconds", "error", "metrics"}
    s = j["summary"]
    assert (s["pass"], s["fail"], s["skip"], s["timeout"], s["error"], s["total"]) == (1, 1, 1, 0, 0, 3)
    assert s["ok"] is False and s["torch"] == "2.5.1+rocm6.2" and s["build"] == "rocm"


# --------------------------------------------------------------------------- run_suite with stand-in suites


def _script(tmp_path: Path, body: str) -> list[str]:
    p = tmp_path / "fake_suite.py"
    p.write_text(textwrap.dedent(body))
    return [sys.executable, str(p)]


def test_run_suite_streams_checks_and_ignores_noise(tmp_path: Path) -> None:
    argv = _script(tmp_path, """
        import json
        print("banner from an image entrypoint")
        print(json.dumps({"type": "suite", "schema": 1}))
        print(json.dumps({"type": "check", "name": "import", "device": "auto", "status": "pass", "seconds": 1,
                          "error": None, "metrics": {"torch": "2.5.1"}}))
        print("{not json")
        print(json.dumps({"type": "check", "name": "matmul", "device": "cuda:0", "status": "timeout",
                          "seconds": 3, "error": "verify: matmul timed out after 3 s", "metrics": {}}))
        print(json.dumps({"type": "summary", "ok": False}))
    """)
    seen = []
    run = run_suite(argv, watchdog=10, on_check=seen.append)
    assert [c.name for c in seen] == ["import", "matmul"] and run.problem is None
    assert run.header == {"type": "suite", "schema": 1} and run.summary == {"type": "summary", "ok": False}


def test_run_suite_reports_a_suite_that_dies_early(tmp_path: Path) -> None:
    argv = _script(tmp_path, """
        import json, sys
        print(json.dumps({"type": "check", "name": "import", "device": "auto", "status": "pass", "seconds": 1,
                          "error": None, "metrics": {}}), flush=True)
        sys.stderr.write("Traceback: something broke\\n")
        sys.exit(3)
    """)
    run = run_suite(argv, watchdog=10)
    assert len(run.checks) == 1 and run.returncode == 3
    assert "before its summary" in run.problem and "something broke" in run.problem


def test_run_suite_watchdog_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    argv = _script(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        print("{{}}", flush=True)
        time.sleep(600)
    """)
    t0 = time.monotonic()
    run = run_suite(argv, watchdog=1.5)
    took = time.monotonic() - t0
    assert run.problem and "said nothing" in run.problem
    assert took < 8
    child = int(pidfile.read_text())
    for _ in range(50):  # the grandchild went with the group
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the suite's child process survived the watchdog")


def test_run_suite_cannot_start() -> None:
    run = run_suite(["/nonexistent/python", "x"], watchdog=1)
    assert run.problem and "could not start" in run.problem and not run.checks


def test_run_verify_with_a_stand_in_docker_records_the_argv(tmp_path: Path) -> None:
    """--image: the wizard runs `docker run ...`; a stand-in docker records its argv and answers."""
    log = tmp_path / "docker.argv"
    docker = tmp_path / "docker"
    docker.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, sys
        open({str(log)!r}, "a").write(json.dumps(sys.argv[1:]) + "\\n")
        if sys.argv[1] == "run":
            print(json.dumps({{"type": "check", "name": "import", "device": "auto", "status": "pass",
                               "seconds": 1, "error": None, "metrics": {{"torch": "2.4.1+rocm6.1"}}}}))
            print(json.dumps({{"type": "summary", "ok": True}}))
    """))
    docker.chmod(docker.stat().st_mode | stat.S_IEXEC)
    report = run_verify(image="rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.4.1",
                        options=SuiteOptions(quick=True), docker=str(docker), diagnose_text=None, env={})
    assert report.ok and report.image and report.environment["torch"] == "2.4.1+rocm6.1"
    argv = json.loads(log.read_text().splitlines()[0])
    assert argv[0] == "run" and "--device=/dev/kfd" in argv and argv[-1] == "--quick"


# --------------------------------------------------------------------------- diagnosis


@record
class _F:
    id: str
    severity: str = "error"
    title: str = "t"
    fix: str = "do this"
    sources: tuple[str, ...] = ("https://example.invalid/issue",)
    to_check: str | None = None


def test_every_bad_check_goes_to_the_diagnoser_with_its_text() -> None:
    asked = []

    def fake(text, facts=None):
        asked.append((text, facts))
        return [_F("hit")] if "HIPBLAS" in text else []

    checks = [_c("import", "pass", "auto"), _c("matmul", "fail", error="RuntimeError: HIPBLAS_STATUS_ALLOC_FAILED"),
              _c("conv2d", "timeout", error="verify: conv2d timed out after 60 s (hang or stall)"),
              _c("p2p", "skip", error="one GPU"), _c("alloc", "error", error=None)]
    out = diagnose_checks(checks, facts="FACTS", diagnose_text=fake)
    assert [(d.check, d.status) for d in out] == [("matmul", "fail"), ("conv2d", "timeout"), ("alloc", "error")]
    assert out[0].findings == (_F("hit"),) and out[1].findings == ()
    assert asked[2][0] == "verify: alloc error on cuda:0" and all(f == "FACTS" for _, f in asked)


def test_a_diagnoser_that_raises_does_not_hide_the_results() -> None:
    def broken(text, facts=None):
        raise KeyError("x")

    out = diagnose_checks([_c("matmul", "fail", error="boom")], diagnose_text=broken)
    assert out[0].findings == () and "diagnoser failed" in out[0].text


def test_notes_carry_the_wrong_build_warning_and_flags() -> None:
    checks = [_c("import", "pass", "auto", warnings=["verify: torch 2.13.0+cpu is a CPU build, not a ROCm build"]),
              _c("throughput", "pass", flag="verify: matmul throughput far below expected (5.0 of about 100 TFLOP/s)")]
    notes = build_notes(checks)
    assert notes[0].endswith("is a CPU build, not a ROCm build") and "far below" in notes[1]
    assert texts_for(checks[1]) == ["verify: matmul throughput far below expected (5.0 of about 100 TFLOP/s)"]


@record
class _Info:
    name: str
    peak_tflops: float | None
    pci_id: str = "1002:0000"


class _KB:
    def __init__(self, *infos: _Info) -> None:
        self.infos = infos

    def gpus(self):
        return self.infos

    def gpu_by_pci(self, pci):
        return next((i for i in self.infos if i.pci_id == pci), None)


def test_throughput_flagged_not_failed_when_far_below_the_stated_peak() -> None:
    kb = _KB(_Info("AMD Instinct MI300X", 1307.4, "1002:74a1"), _Info("Radeon RX 7900 XTX", None))
    checks = [_c("import", "pass", "auto", devices=[{"index": 0, "name": "AMD Instinct MI300X"},
                                                    {"index": 1, "name": "AMD Instinct MI300X"}]),
              _c("throughput", "pass", "cuda:0", matmul_tflops=650.0),
              _c("throughput", "pass", "cuda:1", matmul_tflops=120.0)]
    out = flag_throughput(checks, kb=kb)
    good, slow = out[1].metrics, out[2].metrics
    assert good["expected_peak_tflops"] == 1307.4 and "flag" not in good and good["fraction_of_peak"] == 0.497
    assert "far below expected (120.0 of about 1307.4" in slow["flag"]
    assert out[2].status == "pass"  # flagged, not failed
    assert _report(*out).ok


def test_expected_peak_needs_an_unambiguous_match() -> None:
    kb = _KB(_Info("Radeon RX 7900 XT", 100.0), _Info("Radeon RX 7900 XT", 90.0), _Info("Radeon RX 7600", 40.0))
    assert expected_peak("cuda:0", "AMD Radeon RX 7900 XT", kb=kb) is None  # two different figures
    assert expected_peak("cuda:0", "AMD Radeon RX 7600", kb=kb) == (40.0, "Radeon RX 7600")
    assert expected_peak("cuda:0", "NVIDIA H100 80GB HBM3", kb=kb) is None
    assert expected_peak("cuda:0", "AMD Radeon RX 7600", kb=None) is None


def test_expected_peak_by_pci_id_through_the_facts() -> None:
    from wizard.model import Facts, Gpu

    kb = _KB(_Info("Instinct MI100", 184.6, "1002:738c"))
    facts = Facts(gpus=(Gpu(pci_id="1002:738c", hip_index=0, gfx="gfx908"),))
    assert expected_peak("cuda:0", "some other name", kb=kb, facts=facts) == (184.6, "Instinct MI100 (1002:738c)")


def test_the_real_kb_has_peaks_the_band_can_use() -> None:
    from wizard.kb import load_kb

    kb = load_kb()
    if not any(g.peak_tflops for g in kb.gpus()):
        pytest.skip("the knowledge base states no peak_tflops yet")
    g = next(g for g in kb.gpus() if g.peak_tflops)
    assert expected_peak("cuda:0", g.name.split(" / ")[0], kb=kb) is not None


# --------------------------------------------------------------------------- rendering


def test_rich_report_names_the_finding_and_its_fix() -> None:
    from rich.console import Console

    from wizard.verify.render import print_report
    from wizard.verify.results import CheckFindings

    r = VerifyReport(
        checks=(_c("import", "pass", "auto", torch="2.5.1+rocm6.2", build="rocm"),
                _c("matmul", "fail", error="RuntimeError: HIPBLAS_STATUS_ALLOC_FAILED\nmore")),
        python="/v/bin/python", image=None, device="auto", quick=False, timeout=120, seconds=3.2,
        diagnosis=(CheckFindings("matmul", "cuda:0", "fail", "RuntimeError: HIPBLAS_STATUS_ALLOC_FAILED",
                                 (_F("hipblas-alloc-failed", title="hipBLAS could not allocate",
                                     fix="free VRAM"),)),))
    console = Console(record=True, width=140)
    print_report(r, console)
    text = console.export_text()
    assert "hipblas-alloc-failed" in text and "fix: free VRAM" in text and "FAILED" in text
    assert "torch 2.5.1+rocm6.2" in text and "https://example.invalid/issue" in text

    # a finding that only might apply says so
    r2 = replace(r, diagnosis=(CheckFindings("matmul", "cuda:0", "fail", "x", (_F("gfx803-dropped", to_check="no facts"),)),))
    console = Console(record=True, width=140)
    print_report(r2, console)
    assert "gfx803-dropped (error): t (to check: no facts)" in console.export_text()


def test_a_wrong_build_is_diagnosed_only_on_a_machine_with_an_amd_gpu() -> None:
    from wizard.model import Facts, Gpu
    from wizard.verify.diagnosis import diagnose_notes

    checks = [_c("import", "pass", "auto", warnings=["verify: torch 2.13.0+cpu is a CPU build, not a ROCm build"])]
    asked = []

    def fake(text, facts=None):
        asked.append(text)
        return [_F("cpu-torch")]

    assert diagnose_notes(checks, facts=Facts(), diagnose_text=fake) == ()
    assert asked == []
    out = diagnose_notes(checks, facts=Facts(gpus=(Gpu(gfx="gfx1100"),)), diagnose_text=fake)
    assert [(d.status, d.findings) for d in out] == [("note", (_F("cpu-torch"),))]
    assert asked == ["verify: torch 2.13.0+cpu is a CPU build, not a ROCm build"]
