"""The diagnoser: right where the user's notes were wrong, and never more than its sources say."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from wizard.diagnose import PREDICATES, diagnose, diagnose_error_text
from wizard.host import open_recorded
from wizard.kb import load_kb
from wizard.model import EnvSetting, Facts, Gpu, PythonEnv
from wizard.probes import detect
from wizard.record import replace

pytestmark = pytest.mark.unit


def test_seed_7900xt_alloc_failed_is_memory_or_build_not_a_version_check() -> None:
    findings = diagnose(detect(open_recorded("seed-7900xt")))
    by_id = {f.id: f for f in findings}
    alloc = by_id["hipblas-alloc-failed"]
    assert alloc.severity == "error"
    assert "memory" in alloc.cause.lower() and "not a rocm-version check" in alloc.cause.lower()
    assert "https://github.com/pytorch/pytorch/pull/128753" in alloc.sources
    warning = by_id["hipblaslt-unsupported-arch-warning"]
    assert warning.severity == "info" and "harmless" in warning.title.lower()
    # nothing tells the user that torch 2.5.1 needs ROCm >= 6.3 on gfx1100
    assert not any("6.3" in f.title and "require" in f.title.lower() for f in findings)
    assert findings[0].id == "hipblas-alloc-failed"  # the error comes before the info


def test_seed_5600xt_names_the_way_forward() -> None:
    findings = diagnose(detect(open_recorded("seed-5600xt")))
    by_id = {f.id: f for f in findings}
    # no upstream wheel: AMD's stable whl-next index publishes gfx1010-1012 device packages (undocumented)
    forward = by_id["rdna1-no-upstream-wheel"]
    assert forward.fix_plan is None and "stable whl-next" in forward.fix and "not list" in forward.fix
    assert "nightly" not in forward.fix
    override = by_id["rdna1-override-breaks"]
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in e for e in override.evidence)
    assert "https://github.com/ROCm/ROCm/issues/2527" in override.sources or any(
        "2527" in s for s in override.sources)


def test_every_known_issue_uses_only_implemented_predicates() -> None:
    for issue in load_kb().known_issues():
        for name, _ in issue.when:
            assert name in PREDICATES, (issue.id, name)
        assert issue.sources and all(s.startswith("https://") for s in issue.sources)


def test_predicted_issue_needs_its_facts() -> None:
    gpu = Gpu(name="RX 6700 XT", gfx="gfx1031", gfx_reported="gfx1031", pci_id="1002:73df", integrated=False,
              family="RDNA2", hip_index=0)
    env = PythonEnv(path="/v", torch="2.7.1+rocm6.3", build="rocm",
                    gfx_targets=("gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"))
    facts = Facts(gpus=(gpu,), python_envs=(env,), origin="test")
    lacking = [f for f in diagnose(facts) if any("needs gfx1031" in e for e in f.evidence)]
    assert lacking, "a wheel without gfx1031 must be reported"
    fixed = replace(facts, env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "test"),))
    assert not [f for f in diagnose(fixed) if any("needs gfx10" in e for e in f.evidence)]


def test_empty_override_is_reported() -> None:
    facts = Facts(gpus=(Gpu(gfx="gfx1100", integrated=False),),
                  env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "", "~/.bashrc:3"),), origin="test")
    assert any(any('HSA_OVERRIDE_GFX_VERSION=""' in e for e in f.evidence) for f in diagnose(facts))


def test_error_text_alone_matches_signatures() -> None:
    ids = [f.id for f in diagnose_error_text("RuntimeError: HIP error: invalid device function\n")]
    assert "invalid-device-function" in ids
    assert diagnose_error_text("everything is fine") == []


@functools.cache
def _seed_7900xt() -> Facts:
    return detect(open_recorded("seed-7900xt"))  # once: the examples vary the text, not the machine


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_arbitrary_error_text_never_raises(text: str) -> None:
    facts = _seed_7900xt()
    for f in diagnose(facts, text) + diagnose_error_text(text, facts):
        assert f.sources or f.id.startswith(("probe-", "no-amd-gpu"))


def _gfx1100_machine(targets: tuple[str, ...]) -> Facts:
    gpu = Gpu(name="Radeon RX 7900 XTX", gfx="gfx1100", gfx_reported="gfx1100", pci_id="1002:744c",
              integrated=False, family="RDNA3", hip_index=0)
    env = PythonEnv(path="/v", torch="2.7.1+rocm6.3", build="rocm", gfx_targets=targets)
    return Facts(gpus=(gpu,), python_envs=(env,), origin="test")


_NO_CODE = "RuntimeError: HIP error: invalid device function\nhipErrorNoBinaryForGpu: Unable to find code object"


def test_diagnosis_does_not_contradict_detection() -> None:
    """'the wheel has no code for this GPU' while detect lists the GPU's gfx in the wheel: listed last, with a note."""
    carried = diagnose(_gfx1100_machine(("gfx1030", "gfx1100", "gfx1101")), _NO_CODE)
    ids = [f.id for f in carried]
    for iid in ("invalid-device-function", "no-binary-for-gpu"):
        f = carried[ids.index(iid)]
        assert f.contradicted is not None and f.to_json()["contradicted_by"]
        assert any(e.startswith("but: detection contradicts this cause") and "carries gfx1100" in e
                   for e in f.evidence), f.evidence
    assert set(ids[-2:]) == {"invalid-device-function", "no-binary-for-gpu"}  # below every other finding
    assert ids[0] not in ("invalid-device-function", "no-binary-for-gpu")
    # the same text on a machine whose wheel lacks the GPU's gfx: the finding leads, uncontradicted
    lacking = diagnose(_gfx1100_machine(("gfx1030", "gfx1101")), _NO_CODE)
    by_id = {f.id: f for f in lacking}
    assert by_id["invalid-device-function"].contradicted is None
    assert lacking[0].id in ("wheel-lacks-gpu-gfx", "invalid-device-function", "no-binary-for-gpu")
    # an override makes the runtime load another gfx's code: the wheel must carry that one
    overridden = replace(_gfx1100_machine(("gfx1030", "gfx1100")),
                         env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.1", "test"),))
    assert {f.id: f for f in diagnose(overridden, _NO_CODE)}["invalid-device-function"].contradicted is None
    # nothing known about the wheel's gfx list: nothing to contradict
    unknown = {f.id: f for f in diagnose(_gfx1100_machine(()), _NO_CODE)}
    assert unknown["invalid-device-function"].contradicted is None
