"""Issue 21 point 1: derived knowledge with provenance. ``python -m wizard.kb ingest`` regenerates the derived
tables from the upstream snapshots kept in the repository; ``kb check`` fails when they disagree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kb_helpers import copy_kb

from wizard.kb import KB_DIR, KnowledgeBase
from wizard.kb.__main__ import main
from wizard.kb.ingest import (DERIVED_DEVICES, OWNERSHIP, SUPPORTED, THEROCK, IngestError, derive_devices,
                              linux_status, stream_devices, yaml_tree)

pytestmark = pytest.mark.unit

MANIFEST = KB_DIR / "upstream" / THEROCK / OWNERSHIP


@pytest.fixture()
def kb_dir(tmp_path: Path) -> Path:
    return copy_kb(tmp_path)


def test_the_kept_derived_table_is_what_its_snapshots_give(capsys: pytest.CaptureFixture[str]) -> None:
    assert (KB_DIR / DERIVED_DEVICES).read_text() == json.dumps(derive_devices(KB_DIR), indent=1) + "\n"
    snaps = json.loads((KB_DIR / "upstream" / "snapshots.json").read_text())["snapshots"]
    for row in snaps:  # each snapshot: repository, 40-hex commit, path, and the file itself
        where = row.get("file") or f"{row['repo']}/{row['path']}"  # several commits of one path: each its own file
        assert len(row["commit"]) == 40 and (KB_DIR / "upstream" / where).is_file()


def test_every_derived_fact_names_its_provenance() -> None:
    table = json.loads((KB_DIR / DERIVED_DEVICES).read_text())
    for part in ("streams", "linux_status"):
        src = table["provenance"][part]
        assert src["repo"] == THEROCK and len(src["commit"]) == 40
        assert src["url"] == f"https://github.com/{src['repo']}/blob/{src['commit']}/{src['path']}"
    assert table["provenance"]["streams"]["path"] == OWNERSHIP
    assert table["provenance"]["linux_status"]["path"] == SUPPORTED


def test_stable_whl_next_devices_are_the_manifests() -> None:
    streams = json.loads((KB_DIR / DERIVED_DEVICES).read_text())["streams"]
    stable = set(streams["stable"])
    assert {"gfx1010", "gfx1011", "gfx1012", "gfx1250"} <= stable
    assert {f"gfx103{i}" for i in range(7)} <= stable
    assert not {"gfx900", "gfx906", "gfx90c"} & stable
    assert {"gfx900", "gfx906", "gfx90c"} <= set(streams["nightly"]) & set(streams["dev"])
    assert set(streams["bkc"]) == {"gfx1250"}
    assert streams["stable"]["gfx1031"][:2] == ["amd-torch-device-gfx1031", "rocm-sdk-device-gfx1031"]


def test_check_fails_when_a_snapshot_changes_and_ingest_repairs_it(kb_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(kb_dir)]) == 0
    snap = kb_dir / "upstream" / THEROCK / OWNERSHIP
    text = snap.read_text()
    for pkg in ("amd-torch-device-gfx1031", "rocm-sdk-device-gfx1031"):  # upstream withdraws gfx1031 from stable
        text = text.replace(f"      {pkg}:\n        owner_path: pytorch/whl-next\n",
                            f"      {pkg}:\n        owner_path: pytorch/whl-next\n        streams:\n"
                            "          - dev\n          - nightly\n")
    snap.write_text(text)
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 1
    assert "derived_devices.json: differs from what its snapshots give" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    assert "derived_devices.json" in capsys.readouterr().out
    assert main(["check", str(kb_dir)]) == 0
    kb = KnowledgeBase(kb_dir)
    ix = kb.wheel_index("amd-whl-next")
    assert ix is not None and "gfx1031" not in kb.published_devices(ix) and "gfx1032" in kb.published_devices(ix)
    assert main(["ingest", str(kb_dir)]) == 0 and "up to date" in capsys.readouterr().out


def test_a_snapshot_in_a_format_the_reader_does_not_know_is_one_line(kb_dir: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (kb_dir / "upstream" / THEROCK / OWNERSHIP).write_text("streams: {known: [stable]}\n")
    assert main(["ingest", str(kb_dir)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ingest: ") and "\n" not in err and "flow" in err
    assert main(["check", str(kb_dir)]) == 1
    assert "cannot be checked against its snapshots" in capsys.readouterr().out


def test_a_missing_snapshot_is_named(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (kb_dir / "upstream" / THEROCK / SUPPORTED).unlink()
    assert main(["ingest", str(kb_dir)]) == 1
    assert f"upstream/{THEROCK}/{SUPPORTED}: snapshot file missing" in capsys.readouterr().err


def test_yaml_subset_reader() -> None:
    tree = yaml_tree("a:\n  b: 1\n  c:\n    - x\n    - 'y'\n# note\nd:\n  - k: v\n    m:\n      n: o\n", "t")
    assert tree == {"a": {"b": 1, "c": ["x", "y"]}, "d": [{"k": "v", "m": {"n": "o"}}]}
    with pytest.raises(IngestError):
        yaml_tree("a: &anchor x\n", "t")
    with pytest.raises(IngestError):
        stream_devices({"streams": {}}, "t")


def test_supported_gpus_linux_rows() -> None:
    md = ("## ROCm on Linux\n| Architecture | LLVM target | Build Passing | Sanity Tested | Release Ready |\n"
          "| --- | --- | --- | --- | --- |\n| RDNA2 | gfx1031 | ✅ | ✅ | ✅ |\n| **CDNA4** | **gfx950** | ✅ | | |\n"
          "## ROCm on Windows\n| RDNA2 | gfx1030 | ✅ | | |\n")
    assert linux_status(md, "t") == {
        "gfx1031": {"build_passing": True, "sanity_tested": True, "release_ready": True},
        "gfx950": {"build_passing": True, "sanity_tested": False, "release_ready": False}}
    kb = KnowledgeBase(KB_DIR)
    assert kb.target_status("gfx1031") == {"build_passing": True, "sanity_tested": True, "release_ready": True}
    assert kb.target_status("gfx90c") == {"build_passing": True, "sanity_tested": False, "release_ready": False}


# --- PyTorch's manywheel build script: the gfx targets per build path ----------------------------------


def test_wheel_gfx_is_derived_from_pytorchs_build_script() -> None:
    from wizard.kb.ingest import BUILD_SH, DERIVED_WHEEL_GFX, PYTORCH, derive_wheel_gfx

    table = json.loads((KB_DIR / DERIVED_WHEEL_GFX).read_text())
    assert table == derive_wheel_gfx(KB_DIR)
    src = table["provenance"]
    assert (src["repo"], src["path"]) == (PYTORCH, BUILD_SH) and src["commit"].startswith("027375bf")
    legacy, therock = table["targets"]["rocm_final_legacy"], table["targets"]["rocm_final"]
    assert legacy[:2] == ["gfx900", "gfx906"] and legacy[2:] == therock and "gfx1103" in therock
    kb = KnowledgeBase(KB_DIR)
    cited = [w for w in kb.wheels() if src["url"] in w.sources]
    assert {(w.torch, w.index) for w in cited} >= {("2.13.0", "rocm7.2"), ("2.14.1", "rocm7.14")}
    for w in cited:
        assert set(w.gfx or ()) == set(legacy if w.bundles_rocm else therock), (w.torch, w.index)


def test_rocm_arch_lists_follow_each_branch() -> None:
    from wizard.kb.ingest import rocm_arch_lists

    script = ("case x in\n    manylinux2_28-builder:rocm*)\n        PYTORCH_ROCM_ARCH=\"gfx942;gfx1100\"\n"
              "        if [[ a ]]; then\n            TARGET=rocm_final\n        else\n"
              "            if [[ b ]]; then\n                X=1\n            fi\n            TARGET=rocm_final_legacy\n"
              "            PYTORCH_ROCM_ARCH=\"gfx900;${PYTORCH_ROCM_ARCH}\"\n        fi\n        ;;\n"
              "    other)\n        PYTORCH_ROCM_ARCH=\"gfx1\"\n        TARGET=nope\n        ;;\nesac\n")
    assert rocm_arch_lists(script, "t") == {"rocm_final": ["gfx942", "gfx1100"],
                                            "rocm_final_legacy": ["gfx900", "gfx942", "gfx1100"]}
    with pytest.raises(IngestError):
        rocm_arch_lists("echo nothing\n", "t")


def test_a_changed_build_script_fails_check_until_ingest_and_the_rows_agree(kb_dir: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.kb.ingest import BUILD_SH, PYTORCH

    snap = kb_dir / "upstream" / PYTORCH / BUILD_SH
    snap.write_text(snap.read_text().replace("gfx1102;gfx1103;", "gfx1102;"))  # upstream drops gfx1103
    assert main(["check", str(kb_dir)]) == 1
    assert "derived_wheel_gfx.json: differs from what its snapshots give" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 1  # now the rows that cite the script say otherwise
    out = capsys.readouterr().out
    assert "wheels (2.13.0 rocm7.2): gfx" in out and "is not what its source" in out


# --- PyTorch's binary build matrix: torch x ROCm x Python x gfx ----------------------------------------


def test_build_matrix_is_derived_from_pytorchs_matrix_and_build_script() -> None:
    from wizard.kb.ingest_matrix import DERIVED_BUILD_MATRIX, MATRIX, derive_build_matrix

    table = json.loads((KB_DIR / DERIVED_BUILD_MATRIX).read_text())
    assert table == derive_build_matrix(KB_DIR)
    assert table["provenance"]["matrix"]["path"] == MATRIX
    assert table["provenance"]["matrix"]["commit"] == table["provenance"]["gfx"]["commit"]
    assert table["torch"] is None  # the version main builds is not in these files: not invented
    rows = {c["channel"]: c for c in table["channels"]}
    assert list(rows) == ["rocm7.2", "rocm7.14", "rocm-preview"]
    assert rows["rocm7.2"]["build_target"] == "rocm_final_legacy" and rows["rocm7.2"]["requires"] is None
    assert rows["rocm7.2"]["gfx"][:2] == ["gfx900", "gfx906"]
    assert rows["rocm7.14"]["requires"] == "rocm[libraries,device-all]==7.14.*"
    assert rows["rocm7.14"]["build_target"] == rows["rocm-preview"]["build_target"] == "rocm_final"
    assert rows["rocm-preview"]["requires"] == "rocm[libraries,device-all]==7.15.0a20260712"
    assert rows["rocm7.14"]["index_url"] == "https://download.pytorch.org/whl/nightly/rocm7.14"
    assert all(r["python"][-2:] == ["3.15", "3.15t"] for r in rows.values())


def test_the_matrix_file_is_parsed_never_run() -> None:
    from wizard.kb.ingest_matrix import matrix_literals

    src = ('raise SystemExit("never run")\nROCM_ARCHES = ["7.2"]\nFULL_PYTHON_VERSIONS: list[str] = ["3.12"]\n'
           'PYTORCH_EXTRA_INSTALL_REQUIREMENTS = {"7.2": ("a" "b")}\nPYTORCH_NIGHTLY_PIP_INDEX_URL = "u"\n')
    assert matrix_literals(src, "t")["PYTORCH_EXTRA_INSTALL_REQUIREMENTS"] == {"7.2": "ab"}
    with pytest.raises(IngestError, match="ROCM_ARCHES is not a literal"):
        matrix_literals(src.replace('["7.2"]', 'list(X)'), "t")
    with pytest.raises(IngestError, match="no literal FULL_PYTHON_VERSIONS"):
        matrix_literals(src.replace("FULL_PYTHON_VERSIONS", "OTHER"), "t")


def test_rocm_branches_read_each_glob_and_target() -> None:
    from wizard.kb.ingest_matrix import rocm_branches

    script = ("case x in\n    manylinux2_28-builder:rocm*)\n"
              '        if [[ "$GPU_ARCH_VERSION" == *"preview"* ]]; then\n            TARGET=a\n'
              '        elif [[ "$GPU_ARCH_VERSION" == *"7.14"* ]]; then\n            TARGET=b\n'
              '        else\n            if [[ x ]]; then\n                Y=1\n            fi\n            TARGET=c\n'
              "        fi\n        ;;\nesac\n")
    assert rocm_branches(script, "t") == [("*preview*", "a"), ("*7.14*", "b"), (None, "c")]
    with pytest.raises(IngestError, match="branch test"):
        rocm_branches(script.replace('[[ "$GPU_ARCH_VERSION" == *"7.14"* ]]', "[[ -n z ]]"), "t")


def test_a_changed_matrix_fails_check_and_rows_citing_it_must_agree(kb_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.kb.ingest_matrix import DERIVED_BUILD_MATRIX, MATRIX

    snap = kb_dir / "upstream" / "pytorch/pytorch" / MATRIX
    snap.write_text(snap.read_text().replace('    "3.15t",\n]', "]"))  # upstream drops 3.15t
    assert main(["check", str(kb_dir)]) == 1
    assert f"{DERIVED_BUILD_MATRIX}: differs from what its snapshots give" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 0
    url = json.loads((kb_dir / DERIVED_BUILD_MATRIX).read_text())["provenance"]["matrix"]["url"]
    wheels = json.loads((kb_dir / "torch_wheels.json").read_text())
    row = next(w for w in wheels["wheels"] if (w["torch"], w["index"]) == ("2.14.1", "rocm7.14"))
    row["sources"].append(url)  # a row that cites the matrix but keeps 3.15t
    (kb_dir / "torch_wheels.json").write_text(json.dumps(wheels, indent=1))
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "wheels (2.14.1 rocm7.14): python" in out and "is not what" in out


# --- AMD's install pages: release, amdgpu-install file names, distributions ---------------------------


def test_install_pages_are_derived_from_amds_page_sources() -> None:
    from wizard.kb.ingest_install import CONF, DERIVED_INSTALL_PAGES, INSTALL_REPO, derive_install_pages

    table = json.loads((KB_DIR / DERIVED_INSTALL_PAGES).read_text())
    assert table == derive_install_pages(KB_DIR)
    rows = {r["release"]: r for r in table["releases"]}
    assert list(rows) == ["6.0.2", "6.1.0", "6.1.1", "6.1.2", "6.2.0", "6.2.1", "6.2.2"]
    assert (rows["6.2.0"]["amdgpu_install_dir"], rows["6.2.0"]["amdgpu_install_package"]) == ("6.2", "6.2.60200-1")
    assert rows["6.0.2"]["rhel"] == ["9.3", "9.2", "8.9", "8.8"]  # (major, version) pairs read as versions
    assert {u["codename"] for u in rows["6.2.2"]["ubuntu"]} == {"noble", "jammy"}
    for row in rows.values():
        src = row["provenance"]
        assert (src["repo"], src["path"]) == (INSTALL_REPO, CONF) and len(src["commit"]) == 40
    assert KnowledgeBase(KB_DIR).problems() == []  # the releases agree with their pages


def test_a_release_disagreeing_with_its_install_page_fails_check(kb_dir: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((kb_dir / "rocm_releases.json").read_text())
    rel = next(r for r in doc["releases"] if r["version"] == "6.2.1")
    rel["amdgpu_install"]["jammy"] = rel["amdgpu_install"]["jammy"].replace("6.2.60201", "6.2.60200")
    rel["amdgpu_install"]["questing"] = rel["amdgpu_install"]["noble"].replace("noble", "questing")
    rel["distros"] = [d for d in rel["distros"] if d["version"] != "8.10"]
    (kb_dir / "rocm_releases.json").write_text(json.dumps(doc, indent=1))
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "releases (6.2.1): amdgpu_install keys differ from its install page" in out and "['questing']" in out
    assert "amdgpu_install (jammy)" in out and "package version 6.2.60201-1" in out
    assert "releases (6.2.1): distros lack what its install page offers" in out and "rhel 8.10" in out


def test_a_changed_install_page_fails_check_until_ingest_then_the_release_must_follow(
        kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snaps = json.loads((kb_dir / "upstream" / "snapshots.json").read_text())["snapshots"]
    row = next(r for r in snaps if r.get("branch") == "docs/6.2.2")
    conf = kb_dir / "upstream" / row["file"]
    conf.write_text(conf.read_text().replace("sles_version_numbers = ['15.6', '15.5']",
                                             "sles_version_numbers = ['15.7', '15.6', '15.5']"))
    assert main(["check", str(kb_dir)]) == 1
    assert "derived_install_pages.json: differs from what its snapshots give" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "releases (6.2.2): amdgpu_install keys differ" in out and "missing ['sle15.7']" in out


def test_page_release_refuses_what_it_cannot_read() -> None:
    from wizard.kb.ingest_install import page_release

    good = ("rocm_version = '6.2'\namdgpu_version = '6.2'\namdgpu_install_version = '6.2.60200-1'\n"
            "ubuntu_version_numbers = [('24.04', 'noble')]\nrhel_version_numbers = [('9', '9.4')]\n"
            "sles_version_numbers = ['15.6']\nol_version_numbers = [('8', '8.8')]\n")
    row = page_release(good, "t")
    assert (row["release"], row["rhel"], row["ol"]) == ("6.2.0", ["9.4"], ["8.8"])
    with pytest.raises(IngestError, match="not X.Y or X.Y.Z"):
        page_release(good.replace("'6.2'\namdgpu_version", "'latest'\namdgpu_version"), "t")
    with pytest.raises(IngestError, match="ubuntu_version_numbers"):
        page_release(good.replace("[('24.04', 'noble')]", "['24.04']"), "t")


def test_the_kb_tool_answers_help_and_bad_usage_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m wizard.kb ingest --help` is help, not a directory named --help; bad usage is one line, exit 2."""
    assert main(["ingest", "--help"]) == 0
    assert "regenerate the derived tables" in capsys.readouterr().out
    for bad in ([], ["bogus"], ["check", "a", "b"]):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error:" in err, (bad, err)
