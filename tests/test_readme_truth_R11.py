"""What the README states, checked against the code it describes (helper R11's pass over the README, after
tests/test_readme_truth_R8.py): each test fails when the README's statement and the code part again; each claim
has a near miss checking the README names nothing the code does not do.

* Exit codes: ``rocm-wizard`` ends a Ctrl+C outside a run with 130 (``wizard/cli.py``); the table listed 0-5 only.
* The GPU memory pools read at diagnosis and carried by ``report --bundle`` (helper M11) were not in the README.
* The environment reader resolves systemd specifiers (helper L9); the README said nothing of them.
* ``resume`` takes ``--verify-python`` and ``--skip-preflight`` of its own; its row showed ``[--yes]`` alone.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from wizard import cli, exit_codes
from wizard.parsers.systemd_unit import resolve_specifiers, unit_environment
from wizard.probes.gpu_memory import MEMINFO, POOL_FILES

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
FLAT = " ".join(README.split())  # the README with its hard wraps undone


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    return README[start:README.index("\n## ", start + 1)]


def _row(start: str) -> str:
    return next(line for line in README.splitlines() if line.startswith(start))


# --------------------------------------------------------------------------- Exit codes

def _documented_codes() -> set[int]:
    return {int(m) for m in re.findall(r"^\| (\d+) \|", _section("Exit codes"), re.M)}


def test_ctrl_c_outside_a_run_ends_with_the_code_the_readme_lists(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import wizard.commands.detect as detect

    def interrupted(args: argparse.Namespace, ctx: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(detect, "run", interrupted)
    code = cli.main(["--state-dir", str(tmp_path), "--from", "seed-7900xt", "detect"])
    assert "rocm-wizard: interrupted" in capsys.readouterr().err
    assert code == 130
    assert code in _documented_codes()
    assert "`rocm-wizard: interrupted`" in _row("| 130 |")


def test_the_exit_code_table_names_every_code_and_no_other() -> None:
    """Near miss: the table holds exactly wizard/exit_codes.py's codes and the interrupt's 130, no more."""
    named = {v for k, v in vars(exit_codes).items() if k.isupper() and isinstance(v, int)}
    assert named == {0, 1, 2, 3, 4, 5}
    assert _documented_codes() == named | {130}


# --------------------------------------------------------------------------- GPU memory pools (M11)

def _expand_braces(text: str) -> set[str]:
    m = re.search(r"\{([^{}]*)\}", text)
    if m is None:
        return {text}
    return {w for alt in m.group(1).split(",") for w in _expand_braces(text[:m.start()] + alt + text[m.end():])}


def test_the_pool_files_the_diagnose_row_names_are_those_diagnosis_reads() -> None:
    row = _row("| `rocm-wizard diagnose")
    m = re.search(r"`(mem_info_[^`]*)`", row)
    assert m is not None, "the diagnose row names the memory pool files read at diagnosis"
    assert _expand_braces(m.group(1)) == set(POOL_FILES)
    assert f"`{MEMINFO}`'s `MemTotal`" in row
    assert "never in `detect`, never for a `--paste` alone" in row


def test_the_report_row_says_the_bundle_carries_the_pools_and_memtotal() -> None:
    row = _row("| `rocm-wizard report --bundle OUT`")
    assert "memory pool files (numbers only)" in row
    assert f"`{MEMINFO}`'s `MemTotal` line alone" in row


def test_a_bundle_carries_no_other_memory_file_than_the_readme_names() -> None:
    """Near miss: what the bundle takes of the pools is the four files (POOL_FILES) and MemTotal, nothing else of
    the device or of /proc/meminfo (the M11 integration test writes a bundle; here: what the code declares)."""
    import inspect

    from wizard import evidence

    source = inspect.getsource(evidence.collect)
    assert "pool_values(host, bdf)" in source and "mem_total_line(host)" in source
    assert "mem_info_vram_total" not in source  # before M11 the bundle copied that file alone, by name
    assert len(POOL_FILES) == 4


# --------------------------------------------------------------------------- systemd specifiers (L9)

def _specifier_clause() -> str:
    i = FLAT.index("and its specifiers resolved for that service")
    return FLAT[i:FLAT.index("A service's setting is that service's only", i)]


def test_the_specifiers_the_readme_lists_resolve_for_the_service() -> None:
    clause = _specifier_clause()
    own = re.search(r"the service's own ((?:`%[A-Za-z]` ?)+)", clause)
    assert own is not None, clause
    letters = re.findall(r"`%([A-Za-z])`", own.group(1))
    assert letters == ["n", "N", "p", "P", "i", "I", "f"]
    for c in letters:
        got = resolve_specifiers(f"%{c}", "/home/alice", "ollama@gpu0.service")
        assert got and "%" not in got, (c, got)
    assert "`ollama@gpu0.service`'s `%i` being `gpu0`" in clause
    assert resolve_specifiers("%i", None, "ollama@gpu0.service") == "gpu0"
    assert resolve_specifiers("%h", "/home/alice", "ollama.service") == "/home/alice"
    assert resolve_specifiers("%%", None, "ollama.service") == "%"


def test_a_word_with_a_specifier_systemd_cannot_resolve_sets_nothing() -> None:
    assert "such as `%Z`, sets nothing" in _specifier_clause()
    text = "[Service]\nEnvironment=A=%Z B=kept\n"
    pairs = [p for line in unit_environment(text, "/home/alice", "ollama.service") for p in line.pairs]
    assert pairs == [("B", "kept")]


def test_environment_file_paths_resolve_specifiers_too() -> None:
    assert "in `EnvironmentFile=` paths too" in _specifier_clause()
    lines = unit_environment("[Service]\nEnvironmentFile=/etc/ollama/%i.env\n", None, "ollama@gpu0.service")
    assert [line.path for line in lines] == ["/etc/ollama/gpu0.env"]


def test_a_specifier_of_the_machine_is_not_one_the_readme_says_is_resolved() -> None:
    """Near miss: `%H` (the machine's host name) stays as written, and the README does not list it."""
    assert resolve_specifiers("%H", "/home/alice", "ollama@gpu0.service") == "%H"
    assert "`%H`" not in _specifier_clause()


# --------------------------------------------------------------------------- resume's own options

def _own_options(command: str) -> set[str]:
    parser = cli.build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    machine = argparse.ArgumentParser(add_help=False)
    cli._machine_options(machine, suppress=True)
    shared = {o for a in machine._actions for o in a.option_strings} | {"-h", "--help"}
    return {o for a in sub._actions for o in a.option_strings if o.startswith("--")} - shared


def test_the_resume_row_names_every_option_resume_takes() -> None:
    usage = re.match(r"\| `([^`]*)`", _row("| `rocm-wizard resume")).group(1)  # type: ignore[union-attr]
    named = set(re.findall(r"--[a-z-]+", usage))
    assert _own_options("resume") == {"--yes", "--verify-python", "--skip-preflight"}
    assert named == _own_options("resume")


def test_the_status_row_names_no_option_status_lacks() -> None:
    """Near miss: a row whose usage was already complete stays equal to its parser."""
    usage = re.match(r"\| `([^`]*)`", _row("| `rocm-wizard status")).group(1)  # type: ignore[union-attr]
    assert set(re.findall(r"--[a-z-]+", usage)) == _own_options("status") == {"--json"}


# --------------------------------------------------------------------------- plans --json

def test_the_plans_row_names_the_json_keys_plans_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    row = _row("| `rocm-wizard plans")
    m = re.search(r'`(\{"plans": \[\{[^`]*\}\]\})`', row)
    assert m is not None, "the plans row shows its JSON's shape"
    documented = re.findall(r'"([a-z_]+)"', m.group(1))
    assert cli.main(["--state-dir", str(tmp_path), "--from", "seed-7900xt", "plans", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == documented[:1]
    assert all(list(p) == documented[1:] for p in doc["plans"])
    assert sum(p["recommended"] for p in doc["plans"]) == 1  # "true for the one plan it recommends"
