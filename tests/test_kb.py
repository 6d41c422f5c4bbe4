"""Knowledge base: strict loading, sources, and content checks that catch wrong facts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, TypeVar

import pytest
from packaging.version import Version

from wizard.kb import KB_DIR, PLANS, PREDICATES, SEVERITIES, KbError, KnowledgeBase, load_kb
from wizard.kb.records import DockerImage, GpuInfo, HsaOverride, KnownIssue, Release, Wheel

pytestmark = pytest.mark.integration

_T = TypeVar("_T")


def _some(value: _T | None) -> _T:
    """The value, which the test needs to be there."""
    assert value is not None
    return value


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb()


@pytest.fixture()
def kb_copy(tmp_path: Path) -> Path:
    for f in KB_DIR.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _edit(directory: Path, name: str, change: Callable[[dict[str, Any]], object]) -> None:
    path = directory / name
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# --------------------------------------------------------------------------- validation


def test_shipped_files_have_no_problems(kb: KnowledgeBase) -> None:
    assert kb.problems() == []


def test_check_command_passes_on_shipped_files() -> None:
    r = subprocess.run([sys.executable, "-m", "wizard.kb", "check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("knowledge base OK")


def test_unknown_key_is_one_line_naming_file_entry_and_key(kb_copy: Path) -> None:
    _edit(kb_copy, "torch_wheels.json", lambda d: d["wheels"][0].update({"cuda": "12.1"}))
    with pytest.raises(KbError) as exc:
        KnowledgeBase(kb_copy).wheels()
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("torch_wheels.json: wheels[0] (2.0.0 rocm5.3): unknown key 'cuda'")


def test_check_command_lists_every_problem_and_exits_1(kb_copy: Path) -> None:
    _edit(kb_copy, "rocm_releases.json", lambda d: d["releases"][3].update({"sources": ["http://insecure.example"]}))
    _edit(kb_copy, "known_issues.json", lambda d: d["issues"][1].update({"severity": "fatal"}))
    r = subprocess.run([sys.executable, "-m", "wizard.kb", "check", str(kb_copy)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 1
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("rocm_releases.json: releases[3] (6.0.2): key 'sources'")
    assert lines[1].startswith("known_issues.json: issues[1]") and "'severity'" in lines[1]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("known_issues.json", lambda d: d["issues"][0].update({"when": [{"gpu_is_fast": True}]}),
         "unknown predicate 'gpu_is_fast'"),
        ("known_issues.json", lambda d: d["issues"][0].update({"signatures": ["(unclosed"]}), "bad regex"),
        ("known_issues.json", lambda d: d["issues"][0].update({"stated_signatures": ["(unclosed"]}),
         "'stated_signatures': bad regex"),
        ("known_issues.json", lambda d: d["issues"][0]["fix"].update({"plan": "yolo"}), "unknown plan 'yolo'"),
        ("known_issues.json", lambda d: d["issues"][0]["fix"].update({"service": "ollama; rm"}),
         "expected a systemd service's name"),
        ("known_issues.json", lambda d: d["issues"][0].update({"when": [{"torch_version": "about 2.5"}]}),
         "bad argument for 'torch_version'"),
        ("known_issues.json", lambda d: d["issues"][0].update({"sources": []}), "needs at least one source"),
        ("torch_wheels.json", lambda d: d["wheels"][5].update({"index_url": "https://download.pytorch.org/whl/rocm9"}),
         "does not match index"),
        ("torch_wheels.json", lambda d: d["wheels"][5].update({"gfx": ["navi31"]}), "not a gfx target"),
        ("rocm_releases.json", lambda d: d["releases"][0]["distros"][0].update({"name": "Ubuntu"}),
         "distros[0]: unknown key 'name'"),
        ("rocm_releases.json", lambda d: d["releases"][0].update({"stream": "TheRock"}), "key 'stream'"),
        ("docker_images.json", lambda d: d["images"][0].update({"confidence": "low"}), "key 'confidence'"),
        ("gpus.json", lambda d: d["gpus"][0].update({"family": "RDNA9"}), "unknown family 'RDNA9'"),
    ],
)
def test_malformed_entries_are_rejected(kb_copy: Path, name: str, change: Callable[[dict[str, Any]], object],
                                        expected: str) -> None:
    if not (kb_copy / name).exists():
        pytest.skip(f"{name} not present")
    _edit(kb_copy, name, change)
    problems = KnowledgeBase(kb_copy).problems()
    assert any(p.startswith(name + ":") and expected in p for p in problems), problems
    assert all("\n" not in p for p in problems)


def test_invalid_json_is_one_line(kb_copy: Path) -> None:
    (kb_copy / "docker_images.json").write_text('{"images": [}')
    with pytest.raises(KbError, match=r"^docker_images.json: invalid JSON at line 1"):
        KnowledgeBase(kb_copy).docker_images()


def test_missing_required_file_and_optional_gpus(kb_copy: Path) -> None:
    (kb_copy / "known_issues.json").unlink()
    (kb_copy / "gpus.json").unlink(missing_ok=True)
    k = KnowledgeBase(kb_copy)
    assert k.gpus() == () and k.gpu_by_pci("1002:744c") is None
    with pytest.raises(KbError, match="known_issues.json: file missing"):
        k.known_issues()
    (kb_copy / "gpus.json").write_text("")
    assert KnowledgeBase(kb_copy).gpus() == ()


def test_files_load_lazily(kb_copy: Path) -> None:
    (kb_copy / "known_issues.json").write_text("not json")
    k = KnowledgeBase(kb_copy)
    assert k.wheel("2.5.1", "rocm6.2") is not None  # the broken file is never read


def test_import_is_light() -> None:
    code = "import sys, wizard.kb; print(sorted(m for m in ('rich','textual','torch') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.strip() == "[]"


# --------------------------------------------------------------------------- sources


def test_every_entry_has_https_sources(kb: KnowledgeBase) -> None:
    groups = [kb.releases(), kb.wheels(), kb.docker_images(), kb.known_issues(), kb.hsa_overrides(), kb.gpus()]
    for group in groups:
        for entry in group:
            assert isinstance(entry, Release | Wheel | DockerImage | KnownIssue | HsaOverride | GpuInfo)
            assert entry.sources and all(s.startswith("https://") for s in entry.sources), entry
    assert kb.therock() is not None and _some(kb.therock()).sources
    assert all(u["sources"] for u in kb.unresolved_wheels())


# --------------------------------------------------------------------------- wheels


def test_torch_241_has_no_rocm62_row(kb: KnowledgeBase) -> None:
    assert kb.wheel("2.4.1", "rocm6.2") is None
    assert {w.index for w in kb.wheels_for(torch="2.4.1")} == {"rocm6.0", "rocm6.1"}
    assert all(Version(w.torch) >= Version("2.5.0") for w in kb.wheels_for(index="rocm6.2"))


def test_torch_26_uses_rocm624_index(kb: KnowledgeBase) -> None:
    assert kb.wheel("2.6.0", "rocm6.2") is None
    w = _some(kb.wheel("2.6.0", "rocm6.2.4"))
    assert w is not None and w.index_url == "https://download.pytorch.org/whl/rocm6.2.4"
    assert {x.index for x in kb.wheels_for(torch="2.7.1")} == {"rocm6.2.4", "rocm6.3"}


def test_wheel_gfx_lists(kb: KnowledgeBase) -> None:
    w251 = _some(kb.wheel("2.5.1", "rocm6.2"))
    assert w251.torchvision == "0.20.1" and w251.torchaudio == "2.5.1"
    gfx251 = _some(w251.gfx)
    assert "gfx1101" not in gfx251 and "gfx1100" in gfx251 and "gfx942" in gfx251
    assert "gfx1101" in _some(_some(kb.wheel("2.6.0", "rocm6.2.4")).gfx)
    assert "gfx1102" not in _some(_some(kb.wheel("2.6.0", "rocm6.2.4")).gfx)
    assert {"gfx1102", "gfx1200", "gfx1201"} <= set(_some(_some(kb.wheel("2.7.1", "rocm6.3")).gfx))
    rocm72 = kb.wheels_for(index="rocm7.2")
    assert rocm72 and all("gfx1151" in (w.gfx or ()) and "gfx950" in (w.gfx or ()) for w in rocm72)
    assert "rocm7.2" in {w.index for w in kb.wheels_for(gfx="gfx1151")}
    # pytorch#167299 put gfx950/1150/1151 in every ROCm build before the 2.10 cut (audit 2026-11b W10)
    assert {w.torch for w in kb.wheels_for(gfx="gfx1151", index="rocm7.1")} >= {"2.10.0", "2.11.0", "2.12.1"}


def test_never_carried_targets_are_absent(kb: KnowledgeBase) -> None:
    for gfx in ("gfx1010", "gfx1011", "gfx1012", "gfx1031", "gfx1032", "gfx1152", "gfx1153"):
        assert kb.wheels_for(gfx=gfx) == (), gfx


def test_wheels_for_filters(kb: KnowledgeBase) -> None:
    assert all(Version(w.torch) >= Version("2.9") for w in kb.wheels_for(torch=">=2.9"))
    assert kb.wheels_for(torch="2.5.1", python="3.8") == ()
    assert kb.wheels_for(torch="2.5.1", python="3.12")
    assert _some(kb.wheel("2.5.1+rocm6.2", "rocm6.2")) is _some(kb.wheel("2.5.1", "rocm6.2"))
    assert kb.index_url("rocm6.1") == "https://download.pytorch.org/whl/rocm6.1"
    assert kb.index_url("rocm9.9") is None


def test_rocm714_wheels_do_not_bundle_and_list_torchs_own_kernels(kb: KnowledgeBase) -> None:
    rows = kb.wheels_for(index="rocm7.14")
    assert rows and all(w.bundles_rocm is False and w.uncertain for w in rows)
    for w in rows:  # PYTORCH_ROCM_ARCH of the non-legacy path: no gfx900/gfx906
        assert w.gfx is not None and "gfx1103" in w.gfx and "gfx906" not in w.gfx and len(w.gfx) == 13
    assert all(w.bundles_rocm for w in kb.wheels_for(index="rocm6.2"))


def test_torch_215_is_not_guessed(kb: KnowledgeBase) -> None:
    assert kb.wheels_for(torch="2.15.0") == ()
    assert any(u["torch"] == "2.15.0" for u in kb.unresolved_wheels())


def test_therock_section(kb: KnowledgeBase) -> None:
    t = _some(kb.therock())
    assert t.multi_arch_index == "https://repo.amd.com/rocm/whl-multi-arch/"
    assert t.rocm10_index == "https://stable.repo.amd.com/rocm/whl-next"
    assert {"gfx1103", "gfx1151", "gfx1152", "gfx1153", "gfx1030"} <= set(t.device_extras)
    assert not {"gfx1010", "gfx1031", "gfx900", "gfx906"} & set(t.device_extras)  # nightly only


# --------------------------------------------------------------------------- overrides and families


def test_override_for(kb: KnowledgeBase) -> None:
    assert kb.override_for("gfx1031") == "10.3.0"
    assert kb.override_for("gfx1032") == "10.3.0"
    assert kb.override_for("gfx1010") is None
    assert kb.override_for("gfx1012") is None
    assert kb.override_for("gfx1103") is None
    for native in ("gfx1030", "gfx1100", "gfx1101", "gfx1201", "gfx942"):
        assert kb.override_for(native) is None, native
    old = _some(kb.wheel("2.5.1", "rocm6.2"))
    assert kb.override_for("gfx1101", old) == "11.0.0"
    assert kb.override_for("gfx1101", _some(kb.wheel("2.7.1", "rocm6.3"))) is None
    for gfx in ("gfx1010", "gfx1103"):
        assert "ROCm" in _some(kb.override_entry(gfx)).reason or "PyTorch" in _some(kb.override_entry(gfx)).reason


@pytest.mark.parametrize(
    ("gfx", "family"),
    [("gfx906", "GCN5"), ("gfx90c", "GCN5"), ("gfx908", "CDNA1"), ("gfx90a", "CDNA2"), ("gfx942", "CDNA3"),
     ("gfx950", "CDNA4"), ("gfx1010", "RDNA1"), ("gfx1036", "RDNA2"), ("gfx1103", "RDNA3"), ("gfx1151", "RDNA3.5"),
     ("gfx1201", "RDNA4"), ("gfx90a:sramecc+:xnack-", "CDNA2"), ("gfx1250", None), ("gfx803", None), ("", None)],
)
def test_family_of_gfx(kb: KnowledgeBase, gfx: str, family: str | None) -> None:
    assert kb.family_of_gfx(gfx) == family


def test_gpu_by_pci(kb: KnowledgeBase) -> None:
    if not kb.gpus():
        pytest.skip("gpus.json not written yet")
    g = kb.gpu_by_pci("1002:744C")
    assert g is not None and g.gfx == "gfx1100" and g.family == "RDNA3"
    assert kb.gpu_by_pci("10de:2684") is None


# --------------------------------------------------------------------------- releases


def test_every_legacy_release_present(kb: KnowledgeBase) -> None:
    have = {r.version for r in kb.releases("legacy")}
    for v in ("5.7.0", "5.7.1", "6.0.0", "6.0.2", "6.1.0", "6.1.2", "6.2.0", "6.2.4", "6.3.0", "6.3.3", "6.4.0",
              "6.4.4", "7.0.0", "7.0.2", "7.1.0", "7.1.1", "7.2.0", "7.2.4"):
        assert v in have, v
    assert {r.version for r in kb.releases("core-sdk")} == {"7.14.0", "7.14.1", "10.0.0", "10.1.0"}
    assert max((Version(r.version) for r in kb.releases("legacy"))) == Version("7.2.4")


def test_amdgpu_install_urls(kb: KnowledgeBase) -> None:
    assert kb.amdgpu_install_url("6.2.4", "ubuntu", "22.04", "jammy") == \
        "https://repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb"
    assert kb.amdgpu_install_url("6.2", "ubuntu", "24.04", "noble") == \
        "https://repo.radeon.com/amdgpu-install/6.2/ubuntu/noble/amdgpu-install_6.2.60200-1_all.deb"
    assert _some(kb.amdgpu_install_url("6.1.2", "rhel", "9.4", None)).startswith(
        "https://repo.radeon.com/amdgpu-install/6.1.2/rhel/9.4/amdgpu-install-6.1.60102-1.el9")
    assert "/6.2.4/el/9.4/" in _some(kb.amdgpu_install_url("6.2.4", "rhel", "9.4", None))
    assert _some(kb.amdgpu_install_url("7.2.1", "ubuntu", "24.04", "noble")).endswith("amdgpu-install_7.2.1.70201-1_all.deb")
    assert kb.amdgpu_install_url("6.1.2", "ubuntu", "24.04", "noble") is None  # 24.04 not supported by 6.1
    assert kb.amdgpu_install_url("10.0.0", "ubuntu", "24.04", "noble") == \
        "https://repo.radeon.com/amdgpu-install/31.50/ubuntu/noble/amdgpu-install_31.50.315000-1_all.deb"
    # AMD's 10.1.0 and 7.14.1 install page sources (ROCm/rocm-docs f47eb2f8 / 50600d8d,
    # docs/install/include/200-install.rst): driver-numbered directories 31.60 and 31.40.1
    assert kb.amdgpu_install_url("10.1.0", "ubuntu", "24.04", "noble") == \
        "https://repo.radeon.com/amdgpu-install/31.60/ubuntu/noble/amdgpu-install_31.60.316000-1_all.deb"
    assert kb.amdgpu_install_url("10.1.0", "rhel", "9.6", None) == \
        "https://repo.radeon.com/amdgpu-install/31.60/rhel/9.6/amdgpu-install-31.60.316000-1.el9.noarch.rpm"
    assert kb.amdgpu_install_url("7.14.1", "ubuntu", "26.04", "resolute") == \
        "https://repo.radeon.com/amdgpu-install/31.40.1/ubuntu/resolute/amdgpu-install_31.40.1.314001-1_all.deb"
    assert kb.amdgpu_install_url("10.1.0", "debian", "12", None) is None  # the page offers none for Debian
    assert kb.amdgpu_install_url("6.2.4", "arch", None, None) is None
    assert kb.amdgpu_install_url("9.9.9", "ubuntu", "22.04", "jammy") is None


def test_url_file_names_follow_the_package_version_rule(kb: KnowledgeBase) -> None:
    for r in kb.releases("legacy"):
        x, y, z = (int(p) for p in r.version.split("."))
        if x <= 6:
            pkg = f"{x}.{y}.{x}0{y}0{z}"
        else:
            pkg = f"{x}.{y}.7{y:02d}{z:02d}" if z == 0 else f"{x}.{y}.{z}.7{y:02d}{z:02d}"
        dirname = f"{x}.{y}" if z == 0 else r.version
        assert r.amdgpu_install, r.version
        for key, url in r.amdgpu_install.items():
            assert url.startswith(f"https://repo.radeon.com/amdgpu-install/{dirname}/"), (r.version, url)
            assert f"amdgpu-install{'_' if url.endswith('.deb') else '-'}{pkg}-1" in url, (r.version, url)
            if key.startswith("el"):
                assert ("/rhel/" in url) == (Version(r.version) < Version("6.2")), url


def test_release_layouts_and_streams(kb: KnowledgeBase) -> None:
    assert _some(kb.release("6.2.4")).install_path == "/opt/rocm-6.2.4"
    assert "rocm-core" in _some(kb.release("6.2.4")).packages
    assert _some(kb.release("10.0.0")).install_path == "/opt/rocm/core-10.0"
    assert "amdrocm7.14" in _some(kb.release("7.14.0")).packages and "amdrocm10.0" in _some(kb.release("10.0.0")).packages
    assert "jammy" in _some(kb.release("7.14.0")).amdgpu_install and _some(kb.release("7.14.0")).uncertain
    r = _some(kb.release("6.2.4"))
    assert r.filename_verified is True
    assert {"id": "ubuntu", "version": "24.04", "codename": "noble"} in [vars(d) for d in _some(r.distros)]
    assert "gfx900" in _some(r.gfx).unsupported and "gfx1100" in _some(r.gfx).official
    assert _some(kb.release("6.4.1")).filename_verified is False  # file name only in third-party scripts
    assert _some(kb.release("6.4.0")).filename_verified is True  # AMD's 6.4.0 Oracle Linux installer page
    assert kb.amdgpu_install_url("6.4.0", "ol", "9.5", None) == \
        "https://repo.radeon.com/amdgpu-install/6.4/el/9.5/amdgpu-install-6.4.60400-1.el9.noarch.rpm"
    assert _some(_some(kb.release("7.0.0")).gfx).unsupported == ("gfx906",)


def test_unknown_lists_are_null_with_a_reason(kb: KnowledgeBase) -> None:
    for r in kb.releases():
        if r.distros is None or r.kmd_compat is None or r.filename_verified is False:
            assert r.uncertain, r.version


# --------------------------------------------------------------------------- docker


def test_docker_images(kb: KnowledgeBase) -> None:
    im = _some(kb.docker_image("rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0"))
    assert im is not None and (im.rocm, im.torch, im.ubuntu, im.python) == ("6.2", "2.3.0", "22.04", "3.10")
    seed = _some(kb.docker_image("rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_2.5.0"))
    assert seed is not None and seed.exists is False
    assert _some(kb.docker_image("rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_2.4.0")).exists is False
    assert all(i.confidence in ("high", "medium") for i in kb.docker_images())
    assert {"--device=/dev/kfd", "--device=/dev/dri"} <= set(kb.docker_run_flags())


# --------------------------------------------------------------------------- known issues


def test_known_issue_catalogue_shape(kb: KnowledgeBase) -> None:
    issues = kb.known_issues()
    assert len(issues) >= 30
    for k in issues:
        assert k.severity in SEVERITIES
        assert k.sources
        assert all(p in PREDICATES for p, _ in k.when), k.id
        assert k.fix.plan is None or k.fix.plan in PLANS
        # the parser's rule (wizard/kb/parse.py): something to match, or facts to predict it from
        assert k.signatures or k.symptom_signatures or k.stated_signatures or k.predict, k.id
        if k.predict:
            assert k.when, k.id


def _matching(kb: KnowledgeBase, text: str) -> set[str]:
    return {k.id for k in kb.known_issues() if k.matches_text(text)}


def test_hipblaslt_warning_is_info_not_a_failure(kb: KnowledgeBase) -> None:
    text = ("UserWarning: Attempting to use hipBLASLt on an unsupported architecture! Overriding blas backend to "
            "hipblas (Triggered internally at ../aten/src/ATen/Context.cpp:296.)")
    hits = _matching(kb, text)
    assert "hipblaslt-unsupported-arch-warning" in hits
    assert "hipblaslt-unsupported-arch-runtimeerror" not in hits
    k = _some(kb.known_issue("hipblaslt-unsupported-arch-warning"))
    assert k.severity == "info"
    assert "https://github.com/pytorch/pytorch/pull/128753" in k.sources


def test_alloc_failed_is_memory_not_version_gate(kb: KnowledgeBase) -> None:
    text = "RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`"
    hits = _matching(kb, text)
    assert "hipblas-alloc-failed" in hits
    k = _some(kb.known_issue("hipblas-alloc-failed"))
    assert re.search(r"memory", k.cause, re.I) and re.search(r"workspace", k.cause, re.I)
    assert re.search(r"nightly", k.cause, re.I) and re.search(r"false", k.cause, re.I)
    assert "https://github.com/pytorch/pytorch/pull/128753" in k.sources
    assert k.fix.plan is None  # not fixed by changing ROCm version
    assert "HSA_OVERRIDE_GFX_VERSION" not in k.fix.env


def test_rdna1_names_the_published_stable_route_not_a_plan(kb: KnowledgeBase) -> None:
    """TheRock's whl-next manifest publishes gfx1010-1012 device packages on every stream, stable included
    (audit 2026-11b, T2/K7): the fix names that index as published but undocumented, never "nightly only"."""
    k = _some(kb.known_issue("rdna1-no-upstream-wheel"))
    assert k.predict and ("gpu_gfx_in", ("gfx1010", "gfx1011", "gfx1012")) in k.when
    assert k.fix.plan is None  # AMD's install page documents no RDNA1 target: no plan may claim it
    assert "stable whl-next" in k.fix.summary and "nightly" not in k.fix.summary
    assert any("stable.repo.amd.com/rocm/whl-next" in c for c in k.fix.commands)
    assert "https://github.com/ROCm/ROCm/issues/2527" in k.sources
    assert "HSA_OVERRIDE_GFX_VERSION" not in k.fix.env
    assert _some(kb.known_issue("rdna1-override-breaks")).fix.plan is None


def test_first_conv_stall_matches(kb: KnowledgeBase) -> None:
    hits = _matching(kb, "the first conv2d hangs for several minutes with the GPU at 100%")
    assert "miopen-first-conv-slow" in hits
    assert _some(kb.known_issue("miopen-first-conv-slow")).fix.env.get("MIOPEN_FIND_MODE") == "FAST"


@pytest.mark.parametrize(
    ("text", "issue_id"),
    [
        ("RuntimeError: HIP error: invalid device function", "invalid-device-function"),
        ('"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"', "no-binary-for-gpu"),
        ("rocBLAS error: Cannot read /opt/venv/lib/python3.12/site-packages/torch/lib/rocblas/library/"
         "TensileLibrary.dat: No such file or directory", "tensile-library-missing"),
        ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
         "address. code: 0x29", "memory-aperture-violation"),
        ("RuntimeError: HIP error: hipErrorInvalidImage", "invalid-image"),
        ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.1 as it may crash.", "numpy2-old-torch"),
        ("ERROR: Could not find a version that satisfies the requirement torch==2.4.1 (from versions: 2.5.0+rocm6.2) "
         "--index-url https://download.pytorch.org/whl/rocm6.2", "torch-241-not-on-rocm62"),
    ],
)
def test_signatures_match_real_error_text(kb: KnowledgeBase, text: str, issue_id: str) -> None:
    assert issue_id in _matching(kb, text)


def test_signatures_do_not_match_unrelated_text(kb: KnowledgeBase) -> None:
    assert _matching(kb, "Epoch 1/10 loss=0.123 accuracy=0.97") == set()
    assert "torch-241-not-on-rocm62" not in _matching(kb, "pip install torch==2.4.1 --index-url "
                                                          "https://download.pytorch.org/whl/rocm6.1")
