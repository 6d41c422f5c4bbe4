"""A known issue's fix, applied and confirmed to work in the machine's text, states its cause (wizard/fix_worked.py,
diagnose._worked): derived from the knowledge base's own fix data (env settings, changing commands, a plan that moves
to one release), in the reporter's own words or proposed by another person and confirmed by the reporter's next post.
Each kind has near misses that must stay silent: negated, asked, tried and failed, on a condition, confirmed before the
proposal or by someone else, a confirmation naming another fix, a diagnostic command that "worked"."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reading_helpers import detect_paste
from wizard.diagnose import SHARED_FIX, Finding, _fix_actions, diagnose
from wizard.fix_worked import fix_actions, worked_fixes
from wizard.kb import load_kb
from wizard.kb.families import family_of_gfx
from wizard.model import EnvSetting, EvidenceText, Facts, Gpu, Rocm

pytestmark = pytest.mark.unit


def _gpu(gfx: str) -> Gpu:
    return Gpu(name=f"AMD {gfx}", gfx=gfx, integrated=False, family=family_of_gfx(gfx))


def _facts(text: str, *gpus: Gpu, **kw: object) -> Facts:
    return Facts(gpus=gpus, origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),),
                 **kw)  # type: ignore[arg-type]


def _causes(facts: Facts) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(facts) if f.to_check is None}


def _actions(issue_id: str) -> list[str]:
    issue = load_kb().known_issue(issue_id)
    assert issue is not None
    return [a.label for a in fix_actions(issue)]


# --------------------------------------------------------------------------- what a fix looks like, from the KB


def test_actions_come_from_the_fix_data_and_commands_that_only_look_are_none() -> None:
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _actions("rdna2-variant-needs-override")
    assert _actions("not-in-render-group") == ["usermod render,video"]
    assert _actions("libtinfo5-missing") == ["apt install libtinfo5"]
    assert "plan upgrade-7.2" in _actions("rocm711-7900xtx-perf-regression")
    # kfd-inaccessible's `ls -l /dev/kfd /dev/dri` and `id` (its driver branch and wheel-lacks-gpu-gfx's pip-only are
    # plans: tests/test_fix_plans.py),
    # dkms-build-fails-new-kernel's `dkms status` / `uname -r`,
    # wheel-lacks-gpu-gfx's `python -c ...`: looking, not fixing
    assert _actions("kfd-inaccessible") == ["plan driver: the driver installed", "usermod render,video"]
    # dkms-build-fails-new-kernel's `dkms status` / `uname -r` look; its branch for a kernel newer than the release's
    # list boots an older one
    assert _actions("dkms-build-fails-new-kernel") == ["kernel moved to an older one"]
    assert _actions("wheel-lacks-gpu-gfx") == ["plan pip-only: torch from its index"]  # its plan's, not the check's


# --------------------------------------------------------------------------- env settings


def test_an_env_fix_the_reporter_says_worked_states_its_cause() -> None:
    text = "I put HSA_OVERRIDE_GFX_VERSION=10.3.0 in my .bashrc and now everything works."
    found = _causes(_facts(text, _gpu("gfx1032")))["rdna2-variant-needs-override"]
    assert found.evidence[0] == f"the fix applied: paste.txt:1: {text}"
    assert found.evidence[1] == f"and it worked: paste.txt:1: {text}"
    unit = ('[Service]\nEnvironment="HSA_OVERRIDE_GFX_VERSION=10.3.0"\n\n'
            "After systemctl daemon-reload and a restart it works now on the GPU.")
    assert "rdna2-variant-needs-override" in _causes(_facts(unit, _gpu("gfx1032")))
    assert "miopen-first-conv-slow" in _causes(_facts("export MIOPEN_FIND_MODE=FAST\nnow it runs in seconds",
                                                      _gpu("gfx1100")))


@pytest.mark.parametrize("text", [
    "Setting HSA_OVERRIDE_GFX_VERSION=10.3.0 did not fix it.",
    "Did you try HSA_OVERRIDE_GFX_VERSION=10.3.0? It works for me on a 6700 XT.",
    "I tried HSA_OVERRIDE_GFX_VERSION=10.3.0 but it still crashes, now it works only on the CPU.",
    "If HSA_OVERRIDE_GFX_VERSION=10.3.0 works, I'll close this.",
    "Without HSA_OVERRIDE_GFX_VERSION=10.3.0 it works fine, with it it crashes.",
    "HSA_OVERRIDE_GFX_VERSION=10.3.0 and HSA_ENABLE_SDMA=0 are both set. Same error, no luck.",
])
def test_an_env_fix_negated_asked_tried_or_conditional_states_nothing(text: str) -> None:
    assert "rdna2-variant-needs-override" not in _causes(_facts(text, _gpu("gfx1032")))


def test_a_shared_fix_that_worked_states_the_issue_the_facts_show_not_one_an_unshown_failure_defines() -> None:
    # the 10.3.0 override is the fix of rdna2-variant-needs-override (the facts alone show it: an RDNA2 variant) and
    # of hipblas-internal-error-gfx1031 (defined by its HIPBLAS_STATUS_INTERNAL_ERROR): without that error, the first
    text = "I put HSA_OVERRIDE_GFX_VERSION=10.3.0 in my .bashrc and now everything works."
    causes = _causes(_facts(text, _gpu("gfx1031")))
    assert "rdna2-variant-needs-override" in causes and "hipblas-internal-error-gfx1031" not in causes
    shown = _causes(_facts("hipBLAS error: HIPBLAS_STATUS_INTERNAL_ERROR\n" + text, _gpu("gfx1031")))
    assert "hipblas-internal-error-gfx1031" in shown


def test_an_override_that_worked_on_a_gpu_of_another_family_states_nothing() -> None:
    text = "I put HSA_OVERRIDE_GFX_VERSION=10.3.0 in my .bashrc and now everything works."
    assert "rdna2-variant-needs-override" not in _causes(_facts(text, _gpu("gfx1100")))
    assert "hipblas-internal-error-gfx1031" not in _causes(_facts(text, _gpu("gfx1100")))


def test_an_env_setting_several_issues_fix_states_none_the_facts_do_not_decide() -> None:
    text = "export TORCH_BLAS_PREFER_HIPBLASLT=0 fixed it."  # four issues' fix; nothing else speaks for one
    causes = _causes(_facts(text))
    assert not {"hipblaslt-unsupported-arch-runtimeerror", "hipblaslt-wrong-results-gfx1201", "verify-wrong-results",
                "hipblaslt-no-kernel"} & set(causes)


def test_a_note_whose_fix_worked_stays_a_note() -> None:
    text = "export PATH=$PATH:/opt/rocm/bin fixed it."
    found = {f.id: f for f in diagnose(_facts(text))}["rocm-bin-not-on-path"]
    assert found.to_check == "a note, not a cause"


# --------------------------------------------------------------------------- commands


def test_a_command_fix_the_reporter_says_worked_states_its_cause() -> None:
    text = "after `sudo usermod -aG render $USER` and a re-login rocminfo works now"
    causes = _causes(_facts(text, _gpu("gfx1100")))
    assert "not-in-render-group" in causes and "kfd-inaccessible" not in causes  # its own fix, not a branch's
    assert causes["not-in-render-group"].matched is not None
    intro = "I fixed this by running the following commands:\n\nsudo apt install libtinfo5\n"
    found = _causes(_facts(intro, _gpu("gfx1100")))["libtinfo5-missing"]
    assert found.evidence[:2] == ("the fix applied: paste.txt:3: sudo apt install libtinfo5",
                                  "and it worked: paste.txt:1: I fixed this by running the following commands:")


@pytest.mark.parametrize("text", [
    "sudo usermod -aG render $USER didn't help, rocminfo still fails",
    "Have you run sudo usermod -aG render $USER? Works now for me.",
    "I ran sudo usermod -aG render,video $USER but no luck, it works only with sudo",
    "`ls -l /dev/kfd` worked",
    "`id` worked and rocminfo works now",
    "python -c 'import torch; print(torch.cuda.is_available())' works now",
])
def test_a_command_negated_asked_failed_or_only_looking_states_nothing(text: str) -> None:
    causes = _causes(_facts(text, _gpu("gfx1100")))
    assert not {"not-in-render-group", "kfd-inaccessible", "kfd-render-group-not-video"} & set(causes), text


def test_a_query_form_of_a_fixing_command_is_no_fix() -> None:
    pro = Rocm(amdgpu_pro="/opt/amdgpu-pro/lib/x86_64-linux-gnu")
    worked = _causes(_facts("Running sudo ldconfig fixed it.", rocm=pro))["amdgpu-pro-on-library-path"]
    assert worked.evidence[0] == "the fix applied: paste.txt:1: Running sudo ldconfig fixed it."
    # the facts alone predict it; the query is no fix applied
    looked = _causes(_facts("ldconfig -p | grep amdgpu works now", rocm=pro))["amdgpu-pro-on-library-path"]
    assert not any(e.startswith("the fix applied") for e in looked.evidence)


# --------------------------------------------------------------------------- plans


def test_a_release_plan_the_reporter_says_worked_states_the_issue_the_facts_fit() -> None:
    text = "Upgrading to ROCm 7.2.1 fixed it, the speed is back."
    assert "rocm711-7900xtx-perf-regression" in _causes(_facts(text, _gpu("gfx1100"), rocm=Rocm(version="7.1.1")))
    # on another GPU neither issue whose fix is that plan is stated: amdgpu-install-722-404 has no condition the facts
    # could show, and its failure (the 404) does not show
    other = _causes(_facts(text, _gpu("gfx1030"), rocm=Rocm(version="7.1.1")))
    assert not {"rocm711-7900xtx-perf-regression", "amdgpu-install-722-404"} & set(other)
    for near in ("Would upgrading to ROCm 7.2 fix it?", "Upgrading to ROCm 7.2.1 didn't help, still slow."):
        assert "rocm711-7900xtx-perf-regression" not in _causes(
            _facts(near, _gpu("gfx1100"), rocm=Rocm(version="7.1.1"))), near


# --------------------------------------------------------------------------- a proposal and the reporter's answer

HEAD = ("# RX 6600 XT: Segmentation fault in torch\n\n"
        "alice · description · 2024-03-01\n"
        "My RX 6600 XT (gfx1032) crashes with a segfault as soon as torch touches the GPU.\n"
        "rocminfo lists gfx1032.\n\n")
PROPOSAL = ("bob · comment · 2024-03-02\n"
            "This GPU needs `export HSA_OVERRIDE_GFX_VERSION=10.3.0` before starting python.\n\n")
THANKS = "alice · comment · 2024-03-03\nThat worked, thanks!\n"


def _thread_causes(tmp_path: Path, text: str) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(detect_paste(tmp_path, text)) if f.to_check is None}


def test_a_proposal_the_reporter_confirms_states_its_cause(tmp_path: Path) -> None:
    found = _thread_causes(tmp_path, HEAD + PROPOSAL + THANKS)["rdna2-variant-needs-override"]
    assert found.evidence[:2] == (
        "the fix applied: paste.txt:8: This GPU needs `export HSA_OVERRIDE_GFX_VERSION=10.3.0` before starting "
        "python. (another person's proposal)", "and it worked: paste.txt:11: That worked, thanks!")
    asked = HEAD + "bob · comment · 2024-03-02\nDid you try HSA_OVERRIDE_GFX_VERSION=10.3.0?\n\n" + THANKS
    assert "rdna2-variant-needs-override" in _thread_causes(tmp_path, asked)  # a question proposes too


@pytest.mark.parametrize("text", [
    # the reporter's "that worked" comes before the proposal
    HEAD + "alice · comment · 2024-03-02\nThat worked, thanks!\n\n" + PROPOSAL.replace("03-02", "03-03"),
    # someone else confirms
    HEAD + PROPOSAL + "carol · comment · 2024-03-03\nThat worked, thanks!\n",
    # the confirmation names another fix
    HEAD + PROPOSAL + "alice · comment · 2024-03-03\nThanks, in the end I fixed it by reinstalling torch.\n",
    HEAD + PROPOSAL + "alice · comment · 2024-03-03\nThanks! `sudo usermod -aG render $USER` is what worked.\n",
    # it did not work
    HEAD + PROPOSAL + "alice · comment · 2024-03-03\nThanks, but it still crashes.\n",
    # the proposer says it failed for them
    HEAD + "bob · comment · 2024-03-02\nHSA_OVERRIDE_GFX_VERSION=10.3.0 did not work for me.\n\n" + THANKS,
])
def test_a_proposal_not_confirmed_by_the_reporter_after_it_states_nothing(tmp_path: Path, text: str) -> None:
    assert "rdna2-variant-needs-override" not in _thread_causes(tmp_path, text)


def test_the_reporters_claim_does_not_read_across_another_persons_post(tmp_path: Path) -> None:
    """The reporter's posts joined for the signature search are not read for a fix that worked: "I set X" and, after
    another person's question, "and now it works" are two runs (the second answers the question)."""
    text = (HEAD + "alice · comment · 2024-03-02\nI set HSA_OVERRIDE_GFX_VERSION=10.3.0 "
            "before starting python.\n\nbob · comment · 2024-03-03\nHave you tried rebooting?\n\n"
            "alice · comment · 2024-03-04\nand now it works\n")
    assert "rdna2-variant-needs-override" not in _thread_causes(tmp_path, text)
    together = HEAD + "alice · comment · 2024-03-02\nI set HSA_OVERRIDE_GFX_VERSION=10.3.0 and now it works\n"
    assert "rdna2-variant-needs-override" in _thread_causes(tmp_path, together)


@pytest.mark.parametrize("line", ["HSA_OVERRIDE_GFX_VERSION=10.3.0 " * 2000, "sudo usermod " * 5000,
                                  "fixed it by " * 5000, "apt install " * 5000 + "x", "that worked " * 5000,
                                  "HSA_OVERRIDE_GFX_VERSION=10.3.0 fixed it by " * 2000],
                         ids=["override", "usermod", "fixed-it-by", "apt-install", "that-worked", "override-fixed-by"])
def test_finding_a_fix_that_worked_stays_linear_on_adversarial_text(line: str) -> None:
    started = time.monotonic()
    worked_fixes([EvidenceText("paste.txt", line, 1, "text", True)], _fix_actions())
    assert time.monotonic() - started < 8


@pytest.mark.parametrize(("text", "removed"), [
    ("I removed any HSA_OVERRIDE_GFX_VERSION set in the system environment and it works now.", True),
    ("Removing my HSA_OVERRIDE_GFX_VERSION fixed it.", True),
    ("I removed the HSA_OVERRIDE_GFX_VERSION line and it works now.", True),
    ("I removed nothing; HSA_OVERRIDE_GFX_VERSION is still set and it works now.", False),  # not removed
    ("Removing any HSA_OVERRIDE_GFX_VERSION didn't help.", False),  # did not work
])
def test_an_override_removed_with_a_determiner_reads_as_unset(text: str, removed: bool) -> None:
    hits = worked_fixes([EvidenceText("paste.txt", text, 1, "text", True)], _fix_actions())
    labels = {a.label for h in hits for a in h.actions}
    assert ("unset HSA_OVERRIDE_GFX_VERSION" in labels) is removed, text


# --------------------------------------------------------------------------- a fix several issues share, undecided

def _listed(facts: Facts) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(facts)}


def test_a_shared_fix_that_worked_lists_each_issue_it_may_be_as_to_check() -> None:
    text = "export TORCH_BLAS_PREFER_HIPBLASLT=0 fixed it."  # four issues' fix; nothing else speaks for one
    listed = _listed(_facts(text))
    for issue in ("hipblaslt-unsupported-arch-runtimeerror", "verify-wrong-results", "hipblaslt-no-kernel"):
        assert listed[issue].to_check == SHARED_FIX, issue
        assert listed[issue].evidence[1] == f"and it worked: paste.txt:1: {text}"
    # near miss: the same setting that did not help lists none of them
    assert not {"hipblaslt-unsupported-arch-runtimeerror", "verify-wrong-results"} & set(
        _listed(_facts("export TORCH_BLAS_PREFER_HIPBLASLT=0 did not fix it.")))


# --------------------------------------------------------------------------- a rebuild for the GPU's target

REBUILT = "I rebuilt llama.cpp with `cmake -S . -B build -DGGML_HIP=ON -DGPU_TARGETS=gfx1030` and now it works."


def test_a_rebuild_for_a_target_is_the_fix_of_the_binary_without_code_for_the_gpu() -> None:
    # the "rebuild for the target" branch of both issues (invalid-device-function is a symptom: its own fix, a check,
    # is not read, its branches are)
    labels = {(a.issue, a.label) for a in _fix_actions()}
    assert {("invalid-device-function", "build for a GPU target"), ("no-binary-for-gpu", "build for a GPU target")} \
        <= labels
    assert not any(a.issue == "invalid-device-function" and not a.in_branch for a in _fix_actions())
    listed = _listed(_facts(REBUILT, _gpu("gfx1031")))
    assert listed["invalid-device-function"].to_check == SHARED_FIX
    assert listed["no-binary-for-gpu"].to_check == SHARED_FIX
    # its failure line shown decides: the issue it defines is the cause
    shown = _causes(_facts("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n" + REBUILT,
                           _gpu("gfx1031")))
    assert "no-binary-for-gpu" in shown


@pytest.mark.parametrize(("text", "read"), [
    ("make LLAMA_HIPBLAS=1 GPU_TARGETS=gfx1030 -j16 and it runs now", True),
    ("hipcc --offload-arch=gfx1100 test.hip -o test fixed it", True),
    ("CMAKE_ARGS='-DAMDGPU_TARGETS=gfx1101' pip install llama-cpp-python: works now", True),
    ("I recompiled it for gfx1030 and now it works", True),
    ("I used GPU_TARGETS instead of AMDGPU_TARGETS, after switching it to AMDGPU_TARGETS everything seems to work fine.",
     True),
    # near misses: a description of what a build does, a failure, a question, set aside, working only partly
    ("Without it set, it will build for gfx1031 and now it works only on the CPU.", False),
    ("I built with GPU_TARGETS=gfx1030 but it still crashes.", False),
    ("Did you build with -DGPU_TARGETS=gfx1030? That worked for me.", False),
    ("Instead of -DAMDGPU_TARGETS=gfx1030 I used the defaults, and now it works.", False),
    ("I set GPU_TARGETS=gfx1030. It seems to work only for small models.", False),
    ("I set GPU_TARGETS=gfx1030. It seems to work until I load a bigger model.", False),
    ("I set GPU_TARGETS=gfx1030 and it seems to work sometimes.", False),
    ("I built with GPU_TARGETS=gfx1030 and now it seems to work on the CPU only.", False),
])
def test_a_rebuild_for_a_target_reads_in_its_forms_and_not_in_near_misses(text: str, read: bool) -> None:
    listed = _listed(_facts(text, _gpu("gfx1031")))
    assert ("invalid-device-function" in listed and listed["invalid-device-function"].to_check == SHARED_FIX) == read


THREAD_HEAD = ("# CUDA error when trying to run with hipblas\n\n"
               "alice · description · 2024-06-22\n"
               "Since the update every model load with hipblas fails with the same error.\n\n")


def test_a_proposed_rebuild_the_reporter_confirms_is_read_and_a_negated_one_is_no_proposal(tmp_path: Path) -> None:
    proposal = ("bob · comment · 2024-07-01\n"
                "Probably you are not building with `HSA_OVERRIDE_GFX_VERSION=10.3.0` set. Passing "
                "`GPU_TARGETS=gfx1030` to `make` solved the problem for me.\n\n")
    confirm = "alice · comment · 2024-07-01\n@bob This seemed to fix the issue for me, thank you!\n"
    listed = {f.id: f for f in diagnose(detect_paste(tmp_path, THREAD_HEAD + proposal + confirm))}
    assert listed["invalid-device-function"].to_check == SHARED_FIX
    assert "(another person's proposal)" in listed["invalid-device-function"].evidence[0]
    # near miss: the reporter's answer says it did not
    failed = "alice · comment · 2024-07-01\n@bob This seemed to fix it, but the next load crashes again.\n"
    assert "invalid-device-function" not in {f.id for f in diagnose(detect_paste(tmp_path, THREAD_HEAD + proposal
                                                                                  + failed))}


def test_the_rebuild_command_names_the_target_the_gpu_runs_as() -> None:
    hip = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\ncmake -B build -DGGML_HIP=ON"
    one = _listed(_facts(hip, _gpu("gfx1100")))["no-binary-for-gpu"]
    assert "cmake -S . -B build -DGGML_HIP=ON -DGPU_TARGETS=gfx1100 -DCMAKE_BUILD_TYPE=Release" in one.fix_commands
    # an override: the target it names; two GPUs that run as different targets: left for the user to fill in
    env = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "environment"),)
    over = _listed(_facts(hip, _gpu("gfx1031"), env=env))["no-binary-for-gpu"]
    assert any("-DGPU_TARGETS=gfx1030 " in c for c in over.fix_commands), over.fix_commands
    two = _listed(_facts(hip, _gpu("gfx1100"), _gpu("gfx1030")))["no-binary-for-gpu"]
    assert any("-DGPU_TARGETS=gfxNNNN " in c for c in two.fix_commands)


def test_the_rebuild_command_names_the_target_the_advised_override_runs_as() -> None:
    # a gfx1031 without an override: the advice sets HSA_OVERRIDE_GFX_VERSION=10.3.0 (its RDNA2 branch), so the
    # runtime will load gfx1030 code: a build for gfx1031 beside that override fails the same way
    hip = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\ncmake -B build -DGGML_HIP=ON"
    rdna2 = _listed(_facts(hip, _gpu("gfx1031")))["no-binary-for-gpu"]
    assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") in rdna2.fix_env
    assert any("-DGPU_TARGETS=gfx1030 " in c for c in rdna2.fix_commands), rdna2.fix_commands
    # near miss: no override advised (a gfx1100): its own target
    own = _listed(_facts(hip, _gpu("gfx1100")))["no-binary-for-gpu"]
    assert not own.fix_env and any("-DGPU_TARGETS=gfx1100 " in c for c in own.fix_commands), own.fix_commands


# --------------------------------------------------------------------------- a package installed or removed, in words


@pytest.mark.parametrize(("text", "issue"), [
    ("I installed libtinfo5 and now rocminfo works.", "libtinfo5-missing"),
    ("After uninstalling the xformers package ComfyUI works again.", "xformers-cuda-build-beside-rocm-torch"),
    ("Reinstalling `libgfortran5` fixed it.", "therock-libgfortran-missing"),
])
def test_a_package_installed_or_removed_said_in_words_reads_as_its_command(text: str, issue: str) -> None:
    assert issue in _causes(_facts(text, _gpu("gfx1100"))), text


@pytest.mark.parametrize("text", [
    "I installed libtinfo5 but rocminfo still fails.",
    "Installing libtinfo5 didn't help.",
    "Should I install libtinfo5? rocminfo works now on my other machine.",
    "I installed libtinfo5-dev and now it works.",  # another package
    "I removed libtinfo5 and now it works.",  # the opposite of its fix
])
def test_a_package_said_in_words_near_misses_state_nothing(text: str) -> None:
    assert "libtinfo5-missing" not in _causes(_facts(text, _gpu("gfx1100"))), text
