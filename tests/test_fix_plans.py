"""A known issue whose fix is a plan, applied and confirmed to work in the machine's text, states its cause: what
applying each plan looks like is read from the plan itself (wizard/fix_plans.py: its target and steps, resolved
against the knowledge base's indexes, images and packages) and found by wizard/fix_worked.py. Per plan kind a
firing case, and near misses that must stay silent: asked, negated, tried and failed, proposed and not confirmed,
the plan on a machine whose facts contradict the issue, and what only looks like the plan."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reading_helpers import detect_paste
from test_diagnose_fix_worked import _causes, _facts, _gpu
from wizard.diagnose import _fix_actions
from wizard.fix_plans import _plan_data, plan_does
from wizard.fix_worked import Hit, fix_actions, worked_fixes
from wizard.kb import load_kb
from wizard.model import DRIVER_PACKAGE, Driver, EvidenceText, Facts, OsInfo
from wizard.plan_file import builtin_plan_names, load_plan
from wizard.record import replace
from wizard.steps.kernel_driver import driver_install

pytestmark = pytest.mark.unit


def _hits(text: str) -> list[Hit]:
    return worked_fixes([EvidenceText("paste.txt", text, 1, "text", True)], _fix_actions())


def _labels(text: str) -> list[set[str]]:
    return [{a.label for a in h.actions} for h in _hits(text)]


# --------------------------------------------------------------------------- what a plan does, from the plan itself


def test_what_a_plan_does_is_read_from_the_plan_file_as_its_loader_reads_it() -> None:
    for name in builtin_plan_names():
        pf = load_plan(name)
        data = _plan_data(name)
        assert data is not None, name
        target, kinds = data
        assert kinds == pf.kinds, name
        assert (target.get("index"), target.get("image"), target.get("rocm")) == (
            pf.target.index, pf.target.image, pf.target.rocm), name
    assert plan_does("no-such-plan") is None


def test_the_urls_images_and_packages_are_the_knowledge_bases_and_the_steps() -> None:
    kb = load_kb()
    pip = plan_does("pip-only")
    assert pip is not None and pip.indexes == tuple(ix.url for ix in kb.indexes(vendor="pytorch")) != ()
    assert "rocm6.2" in pip.index_names and not pip.images and pip.release is None
    therock = plan_does("therock-pip")
    assert therock is not None and set(therock.indexes) == {ix.url for ix in kb.indexes(vendor="amd")}
    assert not therock.index_names  # AMD's index names are the knowledge base's own, not what people write
    docker = plan_does("docker")
    assert docker is not None and docker.images == ("rocm/pytorch",) and not docker.indexes
    driver = plan_does("driver")
    linux = Facts(origin="test", os=OsInfo(id="debian", version="12"))
    assert driver is not None and driver.driver_packages == (DRIVER_PACKAGE,)
    assert driver_install(linux, "apt").split()[-1] == DRIVER_PACKAGE  # what the driver step itself installs
    sdk = plan_does("core-sdk")
    assert sdk is not None and {r.routes.gfx_package for r in kb.releases("core-sdk") if r.routes} <= set(
        sdk.sdk_packages)
    # a plan that installs one system release is that release move; its torch index is not what sets it apart
    for name, line in (("upgrade-7.2", "7.2"), ("downgrade-6.2", "6.2"), ("upgrade-6.4", "6.4")):
        moved = plan_does(name)
        assert moved is not None and moved.release == line and not moved.indexes, name


def test_each_issue_whose_fix_is_a_plan_gets_that_plans_actions() -> None:
    kb = load_kb()

    def labels(issue_id: str) -> list[str]:
        issue = kb.known_issue(issue_id)
        assert issue is not None
        return [a.label for a in fix_actions(issue, kb)]

    assert labels("torch-cpu-build") == ["plan pip-only: torch from its index"]
    assert labels("therock-wrong-family-index") == ["plan therock-pip: torch from its index"]
    assert labels("gfx1201-rocm70-stall") == ["plan docker: its image run"]
    assert "plan upgrade-7.2" in labels("rocm711-7900xtx-perf-regression")
    kfd = kb.known_issue("kfd-inaccessible")
    assert kfd is not None
    driver = [a for a in fix_actions(kfd, kb) if a.plan == "driver"]
    assert [a.label for a in driver] == ["plan driver: the driver installed"] and driver[0].in_branch


# --------------------------------------------------------------------------- pip-only


PIP_WORKED = "HIP error: invalid device function\nI reinstalled torch from the rocm6.2 index and now it works"


def test_torch_from_an_upstream_index_that_worked_states_the_issue_whose_fix_is_pip_only() -> None:
    found = _causes(_facts(PIP_WORKED, _gpu("gfx1030")))["wheel-lacks-gpu-gfx"]
    assert found.evidence[0] == ("the fix applied: paste.txt:2: I reinstalled torch from the rocm6.2 index and now "
                                 "it works")
    line = "pip install torch torchvision --index-url https://download.pytorch.org/whl/rocm6.2\nnow it works"
    assert _labels(line) == [{"plan pip-only: torch from its index"}]
    assert _labels("pip install torch==2.5.1+rocm6.2 fixed it") == [{"plan pip-only: torch from its index"}]
    assert _labels("I installed torch from the rocm6.2.4 index, works now") == [{"plan pip-only: torch from its index"}]


@pytest.mark.parametrize("text", [
    "Did you try reinstalling torch from the rocm6.2 index?",  # asked
    "Reinstalling torch from the rocm6.2 index didn't help.",  # negated
    "I reinstalled torch from the rocm6.2 index but it still crashes.",  # tried and failed
    "If installing torch from the rocm6.2 index works, I'll close this.",  # a condition
    "pip install torch fixed it",  # no index: PyPI's torch is no ROCm build
    "I installed ROCm 6.2 and now it works",  # the system release, not the wheel index
    "I installed rocm6.2 with amdgpu-install and now it works",  # the release's name, no wheel index named
])
def test_a_pip_plan_asked_negated_failed_or_not_the_plans_index_states_nothing(text: str) -> None:
    assert not any("plan pip-only: torch from its index" in g for g in _labels(text)), text
    assert "wheel-lacks-gpu-gfx" not in _causes(_facts("HIP error: invalid device function\n" + text,
                                                       _gpu("gfx1030"))), text


def test_a_pip_plan_the_facts_do_not_decide_states_none_of_its_fourteen_issues() -> None:
    # no failure shown: several issues whose fix is pip-only fit the facts, none is stated
    causes = _causes(_facts("I reinstalled torch from the rocm6.2 index and now it works", _gpu("gfx1030")))
    issues = {a.issue for a in _fix_actions() if a.plan == "pip-only"}
    assert len(issues) > 5 and not issues & set(causes)


def test_an_issues_own_command_at_the_plans_place_is_read_rather_than_the_plan() -> None:
    text = ("pip install torch==2.4.1 torchvision==0.19.1 torchaudio==2.4.1 --index-url "
            "https://download.pytorch.org/whl/rocm6.1 fixed it")
    (hit,) = _hits(text)
    assert {a.issue for a in hit.actions} == {"torch-241-not-on-rocm62"}


# --------------------------------------------------------------------------- therock-pip


THEROCK = "pip3 install --pre torch --index-url https://rocm.nightlies.amd.com/v2/gfx1151/"
MIOPEN = "MIOpen: No suitable algorithm was found to execute the required convolution\n"


def test_torch_from_an_amd_index_that_worked_states_the_issue_whose_fix_is_therock_pip() -> None:
    found = _causes(_facts(MIOPEN + THEROCK + " fixed it", _gpu("gfx1151")))["miopen-new-apu-solvers"]
    assert found.evidence[0] == f"the fix applied: paste.txt:2: {THEROCK} fixed it"


@pytest.mark.parametrize("text, gfx", [
    (MIOPEN + THEROCK + " and it still fails the same way.", "gfx1151"),  # tried and failed
    (MIOPEN + "Should I run " + THEROCK + " ? Would that fix it?", "gfx1151"),  # asked
    (MIOPEN + THEROCK + " fixed it", "gfx1100"),  # a GPU the issue is not about: the facts contradict it
    (MIOPEN + "pip3 install --pre torch --index-url https://example.org/simple/ fixed it", "gfx1151"),  # not AMD's
])
def test_a_therock_plan_failed_asked_or_on_another_gpu_states_nothing(text: str, gfx: str) -> None:
    found = _causes(_facts(text, _gpu(gfx))).get("miopen-new-apu-solvers")
    assert found is None or not any(e.startswith("the fix applied") for e in found.evidence), text


# --------------------------------------------------------------------------- docker

STALL = "The GPU is stuck at 100% busy.\n"
# the issue is about ROCm 7.0-7.1 images: the machine shows the one it ran before (a tag of the knowledge base's)
ON70 = "My image was rocm/pytorch:rocm7.0.2_ubuntu24.04_py3.12_pytorch_release_2.8.0 until then.\n"


def test_the_plans_image_run_that_worked_states_the_issue_whose_fix_is_docker() -> None:
    for line in ("I switched to the rocm/pytorch docker image and now it works",
                 "docker run -it --device=/dev/kfd --device=/dev/dri rocm/pytorch:latest works now"):
        found = _causes(_facts(ON70 + line, _gpu("gfx1201")))["gfx1201-rocm70-stall"]  # the facts alone leave it
        assert found.evidence[:2] == (f"the fix applied: paste.txt:2: {line}", f"and it worked: paste.txt:2: {line}")
        shown = _causes(_facts(ON70 + STALL + line, _gpu("gfx1201")))["gfx1201-rocm70-stall"]  # its failure shown
        assert shown.evidence[0] == f"the fix applied: paste.txt:3: {line}"
        # no ROCm release shown: whether the image it left was a 7.0-7.1 one is not known, so it is only to check
        assert "gfx1201-rocm70-stall" not in _causes(_facts(line, _gpu("gfx1201")))


@pytest.mark.parametrize("text, gfx", [
    ("I switched to the rocm/pytorch docker image and now it works", "gfx1100"),  # contradicts the facts
    ("Have you tried the rocm/pytorch docker image? Works now for me.", "gfx1201"),  # asked
    ("I switched to the rocm/pytorch docker image, but it still hangs.", "gfx1201"),  # tried and failed
    ("docker pull rocm/pytorch:latest and docker images work now", "gfx1201"),  # pulled, not run
    ("docker run -it ubuntu:22.04 works now", "gfx1201"),  # not the plan's image
])
def test_a_docker_plan_on_another_gpu_asked_failed_or_not_run_states_nothing(text: str, gfx: str) -> None:
    assert "gfx1201-rocm70-stall" not in _causes(_facts(ON70 + text, _gpu(gfx))), text
    shown = _causes(_facts(ON70 + STALL + text, _gpu(gfx))).get("gfx1201-rocm70-stall")
    assert shown is None or not any(e.startswith("the fix applied") for e in shown.evidence), text


HEAD = ("# RX 9070 XT: training hangs\n\n"
        "alice · description · 2025-03-01\n"
        "My RX 9070 XT hangs, the GPU is stuck at 100% busy.\n\n")
PROPOSAL = ("bob · comment · 2025-03-02\n"
            "Run it in AMD's image: `docker run -it --device=/dev/kfd --device=/dev/dri rocm/pytorch:latest`\n\n")


def test_a_proposed_image_run_counts_only_when_the_reporter_confirms_it(tmp_path: Path) -> None:
    texts = list(detect_paste(tmp_path, HEAD + PROPOSAL + "alice · comment · 2025-03-03\nThat worked, thanks!\n").texts)
    (hit,) = worked_fixes(texts, _fix_actions())
    assert hit.proposed and {a.plan for a in hit.actions} == {"docker"}
    for answer in ("Thanks, but it still hangs.", "Thanks, I'll try it tomorrow."):
        texts = list(detect_paste(tmp_path, HEAD + PROPOSAL + f"alice · comment · 2025-03-03\n{answer}\n").texts)
        assert worked_fixes(texts, _fix_actions()) == [], answer


# --------------------------------------------------------------------------- driver

NO_KFD = "Unable to open /dev/kfd: No such file or directory\n"
DKMS = "sudo apt install amdgpu-dkms, rebooted, and now it works"


def test_the_driver_installed_that_worked_states_the_driver_branch_of_kfd_inaccessible() -> None:
    facts = _facts(NO_KFD + DKMS, _gpu("gfx1100"), in_container=False, driver=Driver(kfd_present=False))
    found = _causes(facts)["kfd-inaccessible"]
    assert found.evidence[0] == f"the fix applied: paste.txt:2: {DKMS}"
    # without the fix applied, the same facts and failure are a cause too (the branch is established); the fix is
    # what the finding now rests on
    assert _labels(DKMS) == [{"plan driver: the driver installed"}]


@pytest.mark.parametrize("text", [
    "sudo apt install amdgpu-dkms didn't help, rocminfo still fails",  # negated
    "Should I apt install amdgpu-dkms? Works now for others.",  # asked
    "apt install amdgpu-dkms-firmware fixed it",  # another package
    "apt remove amdgpu-dkms fixed it",  # removed, not installed
])
def test_a_driver_plan_negated_asked_or_another_package_is_no_driver_install(text: str) -> None:
    assert not any("plan driver: the driver installed" in g for g in _labels(text)), text


# --------------------------------------------------------------------------- core-sdk (no issue's fix yet: read alone)


def test_the_core_sdk_plans_packages_installed_read_as_that_plan() -> None:
    kb = load_kb()
    issue = kb.known_issue("torch-cpu-build")
    assert issue is not None
    sdk = replace(issue, fix=replace(issue.fix, plan="core-sdk"))
    actions = fix_actions(sdk, kb)
    assert [a.label for a in actions] == ["plan core-sdk: torch from its index", "plan core-sdk: the Core SDK installed"]
    said = [EvidenceText("paste.txt", "sudo apt install amdrocm10.0-gfx1100 fixed it", 1, "text", True)]
    (hit,) = worked_fixes(said, actions)
    assert [a.label for a in hit.actions] == ["plan core-sdk: the Core SDK installed"]
    for near in ("sudo apt install amdrocm10.0-gfx1100 but it still fails", "apt install amdgpu fixed it",
                 "Did you apt install amdrocm10.0? It works for me."):
        assert worked_fixes([EvidenceText("paste.txt", near, 1, "text", True)], actions) == [], near


@pytest.mark.parametrize("line", ["installed " * 5000 + "rocm6.2", "docker run " * 5000, "pip install " * 5000,
                                  "apt install amdgpu-dkms " * 3000, "reinstalled torch from " * 3000],
                         ids=["installed", "docker-run", "pip-install", "apt-dkms", "from"])
def test_reading_plans_stays_linear_on_adversarial_text(line: str) -> None:
    started = time.monotonic()
    _hits(line)
    assert time.monotonic() - started < 8


# --------------------------------------------------------------------------- hand-written "it worked" signatures replaced
# rdna2-variant-needs-override had three signatures of its own for the 10.3.0 override said to have worked; the
# mechanism reads them now: the setting in its other written forms (NAME VALUE, NAME: VALUE, NAME = "VALUE") and
# "now I'm able to run" as a success


@pytest.mark.parametrize("text", [
    "HSA_OVERRIDE_GFX_VERSION 10.3.0 fixed it",
    "HSA_OVERRIDE_GFX_VERSION: 10.3.0 solved the problem for me.",
    'os.environ["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"\nnow I\'m able to run stable diffusion on the GPU',
    "I solved it by exporting HSA_OVERRIDE_GFX_VERSION = 10.3.0 in the launcher",
])
def test_the_override_that_worked_in_its_other_written_forms_states_its_cause(text: str) -> None:
    found = _causes(_facts(text, _gpu("gfx1032")))["rdna2-variant-needs-override"]
    assert found.evidence[0].startswith("the fix applied: paste.txt:1:"), found.evidence


@pytest.mark.parametrize("text", [
    "HSA_OVERRIDE_GFX_VERSION 10.3.0 did not fix it",
    "HSA_OVERRIDE_GFX_VERSION: 10.3.0 but now I'm able to run only on the CPU.",
    "Is HSA_OVERRIDE_GFX_VERSION 10.3.0 what fixed it for you?",
    "HSA_OVERRIDE_GFX_VERSION: 11.0.0 fixed it",  # another value
])
def test_the_override_in_its_other_forms_negated_asked_or_another_value_states_nothing(text: str) -> None:
    assert "rdna2-variant-needs-override" not in _causes(_facts(text, _gpu("gfx1032"))), text
