"""Plan files: strict loading, one-line errors naming file, key and problem; fuzzed input never crashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard.plan_file import (
    PlanError,
    PlanFile,
    builtin_plan_names,
    builtin_plans,
    load_plan,
    load_plan_file,
)
from wizard.steps import kind_names

pytestmark = pytest.mark.unit

STEP_KINDS = kind_names()

GOOD = """\
title = "t"
why = "w"
[target]
stream = "pip"
torch = "newest"
index = "auto"
venv = "~/v"
[[steps]]
kind = "backup"
[[steps]]
kind = "pip-pin"
[[steps]]
kind = "verify"
"""


def write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_plans_load_and_are_the_catalogue() -> None:
    names = builtin_plan_names()
    assert {"downgrade-6.2", "upgrade-6.4", "upgrade-7.2", "core-sdk", "driver", "therock-pip", "pip-only",
            "docker"} <= set(names)
    for pf in builtin_plans():
        assert pf.builtin and pf.title and pf.why
        assert pf.kinds[0] == "backup"
        # the driver plan installs no torch to verify with: it ends in the reboot that loads the driver
        assert pf.kinds[-1] == ("reboot" if pf.name == "driver" else "verify")


def test_user_file_loads_with_hyphenated_kinds(tmp_path: Path) -> None:
    pf = load_plan(str(write(tmp_path, GOOD)))
    assert isinstance(pf, PlanFile) and pf.name == "mine"
    assert pf.kinds == ("backup", "pip_pin", "verify")
    assert pf.target.venv == "~/v"


@pytest.mark.parametrize("mutate, key, problem", [
    (lambda t: "color = 1\n" + t, "color", "unknown key"),
    (lambda t: t.replace('kind = "verify"', 'kind = "frobnicate"'), "steps[2].kind", "unknown step kind"),
    (lambda t: t.replace('kind = "verify"', 'kind = "verify"\nflag = true'), "steps[2].flag", "unknown parameter"),
    (lambda t: t.replace('stream = "pip"', 'stream = "magic"'), "target.stream", "unknown stream"),
    (lambda t: t.replace('torch = "newest"', 'torch = "two"'), "target.torch", "not a version"),
    (lambda t: t.replace('index = "auto"', 'index = "cuda12.1"'), "target.index", "not an index"),
    (lambda t: t.replace('title = "t"\n', ""), "title", "missing"),
    (lambda t: t.replace('title = "t"', "title = 3"), "title", "expected a string"),
    (lambda t: t.replace('venv = "~/v"', 'venv = "relative/v"'), "target.venv", "absolute path"),
    (lambda t: t.replace('kind = "pip-pin"', 'kind = "pip-pin"\nvenv = "~/w"'), "steps[1].venv", "set in [target]"),
    (lambda t: t.replace("[[steps]]\nkind = \"backup\"\n", ""), "steps[0].kind", "before any backup"),
    (lambda t: t + "[[steps]]\nkind = \"purge\"\nstreams = [\"everything\"]\n", "steps[3].streams", "non-empty list"),
    (lambda t: t + "[[steps]]\nkind = \"rocm_install\"\n", "target.rocm", "needs the target's ROCm release"),
    (lambda t: t.replace("[target]", "[target]\nimage = \"auto\""), "target.index", None),
    (lambda t: t.replace("title", "title = \"x\"\ntitle", 1), "(syntax)", "invalid TOML"),
])
def test_malformed_files_name_file_key_and_problem(tmp_path: Path, mutate, key: str, problem: str | None) -> None:
    p = write(tmp_path, mutate(GOOD))
    if problem is None:  # still valid
        load_plan(str(p))
        return
    with pytest.raises(PlanError) as exc:
        load_plan(str(p))
    msg = exc.value.message
    assert "\n" not in msg
    assert msg.startswith(str(p)) and f"key '{key}'" in msg and problem in msg, msg


def test_destructive_before_backup_rejected_for_every_destructive_kind(tmp_path: Path) -> None:
    for kind in ("purge", "rocm_install", "pip_pin", "env", "secure_boot"):
        text = GOOD.replace('[[steps]]\nkind = "backup"\n', "").replace('kind = "pip-pin"', f'kind = "{kind}"')
        if kind == "rocm_install":
            text = text.replace('stream = "pip"', 'stream = "legacy"\nrocm = "6.2.4"')
        with pytest.raises(PlanError, match="before any backup"):
            load_plan_file(write(tmp_path, text))


def test_unknown_plan_name_lists_the_shipped_ones() -> None:
    with pytest.raises(PlanError) as exc:
        load_plan("no-such-plan")
    assert "unknown plan" in exc.value.message and "pip-only" in exc.value.message


@pytest.mark.parametrize("spec", ["", "   ", "/nonexistent/x.toml", "x.txt/", "a\x00b", "../../etc/passwd"])
def test_bad_specs_are_plan_errors(spec: str) -> None:
    with pytest.raises(PlanError):
        load_plan(spec)


def test_not_utf8_and_not_toml_suffix(tmp_path: Path) -> None:
    p = tmp_path / "bin.toml"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PlanError, match="UTF-8"):
        load_plan_file(p)
    with pytest.raises(PlanError, match="ends in .toml"):
        load_plan_file(tmp_path / "plan.yaml")


toml_scalars = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.floats(allow_nan=False),
                         st.lists(st.text(max_size=6), max_size=3))
step_tables = st.dictionaries(st.sampled_from(["kind", "title", "venv", "streams", "usecase", "dkms", "launcher",
                                               "x"]),
                              st.one_of(toml_scalars, st.sampled_from([*STEP_KINDS, "rocm-install"])), max_size=4)
documents = st.fixed_dictionaries({}, optional={
    "title": toml_scalars, "why": toml_scalars,
    "target": st.one_of(toml_scalars, st.dictionaries(
        st.sampled_from(["stream", "rocm", "torch", "index", "image", "y"]),
        st.one_of(toml_scalars, st.sampled_from(["legacy", "pip", "docker", "core-sdk", "newest", "auto", "6.2.4",
                                                 "rocm6.2", "therock"])), max_size=5)),
    "steps": st.one_of(toml_scalars, st.lists(step_tables, max_size=5)),
    "extra": toml_scalars,
})


def _toml(v) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, int) else f"{v!r}".replace("inf", "inf")
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    raise TypeError(v)


def _render(doc: dict) -> str:
    lines = [f"{k} = {_toml(v)}" for k, v in doc.items() if not isinstance(v, (dict, list)) or
             (isinstance(v, list) and not any(isinstance(x, dict) for x in v))]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{kk} = {_toml(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and any(isinstance(x, dict) for x in v):
            for t in v:
                lines.append(f"[[{k}]]")
                lines += [f"{kk} = {_toml(vv)}" for kk, vv in t.items()]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents)
def test_fuzzed_structured_plan_files_never_crash(tmp_path: Path, doc: dict) -> None:
    p = write(tmp_path, _render(doc), "fuzz.toml")
    try:
        pf = load_plan_file(p)
    except PlanError as exc:
        assert "\n" not in exc.message and exc.message.startswith(str(p))
    else:
        assert pf.kinds and pf.kinds.index("backup") <= min(
            (i for i, k in enumerate(pf.kinds) if k in ("purge", "rocm_install", "pip_pin", "env", "secure_boot")),
            default=len(pf.kinds))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=400))
def test_fuzzed_raw_text_never_crashes(tmp_path: Path, text: str) -> None:
    p = tmp_path / "raw.toml"
    p.write_text(text, encoding="utf-8", errors="surrogatepass") if False else p.write_bytes(
        text.encode("utf-8", "surrogatepass"))
    try:
        load_plan_file(p)
    except PlanError as exc:
        assert "\n" not in exc.message
