"""Three known-issue leftovers of the last reviews (helper L8): dnf5's wordings, Fedora's derivatives, and the launcher
that picked a ROCm torch for an AMD iGPU beside an NVIDIA GPU, shown from detected facts alone.

Each test is a machine on which an issue fired (or stayed silent) against what its sources say, with the near miss
that must keep its present behaviour.
"""

from __future__ import annotations

import pytest
from test_known_issues_texts import _facts, _found, _ids

from wizard.diagnose import Finding, diagnose
from wizard.kb.families import family_of_gfx
from wizard.model import Facts, Gpu, OsInfo, PythonEnv
from wizard.record import replace

pytestmark = pytest.mark.unit

REPO = "rocm-repository-missing"
META = "fedora-rocm-metapackage-missing"
NAMES = "fedora-rocm-package-names"
ROCKY = OsInfo(id="rocky", version="9.4", like=("rhel", "centos", "fedora"))
FEDORA = OsInfo(id="fedora", version="42")


def _on(os_: OsInfo, text: str) -> dict[str, Finding]:
    """The findings of a text on a machine of this os-release (the shared `_found`, with ID_LIKE set)."""
    return {f.id: f for f in diagnose(replace(_facts({}, text), os=os_))}


def _silent(f: Finding | None) -> bool:
    return f is None or f.contradicted is not None


# --------------------------------------------------------------------------- 1. dnf5's wordings
# rpm-software-management/dnf5@8a8e234809ebb898c488b0efbdde86f1c958a5c4:
# - libdnf5/base/log_event.cpp, GoalProblem::NOT_FOUND: "No match for argument: {}" (install, upgrade ...), but for a
#   remove "No packages to remove for argument: {}"; GoalProblem::NOT_INSTALLED: "Packages for argument '{}' available,
#   but not installed." (an upgrade of a package the repositories have and the machine has not)
# - libdnf5/base/goal.cpp: add_remove_to_goal and add_up_down_distrosync_to_goal (upgrade) report a name no repository
#   has through Transaction::Impl::report_not_found (libdnf5/base/transaction.cpp: NOT_FOUND, the query of installed
#   packages only for a remove); an upgrade of a name the repositories have and the machine has not: NOT_INSTALLED
# - libdnf5-cli/exception.cpp: GoalResolveError "Failed to resolve the transaction" then ":\n" and the resolve logs;
#   dnf5/main.cpp print_resolve_hints: "You can try to add to command line:", "{} to skip unavailable packages" with
#   --skip-unavailable where a package was not found; libdnf5-cli/output/transaction_table.cpp: "Nothing to do."
_HINT = "You can try to add to command line:\n  --skip-unavailable to skip unavailable packages\n"
DNF5_INSTALL = "$ sudo dnf install rocm\nFailed to resolve the transaction:\nNo match for argument: rocm\n" + _HINT
DNF5_INSTALL_SDK = ("$ sudo dnf install rocm-hip-sdk\nFailed to resolve the transaction:\n"
                    "No match for argument: rocm-hip-sdk\n" + _HINT)
DNF5_REMOVE = "$ sudo dnf remove rocm-hip-sdk\nNo packages to remove for argument: rocm-hip-sdk\n\nNothing to do.\n"
DNF5_UPGRADE_NOT_INSTALLED = ("$ sudo dnf upgrade rocm\nFailed to resolve the transaction:\n"
                              "Packages for argument 'rocm' available, but not installed.\n")
DNF5_UPGRADE_NO_SUCH = "$ sudo dnf upgrade rocm\nFailed to resolve the transaction:\nNo match for argument: rocm\n" + _HINT


@pytest.mark.parametrize("text", [DNF5_INSTALL, DNF5_INSTALL_SDK])
def test_dnf5_install_of_an_unknown_rocm_package_is_a_missing_repository_on_rhel(text: str) -> None:
    """dnf5 words a missing package as dnf4 did ('No match for argument: rocm'): on Rocky AMD's repository is missing,
    with the RHEL branch's .repo advice; on Fedora the Fedora cause stands and AMD's repository is contradicted."""
    f = _on(ROCKY, text)[REPO]
    assert f.contradicted is None and f.to_check is None and "yum.repos.d" in f.fix
    fedora = _on(FEDORA, text)
    assert fedora[REPO].contradicted is not None
    if text == DNF5_INSTALL:
        assert fedora[META].contradicted is None and fedora[META].to_check is None


@pytest.mark.parametrize("text", [DNF5_REMOVE, DNF5_UPGRADE_NOT_INSTALLED, DNF5_UPGRADE_NO_SUCH])
@pytest.mark.parametrize("os_", [ROCKY, FEDORA], ids=["rocky", "fedora"])
def test_dnf5_remove_or_upgrade_of_a_name_not_installed_is_not_a_missing_repository(text: str, os_: OsInfo) -> None:
    """A remove or upgrade of a name the machine has not installed says nothing of a missing repository, whichever
    wording dnf5 gives it (an upgrade of a name no repository has is worded as an install's)."""
    found = _on(os_, text)
    for iid in (REPO, META):
        assert _silent(found.get(iid)), (os_.id, iid, found.get(iid))


@pytest.mark.parametrize("before", ["$ sudo dnf upgrade --refresh\nNothing to do.\n", "$ sudo dnf upgrade\n",
                                    "$ sudo dnf upgrade rocm-smi-lib\nNothing to do.\n"])
def test_dnf5_install_after_another_upgrade_is_still_a_missing_repository(before: str) -> None:
    """Near miss: an upgrade of the whole system (or of another package) before the failing install does not hide it."""
    f = _on(ROCKY, before + DNF5_INSTALL)[REPO]
    assert f.contradicted is None and f.to_check is None
