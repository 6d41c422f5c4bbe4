"""AMD's compatibility matrix (ROCm/ROCm docs/compatibility/compatibility-matrix-historical-6.0.csv) as a derived
table: per release column its GPU / LLVM targets, architectures, distributions and kernel-driver user-space window;
a release with no typed gfx list reads the matrix's; ``kb check`` holds the typed lists to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kb_helpers import copy_kb

from wizard.kb import KB_DIR, KnowledgeBase
from wizard.kb.__main__ import main
from wizard.kb.ingest import IngestError
from wizard.kb.ingest_compat import (COMPAT_CSV, COMPAT_REPO, DERIVED_COMPAT_MATRIX, clean, compat_releases,
                                     derive_compat_matrix)

pytestmark = pytest.mark.unit

CSV = KB_DIR / "upstream" / COMPAT_REPO / COMPAT_CSV


@pytest.fixture()
def kb_dir(tmp_path: Path) -> Path:
    return copy_kb(tmp_path)


def _table(d: Path = KB_DIR) -> dict:
    return json.loads((d / DERIVED_COMPAT_MATRIX).read_text())


def _releases_doc(d: Path) -> dict:
    return json.loads((d / "rocm_releases.json").read_text())


def _write_releases(d: Path, doc: dict) -> None:
    (d / "rocm_releases.json").write_text(json.dumps(doc, indent=1))


def _release(doc: dict, version: str) -> dict:
    return next(r for r in doc["releases"] if r["version"] == version)


def test_the_kept_table_is_what_the_snapshot_gives_with_provenance_per_fact() -> None:
    table = _table()
    assert table == derive_compat_matrix(KB_DIR)
    src = table["provenance"]
    assert (src["repo"], src["path"]) == (COMPAT_REPO, COMPAT_CSV) and len(src["commit"]) == 40
    rows = {r["release"]: r for r in table["releases"]}
    assert list(rows)[0] == "6.3.3" and list(rows)[-1] == "6.0.0" and len(rows) == 13
    labels = {"gfx": "GPU / LLVM target", "architectures": "Architecture",
              "distributions": "Operating systems & kernels",
              "kmd_user_space": "KMD & USER SPACE / Tested user space versions"}
    for row in rows.values():
        for fact, label in labels.items():
            assert row[fact]["row"] == label
            assert row[fact]["source"] == f"{COMPAT_REPO}@{src['commit']}:{COMPAT_CSV}"


def test_per_release_lists_with_footnotes_stripped() -> None:
    rows = {r["release"]: r for r in _table()["releases"]}
    assert "gfx942 [#mi300_624-past-60]_" in CSV.read_text()  # the CSV marks 6.2.4's gfx942 with a footnote
    assert rows["6.2.4"]["gfx"]["values"] == ["gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908"]
    assert rows["6.0.0"]["gfx"]["values"] == ["gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908"]
    assert rows["6.3.3"]["architectures"]["values"] == ["CDNA3", "CDNA2", "CDNA", "RDNA3", "RDNA2"]
    os_633 = rows["6.3.3"]["distributions"]["values"]
    assert {"name": "SLES", "versions": ["15 SP6", "15 SP5"]} in os_633  # "SLES 15 SP6, SP5"
    assert {"name": "Oracle Linux", "versions": ["8.10"]} in os_633  # "Oracle Linux 8.10 [#mi300x-past-60]_"
    assert {"name": "Azure Linux", "versions": ["3.0"]} in os_633
    assert {"name": "Azure Linux", "versions": ["3.0"]} not in rows["6.3.1"]["distributions"]["values"]
    assert {"name": "CentOS", "versions": ["7.9"]} in rows["6.0.0"]["distributions"]["values"]
    assert rows["6.0.0"]["kmd_user_space"]["values"] == ["6.2.x", "6.1.x", "6.0.x", "5.7.x", "5.6.x"]
    assert not any("[#" in json.dumps(r) for r in rows.values())


def test_a_release_the_matrix_lacks_stays_null() -> None:
    listed = {r["release"] for r in _table()["releases"]}
    kb = KnowledgeBase(KB_DIR)
    for version in ("6.1.3", "6.4.0", "7.0.3", "7.2.0"):  # no column in the CSV: nothing is made up
        assert version not in listed
        rel = kb.release(version)
        assert rel is not None and rel.gfx is None


def test_a_null_typed_list_reads_the_matrix_and_a_typed_one_is_kept(kb_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    doc = _releases_doc(kb_dir)
    _release(doc, "6.3.1")["gfx"] = None
    _write_releases(kb_dir, doc)
    kb = KnowledgeBase(kb_dir)
    rel = kb.release("6.3.1")
    assert rel is not None and rel.gfx is not None
    assert rel.gfx.official == ("gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908")
    assert rel.gfx.note is not None and "GPU / LLVM target" in rel.gfx.note and COMPAT_REPO in rel.gfx.note
    typed = kb.release("6.2.4")  # near miss: a typed list is never replaced (gfx906 stays, deprecated)
    assert typed is not None and typed.gfx is not None and "gfx906" in typed.gfx.official
    assert main(["check", str(kb_dir)]) == 0  # a null list is no disagreement


def test_check_fails_on_a_tampered_typed_list(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _releases_doc(kb_dir)
    _release(doc, "6.3.0")["gfx"]["official"].remove("gfx1030")
    _release(doc, "6.1.1")["gfx"]["deprecated"] = []  # gfx906 is not in the matrix: only deprecated explains it
    _release(doc, "6.2.0")["kmd_compat"].remove("6.0.x")
    _write_releases(kb_dir, doc)
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "releases (6.3.0): gfx official (less deprecated)" in out and "row 'GPU / LLVM target'" in out
    assert "releases (6.1.1): gfx official (less deprecated)" in out
    assert "releases (6.2.0): kmd_compat" in out and "Tested user space versions" in out
    assert "releases (6.3.3)" not in out  # near miss: the untouched releases agree


def test_a_deprecated_target_must_be_an_official_one(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _releases_doc(kb_dir)
    _release(doc, "6.3.2")["gfx"]["deprecated"] = ["gfx906"]
    _write_releases(kb_dir, doc)
    assert main(["check", str(kb_dir)]) == 1
    assert "key 'deprecated': not in official" in capsys.readouterr().out


def test_check_fails_on_a_tampered_derived_table(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = _table(kb_dir)
    table["releases"][0]["gfx"]["values"].append("gfx1101")
    (kb_dir / DERIVED_COMPAT_MATRIX).write_text(json.dumps(table, indent=1) + "\n")
    assert main(["check", str(kb_dir)]) == 1
    assert f"{DERIVED_COMPAT_MATRIX}: differs from what its snapshots give" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    assert main(["check", str(kb_dir)]) == 0


def test_a_changed_snapshot_fails_check_until_ingest_then_the_typed_list_must_follow(
        kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = kb_dir / "upstream" / COMPAT_REPO / COMPAT_CSV
    csv.write_text(csv.read_text().replace(",gfx1100,", ",gfx1101,", 1))  # 6.3.3's first target changes
    assert main(["check", str(kb_dir)]) == 1
    assert f"{DERIVED_COMPAT_MATRIX}: differs" in capsys.readouterr().out
    assert main(["ingest", str(kb_dir)]) == 0
    capsys.readouterr()
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "releases (6.3.3): gfx official" in out and "releases (6.3.2)" not in out


SAMPLE = """ROCm Version,7.1.0,7.0.1/7.0.0
      :ref:`Operating systems & kernels <OS-kernel-versions>`,Ubuntu 24.04.3,Ubuntu 24.04.3
      ,"RHEL 10.0 [#rhel-10-702-past-60]_, 9.6 [#rhel-10-702-past-60]_","RHEL 9.6 [#rhel-10-702-past-60]_"
      ,.. _architecture-support-compatibility-matrix-past-60:,
      :doc:`Architecture <rocm-install-on-linux:reference/system-requirements>`,CDNA4,CDNA4
      ,RDNA4,
      ,.. _gpu-support-compatibility-matrix-past-60:,
      :doc:`GPU / LLVM target <rocm-install-on-linux:reference/system-requirements>`,gfx950 [#mi350x-os-past-60]_,gfx950
      ,gfx1201 [#RDNA-OS-700-past-60]_ [#rd-v710-past-60]_,
      ,,
     DRIVER & USER SPACE [#kfd_support-past-60]_,.. _kfd-userspace-support-compatibility-matrix-past-60:,
      :doc:`AMD GPU Driver <rocm-install-on-linux:reference/user-kernel-space-compat-matrix>`,"6.4.x, 6.3.x",
"""


def test_the_reader_on_a_later_layout() -> None:
    rows = {r["release"]: r for r in compat_releases(SAMPLE, "t", "src")}
    assert list(rows) == ["7.1.0", "7.0.1", "7.0.0"]  # "7.0.1/7.0.0": one column, two releases
    assert rows["7.1.0"]["gfx"]["values"] == ["gfx950", "gfx1201"]
    assert rows["7.0.0"]["gfx"]["values"] == ["gfx950"] and rows["7.0.0"]["column"] == "7.0.1/7.0.0"
    assert rows["7.1.0"]["distributions"]["values"][1] == {"name": "RHEL", "versions": ["10.0", "9.6"]}
    assert rows["7.1.0"]["architectures"]["values"] == ["CDNA4", "RDNA4"]
    assert rows["7.1.0"]["kmd_user_space"] == {"values": ["6.4.x", "6.3.x"], "row":
                                               "DRIVER & USER SPACE / AMD GPU Driver", "source": "src"}
    assert rows["7.0.1"]["kmd_user_space"] is None  # an empty cell is no fact


def test_the_reader_refuses_what_it_cannot_read() -> None:
    with pytest.raises(IngestError, match="'ROCm Version' header"):
        compat_releases(SAMPLE.replace("ROCm Version", "Release"), "t", "s")
    with pytest.raises(IngestError, match="is not a release"):
        compat_releases(SAMPLE.replace("7.1.0,", "latest,", 1), "t", "s")
    with pytest.raises(IngestError, match="GPU / LLVM target .*not what this row holds"):
        compat_releases(SAMPLE.replace(",gfx950\n", ",MI350X\n"), "t", "s")
    with pytest.raises(IngestError, match="no single 'Architecture' row"):
        compat_releases(SAMPLE.replace("Architecture <", "Arch <"), "t", "s")


def test_clean_reduces_links_and_drops_footnotes() -> None:
    assert clean("      :doc:`GPU / LLVM target <rocm-install-on-linux:reference/system-requirements>`") == \
        "GPU / LLVM target"
    assert clean(" gfx942 [#mi300_612-past-60]_") == "gfx942"
    assert clean("`UCC <https://github.com/ROCm/ucc>`_") == "UCC"
    assert clean("gfx1101 [#RDNA-OS-700-past-60]_ [#rd-v710-past-60]_") == "gfx1101"


def test_check_fails_where_typed_distros_lack_one_the_matrix_lists(kb_dir: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    doc = _releases_doc(kb_dir)
    rel = _release(doc, "6.2.4")
    rel["distros"] = [d for d in rel["distros"] if (d["id"], d["version"]) not in {("sles", "15.5"), ("ol", "8.9")}]
    _write_releases(kb_dir, doc)
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "releases (6.2.4): distros lack what AMD's compatibility matrix lists: SLES 15 SP5, Oracle Linux 8.9" in out
    assert "Ubuntu 24.04.1" not in out  # near miss: Ubuntu point releases are their major.minor line (24.04)


def test_a_typed_distro_the_matrix_does_not_list_is_no_problem(kb_dir: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = _releases_doc(kb_dir)  # 6.3.0 lists Debian 12 and Azure Linux 3.0, which the matrix gives 6.3.1+ only
    typed = {(d["id"], d["version"]) for d in _release(doc, "6.3.0")["distros"]}
    assert {("debian", "12"), ("azurelinux", "3.0")} <= typed
    assert main(["check", str(kb_dir)]) == 0
