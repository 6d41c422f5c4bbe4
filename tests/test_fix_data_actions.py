"""Known issues whose fix the summary states as a concrete action (a command a user types, an env setting of a fixed
value) carry that action as fix data (wizard/kb/known_issues.json `commands` / `env`, or a branch's where the
distribution or GPU fixes it), so the advice shows it and a reporter's "I ran X and now it works" states the issue
(wizard/fix_worked.py). For each: the action applied and said to work names the issue; the same action that did not
help, or a command of the same fix that only looks, does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from reading_helpers import detect_paste
from wizard.diagnose import Finding, diagnose
from wizard.fix_worked import fix_actions
from wizard.kb import load_kb
from wizard.kb.families import family_of_gfx
from wizard.model import EvidenceText, Facts, Gpu

pytestmark = pytest.mark.unit


def _gpu(gfx: str) -> Gpu:
    return Gpu(name=f"AMD {gfx}", gfx=gfx, integrated=False, family=family_of_gfx(gfx))


def _findings(text: str, gfx: str | None) -> dict[str, Finding]:
    gpus = (_gpu(gfx),) if gfx else ()
    facts = Facts(gpus=gpus, origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    return {f.id: f for f in diagnose(facts)}


def _applied(finding: Finding | None) -> bool:
    return finding is not None and any(e.startswith("the fix applied") for e in finding.evidence)


def _labels(issue_id: str) -> list[str]:
    issue = load_kb().known_issue(issue_id)
    assert issue is not None
    return [a.label for a in fix_actions(issue, load_kb())]


# (issue, its GPU, the action as a reporter writes it, a command of the same fix that only looks, is it a cause
# (an info issue stays a note))
CASES = [
    ("xformers-cuda-build-beside-rocm-torch", "gfx1100", "pip uninstall -y xformers", "python -m xformers.info",
     True),
    # the fix alone is two issues' now (flash-attn-amd-triton-backend-not-selected sets the same variable): to check
    ("flash-attention-ck-backend-mi-only", "gfx1100",
     'export FLASH_ATTENTION_TRITON_AMD_ENABLE="TRUE" before building flash-attention again', None, False),
    ("omniperf-python-deps-missing", "gfx942",
     "python3 -m pip install -r /opt/rocm/libexec/omniperf/requirements.txt", None, True),
    ("amdgpu-runtime-pm-smi-values-empty", "gfx1100",
     'echo "on" | sudo tee /sys/bus/pci/drivers/amdgpu/*/power/control',
     "cat /sys/bus/pci/drivers/amdgpu/*/power/runtime_status", False),
    ("rocshmem-libnuma-not-found", "gfx1151", "sudo apt install libnuma-dev", "ldconfig -p | grep libnuma", False),
    ("container-kfd-group-not-mapped", "gfx1030",
     "podman run --group-add keep-groups --device=/dev/kfd --device=/dev/dri rocm/pytorch:latest", None, True),
]


@pytest.mark.parametrize(("issue_id", "gfx", "action", "_look", "cause"), CASES, ids=[c[0] for c in CASES])
def test_the_fix_applied_and_working_names_the_issue(issue_id: str, gfx: str, action: str, _look: str | None,
                                                      cause: bool) -> None:
    assert _labels(issue_id), f"{issue_id}: its fix yields no action"
    found = _findings(f"I ran `{action}` and now it works.", gfx).get(issue_id)
    assert _applied(found), issue_id
    assert found is not None and (found.to_check is None) is cause, (issue_id, found.to_check if found else None)
    fixed_by = _findings(f"I fixed it by running:\n\n{action}\n", gfx).get(issue_id)
    assert _applied(fixed_by), issue_id


@pytest.mark.parametrize(("issue_id", "gfx", "action", "look", "_cause"), CASES, ids=[c[0] for c in CASES])
def test_the_fix_that_did_not_help_or_a_look_names_nothing(issue_id: str, gfx: str, action: str, look: str | None,
                                                          _cause: bool) -> None:
    for text in (f"I ran `{action}` but it didn't help, same error.",
                 f"Did you try `{action}`? It works for me.",
                 *([f"I ran `{look}` and now it works."] if look else [])):
        assert not _applied(_findings(text, gfx).get(issue_id)), (issue_id, text)


def test_an_action_another_issue_shares_names_the_one_whose_failure_shows() -> None:
    # `unset ROCR_VISIBLE_DEVICES` is also visible-devices-hide-all's fix: Ray's own refusal decides
    assert _labels("ray-rocm-visible-devices-check-refuses-import") == ["unset ROCR_VISIBLE_DEVICES"]
    text = ("RuntimeError: Please use HIP_VISIBLE_DEVICES instead of ROCR_VISIBLE_DEVICES\n"
            "I ran `unset ROCR_VISIBLE_DEVICES` and now it works.")
    found = _findings(text, "gfx942")
    assert found["ray-rocm-visible-devices-check-refuses-import"].to_check is None
    assert not _applied(found.get("visible-devices-hide-all"))
    for near in ("I ran `unset ROCR_VISIBLE_DEVICES` but it didn't help, same error.",
                 "Did you try `unset ROCR_VISIBLE_DEVICES`? It works for me."):
        assert not _applied(_findings(near, "gfx942").get("ray-rocm-visible-devices-check-refuses-import"))


def test_a_distribution_specific_install_is_a_branch_of_that_distribution() -> None:
    issue = load_kb().known_issue("rocshmem-libnuma-not-found")
    assert issue is not None
    by_os = {tuple(arg): b.commands for b in issue.fix.branches for name, arg in b.when if name in ("os_id_in", "os_like_in")}
    assert by_os[("ubuntu", "debian")] == ("sudo apt install libnuma-dev",)
    assert next(v for k, v in by_os.items() if "fedora" in k) == ("sudo dnf install numactl-devel",)
    assert not issue.fix.commands or all("install" not in c for c in issue.fix.commands)


def test_a_proposal_the_reporter_confirms_names_the_issue(tmp_path: Path) -> None:
    text = ("# ComfyUI: xFormers can't load C++/CUDA extensions\n\n"
            "alice · description · 2024-05-01\n"
            "xFormers was built for: PyTorch 2.3.0+cu121 with CUDA 1201 (you have 2.3.0+rocm6.0)\n\n"
            "bob · comment · 2024-05-02\n"
            "That xformers wheel is a CUDA build; run `pip uninstall -y xformers` and ComfyUI uses PyTorch's "
            "attention.\n\n"
            "alice · comment · 2024-05-03\nThat worked, thanks!\n")
    found = {f.id: f for f in diagnose(detect_paste(tmp_path, text))}.get("xformers-cuda-build-beside-rocm-torch")
    assert _applied(found) and found is not None and found.to_check is None


# --------------------------------------------------------------------------- an override a branch's GPUs fix

NO_BINARY = '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\n'
OLLAMA = ('time=2025-01-01T00:00:00 level=WARN source=amd_linux.go:140 msg="amdgpu is not supported '
          '(supported types:[gfx1030 gfx1100])" gpu_type={gfx}\n')
TF = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:2266] Ignoring visible gpu device (device: 0, name: AMD "
      "Radeon RX 6600, pci bus id: 0000:03:00.0) with AMDGPU version : {gfx}. The supported AMDGPU versions are "
      "gfx900, gfx906, gfx908, gfx90a, gfx1030, gfx1100.\n")


@pytest.mark.parametrize(("issue_id", "gfx", "failure", "action"), [
    ("ollama-gpu-type-not-in-runtime", "gfx1032", OLLAMA.format(gfx="gfx1032"),
     'I put Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0" in the ollama unit and now it works.'),
], ids=["ollama-gpu-type-not-in-runtime"])
def test_an_rdna2_override_that_worked_names_the_issue_whose_failure_shows(issue_id: str, gfx: str, failure: str,
                                                                          action: str) -> None:
    found = _findings(failure + action, gfx)
    assert _applied(found.get(issue_id)) and found[issue_id].to_check is None, issue_id
    assert not _applied(found.get("rdna2-variant-needs-override"))
    failed = _findings(failure + action.replace("and now it works", "but it didn't help, same error"), gfx)
    assert not _applied(failed.get(issue_id))


@pytest.mark.parametrize(("issue_id", "failure"), [("no-binary-for-gpu", NO_BINARY),
                                                   ("ollama-gpu-type-not-in-runtime", OLLAMA),
                                                   ("tf-xla-gpu-gfx-not-in-build", TF)],
                         ids=["no-binary-for-gpu", "ollama-gpu-type-not-in-runtime", "tf-xla-gpu-gfx-not-in-build"])
def test_the_override_is_advice_for_the_rdna2_variants_only(issue_id: str, failure: str) -> None:
    rdna2 = _findings(failure.format(gfx="gfx1032"), "gfx1032")[issue_id]
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") in rdna2.fix_env
    rdna3 = _findings(failure.format(gfx="gfx1102"), "gfx1102")[issue_id]
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") not in rdna3.fix_env


# --------------------------------------------------------------------------- a container restarted with more shm


def _in_container(text: str) -> dict[str, Finding]:
    facts = Facts(gpus=(_gpu("gfx1100"),), origin="test", in_container=True,
                  texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    return {f.id: f for f in diagnose(facts)}


def test_a_container_restarted_with_the_host_ipc_names_the_shm_issue() -> None:
    run = "docker run -it --ipc=host --device=/dev/kfd --device=/dev/dri rocm/pytorch:latest"
    found = _in_container(f"I restarted it with `{run}` and now it works.").get("container-shm-too-small")
    assert _applied(found) and found is not None and found.to_check is None
    for near in (f"I restarted it with `{run}` but it didn't help, same bus error.",
                 "I ran `df -h /dev/shm` and now it works.",  # only looks
                 f"Would `{run}` help?"):
        assert not _applied(_in_container(near).get("container-shm-too-small")), near
    # the shm issue is about a container: on a machine not known to be one, the docker line names nothing
    assert not _applied(_findings(f"I restarted it with `{run}` and now it works.", "gfx1100")
                        .get("container-shm-too-small"))


def test_an_override_branch_is_no_fix_on_a_gpu_it_does_not_fit() -> None:
    """gfx1033 gave wrong results under 10.3.0 (gfx1033-override-wrong-results): the RDNA2 override branches leave it
    out, so their advice never offers it there, and the override read as working is not their fix on it."""
    action = "I ran `export HSA_OVERRIDE_GFX_VERSION=10.3.0` and now it works."
    on_1033 = _findings(NO_BINARY + action, "gfx1033")
    assert not _applied(on_1033.get("no-binary-for-gpu"))
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") not in on_1033["no-binary-for-gpu"].fix_env
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") in _findings(NO_BINARY, "gfx1032")["no-binary-for-gpu"].fix_env
    # on a gfx1032 the same words state rdna2-variant-needs-override, whose own fix it is (its failure shows too)
    assert _applied(_findings(NO_BINARY + action, "gfx1032").get("rdna2-variant-needs-override"))
