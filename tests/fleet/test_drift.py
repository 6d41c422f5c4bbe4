"""Drift against a reference (wizard.fleet.drift): which fields of a host's stack differ from the reference's,
what a host without the wizard cannot show (unknown, never drift), and the reference's own errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.fleet import drift
from wizard.fleet.detect import HostFacts
from wizard.fleet.facts_io import dumps
from wizard.model import Driver, EnvSetting, Facts, Gpu, OsInfo, PythonEnv, Rocm

pytestmark = pytest.mark.unit

TORCH = PythonEnv(path="/home/user/venv", torch="2.5.1+rocm6.2", gfx_targets=("gfx1100", "gfx942"))


def facts(*, rocm: str = "6.2.0", kernel: str = "6.1.0-28-amd64", torch: PythonEnv = TORCH,
          env: tuple[EnvSetting, ...] = (), gfx: str = "gfx1100") -> Facts:
    return Facts(os=OsInfo(id="debian", version="12", kernel=kernel), gpus=(Gpu(gfx=gfx), Gpu(gfx=gfx)),
                 driver=Driver(loaded=True, kind="dkms", version="6.8.5"), rocm=Rocm(version=rocm),
                 python_envs=(torch,), env=env)


def fields(d: drift.HostDrift) -> dict[str, tuple[str, str]]:
    return {x.field: (x.reference, x.host) for x in d.differences}


def test_an_identical_host_is_the_same_and_each_changed_field_is_listed_with_both_values() -> None:
    hosts = [HostFacts("ref", "ok", facts()), HostFacts("twin", "ok", facts()),
             HostFacts("old", "ok", facts(rocm="6.1.3", kernel="6.1.0-25-amd64",
                                          torch=PythonEnv(path="/srv/venv", torch="2.4.1+rocm6.1",
                                                          gfx_targets=("gfx1100",)),
                                          env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "~/.bashrc:3"),
                                               EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "/etc/environment:1"))))]
    name, ref, rows = drift.drift("ref", hosts)
    assert name == "ref" and ref["rocm"] == "6.2.0" and ref["torch_gfx"] == "gfx1100, gfx942"
    by = {r.host: r for r in rows}
    assert by["ref"].status == by["twin"].status == "same" and not by["twin"].differences
    assert by["old"].status == "drift"
    assert fields(by["old"]) == {
        "rocm": ("6.2.0", "6.1.3"), "kernel": ("6.1.0-28-amd64", "6.1.0-25-amd64"),
        "torch": ("2.5.1+rocm6.2", "2.4.1+rocm6.1"), "torch_gfx": ("gfx1100, gfx942", "gfx1100"),
        # the assignment in force (first in precedence order), not the shadowed one
        "overrides": ("none", "HSA_OVERRIDE_GFX_VERSION=11.0.0")}
    # a venv at another path with the same torch is no drift: the stack is compared, not the paths
    assert [r.status for r in drift.drift("twin", hosts)[2]] == ["same", "same", "drift"]


def test_what_plain_commands_cannot_show_is_unknown_and_unreadable_hosts_keep_their_status() -> None:
    hosts = [HostFacts("ref", "ok", facts()),
             HostFacts("nowiz", "evidence", Facts(os=OsInfo(id="debian", version="12", kernel="6.1.0-28-amd64"),
                                                  gpus=(Gpu(gfx="gfx1100"), Gpu(gfx="gfx1100")),
                                                  driver=Driver(loaded=True, kind="dkms", version="6.8.5"),
                                                  rocm=Rocm(version="6.2.0"))),
             HostFacts("ghost", "unreachable", reason="ssh: connect to host port 9: Connection refused")]
    rows = {r.host: r for r in drift.drift("ref", hosts)[2]}
    assert rows["nowiz"].status == "same" and rows["nowiz"].unknown == ("torch", "torch_gfx", "overrides")
    assert rows["ghost"].status == "unreachable" and "refused" in rows["ghost"].reason
    cells = drift.table_lines(list(rows.values()))
    assert cells[1] == ["nowiz", "same", "", "", "unknown: torch, torch_gfx, overrides"]
    doc = drift.to_json("ref", drift.stack(facts()), list(rows.values()))
    assert doc["hosts"][2] == {"host": "ghost", "status": "unreachable", "reason": rows["ghost"].reason,
                               "differences": [], "unknown": []}


def test_a_facts_file_is_a_reference_and_bad_references_are_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(dumps(facts(rocm="6.4.4")))
    hosts = [HostFacts("a", "ok", facts()), HostFacts("down", "failed", reason="Permission denied")]
    name, ref, rows = drift.drift(str(good), hosts)
    assert name == str(good) and fields(rows[0]) == {"rocm": ("6.4.4", "6.2.0")}
    bad = tmp_path / "bad.json"
    bad.write_text('{"detect": "--json output, not facts"}')
    for spec, words in ((str(bad), "not a facts file"), ("nosuchhost", "neither a facts file nor a host"),
                        ("down", "could not be read (failed: Permission denied)")):
        with pytest.raises(drift.ReferenceError, match=r"^--reference .*" + words.replace("(", r"\(")
                           .replace(")", r"\)")) as exc:
            drift.drift(spec, hosts)
        assert "\n" not in str(exc.value)


def test_drift_table_lists_one_line_per_difference() -> None:
    rows = drift.drift("ref", [HostFacts("ref", "ok", facts()), HostFacts("b", "ok", facts(rocm="6.3.0", gfx="gfx942"))])[2]
    assert drift.table_lines(rows) == [["ref", "same", "", "", ""], ["b", "drift", "gpus", "2x gfx1100", "2x gfx942"],
                                       ["", "", "rocm", "6.2.0", "6.3.0"]]
