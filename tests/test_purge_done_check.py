"""The purge's done-check reads dpkg's status letter, not the wanted one: a purge cut off after apt marked the packages
(``pi``: purge wanted, still installed) is not done, so a resume removes them (a kill inside dpkg --remove of Debian's
librocblas0 left 13 packages ``purge ok installed`` and the resume skipped the purge)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wizard.steps.purge import NONE_INSTALLED_DPKG

pytestmark = pytest.mark.unit

# a dpkg-query that answers ${db:Status-Abbrev} from the table; a package it does not know: exit 1, as dpkg-query does
FAKE = """#!/bin/sh
for last; do :; done
case "$last" in
  installed) printf 'ii ' ;; marked-purge) printf 'pi ' ;; config-files) printf 'rc ' ;; half) printf 'iH ' ;;
  gone) printf 'un ' ;; purged) printf 'pn ' ;; empty) ;;
  *) echo "dpkg-query: no packages found matching $last" >&2; exit 1 ;;
esac
"""


@pytest.mark.parametrize(("packages", "done"), [
    (["gone", "purged", "unknown", "empty"], True),
    (["gone", "installed"], False),
    (["marked-purge"], False),  # the cut-off purge: still installed
    (["config-files"], False),  # removed, not purged
    (["half"], False),  # half-installed by a killed dpkg
])
def test_none_installed_means_every_package_is_not_installed(tmp_path: Path, packages: list[str], done: bool) -> None:
    (tmp_path / "dpkg-query").write_text(FAKE)
    (tmp_path / "dpkg-query").chmod(0o755)
    res = subprocess.run(["sh", "-c", NONE_INSTALLED_DPKG, "sh", *packages], capture_output=True, text=True,
                         env={"PATH": f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    assert (res.returncode == 0) == done, res.stderr


@pytest.mark.parametrize(("packages", "cut_off"), [
    (["installed", "gone", "unknown", "empty"], False),  # a first run: nothing to finish
    (["marked-purge", "gone", "unknown"], True),  # a purge killed half-way
    (["purged"], False),
])
def test_a_cut_off_removal_is_seen_and_finished_on_the_packages_dpkg_still_has(tmp_path: Path, packages: list[str],
                                                                           cut_off: bool) -> None:
    from wizard.steps.purge import FINISH_REMOVAL, NO_CUT_OFF_REMOVAL

    (tmp_path / "dpkg-query").write_text(FAKE)
    (tmp_path / "apt-get").write_text('#!/bin/sh\necho "apt-get $*" > "$(dirname "$0")/apt.log"\n')
    for f in ("dpkg-query", "apt-get"):
        (tmp_path / f).chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    res = subprocess.run(["sh", "-c", NO_CUT_OFF_REMOVAL, "sh", *packages], capture_output=True, text=True, env=env)
    assert (res.returncode != 0) == cut_off, res.stderr
    subprocess.run(["sh", "-c", FINISH_REMOVAL, "sh", *packages], check=True, env=env)
    purged = [p for p in packages if p in ("installed", "marked-purge")]
    log = tmp_path / "apt.log"
    assert (log.read_text().split() if log.exists() else []) == (["apt-get", "-y", "purge", *purged] if purged else [])
