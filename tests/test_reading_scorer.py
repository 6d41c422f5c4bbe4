"""The scoring rules of benchmarks/reading_accuracy.py, on tiny synthetic expectations."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


rs = _load("reading_score")
ra = _load("reading_accuracy")
R, M, W = rs.Outcome.RIGHT, rs.Outcome.MISSING, rs.Outcome.WRONG


def _outcomes(expected: dict[str, Any], detected: dict[str, Any] | None) -> dict[str, Any]:
    return {j.fact.path: j.outcome for j in rs.score_facts(expected, detected)}


def test_category_and_diagnosis_are_not_facts() -> None:
    facts = rs.expected_facts({"category": "rdna3", "diagnosis": {"cause": "x"}, "os": {"id": "ubuntu"}})
    assert [f.path for f in facts] == ["os.id"]


def test_right_missing_wrong() -> None:
    expected = {"os": {"id": "ubuntu", "version": "22.04", "kernel": "6.8.0-45-generic"}}
    got = {"os": {"id": "ubuntu", "version": None, "kernel": "6.5.0-1-generic"}}
    assert _outcomes(expected, got) == {"os.id": R, "os.version": M, "os.kernel": W}


def test_absent_keys_and_a_failed_detector_are_missing() -> None:
    expected = {"rocm": {"version": "6.2.0"}, "env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}}
    assert _outcomes(expected, {"rocm": {}, "env": {}}) == {
        "rocm.version": M, "env.HSA_OVERRIDE_GFX_VERSION": M}
    assert set(_outcomes(expected, None).values()) == {M}


def test_gpus_are_compared_per_index_and_counted_apart() -> None:
    expected = {"gpus": [{"gfx": "gfx1100"}, {"gfx": "gfx1036", "integrated": True}]}
    in_order = {"gpus": [{"gfx": "gfx1100"}, {"gfx": "gfx1036", "integrated": True}]}
    swapped = {"gpus": [{"gfx": "gfx1036", "integrated": True}, {"gfx": "gfx1100", "integrated": False}]}
    assert set(_outcomes(expected, in_order).values()) == {R}
    assert _outcomes(expected, swapped) == {"gpus.count": R, "gpus[0].gfx": W, "gpus[1].gfx": W,
                                            "gpus[1].integrated": W}


def test_gpu_count() -> None:
    expected: dict[str, Any] = {"gpus": [{}, {}]}
    assert rs.expected_facts(expected) == [rs.Fact("gpus.count", 2)]
    assert _outcomes(expected, {"gpus": [{}]}) == {"gpus.count": W}
    assert _outcomes(expected, {"gpus": [{}, {}, {}]}) == {"gpus.count": W}
    assert _outcomes(expected, {"gpus": []}) == {"gpus.count": M}  # none found: not read
    assert _outcomes({"gpus": []}, {"gpus": []}) == {"gpus.count": R}  # no AMD GPU, rightly
    # fewer GPUs found than expected: the ones not found are missing, not wrong
    assert _outcomes({"gpus": [{"gfx": "gfx1100"}, {"gfx": "gfx1100"}]}, {"gpus": [{"gfx": "gfx1100"}]}) == {
        "gpus.count": W, "gpus[0].gfx": R, "gpus[1].gfx": M}


def test_booleans_are_not_numbers() -> None:
    assert _outcomes({"gpus": [{"integrated": False}]}, {"gpus": [{"integrated": 0}]})["gpus[0].integrated"] is W
    assert _outcomes({"driver": {"kfd_accessible": False}}, {"driver": {"kfd_accessible": None}}) == {
        "driver.kfd_accessible": M}


def test_python_envs_and_env_leaves() -> None:
    expected = {"python_envs": [{"torch": "2.5.1+rocm6.2", "hip": "6.2.41133-dd7f95766"}],
                "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}
    got = {"python_envs": [{"torch": "2.5.1+rocm6.2", "hip": None}], "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}
    assert _outcomes(expected, got) == {"python_envs[0].torch": R, "python_envs[0].hip": M,
                                        "env.HSA_OVERRIDE_GFX_VERSION": R}


def test_fact_keys_group_indices() -> None:
    facts = rs.expected_facts({"gpus": [{"gfx": "gfx90a"}, {"gfx": "gfx90a"}], "python_envs": [{"torch": "x"}]})
    assert [f.key for f in facts] == ["gpu count", "gpus[].gfx", "gpus[].gfx", "python_envs[].torch"]


def _diag(ids: list[str]) -> dict[str, Any]:
    return {"diagnosis": {"cause": "c", "fix": "f", "known_issues": ids}}


def test_top_three_rule() -> None:
    findings = [("a", "error"), ("b", "warning"), ("c", "info"), ("d", "info")]
    assert rs.score_diagnosis(_diag(["c"]), findings).named
    assert not rs.score_diagnosis(_diag(["d"]), findings).named  # fourth is too late
    assert rs.score_diagnosis(_diag(["x", "b"]), findings).named  # any listed id counts
    assert rs.score_diagnosis({"diagnosis": None}, findings) is None  # the thread found no cause


def test_silent_and_contradicted() -> None:
    silent = rs.score_diagnosis(_diag(["x"]), [("probe-gpus", "info")])
    assert silent.silent and not silent.named and not silent.contradicted
    contradicted = rs.score_diagnosis(_diag(["x"]), [("other-cause", "error"), ("x", "info"), ("y", "info")])
    assert contradicted.named and not contradicted.contradicted  # named in the top three wins
    wrong_lead = rs.score_diagnosis(_diag(["x"]), [("other-cause", "critical")])
    assert wrong_lead.contradicted and not wrong_lead.silent
    only_a_warning = rs.score_diagnosis(_diag(["x"]), [("other-cause", "warning")])
    assert not only_a_warning.contradicted and not only_a_warning.silent


def test_shares() -> None:
    a = rs.FixtureScore("a", "rdna3", rs.score_facts({"os": {"id": "ubuntu"}}, {"os": {"id": "ubuntu"}}),
                        rs.score_diagnosis(_diag(["x"]), [("x", "error")]))
    b = rs.FixtureScore("b", "wsl", rs.score_facts({"gpus": [{"gfx": "gfx1030"}]}, {"gpus": [{"gfx": "gfx1031"}]}),
                        rs.score_diagnosis(_diag(["y"]), []))
    assert str(rs.fact_share([a, b])) == "2/3 (66.7%)"
    assert rs.share_by_category([b, a]) == {"rdna3": rs.Share(1, 1), "wsl": rs.Share(1, 2)}
    assert rs.diagnosis_share([a, b]) == rs.Share(1, 2)
    assert [(n, j.fact.path) for n, j in rs.wrong_gfx([a, b])] == [("b", "gpus[0].gfx")]


def test_causes_md_sections() -> None:
    text = """# title

## good-id
- **title**: T
- **cause**: C
  goes on here
- **fix**: F
- **sources**: https://github.com/x/y/issues/1
- **signature**: `line`
- **near miss**: `other line`

## Bad_ID
- **title**: T
"""
    good, bad = rs.parse_causes(text)
    assert good.id == "good-id" and good.fields["cause"] == "C\ngoes on here"
    assert good.problems() == []
    problems = bad.problems()
    assert any("lowercase" in p for p in problems) and any("no https URL" in p for p in problems)
    assert any("neither a signature nor conditions" in p for p in problems)


def _fixture(base: Path, name: str, expected: dict[str, Any], files: dict[str, str]) -> Path:
    d = base / name
    d.mkdir(parents=True)
    (d / "expected.json").write_text(json.dumps(expected))
    for fname, text in files.items():
        (d / fname).write_text(text)
    return d


def test_scores_a_real_bundle_through_the_library_path(tmp_path: Path) -> None:
    rocminfo = "Agent 2\n  Name:                    gfx1030\n  Marketing Name:          AMD Radeon RX 6800 XT\n" \
               "  Device Type:             GPU\n"
    d = _fixture(tmp_path, "rdna2-x", {"category": "rdna2", "gpus": [{"gfx_reported": "gfx1030"}],
                                       "diagnosis": None}, {"rocminfo.txt": rocminfo})
    score = ra.score_fixture(d)
    assert score.error is None and [j.outcome for j in score.facts] == [R, R]


def test_a_fixture_the_reader_chokes_on_counts_as_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _fixture(tmp_path, "broken", {"category": "rdna3", "gpus": [{"gfx": "gfx1100"}],
                                      "diagnosis": {"cause": "c", "fix": "f", "known_issues": ["x"]}}, {})

    def boom(path: Path) -> None:
        raise ValueError("parser fell over")

    monkeypatch.setattr(ra, "read_machine", boom)
    score = ra.score_fixture(d)
    assert score.error == "ValueError: parser fell over"
    assert {j.outcome for j in score.facts} == {M}
    assert score.diagnosis is not None and score.diagnosis.silent


def test_cli_prints_ratios_and_writes_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _fixture(tmp_path, "rdna3-a", {"category": "rdna3", "os": {"id": "ubuntu", "version": "22.04"},
                                   "diagnosis": None},
             {"os-release.txt": 'ID=ubuntu\nVERSION_ID="22.04"\n'})
    results = tmp_path / "out.txt"
    monkeypatch.setattr(ra, "RESULTS", results)
    assert ra.main(["--fixtures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "facts read right: 2/2 = 100.0%" in out and not results.exists()
    assert ra.main(["--fixtures", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["facts"]["share_right"] == 1.0 and doc["diagnosis"]["with_cause"] == 0
    assert ra.main(["--fixtures", str(tmp_path), "--write-results"]) == 0
    assert results.read_text().startswith("# ") and "rdna3-a" in results.read_text()


def test_cli_refuses_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ra.main(["--fixtures", str(tmp_path / "nope")]) == 2
    assert ra.main(["--fixtures", str(tmp_path), "--only", "nothing"]) == 2
    assert "no fixture named nothing" in capsys.readouterr().err


def test_confident_findings_leave_out_checks_notes_and_contradicted() -> None:
    findings = [("a", "error", False, False), ("b", "warning", True, False), ("c", "error", False, True),
                ("probe-gpus", "info", False, False), ("d", "info", False, False), ("e", "warning", False, False)]
    assert rs.confident(findings) == ("a", "e")


def test_contradicting_advice_rules() -> None:
    rdna1 = {"gpus": [{"gfx": "gfx1010"}], "driver": {"in_render_group": True, "kfd_present": True},
             "os": {"wsl": False}}
    why = rs.contradicting_advice(rdna1, "set HSA_OVERRIDE_GFX_VERSION=10.3.0; sudo usermod -a -G render,video $LOGNAME"
                                         "\nLoad the amdgpu driver\nexport HSA_ENABLE_DXG_DETECTION=1")
    assert len(why) == 4 and "gfx1010" in why[0]
    rdna2 = {"gpus": [{"gfx": "gfx1031"}, {"gfx": "gfx1100"}], "driver": {"in_render_group": False}}
    assert rs.contradicting_advice(rdna2, "HSA_OVERRIDE_GFX_VERSION=10.3.0; for RDNA3 that is 11.0.0; "
                                          "add the user to the render group") == []
    assert rs.contradicting_advice({"gpus": [{"gfx": None}]}, "HSA_OVERRIDE_GFX_VERSION=10.3.0") == []  # unknown
    assert rs.contradicting_advice(rdna2, "never 10.3.0 on RDNA1") == []  # a warning is not advice to set it
    # WSL has no amdgpu kernel driver of its own: the GPU is reached through /dev/dxg
    wsl = {"gpus": [{"gfx": "gfx1201"}], "os": {"wsl": True}, "driver": {"kfd_present": False}}
    assert rs.contradicting_advice(wsl, "sudo modprobe amdgpu") == [
        "advises loading the amdgpu kernel driver, but this is WSL, whose GPU is reached through /dev/dxg"]
    assert rs.contradicting_advice({"os": {"wsl": False}}, "sudo modprobe amdgpu") == []
    assert rs.contradicting_advice({"os": {"wsl": None}}, "Load the amdgpu driver") == []  # not known: nothing ruled out


def test_holdout_rule_is_fixed_and_covers_about_a_quarter() -> None:
    names = [f"machine-{i}" for i in range(400)]
    share = sum(rs.is_holdout(n) for n in names) / len(names)
    assert 0.15 < share < 0.35 and rs.is_holdout("apu-strix-point-lspci") and not rs.is_holdout("vega-gfx906-debian12")


def test_a_to_check_lead_is_not_a_contradiction() -> None:
    lead = rs.score_diagnosis(_diag(["x"]), [("symptom", "to-check"), ("y", "warning")])
    assert not lead.contradicted and not lead.named and not lead.silent


def test_a_package_tool_of_another_distribution_family() -> None:
    fedora = {"os": {"id": "fedora", "like": []}}
    assert rs.contradicting_advice(fedora, "Install the library.\nsudo apt install libtinfo5") == [
        "advises apt (debian/ubuntu's tool), but this is fedora"]
    assert rs.contradicting_advice({"os": {"id": "ubuntu", "like": ["debian"]}}, "x\nsudo dnf install numactl-devel") == [
        "advises dnf (almalinux/centos/fedora/ol/rhel/rocky's tool), but this is ubuntu"]
    assert rs.contradicting_advice({"os": {"id": "arch", "like": []}}, "x\nzypper in rocm-hip") != []
    # near misses: the family by ID_LIKE; a prose line offering each family its own command; the OS not known
    assert rs.contradicting_advice({"os": {"id": "linuxmint", "like": ["ubuntu", "debian"]}}, "x\nsudo apt install a") == []
    assert rs.contradicting_advice({"os": {"id": "rocky", "like": ["rhel", "centos", "fedora"]}},
                                   "x\nsudo dnf install a\nsudo grubby --update-kernel=ALL --args=\"iommu=pt\"") == []
    assert rs.contradicting_advice(fedora, "Install it (apt install libgfortran5, dnf install libgfortran)") == []
    assert rs.contradicting_advice({"os": {"id": None, "like": []}}, "x\nsudo apt install libtinfo5") == []


def test_amdgpu_install_where_amd_ships_it_for_no_distribution_of_the_family() -> None:
    why = rs.contradicting_advice({"os": {"id": "arch", "like": []}}, "x\nsudo amdgpu-install --usecase=rocm")
    assert why == ["advises amdgpu-install, but AMD ships it for no distribution of arch's family"]
    assert rs.contradicting_advice({"os": {"id": "nixos"}}, "run amdgpu-install --no-dkms") != []
    # near misses: a distribution of a family AMD ships it for (by ID_LIKE too); its path named, not run
    assert rs.contradicting_advice({"os": {"id": "pop", "like": ["ubuntu", "debian"]}}, "sudo amdgpu-install -y") == []
    assert rs.contradicting_advice({"os": {"id": "opensuse-leap", "like": ["suse", "opensuse"]}},
                                   "x\nsudo zypper install amdgpu-install") == []
    assert rs.contradicting_advice({"os": {"id": "arch"}}, "x\ngrep -n 'linuxmint' /usr/bin/amdgpu-install") == []


def test_the_wsl_use_case_and_the_video_group() -> None:
    assert rs.contradicting_advice({"os": {"wsl": False}}, "x\namdgpu-install -y --usecase=wsl,rocm --no-dkms") == [
        "advises amdgpu-install's WSL use case, but this is not WSL"]
    assert rs.contradicting_advice({"os": {"wsl": True}}, "x\namdgpu-install -y --usecase=wsl,rocm --no-dkms") == []
    assert rs.contradicting_advice({"os": {"wsl": None}}, "x\namdgpu-install -y --usecase=wsl,rocm") == []
    member = {"driver": {"in_video_group": True, "in_render_group": False}}
    assert rs.contradicting_advice(member, "x\nsudo usermod -a -G video $USER") == [
        "advises joining the video group, but the user is in it"]
    # near misses: advice that joins render too (the change it makes is render); not a member of video
    assert rs.contradicting_advice(member, "x\nsudo usermod -a -G render,video $LOGNAME") == []
    assert rs.contradicting_advice({"driver": {"in_video_group": False}}, "add the user to the video group") == []


def test_a_setting_that_is_in_force_already() -> None:
    env = {"env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HIP_VISIBLE_DEVICES": "0"}}
    assert rs.contradicting_advice(env, "The override runs the gfx1030 code.\nHSA_OVERRIDE_GFX_VERSION=10.3.0") == [
        "advises setting HSA_OVERRIDE_GFX_VERSION=10.3.0, but it is set to that already"]
    assert rs.contradicting_advice(env, "export HIP_VISIBLE_DEVICES=0") != []
    # near misses: another value (a change), a variable not set, a comparison, a longer name
    assert rs.contradicting_advice(env, "x\nHSA_OVERRIDE_GFX_VERSION=11.0.0\nROCR_VISIBLE_DEVICES=0") == []
    assert rs.contradicting_advice(env, "if HIP_VISIBLE_DEVICES==0 then ...; MY_HIP_VISIBLE_DEVICES=0") == []
    assert rs.contradicting_advice({"env": {}}, "HSA_OVERRIDE_GFX_VERSION=10.3.0") == []


def test_a_move_to_the_rocm_release_installed() -> None:
    have = {"rocm": {"version": "7.2.1"}}
    assert rs.contradicting_advice(have, "Move to a ROCm 7.2 stack or pin the earlier one") == [
        "advises moving to ROCm 7.2, but ROCm 7.2.1 is installed"]
    assert rs.contradicting_advice(have, "Use ROCm 6.4 or newer") == [
        "advises ROCm 6.4 or newer, but ROCm 7.2.1 is installed"]
    # near misses: another release, a newer floor, a patch release not the one installed, the version unknown
    assert rs.contradicting_advice(have, "Move to a ROCm 7.1 stack; use ROCm 7.3 or newer") == []
    assert rs.contradicting_advice(have, "upgrade to ROCm 7.2.2") == []
    assert rs.contradicting_advice({"rocm": {"version": None}}, "Move to a ROCm 7.2 stack") == []


def test_a_torch_index_that_carries_none_of_the_gpus_targets() -> None:
    rows = [{"torch": "2.5.1", "index": "rocm6.2", "gfx": ["gfx900", "gfx1030", "gfx1100"], "uncertain": None},
            {"torch": "2.4.1", "index": "rocm6.2", "gfx": ["gfx1100"], "uncertain": None},
            {"torch": "2.4.1", "index": "rocm6.1", "gfx": ["gfx1100"], "uncertain": "inferred"}]
    cmd = "pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/{}"
    rdna2 = {"gpus": [{"gfx": "gfx1031"}]}
    assert rs._index_lacks_gpus(rdna2, cmd.format("rocm6.2"), rows) == [
        "advises torch 2.4.1 from rocm6.2, whose wheels carry none of gfx1031"]
    assert rs._index_lacks_gpus({"gpus": [{"gfx": "gfx1201"}]}, "pip install torch --index-url "
                                "https://download.pytorch.org/whl/rocm6.2", rows) != []
    # near misses: the override in force runs a target the wheel carries; a row of another torch does not count;
    # an uncertain list decides nothing; a GPU whose target is not known
    over = {"gpus": [{"gfx": "gfx1031"}], "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}
    assert rs._index_lacks_gpus(over, cmd.format("rocm6.2"), rows) == []
    assert rs._index_lacks_gpus({"gpus": [{"gfx": "gfx1030"}]}, cmd.format("rocm6.2"), rows) != []
    assert rs._index_lacks_gpus({"gpus": [{"gfx": "gfx1030"}]}, cmd.format("rocm6.2").replace("2.4.1", "2.5.1"),
                                rows) == []
    assert rs._index_lacks_gpus(rdna2, cmd.format("rocm6.1"), rows) == []
    assert rs._index_lacks_gpus({"gpus": [{"gfx": None}]}, cmd.format("rocm6.2"), rows) == []
    # the wizard's own matrix is what the benchmark reads
    assert rs._wheel_rows() and all("index" in r for r in rs._wheel_rows())


def test_secure_boot_advice_while_it_is_off_and_an_override_that_is_the_gpus_own_target() -> None:
    off, on = {"os": {"secure_boot": False}}, {"os": {"secure_boot": True}}
    sb = "Enroll the DKMS signing key (MOK prompt at reboot), disable Secure Boot, or remove amdgpu-dkms"
    assert rs.contradicting_advice(off, sb) == ["advises about Secure Boot's signing of the driver, but Secure Boot is off"]
    assert rs.contradicting_advice(on, sb) == [] and rs.contradicting_advice({"os": {"secure_boot": None}}, sb) == []
    assert rs.contradicting_advice(off, "mokutil --sb-state") == []  # a check, not a change
    read = {"origin": "recorded", "texts": [{"source": "env.txt", "kind": "env.txt"}], "env": {}}
    rdna2 = {**read, "gpus": [{"gfx": "gfx1030"}]}
    assert rs.contradicting_advice(rdna2, "x\nHSA_OVERRIDE_GFX_VERSION=10.3.0") == [
        "advises HSA_OVERRIDE_GFX_VERSION=10.3.0, but the GPUs are gfx1030 already"]
    assert rs.contradicting_advice({"origin": "live", "gpus": [{"gfx": "gfx90a"}]}, "HSA_OVERRIDE_GFX_VERSION=9.0.10") != []
    # near misses: another override in force (its own target in place of it is a change); the environment not read;
    # a GPU of another target; one GPU not known; a variant that the override does change
    over = {**rdna2, "env": {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}}
    assert rs.contradicting_advice(over, "x\nHSA_OVERRIDE_GFX_VERSION=10.3.0") == []
    assert rs.contradicting_advice({"gpus": [{"gfx": "gfx1030"}]}, "x\nHSA_OVERRIDE_GFX_VERSION=10.3.0") == []
    assert rs.contradicting_advice({**read, "gpus": [{"gfx": "gfx1030"}, {"gfx": "gfx1031"}]},
                                   "HSA_OVERRIDE_GFX_VERSION=10.3.0") == []
    assert rs.contradicting_advice({**read, "gpus": [{"gfx": "gfx1030"}, {"gfx": None}]},
                                   "HSA_OVERRIDE_GFX_VERSION=10.3.0") == []
    assert rs.contradicting_advice({**read, "gpus": [{"gfx": "gfx1032"}]}, "HSA_OVERRIDE_GFX_VERSION=10.3.0") == []


def test_loading_the_driver_while_it_is_loaded() -> None:
    loaded = {"driver": {"loaded": True}, "os": {"wsl": False}}
    assert rs.contradicting_advice(loaded, "Check lsmod; load it with `sudo modprobe amdgpu` and read dmesg\n"
                                           "sudo modprobe amdgpu") == ["advises loading the amdgpu driver, but it is loaded"]
    # near misses: a reload (options need it); the driver not loaded or not known; modprobe.d options
    assert rs.contradicting_advice(loaded, "sudo modprobe -r amdgpu && sudo modprobe amdgpu") == []
    assert rs.contradicting_advice({"driver": {"loaded": False}}, "x\nsudo modprobe amdgpu") == []
    assert rs.contradicting_advice({"driver": {"loaded": None}}, "load the amdgpu driver") == []
    assert rs.contradicting_advice(loaded, "`options ttm pages_limit=N` in /etc/modprobe.d/ttm.conf") == []


def test_passing_dev_kfd_into_a_container_on_wsl() -> None:
    cmd = "x\ndocker run --device=/dev/kfd --device=/dev/dri --group-add video ..."
    assert rs.contradicting_advice({"os": {"wsl": True}}, cmd) == [
        "advises passing /dev/kfd into a container, but this is WSL, which has no /dev/kfd (its GPU is /dev/dxg)"]
    # near misses: not WSL, or not known; WSL's own device
    assert rs.contradicting_advice({"os": {"wsl": False}}, cmd) == []
    assert rs.contradicting_advice({"os": {"wsl": None}}, cmd) == []
    assert rs.contradicting_advice({"os": {"wsl": True}}, "docker run --device=/dev/dxg -v /usr/lib/wsl:/usr/lib/wsl") == []
