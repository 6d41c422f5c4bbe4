"""Knowledge current to November 2026 (issue 13): one test per corrected or added fact group, and the
cross-file consistency checks of ``python -m wizard.kb check`` on planted contradictions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, TypeVar

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from wizard.kb import KB_DIR, KnowledgeBase, load_kb
from wizard.kb.consistency import cross_problems

pytestmark = pytest.mark.unit

_T = TypeVar("_T")


def _some(value: _T | None) -> _T:
    """The value, which the test needs to be there."""
    assert value is not None
    return value


STABLE15 = {"gfx950", "gfx942", "gfx90a", "gfx908", "gfx1201", "gfx1200", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
            "gfx1030", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}
NIGHTLY_ONLY = {"gfx900", "gfx906", "gfx1010", "gfx1011", "gfx1012", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
                "gfx1035", "gfx1036"}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb()


# --------------------------------------------------------------------------- wrong today -> corrected


def test_core_sdk_amdgpu_install_is_driver_numbered(kb: KnowledgeBase) -> None:
    base = "https://repo.radeon.com/amdgpu-install/31.50/"
    for codename in ("resolute", "noble", "jammy"):
        assert kb.amdgpu_install_url("10.0.0", "ubuntu", None, codename) == \
            f"{base}ubuntu/{codename}/amdgpu-install_31.50.315000-1_all.deb"
    # 31.x RPMs live under rhel/<x.y>/, not el/<x.y>/
    assert kb.amdgpu_install_url("10.0.0", "rhel", "9.6", None) == \
        f"{base}rhel/9.6/amdgpu-install-31.50.315000-1.el9.noarch.rpm"
    assert _some(kb.amdgpu_install_url("10.0.0", "rhel", "10.2", None)).endswith(".el10.noarch.rpm")
    r10 = _some(kb.release("10.0.0"))
    assert r10.driver_version == "31.50" and r10.filename_verified is True
    r714 = _some(kb.release("7.14.0"))
    assert r714.driver_version == "31.40"
    # 7.14.0's file names are the ones AMD's page prints (third-party scripts use another; audit 2026-11b A12)
    assert r714.filename_verified is True and "26.13.26130000-2369674" in r714.amdgpu_install["noble"]
    assert "31.40.314000-1" in _some(r714.uncertain)


def test_core_sdk_package_names(kb: KnowledgeBase) -> None:
    r10, r714 = _some(kb.release("10.0.0")), _some(kb.release("7.14.0"))
    assert "amdrocm10.0" in r10.packages and "amdrocm10.0-gfx*" in r10.packages
    assert {"amdrocm7.14", "amdrocm7.14-gfx*", "amdrocm-core-dev7.14*"} <= set(r714.packages)
    assert "amdrocm-*" not in r10.packages + r714.packages
    assert _some(r10.routes).meta_package == "amdrocm10.0"
    assert _some(_some(r10.routes).gfx_package).format(gfx="gfx1100") == "amdrocm10.0-gfx1100"


def test_gfx1103_in_upstream_wheels_from_the_2_13_branch(kb: KnowledgeBase) -> None:
    rows = kb.wheels_for(gfx="gfx1103", index="rocm7.2")
    assert rows and all(Version(w.torch) >= Version("2.13") for w in rows)
    assert {w.torch for w in rows} >= {"2.13.0", "2.14.1"}
    assert all("gfx1103" not in (w.gfx or ()) for w in kb.wheels_for(torch="<2.13"))
    assert all("https://github.com/pytorch/pytorch/pull/179788" in w.sources for w in rows)
    meta = json.loads((KB_DIR / "torch_wheels.json").read_text())["_meta"]["never_in_upstream_wheels"]
    assert "gfx1103" not in meta["archs"] and "closed without merge" not in meta["note"]
    assert "unmerged" not in _some(kb.override_entry("gfx1103")).reason
    assert "unmerged" not in _some(kb.known_issue("gfx1103-override-risky")).cause


def test_gfx1033_fix_is_not_therocks_extra(kb: KnowledgeBase) -> None:
    entry = _some(kb.override_entry("gfx1033"))
    assert entry.value is None and "native" in entry.reason
    issue = _some(kb.known_issue("gfx1033-override-wrong-results"))
    assert issue.fix.plan is None and "native" in issue.cause
    assert "https://github.com/unslothai/unsloth/pull/8412" in issue.sources
    assert "gfx1033" not in _some(kb.therock()).device_extras
    assert [ix.channel for ix in kb.device_extra_indexes("gfx1033")] == ["nightly"]


def test_therock_stable_and_nightly_device_extras(kb: KnowledgeBase) -> None:
    assert set(_some(kb.therock()).device_extras) == STABLE15
    stable = kb.indexes(vendor="amd", channel="stable")
    assert {ix.url for ix in stable} == {"https://repo.amd.com/rocm/whl-multi-arch/",
                                         "https://stable.repo.amd.com/rocm/whl-next/"}
    assert all(set(ix.device_extras or ()) == STABLE15 for ix in stable)
    nightly = _some(kb.wheel_index("https://rocm.nightlies.amd.com/whl-multi-arch/"))
    assert nightly.channel == "nightly" and not nightly.stable and NIGHTLY_ONLY <= set(nightly.device_extras or ())
    for gfx in NIGHTLY_ONLY:  # the index that really carries it, and that it is not stable
        assert kb.device_extra_indexes(gfx, stable_only=True) == ()
        assert [ix.name for ix in kb.device_extra_indexes(gfx)] == ["amd-nightly-multi-arch"]
    # stable first, newest ROCm line first
    assert [ix.name for ix in kb.device_extra_indexes("gfx1100")][:3] == \
        ["amd-whl-next", "amd-multi-arch", "amd-nightly-multi-arch"]


def test_10_0_is_a_parallel_line_with_its_own_paths(kb: KnowledgeBase) -> None:
    r10, r714, r7141 = _some(kb.release("10.0.0")), _some(kb.release("7.14.0")), _some(kb.release("7.14.1"))
    assert "parallel" in _some(r10.notes) and "parallel" in _some(r7141.notes)
    assert "continuation" not in (r10.notes or "").lower()
    assert _some(r7141.date) > _some(r10.date)  # 7.14.1 shipped after 10.0.0
    assert r714.install_path == "/opt/rocm/core" and r10.install_path == "/opt/rocm/core-10.0"


def test_overstated_and_miscited_known_issues(kb: KnowledgeBase) -> None:
    k = _some(kb.known_issue("hipblas-internal-error-gfx1031"))
    assert "6800M" in k.title + k.cause and "6700 XT" not in k.title + k.cause
    k = _some(kb.known_issue("hsa-override-on-native-arch"))
    assert "suboptimal performance and issues" in k.cause and "wrong results" not in k.cause
    k = _some(kb.known_issue("torch-blas-prefer-hipblaslt-ignored"))
    assert ("torch_version", "<2.12") in k.when and "3078" in k.cause and k.uncertain


# --------------------------------------------------------------------------- missing -> added


def test_new_core_sdk_releases_and_dates(kb: KnowledgeBase) -> None:
    # AMD's own date (ROCm/rocm-docs 59ac36be docs/conf.py GA_DATE; docs/release/versions.rst)
    assert _some(kb.release("7.14.1")).date == "2026-09-02"
    assert _some(kb.release("10.1.0")).date == "2026-10-05"
    r10 = _some(kb.release("10.0.0"))
    assert r10.date == "2026-08-26" and "approximate" not in (r10.uncertain or "")
    assert all("https://github.com/ROCm/TheRock/releases" in _some(kb.release(v)).sources for v in ("7.14.1", "10.0.0", "10.1.0"))
    # read from AMD's 10.1.0 page sources; what was not read stays null, with the reason
    r101 = _some(kb.release("10.1.0"))
    assert r101.install_path == "/opt/rocm/core-10.1" and r101.distros is not None and r101.driver_version == "31.60"
    assert r101.kmd_compat is None and "kmd_compat" in _some(r101.uncertain)  # audit R9
    assert any("f47eb2f8ba97787da0cfd5166d1afbf42956fd9d/docs/install/include/200-install.rst" in s
               for s in r101.sources)


def test_legacy_line_ends_at_7_2_4_and_10_x_removes_it_first(kb: KnowledgeBase) -> None:
    assert max(Version(r.version) for r in kb.releases("legacy")) == Version("7.2.4")
    spec = SpecifierSet(_some(_some(kb.release("10.0.0")).remove_first))
    assert "7.2.4" in spec and "6.4.4" in spec and "7.14.0" not in spec
    assert "uninstall" in _some(_some(kb.release("7.2.4")).notes)


@pytest.mark.parametrize(("version", "dirname", "pkgver"), [
    ("7.0.0", "7.0", "7.0.70000-1"), ("7.1.1", "7.1.1", "7.1.1.70101-1"),
    ("7.2.1", "7.2.1", "7.2.1.70201-1"), ("7.2.3", "7.2.3", "7.2.3.70203-1")])
def test_amdgpu_install_file_names_from_amds_docs(kb: KnowledgeBase, version: str, dirname: str, pkgver: str) -> None:
    r = _some(kb.release(version))
    assert r.filename_verified is True
    assert r.amdgpu_install["jammy"] == \
        f"https://repo.radeon.com/amdgpu-install/{dirname}/ubuntu/jammy/amdgpu-install_{pkgver}_all.deb"
    assert "third-party" not in (r.uncertain or "")


def test_debian_12_uses_the_jammy_package(kb: KnowledgeBase) -> None:
    assert kb.amdgpu_install_key("debian", "12", "bookworm") == "debian12"
    jammy = kb.amdgpu_install_url("7.0.0", "ubuntu", "22.04", "jammy")
    assert kb.amdgpu_install_url("7.0.0", "debian", "12", "bookworm") == jammy
    assert kb.amdgpu_install_url("7.2.1", "debian", "13", "trixie") == \
        kb.amdgpu_install_url("7.2.1", "ubuntu", "24.04", "noble")
    assert kb.amdgpu_install_url("7.2.4", "debian", "12", "bookworm") is None  # not documented for 7.2.4


def test_core_sdk_install_routes(kb: KnowledgeBase) -> None:
    r = _some(_some(kb.release("10.0.0")).routes)
    apt, rpm = _some(r.apt), _some(r.rpm)
    assert apt.format == "deb822" and apt.key_url == "https://stable.repo.amd.com/rocm/gpg/packages.gpg"
    assert apt.keyring == "/etc/apt/keyrings/amdrocm.gpg" and apt.suite == "stable"
    assert apt.repos["ubuntu2404"] == "https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/"
    assert set(apt.repos) == {"ubuntu2604", "ubuntu2404", "ubuntu2204", "debian13", "debian12"}
    assert rpm.repos["rhel9"] == "https://stable.repo.amd.com/rocm/core/packages/rhel9/x86_64"
    assert set(rpm.repos) == {"rhel10", "rhel9", "rhel8", "sles16", "sles15"}
    assert r.pip_index == "https://stable.repo.amd.com/rocm/whl-next/"
    assert _some(r.pip_requirement).format(gfx="gfx1100") == "rocm[libraries,device-gfx1100]==10.0.0"
    assert _some(r.tarball).format(family="gfx1151") == \
        "https://stable.repo.amd.com/rocm/core/tarball/therock-dist-linux-gfx1151-10.0.0.tar.gz"
    assert _some(r.runfile).endswith("rocm-rel-10.0/rocm-installer-10.0.0-4.run")
    r714 = _some(_some(kb.release("7.14.0")).routes)
    assert _some(r714.apt).format == "one-line" and _some(r714.apt).key_url.startswith("https://repo.amd.com/rocm/packages-multi-arch/")
    assert r714.pip_index == "https://repo.amd.com/rocm/whl-multi-arch/"


def test_core_sdk_os_list_and_ryzen_kernel(kb: KnowledgeBase) -> None:
    d = {(x.id, x.version) for x in _some(_some(kb.release("10.0.0")).distros)}
    assert {("ubuntu", "26.04"), ("ubuntu", "24.04"), ("ubuntu", "22.04"), ("debian", "13"), ("debian", "12"),
            ("rhel", "10.2"), ("rhel", "9.6"), ("rhel", "8.10"), ("sles", "16.0"), ("sles", "15.7")} <= d
    kernels = " ".join(_some(_some(kb.release("10.0.0")).kernels))
    assert "6.14" in kernels and "linux-oem-24.04d" in kernels and "gfx1103" in kernels


def test_amdgpu_install_usecases_for_radeon_and_ryzen(kb: KnowledgeBase) -> None:
    u = _some(kb.release("10.0.0")).amdgpu_install_usecases
    assert u["radeon"] == "--usecase=rocm,graphics --gfxversion=auto"
    assert u["ryzen"] == "--usecase=rocm --gfxversion=auto --no-dkms"
    assert _some(kb.release("7.14.0")).amdgpu_install_usecases["ryzen"] == "--usecase=rocm --no-dkms"


def test_amds_torch_builds_per_sdk(kb: KnowledgeBase) -> None:
    v10 = {v.torch: v for v in kb.vendor_wheels("10.0.0")}
    assert set(v10) == {"2.13.0+rocm10.0.0", "2.12.0+rocm10.0.0", "2.11.0+rocm10.0.0"}
    assert (v10["2.13.0+rocm10.0.0"].torchvision, v10["2.13.0+rocm10.0.0"].torchaudio) == \
        ("0.28.0+rocm10.0.0", "2.11.0.2+rocm10.0.0")
    assert v10["2.11.0+rocm10.0.0"].torchvision == "0.26.0+rocm10.0.0"
    assert all(v.device_extra_required and _some(kb.wheel_index(v.index)).url == "https://stable.repo.amd.com/rocm/whl-next/"
               for v in v10.values())
    for sdk in ("7.14.0", "7.14.1"):
        newest = max(kb.vendor_wheels(sdk), key=lambda v: Version(v.torch))
        assert newest.torch == f"2.12.0+rocm{sdk}" and _some(kb.wheel_index(newest.index)).name == "amd-multi-arch"
    assert kb.vendor_wheels("10.1.0") == ()  # not read: left out, the release says why


def test_upstream_2_14_matrix(kb: KnowledgeBase) -> None:
    assert {w.index for w in kb.wheels_for(torch=">=2.14,<2.15")} == {"rocm7.2", "rocm7.14"}
    for w in kb.wheels_for(torch=">=2.14,<2.15"):
        assert {"3.15", "3.15t"} <= set(w.python) and "cp315" in _some(w.notes)  # built for the 2.14 test channel (audit W9)
    row = _some(kb.wheel("2.14.1", "rocm7.14"))
    assert row.bundles_rocm is False and "rocm[libraries,device-all]==7.14.*" in _some(row.notes)


def test_docker_tags_amd_documents(kb: KnowledgeBase) -> None:
    for torch in ("2.9.1", "2.8.0", "2.7.1"):
        for ub, py in (("24.04", "3.12"), ("22.04", "3.10")):
            assert _some(kb.docker_image(f"rocm7.2.4_ubuntu{ub}_py{py}_pytorch_release_{torch}")).exists is True
    for rocm, torches in (("7.14", ("2.12.0", "2.11.0", "2.10.0")), ("7.14.1", ("2.12.0", "2.11.0", "2.10.0")),
                          ("10.0", ("2.13.0", "2.12.0", "2.11.0"))):
        for t in torches:
            for ub, py in (("26.04", "3.14"), ("24.04", "3.13"), ("24.04", "3.12"), ("24.04", "3.11")):
                im = _some(kb.docker_image(f"rocm{rocm}_ubuntu{ub}_py{py}_pytorch_release_{t}"))
                assert im is not None and (im.rocm, im.torch, im.ubuntu, im.python) == (rocm, t, ub, py)
    assert not [i for i in kb.docker_images() if i.rocm and i.rocm.startswith("10.1")]


@pytest.mark.parametrize(("text", "issue_id"), [
    ("Collecting rocm-sdk-core==7.15.0a20260728\n  (from rocm==7.15.0a20260728->rocm[libraries]==7.15.0a20260728"
     "->torch==2.12.0)".replace("\n  ", " "), "pip-upgrade-rocm7-over-rocm10"),
    ("hint: An index URL (https://download.pytorch.org/whl/rocm7.2) returned a 403 Forbidden error.",
     "index-403-missing-package"),
    ("Successfully installed nvidia-cublas-cu12-12.8.4.1 torch-2.14.1 triton-3.8.0", "torch-replaced-by-later-install"),
    ("Successfully installed torch-2.14.1+cu130", "torch-replaced-by-later-install"),
])
def test_hazard_issues_match_real_text(kb: KnowledgeBase, text: str, issue_id: str) -> None:
    assert issue_id in {k.id for k in kb.known_issues() if k.matches_text(text)}


def test_hazard_issues_leave_rocm_installs_alone(kb: KnowledgeBase) -> None:
    ok = "Successfully installed torch-2.14.1+rocm7.2 torchvision-0.29.1+rocm7.2"
    assert "torch-replaced-by-later-install" not in {k.id for k in kb.known_issues() if k.matches_text(ok)}
    k = _some(kb.known_issue("torch-replaced-by-later-install"))
    assert "constraints" in k.fix.summary and any("torch.version.hip" in c for c in k.fix.commands)
    assert _some(kb.known_issue("pip-upgrade-rocm7-over-rocm10")).sources == ("https://github.com/ROCm/TheRock/issues/7183",)


def test_hazard_issues_sit_right_after_the_verify_suites_own(kb: KnowledgeBase) -> None:
    """The three hazards follow the verify suite's phrases directly (issues added earlier in the list, such as
    pypi-rocm-placeholder, move them, not their order)."""
    ids = [k.id for k in kb.known_issues()]
    i = ids.index("verify-throughput-low") + 1
    assert ids[i:i + 3] == ["pip-upgrade-rocm7-over-rocm10", "index-403-missing-package",
                            "torch-replaced-by-later-install"]


# --------------------------------------------------------------------------- kb check: consistency


@pytest.fixture()
def kb_copy(tmp_path: Path) -> Path:
    for f in KB_DIR.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _edit(directory: Path, name: str, change) -> None:  # type: ignore[no-untyped-def]
    path = directory / name
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_every_wheel_row_names_a_known_index(kb: KnowledgeBase, kb_copy: Path) -> None:
    names = {ix.name for ix in kb.indexes()}
    assert all(w.index in names for w in kb.wheels())
    assert all(kb.wheel_index(v.index) is not None for v in kb.vendor_wheels())
    _edit(kb_copy, "torch_wheels.json", lambda d: d.update(indexes=[i for i in d["indexes"] if i["name"] != "rocm6.1"]))
    problems = KnowledgeBase(kb_copy).problems()
    assert any("index 'rocm6.1' is not in the indexes list" in p for p in problems), problems


def _dup_wheel(d: dict[str, Any]) -> None:
    row = dict(next(w for w in d["wheels"] if w["torch"] == "2.5.1" and w["index"] == "rocm6.2"))
    row["gfx"] = ["gfx1100"]
    d["wheels"].append(row)


def _dup_image(d: dict[str, Any]) -> None:
    d["images"].append(dict(d["images"][0], python="3.11"))


def _dup_release(d: dict[str, Any]) -> None:
    d["releases"].append(dict(d["releases"][0]))


def _date_backwards(d: dict[str, Any]) -> None:
    next(r for r in d["releases"] if r["version"] == "7.2.2")["date"] = "2026-01-01"


def _fix_cannot_serve(d: dict[str, Any]) -> None:
    next(i for i in d["issues"] if i["id"] == "rdna1-no-upstream-wheel")["fix"]["plan"] = "therock-pip"


def _vendor_unknown_sdk(d: dict[str, Any]) -> None:
    d["vendor_wheels"][0]["sdk"] = "9.9.0"


def _image_unknown_rocm(d: dict[str, Any]) -> None:
    d["images"][0]["rocm"] = "5.8"


@pytest.mark.parametrize(("name", "change", "expected"), [
    ("torch_wheels.json", _dup_wheel, "duplicate (torch, index) row (contradicting gfx/python lists)"),
    ("docker_images.json", _dup_image, "duplicate tag with different contents"),
    ("rocm_releases.json", _dup_release, "duplicate version"),
    ("rocm_releases.json", _date_backwards, "before 7.2.1 (2026-03-24) of the same legacy 7.2 line"),
    ("known_issues.json", _fix_cannot_serve, "fix plan therock-pip (index therock) serves none of gfx1010"),
    ("torch_wheels.json", _vendor_unknown_sdk, "sdk 9.9.0 is not a Core SDK release"),
    ("docker_images.json", _image_unknown_rocm, "ROCm 5.8 is not a release"),
])
def test_check_finds_contradictions(kb_copy: Path, name: str, change, expected: str) -> None:  # type: ignore[no-untyped-def]
    _edit(kb_copy, name, change)
    problems = KnowledgeBase(kb_copy).problems()
    assert any(expected in p for p in problems), problems


def test_check_resolves_every_plan_target(kb: KnowledgeBase, tmp_path: Path) -> None:
    assert cross_problems(kb) == []
    plans = tmp_path / "plans"
    plans.mkdir()
    for src in (KB_DIR.parent.parent / "plans").glob("*.toml"):
        shutil.copy(src, plans / src.name)
    text = (plans / "upgrade-7.2.toml").read_text()
    (plans / "upgrade-7.2.toml").write_text(text.replace('rocm = "7.2.4"', 'rocm = "7.2.9"'))
    text = (plans / "downgrade-6.2.toml").read_text()
    (plans / "downgrade-6.2.toml").write_text(text.replace('torch = "2.5.1"', 'torch = "2.4.1"'))
    (plans / "docker.toml").unlink()
    problems = cross_problems(kb, plans)
    assert "plans/upgrade-7.2.toml: [target]: ROCm 7.2.9 is not a release in rocm_releases.json" in problems
    assert "plans/downgrade-6.2.toml: [target]: torch 2.4.1 has no row on index rocm6.2" in problems
    assert "plans/docker.toml: missing, but known issues may name plan 'docker'" in problems
