"""Issue 21 point 2: the corrections of the second knowledge audit (shared/knowledge/audit-2026-11b.md), one
test each, against the knowledge base as shipped. The driver plan's corrections are in
test_plan_core_sdk_driver.py, the stable whl-next devices in test_kb_ingest.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kb_helpers import kb_files_only

from test_plan_core_sdk_driver import fresh, resolve
from wizard import record
from wizard.kb import KB_DIR, KnowledgeBase, load_kb

pytestmark = pytest.mark.unit


def _v(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split("."))


def test_newest_is_the_newest_row_whose_gfx_and_python_are_certain() -> None:
    """Audit §1.3: a note about torchaudio (or the index) no longer demotes a row; gfx or Python doubt does."""
    kb = load_kb()
    raw = json.loads((KB_DIR / "torch_wheels.json").read_text())["wheels"]
    for w in raw:  # the shipped rows say what each note is about
        assert bool(w.get("uncertain")) == bool(w.get("uncertain_facts")), (w["torch"], w["index"])
    for w in kb.wheels_for(torch=">=2.12"):
        assert w.choice_certain, (w.torch, w.index, w.uncertain_facts)
    rp = resolve("pip-only", fresh())  # RX 9070 XT, Python of the fixture
    t = dict(rp.target)
    newest = max((w for w in kb.wheels() if w.bundles_rocm and w.gfx and "gfx1201" in w.gfx),
                 key=lambda w: (_v(w.torch), _v(w.rocm or "0")))
    assert (t["torch"], t["index"]) == (newest.torch, newest.index) == ("2.14.1", "rocm7.2")


def test_gfx_or_python_doubt_still_demotes_a_row(tmp_path: Path) -> None:
    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    data = json.loads((d / "torch_wheels.json").read_text())
    for w in data["wheels"]:
        if w["torch"].startswith(("2.13", "2.14")):
            w["uncertain"] = "gfx list not read"
            w["uncertain_facts"] = ["gfx"]
    (d / "torch_wheels.json").write_text(json.dumps(data))
    kb = load_kb(str(d))
    rp = resolve("pip-only", fresh(), kb=kb)
    assert dict(rp.target)["torch"] == "2.12.1"
    pip = next(s for s in rp.steps if s.kind == "pip_pin")
    assert any("2.12.1 is the newest row whose gfx list and Python tags" in n and "2.14.1" in n for n in pip.notes)


def test_a_note_must_say_what_it_is_about(tmp_path: Path) -> None:
    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    data = json.loads((d / "torch_wheels.json").read_text())
    bad = next(w for w in data["wheels"] if w["torch"] == "2.11.0" and w["index"] == "rocm7.2")
    bad["uncertain_facts"] = ["gfx"]
    other = next(w for w in data["wheels"] if w["torch"] == "2.11.0" and w["index"] == "rocm7.1")
    other["uncertain"], other["uncertain_facts"] = "something", ["weather"]
    (d / "torch_wheels.json").write_text(json.dumps(data))
    problems = KnowledgeBase(d).problems()
    assert any("2.11.0 rocm7.2" in p and "without an 'uncertain' note" in p for p in problems), problems
    assert any("2.11.0 rocm7.1" in p and "weather" in p for p in problems), problems
    other["uncertain_facts"] = ["torchaudio"]
    # a note that does not say what it is about (an older file) leaves every fact in doubt: the row is demoted
    bad["uncertain"] = "something"
    del bad["uncertain_facts"]
    row = next(w for w in data["wheels"] if w["torch"] == "2.13.0" and w["index"] == "rocm7.2")
    del row["uncertain_facts"]
    (d / "torch_wheels.json").write_text(json.dumps(data))
    kb = KnowledgeBase(d)
    assert kb.problems() == []
    assert not kb.wheel("2.13.0", "rocm7.2").choice_certain  # type: ignore[union-attr]


def test_rocm70_71_rows_of_torch_210_to_212_carry_gfx950_1150_1151() -> None:
    """Audit W10: pytorch#167299 added them to every ROCm wheel build on 2025-11-07, before the 2.10 cut."""
    kb = load_kb()
    rows = [w for w in kb.wheels() if w.index in ("rocm7.0", "rocm7.1") and (2, 10) <= _v(w.torch)[:2] <= (2, 12)]
    assert len(rows) == 5  # 2.10.0 on rocm7.0 and rocm7.1; 2.11.0, 2.12.0, 2.12.1 on rocm7.1
    for w in rows:
        assert w.gfx is not None and {"gfx950", "gfx1150", "gfx1151"} <= set(w.gfx), (w.torch, w.index)
        assert "https://github.com/pytorch/pytorch/pull/167299" in w.sources
    # a Strix Halo (gfx1151) machine no longer needs an override on these rows
    assert kb.override_for("gfx1151", kb.wheel("2.10.0", "rocm7.0")) is None


def test_torch_214_python_tags_include_315() -> None:
    kb = load_kb()
    for w in kb.wheels_for(torch="2.14.*"):
        assert {"3.15", "3.15t"} <= set(w.python), (w.torch, w.index)
    assert kb.wheels_for(torch="2.13.0", python="3.15") == ()


def test_710_and_1010_are_recognisable_and_say_what_is_unknown() -> None:
    kb = load_kb()
    r = kb.release("10.1.0")
    assert r is not None and r.install_path == "/opt/rocm/core-10.1"
    assert "amdrocm10.1-gfx*" in r.packages and "amdrocm10.1" in r.packages
    assert r.distros is not None and r.routes is not None and r.amdgpu_install  # read from AMD's 10.1.0 page
    assert r.uncertain and "torch" in r.uncertain
    assert load_kb().vendor_wheels("10.1.0") == ()  # AMD's torch for 10.1 not read
    # the core-sdk plan (AMD's torch for its release) still takes 10.0.0 and says why not 10.1.0
    step = next(s for s in resolve("core-sdk", fresh()).steps if s.kind == "core_sdk_install")
    assert any("10.1.0 is newer" in n and "torch" in n for n in step.notes)


def test_1010_machine_is_recognised_by_detection() -> None:
    from wizard.probes.rocm import Package, probe_rocm

    class Fake:
        def listdir(self, p: str) -> list[str]:
            return {"/opt": ["rocm"], "/opt/rocm": ["core-10.1"]}.get(p, [])

        def exists(self, p: str) -> bool:
            return p in ("/opt/rocm", "/opt/rocm/core-10.1")

        def is_dir(self, p: str) -> bool:
            return self.exists(p)

        def realpath(self, p: str) -> str:
            return p

        def read_text(self, p: str, limit: int = 0) -> str | None:
            return "10.1.0-12\n" if p == "/opt/rocm/core-10.1/.info/version" else None

        def captured(self, name: str) -> str | None:
            return None

    pkgs = [Package("amdrocm10.1-gfx1100", "10.1.0-12", "dpkg", 1)]
    rocm = probe_rocm(Fake(), pkgs)  # type: ignore[arg-type]
    inst = next(i for i in rocm.installs if i.stream == "core-sdk")
    rel = load_kb().release(inst.version or "")
    assert rel is not None and rel.version == "10.1.0" and rel.install_path == inst.path


def test_10_0_package_patterns_cover_the_core_sdk_metas() -> None:
    r = load_kb().release("10.0.0")
    assert r is not None
    for p in ("amdrocm-core-sdk10.0*", "amdrocm-core-dev10.0*", "amdrocm-runtime10.0", "amdrocm-blas10.0*"):
        assert p in r.packages


def test_714_amdgpu_install_names_are_the_ones_amds_page_prints() -> None:
    r = load_kb().release("7.14.0")
    assert r is not None and r.filename_verified is True
    assert r.amdgpu_install["noble"] == ("https://repo.radeon.com/amdgpu-install/31.40/ubuntu/noble/"
                                         "amdgpu-install_26.13.26130000-2369674.24.04_all.deb")
    assert r.amdgpu_install["el9.6"].endswith("/31.40/rhel/9.6/amdgpu-install-26.13.26130000-2369674.el9.noarch.rpm")
    assert r.uncertain is None or "no URL is recorded" not in r.uncertain
    for key in r.amdgpu_install:  # every URL for a distribution the release lists
        assert key in ("resolute", "noble", "jammy") or any(f"el{d.version}" == key for d in r.distros or ())


def test_570_has_no_el79_package_and_amds_file_names() -> None:
    kb = load_kb()
    r = kb.release("5.7.0")
    assert r is not None and "el7.9" not in r.amdgpu_install and "el8.6" in r.amdgpu_install
    assert r.filename_verified is True
    assert kb.amdgpu_install_url("5.7.0", "rhel", "7.9", None) is None
    r72 = kb.release("7.2.0")
    assert r72 is not None and r72.filename_verified is True


def test_torch_215_torchvision_is_unknown_not_guessed() -> None:
    row = next(u for u in load_kb().unresolved_wheels() if u["torch"] == "2.15.0")
    assert row["torchvision"] is None and "0.30" in row["uncertain"]


def test_bkc_stream_is_known() -> None:
    kb = load_kb()
    ix = kb.wheel_index("https://bkc.repo.amd.com/rocm/whl-next/")
    assert ix is not None and not ix.stable and kb.published_devices(ix) == ("gfx1250",)


def test_driver_plan_changes_nothing_else_system_wide() -> None:
    """Audit A7: the driver plan installs the kernel driver and the repository it comes from, no ROCm."""
    from wizard.model import KERNEL_DRIVER

    rp = resolve("driver", record.replace(fresh(), driver=record.replace(fresh().driver, kfd_present=False,
                                                                         loaded=False, kind=None)))
    step = next(s for s in rp.steps if s.kind == "kernel_driver")
    assert not [a for a in step.actions if a.argv[0] == "amdgpu-install"]
    changed = {c for a in step.actions if a.destructive for c in a.changes}
    assert changed == {"dpkg", "/etc/apt/sources.list.d", "amdgpu-dkms", KERNEL_DRIVER}
    assert step.effects == (KERNEL_DRIVER,)


def test_7141_and_1010_package_facts_come_from_therocks_release_branches() -> None:
    """7.14.1 and 10.1.0: package names and install path by TheRock's packaging rule on each release branch (repository,
    commit and path cited); OS list, gfx list, amdgpu-install and driver from AMD's own install page source of that
    release (ROCm/rocm-docs, commit and path cited)."""
    kb = load_kb()
    for version, series, commit, docs, driver in (
            ("7.14.1", "7.14", "f51dc6c91e0d3214f22853fd5cb3f96dbc7d2c4b", "50600d8da151e4ca8ce7fec9f68fa3048cc5bd85",
             "31.40.1"),
            ("10.1.0", "10.1", "430a8a89c53825cba82cd73a20ca84cd0eeb0868", "f47eb2f8ba97787da0cfd5166d1afbf42956fd9d",
             "31.60")):
        r = kb.release(version)
        assert r is not None and r.install_path == f"/opt/rocm/core-{series}"
        assert {f"amdrocm{series}", f"amdrocm{series}-gfx*", f"amdrocm-core-sdk{series}*",
                f"amdrocm-core-dev{series}*", f"amdrocm-core-devel{series}*"} <= set(r.packages)
        cited = [s for s in r.sources if s.startswith(f"https://github.com/ROCm/TheRock/blob/{commit}/")]
        assert {s.rsplit(f"{commit}/", 1)[1] for s in cited} >= {
            "version.json", "build_tools/packaging/linux/packaging_utils.py", "build_tools/packaging/linux/build_package.py"}
        assert not any("daMustermann" in s for s in r.sources)  # a secondary guide is no longer the source
        page = f"https://github.com/ROCm/rocm-docs/blob/{docs}/docs/install/include/200-install.rst"
        assert page in r.sources and r.driver_version == driver and r.gfx is not None and r.distros is not None
        assert all(f"/amdgpu-install/{driver}/" in u for u in r.amdgpu_install.values())
        assert r.kmd_compat is None and r.uncertain and "kmd_compat" in r.uncertain
