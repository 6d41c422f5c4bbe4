"""Issue 21 point 5 (the corpus's real failures): a shared library the loader cannot find is named, with
what provides it and the fix, and a harmless miss (RCCL's optional network plugin) is not called a failure."""

from __future__ import annotations

import pytest

from wizard.diagnose import diagnose
from wizard.kb import load_kb
from wizard.model import EvidenceText, Facts

pytestmark = pytest.mark.unit


def _findings(text: str) -> list[tuple[str, str]]:
    facts = Facts(texts=(EvidenceText("paste.txt", text, 1, "text", True),), origin="test")
    return [(f.id, f.severity) for f in diagnose(facts)]


def test_libamdhip64_of_another_major_goes_above_the_generic_finding() -> None:
    found = _findings("OSError: libamdhip64.so.6: cannot open shared object file: No such file or directory\n")
    ids = [i for i, _ in found]
    assert ids[:2] == ["libamdhip64-other-major", "rocm-libraries-not-found"]
    issue = load_kb().known_issue("libamdhip64-other-major")
    assert issue is not None and "libamdhip64.so.7" in issue.cause and "hip-runtime-amd" in issue.cause
    assert issue.fix.commands == ("ls -l /opt/rocm/lib/libamdhip64.so*",)


def test_libhwloc5_names_where_theRock_ships_it_and_the_fix() -> None:
    found = _findings("./rocrtst64: error while loading shared libraries: libhwloc.so.5: cannot open shared "
                      "object file: No such file or directory\n")
    assert found[0] == ("rocrtst-libhwloc5-off-path", "error")
    issue = load_kb().known_issue("rocrtst-libhwloc5-off-path")
    assert issue is not None and "lib/rocrtst/lib" in issue.cause and "#3231" in issue.fix.summary
    assert "https://github.com/ROCm/TheRock/pull/3231" in issue.sources


def test_rccl_network_plugin_miss_is_information_only() -> None:
    log = ("z292:58192:58192 [0] NCCL INFO NET/Plugin: No plugin found (librccl-net.so)\n"
           "z292:58192:58192 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : librccl-net.so: cannot open shared "
           "object file: No such file or directory : when loading librccl-net.so\n"
           "z292:58192:58192 [0] NCCL INFO NET/Plugin: Using internal network plugin.\n")
    assert ("rccl-net-plugin-absent", "info") in _findings(log)
    assert not [i for i, s in _findings(log) if s != "info"]  # nothing else claims a failure
