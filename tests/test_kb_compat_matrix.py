"""AMD's compatibility matrix (ROCm/ROCm docs/compatibility/compatibility-matrix-historical-6.0.csv, and the
current-release csv-table of docs/compatibility/compatibility-matrix.rst kept at two commits of
ROCm/legacy-rocm-build) as a derived table: per release its GPU / LLVM targets, architectures, distributions and
kernel-driver user-space window; a release with no typed gfx list reads the matrix's; ``kb check`` holds the typed
lists to it and the sources to each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kb_helpers import copy_kb

from wizard.kb import KB_DIR, KnowledgeBase
from wizard.kb.__main__ import main
from wizard.kb.ingest import IngestError
from wizard.kb.ingest_compat import (COMPAT_CSV, COMPAT_PAGE, COMPAT_REPO, DERIVED_COMPAT_MATRIX, PAGE_REPO, clean,
                                     compat_releases, derive_compat_matrix, matrix_decides)

pytestmark = pytest.mark.unit

CSV = KB_DIR / "upstream" / COMPAT_REPO / COMPAT_CSV
PAGE_72 = "fff7efbd0c870e1bfba278faa91d517996b7a33a"  # "7.2.4/7.2.3", "7.2.2/7.2.1", "7.1.0"
PAGE_641 = "076345c0f63f3620110f552cf2dc7c48a5ad06c5"  # "6.4.1", "6.4.0", "6.3.0"


def _page(commit: str, d: Path = KB_DIR) -> Path:
    return d / "upstream" / PAGE_REPO / commit / COMPAT_PAGE


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


def test_the_kept_table_is_what_the_snapshots_give_with_provenance_per_fact() -> None:
    table = _table()
    assert table == derive_compat_matrix(KB_DIR)
    csv_src, *pages = table["provenance"]
    assert (csv_src["repo"], csv_src["path"]) == (COMPAT_REPO, COMPAT_CSV) and len(csv_src["commit"]) == 40
    assert [(p["repo"], p["commit"], p["path"]) for p in pages] == [(PAGE_REPO, PAGE_72, COMPAT_PAGE),
                                                                    (PAGE_REPO, PAGE_641, COMPAT_PAGE)]
    rows = {r["release"]: r for r in table["releases"]}
    assert list(rows)[0] == "7.2.4" and list(rows)[-1] == "6.0.0" and len(rows) == 20
    assert {"7.2.4", "7.2.3", "7.2.2", "7.2.1", "7.1.0", "6.4.1", "6.4.0"} <= set(rows)
    labels = {"gfx": "GPU / LLVM target", "architectures": "Architecture",
              "distributions": "Operating systems & kernels",
              "kmd_user_space": "KMD & USER SPACE / Tested user space versions"}
    for row in rows.values():
        csv_row = row["gfx"]["source"] == f"{COMPAT_REPO}@{csv_src['commit']}:{COMPAT_CSV}"
        assert csv_row or row["gfx"]["source"] in {f"{PAGE_REPO}@{c}:{COMPAT_PAGE}" for c in (PAGE_72, PAGE_641)}
        for fact, label in labels.items():
            if fact == "kmd_user_space" and not csv_row:
                assert row[fact] is None  # the pages' KMD row lists the drivers for the release, not kmd_compat
                continue
            assert row[fact]["row"] == label and row[fact]["source"] == row["gfx"]["source"]


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
    for version in ("6.1.3", "6.4.2", "6.4.4", "7.0.3", "7.1.1", "7.2.0"):  # no kept table has a column for it
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
    # the "AMD GPU Driver" row lists the drivers that support the column's user space: not kmd_compat's direction
    assert rows["7.1.0"]["kmd_user_space"] is None and rows["7.0.1"]["kmd_user_space"] is None
    tested = SAMPLE.replace(":doc:`AMD GPU Driver <rocm-install-on-linux:reference/user-kernel-space-compat-matrix>`",
                            "Tested user space versions")
    assert {r["release"]: r for r in compat_releases(tested, "t", "src")}["7.1.0"]["kmd_user_space"] == {
        "values": ["6.4.x", "6.3.x"], "row": "DRIVER & USER SPACE / Tested user space versions", "source": "src"}


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


def test_the_page_reader_on_the_7_2_page() -> None:
    text = _page(PAGE_72).read_text(encoding="utf-8")
    assert ':header: "ROCm Version", "7.2.4/7.2.3", "7.2.2/7.2.1", "7.1.0"' in text
    rows = {r["release"]: r for r in compat_releases(text, "p", "src", rst=True)}
    assert list(rows) == ["7.2.4", "7.2.3", "7.2.2", "7.2.1", "7.1.0"]  # "a/b" is both releases
    assert rows["7.2.3"]["column"] == "7.2.4/7.2.3" and rows["7.2.3"]["gfx"] == rows["7.2.4"]["gfx"]
    assert rows["7.2.1"]["gfx"]["values"] == ["gfx950", "gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030",
                                              "gfx942", "gfx90a", "gfx908"]
    assert "target <rocm-install-on-linux:reference/system-requirements>`  [#gpu-compatibility]_," in text
    assert rows["7.2.1"]["gfx"]["row"] == "GPU / LLVM target"  # the footnote marker is not part of the label
    assert '"RHEL 10.1, 10.0, |br| 9.7, 9.6, 9.4"' in text  # |br| is a line break inside the cell
    assert {"name": "RHEL", "versions": ["10.1", "10.0", "9.7", "9.6", "9.4"]} in rows["7.2.4"]["distributions"]["values"]
    assert {"name": "Rocky Linux", "versions": ["9"]} in rows["7.1.0"]["distributions"]["values"]
    assert rows["7.1.0"]["architectures"]["values"][0] == "CDNA4"
    assert all(r["kmd_user_space"] is None for r in rows.values())  # "30.20.0 [#mi325x_KVM]_" is a driver version


def test_the_page_reader_on_the_6_4_1_page() -> None:
    text = _page(PAGE_641).read_text(encoding="utf-8")
    assert ",gfx1201 [#RDNA-OS]_,," in text
    rows = {r["release"]: r for r in compat_releases(text, "p", "src", rst=True)}
    assert list(rows) == ["6.4.1", "6.4.0", "6.3.0"]
    assert rows["6.4.1"]["gfx"]["values"] == ["gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030", "gfx942",
                                              "gfx90a", "gfx908"]
    assert rows["6.4.0"]["gfx"]["values"] == ["gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908"]
    assert {"name": "Oracle Linux", "versions": ["9", "8"]} in rows["6.4.0"]["distributions"]["values"]
    assert rows["6.3.0"]["kmd_user_space"] is None  # "KMD versions": the drivers for 6.3.0's user space
    assert not any("[#" in json.dumps(r) or "|br|" in json.dumps(r) for r in rows.values())


def test_the_page_reader_refuses_a_page_without_the_table() -> None:
    with pytest.raises(IngestError, match="no csv-table with a 'ROCm Version' header"):
        compat_releases(".. csv-table::\n   :header: \"OS\", \"Version\"\n\n   a,b\n", "p", "s", rst=True)


def test_releases_the_pages_cover_read_their_lists(kb_dir: Path) -> None:
    kb = KnowledgeBase(KB_DIR)
    rel = kb.release("6.4.0")
    assert rel is not None and rel.gfx is not None
    assert rel.gfx.official == ("gfx1100", "gfx1030", "gfx942", "gfx90a", "gfx908")
    assert rel.gfx.note is not None and PAGE_641 in rel.gfx.note
    r72 = kb.release("7.2.3")
    assert r72 is not None and r72.gfx is not None and "gfx950" in r72.gfx.official and PAGE_72 in str(r72.gfx.note)
    # a list read from the matrix decides for Instinct targets only; a typed list for every target
    assert kb.gfx_list_decides(rel, "gfx950") and kb.gfx_list_decides(rel, "gfx1100")
    assert not kb.gfx_list_decides(rel, "gfx1101") and not kb.gfx_list_decides(rel, "gfx1151")
    assert not matrix_decides("gfx906") and matrix_decides("gfx90a")
    typed = kb.release("6.3.3")
    assert typed is not None and kb.gfx_list_decides(typed, "gfx1101")


def test_check_names_two_sources_that_disagree_on_a_release(kb_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = _page(PAGE_641, kb_dir)
    text = page.read_text(encoding="utf-8")
    assert main(["check", str(kb_dir)]) == 0
    capsys.readouterr()
    # near miss: a row the table does not derive from may change
    page.write_text(text.replace("Thrust,2.5.0,2.5.0,2.3.2", "Thrust,2.5.0,2.5.0,2.3.3"), encoding="utf-8")
    assert main(["check", str(kb_dir)]) == 0
    capsys.readouterr()
    # the page's 6.3.0 column drops gfx908, which the CSV's 6.3.0 column lists
    page.write_text(text.replace("      ,gfx908,gfx908,gfx908\n", "      ,gfx908,gfx908,\n", 1), encoding="utf-8")
    assert main(["check", str(kb_dir)]) == 1
    out = capsys.readouterr().out
    assert "release 6.3.0: gfx disagree" in out and COMPAT_CSV in out and f"{PAGE_REPO}@{PAGE_641}" in out
