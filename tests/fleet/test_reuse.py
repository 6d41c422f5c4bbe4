"""`fleet plan` reuses the facts of the last `fleet detect` (wizard.fleet.reuse): saved facts are reused while
they still tell the host's stack; new hosts, unreadable ones, stale ones (inventory variables changed, older than
a day, changed by a run) are detected now; --redetect reads every host. Ansible replaced by its inventory
document and a detect that records which hosts it was asked for."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet import detect as d
from wizard.fleet import reuse
from wizard.fleet.facts_io import dumps
from wizard.model import Facts, OsInfo

pytestmark = pytest.mark.unit


def inventory(**hosts: dict[str, Any]) -> dict[str, Any]:
    return {"all": {"children": ["gpus"]}, "gpus": {"hosts": list(hosts)}, "_meta": {"hostvars": hosts}}


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    state: dict[str, Any] = {"doc": inventory(a={"ansible_host": "10.0.0.1"}, b={"ansible_host": "10.0.0.2"}),
                             "asked": [], "dir": tmp_path}

    def read_inventory(inv: str, limit: str | None, fleet_dir: Path) -> dict[str, Any]:
        return state["doc"]  # type: ignore[no-any-return]

    def detect(inv: str, fleet_dir: Path, *, limit: str | None = None, progress: bool = False) -> list[d.HostFacts]:
        names = d.hosts_of(state["doc"], inv, None) if limit is None else limit.split(",")
        state["asked"].append(names)
        out = []
        for h in names:  # what the real detect leaves behind: facts and the stamp
            d.facts_path(fleet_dir, h).parent.mkdir(parents=True, exist_ok=True)
            d.facts_path(fleet_dir, h).write_text(dumps(Facts(os=OsInfo(id="debian", version="12"))))
            d.write_stamp(fleet_dir, h, d.host_vars(state["doc"], h))
            out.append(d.HostFacts(h, "ok", Facts(os=OsInfo(id="debian", version="12"))))
        return out

    monkeypatch.setattr("wizard.fleet.ansible_run.read_inventory", read_inventory)
    monkeypatch.setattr(reuse, "detect", detect)
    return state


def test_saved_facts_are_reused_and_a_new_inventory_host_is_detected_not_left_out(fleet: dict[str, Any]) -> None:
    first = reuse.known("inv", fleet["dir"])
    assert fleet["asked"] == [["a", "b"]] and [h.host for h in first.hosts] == ["a", "b"]
    assert first.detected == (("a", "new in the inventory"), ("b", "new in the inventory"))
    again = reuse.known("inv", fleet["dir"])
    assert fleet["asked"] == [["a", "b"]] and again.reused == ("a", "b") and again.detected == ()
    assert all(h.status == "ok" and h.facts is not None for h in again.hosts)
    fleet["doc"] = inventory(a={"ansible_host": "10.0.0.1"}, b={"ansible_host": "10.0.0.2"}, c={})
    grown = reuse.known("inv", fleet["dir"])
    assert fleet["asked"][-1] == ["c"] and [h.host for h in grown.hosts] == ["a", "b", "c"]
    assert grown.notes() == ["reused the saved facts of 2 host(s) (--redetect reads them again)",
                             "c: detected now: new in the inventory"]


def test_stale_facts_are_detected_again(fleet: dict[str, Any]) -> None:
    reuse.known("inv", fleet["dir"])
    fleet["doc"]["_meta"]["hostvars"]["a"] = {"ansible_host": "10.0.0.9"}  # a is reached elsewhere now
    assert reuse.known("inv", fleet["dir"]).detected == (("a", "its inventory variables changed since it was detected"),)
    later = reuse.known("inv", fleet["dir"], now=time.time() + reuse.MAX_AGE + 60)
    assert [h for h, _ in later.detected] == ["a", "b"] and "older than 24 h" in later.detected[0][1]
    d.forget(fleet["dir"], "b")  # a fleet run changed b
    assert [h for h, _ in reuse.known("inv", fleet["dir"]).detected] == ["b"]
    assert reuse.known("inv", fleet["dir"], redetect=True).detected == (("a", "--redetect"), ("b", "--redetect"))
    assert fleet["asked"][-1] == ["a", "b"]


def test_a_host_that_could_not_be_read_is_asked_again(fleet: dict[str, Any]) -> None:
    reuse.known("inv", fleet["dir"])
    d.facts_path(fleet["dir"], "b").unlink()  # an unreachable host leaves no facts and no stamp
    d.stamp_path(fleet["dir"], "b").unlink()
    assert [h for h, _ in reuse.known("inv", fleet["dir"]).detected] == ["b"]
    d.stamp_path(fleet["dir"], "a").write_text("not json")
    assert reuse.known("inv", fleet["dir"]).detected[0][0] == "a"
