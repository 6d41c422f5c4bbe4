"""Advice computed for the machine (issue 21, point 4): a fix's branches render only where the detected facts
allow them, advice detection contradicts is never given, and what only might apply is listed as "to check"."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from wizard.diagnose import NOT_ADVISED, causes_and_checks, diagnose, diagnose_error_text
from wizard.host import open_recorded
from wizard.kb import load_kb
from wizard.model import Driver, EvidenceText, Facts, Gpu, PythonEnv
from wizard.probes import detect
from wizard.render import findings_renderables

pytestmark = pytest.mark.unit

MACHINES = Path(__file__).parent / "fixtures" / "machines"
_IDF = "RuntimeError: HIP error: invalid device function"


def _gpu(gfx: str, family: str, integrated: bool = False) -> Gpu:
    return Gpu(name=f"AMD {gfx}", gfx=gfx, gfx_reported=gfx, integrated=integrated, family=family, hip_index=0)


def _facts(*gpus: Gpu, text: str = _IDF, driver: Driver | None = None) -> Facts:
    return Facts(gpus=gpus, driver=driver or Driver(), origin="test",
                 texts=(EvidenceText("error.txt", text, 1, "text", True),))


def _advice(f: object) -> str:
    return " ".join([getattr(f, "fix"), *getattr(f, "fix_commands"), *(f"{k}={v}" for k, v in getattr(f, "fix_env"))])


def test_rdna1_card_is_never_offered_the_rdna2_override() -> None:
    rdna1 = {f.id: f for f in diagnose(_facts(_gpu("gfx1010", "RDNA1")))}["invalid-device-function"]
    assert "10.3.0" not in _advice(rdna1) and "gfx1010-1012" in rdna1.fix
    rdna2 = {f.id: f for f in diagnose(_facts(_gpu("gfx1032", "RDNA2")))}["invalid-device-function"]
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in rdna2.fix and "gfx1010-1012" not in rdna2.fix
    # nothing known about the GPU: every branch may apply, so every branch is shown
    unknown = {f.id: f for f in diagnose_error_text(_IDF)}["invalid-device-function"]
    assert "10.3.0" in unknown.fix and "gfx1010-1012" in unknown.fix


def test_a_member_of_render_is_not_told_to_join_it() -> None:
    text = "Unable to open /dev/kfd read-write: Permission denied\nalice is member of render group"
    member = Driver(user="alice", kfd_present=True, kfd_accessible=False, in_render_group=True, in_video_group=True)
    f = {x.id: x for x in diagnose(_facts(_gpu("gfx1100", "RDNA3"), text=text, driver=member))}["kfd-inaccessible"]
    assert "render" not in _advice(f).replace("--group-add render", "") and "usermod" not in _advice(f)
    outsider = Driver(user="bob", kfd_present=True, kfd_accessible=False, in_render_group=False, in_video_group=False)
    g = {x.id: x for x in diagnose(_facts(_gpu("gfx1100", "RDNA3"), text=text, driver=outsider))}["kfd-inaccessible"]
    assert "sudo usermod -a -G render,video $LOGNAME" in g.fix_commands
    # /dev/kfd missing: joining a group cannot help, loading the driver can
    missing = Driver(user="bob", kfd_present=False, in_render_group=False, in_video_group=False)
    h = {x.id: x for x in diagnose(_facts(_gpu("gfx1100", "RDNA3"), text="", driver=missing))}["kfd-inaccessible"]
    assert "/dev/kfd is missing" in h.fix and "usermod" not in _advice(h)


def test_family_branches_of_an_ollama_override() -> None:
    text = 'msg="amdgpu is not supported" gpu_type=gfx1032 library=/usr/lib/ollama'
    rdna2 = {f.id: f for f in diagnose(_facts(_gpu("gfx1032", "RDNA2"), text=text))}
    fix = rdna2["ollama-gpu-type-not-in-runtime"].fix
    assert "10.3.0" in fix and "11.0.0" not in fix


def test_detection_contradicted_cause_gives_no_advice() -> None:
    gpu = _gpu("gfx1100", "RDNA3")
    env = PythonEnv(path="/v", torch="2.7.1+rocm6.3", build="rocm", gfx_targets=("gfx1030", "gfx1100"))
    facts = Facts(gpus=(gpu,), python_envs=(env,), origin="test")
    f = {x.id: x for x in diagnose(facts, _IDF)}["invalid-device-function"]
    assert f.contradicted is not None and f.fix == NOT_ADVISED
    assert not f.fix_commands and not f.fix_env and f.fix_plan is None


def test_a_cause_needs_positive_evidence() -> None:
    igpu, dgpu = _gpu("gfx1036", "RDNA2", integrated=True), _gpu("gfx1100", "RDNA3")
    risk = {f.id: f for f in diagnose(Facts(gpus=(igpu, dgpu), origin="test"))}["igpu-visible-beside-dgpu"]
    assert risk.to_check and "risk" in risk.to_check  # a predicted warning: nothing failed
    seen = {f.id: f for f in diagnose(_facts(_gpu("gfx1100", "RDNA3"), text="HSA_STATUS_ERROR_OUT_OF_RESOURCES"))}
    assert seen["hsa-out-of-resources"].to_check  # a symptom with several causes
    idf = {f.id: f for f in diagnose(_facts(_gpu("gfx1032", "RDNA2")))}["invalid-device-function"]
    assert idf.to_check and "several possible causes" in idf.to_check  # the error alone: which code is missing?
    own = {f.id: f for f in diagnose(_facts(_gpu("gfx803", "GCN4"), text="hipErrorNoBinaryForGpu"))}["gfx803-dropped"]
    assert own.to_check is None  # the machine's own text shows the failure its facts explain
    quiet = {f.id: f for f in diagnose(_facts(_gpu("gfx803", "GCN4"), text="all went well"))}["gfx803-dropped"]
    assert quiet.to_check and "risk" in quiet.to_check  # only which GPU this is: no failure shows
    titled = Facts(gpus=(_gpu("gfx803", "GCN4"),), origin="test",
                   texts=(EvidenceText("paste.txt", "# hipErrorNoBinaryForGpu: Coudn't find binary", 1, "text", False),))
    assert {f.id: f for f in diagnose(titled)}["gfx803-dropped"].to_check is None  # the thread's title shows it
    rdna1 = _gpu("gfx1010", "RDNA1")
    rocm = Facts(gpus=(rdna1,), origin="test", python_envs=(PythonEnv(path="/v", torch="2.7.0+rocm6.3", build="rocm"),))
    assert {f.id: f for f in diagnose(rocm)}["rdna1-no-upstream-wheel"].to_check  # a ROCm torch: is it upstream's?
    cpu = Facts(gpus=(rdna1,), origin="test", python_envs=(PythonEnv(path="/v", torch="2.7.0+cpu", build="cpu"),))
    assert {f.id: f for f in diagnose(cpu)}["torch-cpu-build"].to_check is None  # a CPU torch is the fault itself
    other = Facts(gpus=(_gpu("gfx1032", "RDNA2"),), origin="test",
                  texts=(EvidenceText("paste.txt", _IDF, 1, "text", False),))
    assert {f.id: f for f in diagnose(other)}["invalid-device-function"].to_check == "seen only in another person's post"
    causes, checks = causes_and_checks(diagnose(Facts(gpus=(igpu, dgpu), origin="test")))
    assert all(f.to_check is None for f in causes) and all(f.to_check for f in checks)


def test_to_check_is_shown_apart_in_the_cli_and_json(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    igpu, dgpu = _gpu("gfx1036", "RDNA2", integrated=True), _gpu("gfx1100", "RDNA3")
    findings = diagnose(Facts(gpus=(igpu, dgpu), origin="test"))
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    for item in findings_renderables(findings):
        console.print(item)
    text = out.getvalue()
    assert text.index("No known problem") < text.index("To check") < text.index("integrated")

    from wizard import cli

    buf = io.StringIO()
    with redirect_stdout(buf):
        cli.main(["diagnose", "--from", str(MACHINES / "multi-igpu-raphael-7600xt"), "--json"])
    doc = json.loads(buf.getvalue())
    assert set(doc) == {"findings", "to_check"}
    assert [f["id"] for f in doc["to_check"]] == ["igpu-visible-beside-dgpu"] and not doc["findings"]
    assert doc["to_check"][0]["to_check"] and "fix" in doc["to_check"][0]


def test_no_recorded_machine_gets_advice_a_detected_fact_contradicts() -> None:
    """The corpus-wide check of benchmarks/reading_score.contradicting_advice, on the wizard's own output."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("reading_score", Path(__file__).parent.parent / "benchmarks"
                                                  / "reading_score.py")
    assert spec and spec.loader
    rs = sys.modules.get("reading_score") or importlib.util.module_from_spec(spec)
    if "reading_score" not in sys.modules:
        sys.modules["reading_score"] = rs
        spec.loader.exec_module(rs)
    from wizard.facts_json import facts_to_json

    bad = []
    for d in sorted(p for p in MACHINES.iterdir() if (p / "expected.json").is_file()):
        facts = detect(open_recorded(str(d)))
        doc = facts_to_json(facts)
        bad += [f"{d.name}: {f.id}: {why}" for f in diagnose(facts) for why in rs.contradicting_advice(doc, _advice(f))]
    assert not bad, "\n".join(bad)


def test_branches_name_only_implemented_predicates() -> None:
    from wizard.diagnose import PREDICATES

    branched = [k for k in load_kb().known_issues() if k.fix.branches]
    assert len(branched) >= 8
    for k in branched:
        for b in k.fix.branches:
            assert b.when and all(name in PREDICATES for name, _ in b.when), k.id


def test_root_that_cannot_open_kfd_is_not_told_about_groups() -> None:
    """The issue's real failure: a Proxmox LXC where root, in render, gets "Invalid argument" from /dev/kfd."""
    findings = diagnose(detect(open_recorded(str(MACHINES / "container-lxc-proxmox-9070xt-kfd-invalid-argument"))))
    # KFD's own "Invalid argument" is no missing or forbidden device: the finding is not made (tests/
    # test_kfd_open_errors.py), and no advice about groups reaches root
    assert "kfd-inaccessible" not in [f.id for f in findings]
    assert not [f.id for f in findings if "usermod" in _advice(f)]
    # "Operation not permitted" to a member of render: the finding is made, and contradicted, never advised
    eperm = Driver(user="u", kfd_present=True, kfd_accessible=False, kfd_error="Operation not permitted",
                   in_render_group=True, in_video_group=True)
    text = "Unable to open /dev/kfd read-write: Operation not permitted"
    k = {x.id: x for x in diagnose(_facts(_gpu("gfx1201", "RDNA4"), text=text, driver=eperm))}["kfd-inaccessible"]
    assert k.contradicted is not None and k.fix == NOT_ADVISED
    text = "Unable to open /dev/kfd read-write: Permission denied"
    denied = Driver(user="rocm-user", kfd_present=True, kfd_accessible=False, kfd_error="Permission denied",
                    in_render_group=False, in_video_group=True)
    f = {x.id: x for x in diagnose(_facts(_gpu("gfx908", "CDNA1"), text=text, driver=denied))}["kfd-inaccessible"]
    assert f.contradicted is None and "usermod" in _advice(f)


def test_an_unread_environment_is_not_evidence_that_no_override_is_set() -> None:
    gpu, env = _gpu("gfx1031", "RDNA2"), PythonEnv(path="/v", torch="2.2.0+rocm5.7", build="rocm")
    pasted = Facts(gpus=(gpu,), python_envs=(env,), origin="paste")
    assert "rdna2-variant-needs-override" not in [f.id for f in diagnose(pasted)]
    read = Facts(gpus=(gpu,), python_envs=(env,), origin="recorded",
                 texts=(EvidenceText("env.txt", "PATH=/usr/bin\n", 1, "env.txt", True),))
    assert "rdna2-variant-needs-override" in [f.id for f in diagnose(read)]


def test_a_failure_that_shows_without_its_cause_is_not_headed_no_known_problem() -> None:
    from rich.console import Console

    from wizard.tui.screens.machine import findings_summary

    text = "rocminfo\nUnable to open /dev/kfd read-write: Permission denied\n"
    facts = Facts(gpus=(_gpu("gfx1030", "RDNA2"),), driver=Driver(kfd_present=True, kfd_accessible=False),
                  origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    findings = diagnose(facts)
    shown = [f for f in findings if f.shows_failure]
    assert shown and all(f.to_check for f in shown)
    out = io.StringIO()
    for item in findings_renderables(findings):
        Console(file=out, width=120, color_system=None).print(item)
    head = out.getvalue()
    assert "No known problem" not in head and head.index("No cause is established") < head.index("failures this machine")
    assert "No cause is established" in findings_summary(list(findings)).plain
    # a machine that only might meet something keeps the calm heading
    calm = diagnose(Facts(gpus=(_gpu("gfx1036", "RDNA2", integrated=True), _gpu("gfx1100", "RDNA3")), origin="test"))
    assert not any(f.shows_failure for f in calm) and "No known problem" in findings_summary(list(calm)).plain


def test_a_branch_whose_setting_is_in_force_already_is_not_advised() -> None:
    """A branch that only sets an environment is no change where every setting is the value in force already
    (benchmarks/reading_score.contradicting_advice: "advises setting NAME=VALUE, but it is set to that already")."""
    from wizard.model import EnvSetting

    text = "RuntimeError: HIP error: hipErrorNoBinaryForGpu"
    gpu = _gpu("gfx1032", "RDNA2")
    already = Facts(gpus=(gpu,), origin="test", texts=(EvidenceText("error.txt", text, 1, "text", True),),
                    env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "environment"),))
    f = {x.id: x for x in diagnose(already)}["no-binary-for-gpu"]
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" not in _advice(f) and ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") not in f.fix_env
    # near misses: another value in force, or none, is a change to make: the branch is shown
    for env in ((EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.1", "environment"),), ()):
        other = Facts(gpus=(gpu,), origin="test", texts=already.texts, env=env)
        g = {x.id: x for x in diagnose(other)}["no-binary-for-gpu"]
        assert ("HSA_OVERRIDE_GFX_VERSION", "10.3.0") in g.fix_env and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in g.fix


def test_a_package_command_of_another_distribution_family_is_not_advised() -> None:
    """benchmarks/reading_score.contradicting_advice: "advises apt (debian/ubuntu's tool), but this is fedora"; the
    family is os-release's ID or one of its ID_LIKE words, an unknown distribution withholds nothing."""
    from wizard.model import OsInfo

    text = "error while loading shared libraries: libtinfo.so.5: cannot open shared object file"

    def advice(os_: OsInfo) -> object:
        facts = Facts(os=os_, origin="test", texts=(EvidenceText("error.txt", text, 1, "text", True),))
        return {x.id: x for x in diagnose(facts)}["libtinfo5-missing"]

    fedora = advice(OsInfo(id="fedora", version="41"))
    assert not [c for c in fedora.fix_commands if "apt" in c.split()] and "ncurses-compat-libs on Fedora" in fedora.fix
    assert not [c for c in advice(OsInfo(id="arch")).fix_commands if "apt" in c.split()]
    # near misses: Debian's family by ID or ID_LIKE, and a distribution not known, keep the command
    for os_ in (OsInfo(id="debian"), OsInfo(id="linuxmint", like=("ubuntu", "debian")), OsInfo()):
        assert "sudo apt install libtinfo5" in advice(os_).fix_commands


def test_amdgpu_install_is_not_advised_where_amd_ships_it_for_no_distribution_of_the_family() -> None:
    from wizard.model import OsInfo

    text = "E: Unable to locate package rocm-hip-sdk"
    for os_id, like, kept in (("arch", (), False), ("gentoo", (), False), ("ubuntu", ("debian",), True),
                              ("rocky", ("rhel", "centos", "fedora"), True), (None, (), True)):
        facts = Facts(os=OsInfo(id=os_id, like=like), origin="test",
                      texts=(EvidenceText("error.txt", text, 1, "text", True),))
        runs = [c for f in diagnose(facts) for c in f.fix_commands if "amdgpu-install" in c.split()]
        assert bool(runs) is kept, (os_id, runs)


def test_an_override_branch_naming_the_gpus_own_target_is_not_advised_where_none_is_in_force() -> None:
    """benchmarks/reading_score.contradicting_advice: "advises HSA_OVERRIDE_GFX_VERSION=10.3.0, but the GPUs are gfx1030
    already" (the environment read shows no override): the branch changes nothing."""
    from wizard.model import EnvSetting

    text = 'msg="amdgpu is not supported (supported types:[gfx1100])" gpu_type=gfx1030'
    read = EvidenceText("env.txt", "PATH=/usr/bin\n", 1, "env.txt", True)
    err = EvidenceText("error.txt", text, 1, "text", True)

    def fix(gfx: str, texts: tuple[EvidenceText, ...], env: tuple[EnvSetting, ...] = ()) -> object:
        facts = Facts(gpus=(_gpu(gfx, "RDNA2"),), origin="recorded", texts=texts, env=env)
        return {x.id: x for x in diagnose(facts)}["ollama-gpu-type-not-in-runtime"]

    assert "10.3.0" not in _advice(fix("gfx1030", (err, read)))
    # near misses: another override in force (its own target in its place is a change); the environment not read;
    # a variant the override does change
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _advice(
        fix("gfx1030", (err, read), (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "environment"),)))
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _advice(fix("gfx1030", (err,)))
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _advice(fix("gfx1031", (err, read)))


def test_a_loaded_amdgpu_is_not_told_to_load() -> None:
    """benchmarks/reading_score.contradicting_advice: "advises loading the amdgpu driver, but it is loaded": rocminfo's
    'ROCk module is NOT live' where the module is there but did not finish starting."""
    from wizard.model import OsInfo

    text = "rocminfo\nROCk module is NOT live, possibly no GPU devices\n"

    def fix(loaded: bool | None) -> object:
        facts = Facts(os=OsInfo(wsl=False), driver=Driver(loaded=loaded, kfd_present=False), origin="test",
                      texts=(EvidenceText("rocminfo.txt", text, 1, "text", True),))
        return {x.id: x for x in diagnose(facts)}["rock-module-not-loaded"]

    loaded = fix(True)
    assert "modprobe amdgpu" not in _advice(loaded) and "dmesg" in _advice(loaded)
    # near misses: not loaded, or not known: loading it is the advice
    for state in (False, None):
        assert "sudo modprobe amdgpu" in fix(state).fix_commands and "Load it with" in fix(state).fix


def test_wsl_is_not_told_to_pass_dev_kfd_into_a_container() -> None:
    """benchmarks/reading_score.contradicting_advice: "advises passing /dev/kfd into a container, but this is WSL, which
    has no /dev/kfd (its GPU is /dev/dxg)"."""
    from wizard.model import OsInfo

    text = "rocBLAS error: Could not initialize Tensile host: No devices found"

    def fix(wsl: bool | None) -> object:
        facts = Facts(os=OsInfo(wsl=wsl), origin="test", texts=(EvidenceText("error.txt", text, 1, "text", True),))
        return {x.id: x for x in diagnose(facts)}["rocblas-no-devices"]

    assert "/dev/kfd" not in _advice(fix(True)) and "rocminfo" in _advice(fix(True))
    for wsl in (False, None):  # near misses: a native Linux, or not known
        assert "--device=/dev/kfd --device=/dev/dri" in fix(wsl).fix


def test_a_family_branch_reaches_the_distributions_derived_from_it() -> None:
    """`os_like_in`: a branch about a family's package names is for os-release's ID or an ID_LIKE word (Linux Mint,
    Pop!_OS are ubuntu-like; Rocky says rhel centos fedora); `os_id_in` stays the ID alone (Fedora's own ROCm names
    are not Rocky's)."""
    from wizard.model import OsInfo

    def findings(os_: OsInfo, text: str) -> dict[str, object]:
        facts = Facts(os=os_, origin="test", texts=(EvidenceText("error.txt", text, 1, "text", True),))
        return {x.id: x for x in diagnose(facts)}

    numa = "rocSHMEM Could not open libnuma"
    for os_, command in ((OsInfo(id="linuxmint", like=("ubuntu", "debian")), "sudo apt install libnuma-dev"),
                         (OsInfo(id="pop", like=("ubuntu", "debian")), "sudo apt install libnuma-dev"),
                         (OsInfo(id="rocky", like=("rhel", "centos", "fedora")), "sudo dnf install numactl-devel")):
        f = findings(os_, numa)["rocshmem-libnuma-not-found"]
        assert command in f.fix_commands, (os_.id, f.fix_commands)  # type: ignore[attr-defined]
    # near misses: a distribution of neither family gets neither branch; an unknown one withholds nothing
    arch = findings(OsInfo(id="arch"), numa)["rocshmem-libnuma-not-found"]
    assert not [c for c in arch.fix_commands if "install" in c]  # type: ignore[attr-defined]
    unknown = findings(OsInfo(), numa)["rocshmem-libnuma-not-found"]
    assert {"sudo apt install libnuma-dev", "sudo dnf install numactl-devel"} <= set(unknown.fix_commands)  # type: ignore[attr-defined]
    # os_id_in is the ID alone: Fedora's own package names are no finding on Rocky, whose ID_LIKE names fedora
    rpm = "No match for argument: rocm-hip-runtime"
    assert "fedora-rocm-package-names" in findings(OsInfo(id="fedora", version="41"), rpm)
    assert "fedora-rocm-package-names" not in findings(OsInfo(id="rocky", like=("rhel", "centos", "fedora")), rpm)


def test_a_missing_kfd_beside_a_loaded_amdgpu_is_not_told_to_load_it() -> None:
    """kfd-inaccessible's branch for a missing /dev/kfd: loading amdgpu is advised only where lsmod shows it is not
    loaded; where it is loaded the kernel log says why it made no /dev/kfd (benchmarks/reading_score.py, "advises
    loading the amdgpu driver, but it is loaded")."""
    from wizard.model import OsInfo

    text = "hsa api call failure at: /src/rocminfo.cc:1306\nFailed to open /dev/kfd: No such file or directory\n"
    for loaded in (True, False, None):
        facts = Facts(os=OsInfo(wsl=False), driver=Driver(loaded=loaded, kfd_present=False), in_container=False,
                      origin="test", texts=(EvidenceText("rocminfo.txt", text, 1, "text", True),))
        fix = _advice({x.id: x for x in diagnose(facts)}["kfd-inaccessible"])
        assert "/dev/kfd is missing" in fix and "dmesg" in fix, (loaded, fix)
        assert "load the amdgpu driver" not in fix.lower(), (loaded, fix)


def test_a_fix_summary_names_no_package_tool_of_another_family() -> None:
    """rocm63-profiler-packages-renamed fires on dnf's "No match for argument: omniperf" too: its apt commands are in
    the Debian-family branch, not in the summary every distribution reads."""
    from wizard.model import OsInfo, Rocm

    def fix(os_: OsInfo, text: str) -> str:
        facts = Facts(os=os_, rocm=Rocm(version="6.3.0"), origin="test",
                      texts=(EvidenceText("error.txt", text, 1, "text", True),))
        return _advice({x.id: x for x in diagnose(facts)}["rocm63-profiler-packages-renamed"])

    rhel = fix(OsInfo(id="rhel", version="9.4", like=("fedora",)), "Error: No match for argument: omniperf")
    assert "apt " not in rhel and "rocprofiler-compute" in rhel
    ubuntu = fix(OsInfo(id="ubuntu", version="24.04", like=("debian",)), "E: Unable to locate package omniperf")
    assert "apt remove omniperf" in ubuntu and "sudo apt install rocprofiler-compute rocprofiler-systems" in ubuntu
