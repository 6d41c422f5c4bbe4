"""Each known issue added for issue 12 fires on a text that shows it and stays silent on a near miss.

Cases live in tests/data/known_issue_texts.json (text + the machine facts that go with it). A known
issue that is neither there nor in the pre-existing set below fails the coverage test, so a new
entry cannot land without its evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.diagnose import Finding, diagnose
from wizard.kb import load_kb
from wizard.kb.families import family_of_gfx
from wizard.model import Driver, EnvSetting, EvidenceText, Facts, Gpu, OsInfo, PythonEnv, Rocm, TorchShadow
from wizard.record import replace

pytestmark = pytest.mark.unit

DATA = json.loads((Path(__file__).parent / "data" / "known_issue_texts.json").read_text(encoding="utf-8"))
CASES: dict[str, dict[str, Any]] = DATA["cases"]
# The 44 entries the knowledge base held before issue 12 (their evidence predates this table).
BEFORE_ISSUE_12 = frozenset({
    "invalid-device-function", "wheel-lacks-gpu-gfx", "no-binary-for-gpu", "memory-aperture-violation",
    "hipblas-alloc-failed", "tensile-library-missing", "hipblas-internal-error-gfx1031",
    "hipblaslt-unsupported-arch-warning", "hipblaslt-unsupported-arch-runtimeerror", "hipblaslt-no-solution",
    "hipblaslt-wrong-results-gfx1201", "miopen-first-conv-slow", "secure-boot-dkms", "dkms-build-fails-new-kernel",
    "kfd-inaccessible", "not-in-render-group", "igpu-visible-beside-dgpu", "hsa-override-empty",
    "hsa-override-on-native-arch", "gfx1103-override-risky", "gfx1033-override-wrong-results",
    "rdna1-no-upstream-wheel", "rdna1-override-breaks", "rdna2-variant-needs-override", "gfx906-rocm7-abort",
    "gfx1151-old-wheel", "rocm711-7900xtx-perf-regression", "comgr-segfault-gfx1030", "numpy2-old-torch",
    "triton-missing", "amdgpu-install-722-404", "mixed-rocm-repos", "distro-rocm-packages-shadow",
    "therock-missing-device-package", "invalid-image", "multi-gpu-iommu", "gfx1201-rocm70-stall",
    "torch-241-not-on-rocm62", "docker-tag-does-not-exist", "torch-blas-prefer-hipblaslt-ignored",
    "torch-not-rocm-build", "torch-cpu-build", "verify-wrong-results", "verify-throughput-low",
})


def _facts(spec: dict[str, Any], text: str) -> Facts:
    gpus = tuple(
        Gpu(gfx=g.get("gfx"), gfx_reported=g.get("gfx"), integrated=g.get("integrated"),
            family=family_of_gfx(g.get("gfx")), codename=g.get("codename"), hip_index=i)
        for i, g in enumerate(spec.get("gpus", []))
    )
    env = tuple(EnvSetting(k, v, "test") for k, v in spec.get("env", {}).items())
    os_ = OsInfo(id=spec.get("os_id"), kernel=spec.get("kernel"), wsl=spec.get("wsl"))
    driver = Driver(kfd_present=spec.get("kfd_present"), kfd_error=spec.get("kfd_error"), user=spec.get("user"),
                    in_render_group=spec.get("in_render_group"), in_video_group=spec.get("in_video_group"))
    rocm = Rocm(version=spec.get("rocm_version"), amdgpu_pro=spec.get("amdgpu_pro"))
    texts = (EvidenceText("case.txt", text, 1, "text", True),) if text else ()
    envs = tuple(PythonEnv(path=e.get("path", "/home/user/venv"), kind=e.get("kind", "venv"), torch=e.get("torch"),
                           build=e.get("build"),
                           rocm_sdk=e.get("rocm_sdk"), placeholders=tuple(e.get("placeholders", ())))
                 for e in spec.get("python_envs", []))
    shadows = tuple(TorchShadow(s["how"], s["where"], s["detail"]) for s in spec.get("torch_shadows", []))
    return Facts(os=os_, gpus=gpus, env=env, driver=driver, rocm=rocm, texts=texts, python_envs=envs,
                 torch_shadows=shadows, in_container=spec.get("in_container"),
                 other_gpus=tuple(spec.get("other_gpus", ())), origin=spec.get("origin", "test"))


def _ids(spec: dict[str, Any], text: str) -> list[str]:
    return [f.id for f in diagnose(_facts(spec, text))]


def _found(spec: dict[str, Any], text: str) -> dict[str, Finding]:
    """The findings of a case's facts and text, by id (what the per-area known-issue tests read)."""
    return {f.id: f for f in diagnose(_facts(spec, text))}


@pytest.mark.parametrize("issue_id", sorted(CASES))
def test_fires_on_its_text(issue_id: str) -> None:
    case = CASES[issue_id]
    assert load_kb().known_issue(issue_id) is not None, f"{issue_id}: no such known issue"
    assert issue_id in _ids(case.get("facts", {}), case["fires"])


@pytest.mark.parametrize("issue_id", sorted(CASES))
def test_silent_on_its_near_miss(issue_id: str) -> None:
    case = CASES[issue_id]
    facts = case.get("near_facts", case.get("facts", {}))
    assert issue_id not in _ids(facts, case["near_miss"])


def test_every_new_known_issue_has_a_case() -> None:
    missing = [k.id for k in load_kb().known_issues()
               if k.id not in CASES and k.id not in BEFORE_ISSUE_12 and k.id not in DATA["fixture_only"]]
    assert not missing, f"known issues without a firing text and a near miss: {missing}"


def test_findings_name_the_file_and_line_that_matched() -> None:
    facts = _facts({}, "first line\nHSA Error:  Incompatible kernel and userspace, GPU disabled. Upgrade amdgpu.\n")
    facts = replace(facts, texts=(replace(facts.texts[0], source="paste.txt", first_line=10),))
    finding = next(f for f in diagnose(facts) if f.id == "incompatible-kernel-userspace")
    assert finding.matched is not None
    assert (finding.matched.source, finding.matched.line) == ("paste.txt", 11)
    assert finding.evidence[0].startswith("paste.txt:11: HSA Error")


def test_contradicted_finding_is_not_shown_first() -> None:
    text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of "
            "15.24 GiB of which 15.09 GiB is free.\nMemory access fault by GPU node-1 (Agent handle: 0x1) on address "
            "0x7f. Reason: Page not present or supervisor privilege.\n")
    findings = diagnose(_facts({}, text))
    ids = [f.id for f in findings]
    assert "hip-out-of-memory" in ids and ids[0] != "hip-out-of-memory"
    oom = next(f for f in findings if f.id == "hip-out-of-memory")
    assert oom.contradicted is not None and "15.09 GiB is free" in (oom.contradicted.text or "")


def test_deeper_cause_ranks_above_its_symptom() -> None:
    text = ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Cannot allocate memory\n"
            "[    3.5] kfd kfd: amdgpu: PITCAIRN  not supported in kfd\n")
    ids = _ids({"gpus": [{"gfx": "gfx601", "integrated": False, "codename": "Pitcairn"}]}, text)
    assert ids.index("kfd-gpu-not-supported") < ids.index("kfd-cannot-allocate-memory")


def test_another_persons_post_ranks_below_this_machines_text() -> None:
    facts = _facts({}, "")
    facts = replace(facts, texts=(
        EvidenceText("paste.txt", "RuntimeError: HIP error: invalid device function", 1, "text", True),
        EvidenceText("paste.txt", "rocBLAS error: Could not initialize Tensile host: No devices found", 9, "text", False),
    ))
    ids = [f.id for f in diagnose(facts)]
    assert ids.index("invalid-device-function") < ids.index("rocblas-no-devices")


def test_no_finding_advises_the_harmful_rdna1_override() -> None:
    """The KB marks HSA_OVERRIDE_GFX_VERSION=10.3.0 as harmful on RDNA1: no fix may set it there."""
    text = ("\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"\n"
            "Memory access fault by GPU node-1 on address 0x7f. Reason: Page not present or supervisor privilege.\n"
            "RuntimeError: HIP error: invalid device function\n")
    for gfx in ("gfx1010", "gfx1011", "gfx1012"):
        for f in diagnose(_facts({"gpus": [{"gfx": gfx, "integrated": False}]}, text)):
            assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") not in f.fix_env, (gfx, f.id)
