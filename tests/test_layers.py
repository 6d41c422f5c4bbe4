"""The import direction of docs/contracts.md, checked on every import statement (module level and
inside functions): a lower layer never imports a higher one. Also who may import sh, textual, torch."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit


ROOT = Path(__file__).resolve().parent.parent

# lowest first; a module may import its own layer and the ones below it (docs/contracts.md "Layers")
LAYERS: list[tuple[str, ...]] = [
    ("wizard", "wizard.record", "wizard.lazy_re", "wizard.model", "wizard.exit_codes", "wizard.paths", "wizard.inputs"),
    ("wizard.host", "wizard.kb", "wizard.parsers", "wizard.facts_json", "wizard.render", "wizard.profiles",
     "wizard.plans"),
    ("wizard.probes", "wizard.evidence"),
    ("wizard.diagnose", "wizard.fix_worked", "wizard.fix_plans", "wizard.verify"),
    ("wizard.plan_file", "wizard.steps", "wizard.preflight", "wizard.binding", "wizard.script",
     "wizard.mirror", "wizard.downloads"),
    ("wizard.planner",),
    ("wizard.runner",),
    ("wizard.sandbox", "wizard.realroot", "wizard.machines", "wizard.session", "wizard.fleet"),
    ("wizard.machine_session",),  # the one machine session below both front ends
    ("wizard.commands", "wizard.tui"),  # the two front ends: siblings, neither imports the other (below)
    ("wizard.cli", "wizard.__main__"),
]
# the front ends' one meeting point: the command that opens the TUI
FRONT_ENDS = {"wizard.commands": "wizard.tui", "wizard.tui": "wizard.commands"}
LAUNCHERS = ("wizard/commands/tui.py",)
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
PACKAGES = ("runner", "tui", "commands", "kb", "probes", "parsers", "sandbox", "verify", "steps", "plans", "mirror",
            "realroot", "fleet", "downloads")


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in ("steps", "plans"):
        parts = ["wizard", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def unit(module: str) -> str:
    """What a layer lists: a subpackage as a whole, or a top-level module."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in PACKAGES:
        return ".".join(parts[:2])
    return ".".join(parts[:2])


def imports(path: Path, mod: str | None = None) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path`` (``mod``: the module it is, else found from its path)."""
    mod = mod or module_of(path)
    is_pkg = path.name == "__init__.py"
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names] if target == "wizard" else [target]
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def sources() -> list[Path]:
    """The wizard's own code (recorded machines under wizard/examples/ hold a torch/version.py, and
    wizard/kb/upstream/ keeps upstream files verbatim as snapshots: data)."""
    return sorted(p for p in [*ROOT.glob("wizard/**/*.py"), *ROOT.glob("steps/*.py"), *ROOT.glob("plans/*.py")]
                  if "examples" not in p.relative_to(ROOT).parts
                  and p.relative_to(ROOT).parts[:3] != ("wizard", "kb", "upstream"))


def test_every_module_has_a_layer() -> None:
    missing = sorted({unit(module_of(p)) for p in sources()} - set(RANK))
    assert not missing, f"add these to LAYERS (and to docs/contracts.md): {missing}"


def wrong_imports(rel: str, me: str, found: list[tuple[int, str]]) -> list[str]:
    """What a module (``me``, at ``rel``) may not import: a higher layer; the other front end (the CLI's
    commands and the TUI share the machine session, never each other's code; only the command that opens the
    TUI imports ``wizard.tui``)."""
    bad = []
    for line, target in found:
        if not target.startswith("wizard"):
            continue
        them = unit(target) if unit(target) in RANK else target.split(".")[0]
        if RANK.get(them, 0) > RANK[me]:
            bad.append(f"{rel}:{line}: {me} (layer {RANK[me]}) imports {target} (layer {RANK[them]})")
        elif FRONT_ENDS.get(me) == them and rel not in LAUNCHERS:
            bad.append(f"{rel}:{line}: {me} imports the other front end's {target}")
    return bad


def test_a_lower_layer_never_imports_a_higher_one() -> None:
    bad = []
    for path in sources():
        bad += wrong_imports(str(path.relative_to(ROOT)), unit(module_of(path)), imports(path))
    assert not bad, "\n".join(bad)


def test_the_tui_runs_no_cli_subprocess() -> None:
    """The TUI asks its machine session, never a ``rocm-wizard`` / ``python -m wizard`` child process."""
    bad = []
    for path in ROOT.glob("wizard/tui/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.List, ast.Tuple)):
                continue
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            pairs = list(zip(words, words[1:]))
            if ("-m", "wizard") in pairs or ("-m", "wizard.cli") in pairs or words[:1] == ["rocm-wizard"]:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "runs the CLI: " + ", ".join(bad)


def test_the_check_catches_upward_and_sideways_imports(tmp_path: Path) -> None:
    """What issue 20 found unseen: a command importing ``wizard.cli``; the TUI importing a command's module
    (module level or inside a function, ``from wizard import cli`` too)."""
    cases = [("wizard/commands/plans.py", "wizard.commands.plans", "from wizard.cli import add_venv_option\n"),
             ("wizard/commands/fleet.py", "wizard.commands.fleet", "def f():\n    from wizard import cli\n"),
             ("wizard/tui/services.py", "wizard.tui.services",
              "def f():\n    from wizard.commands.verify_view import summary_text\n"),
             ("wizard/tui/app.py", "wizard.tui.app", "from wizard.commands import Context\n")]
    for rel, mod, text in cases:
        p = tmp_path / "m.py"
        p.write_text(text)
        assert wrong_imports(rel, unit(mod), imports(p, mod)), text
    p.write_text("from wizard.tui.app import make_app\n")
    assert not wrong_imports("wizard/commands/tui.py", "wizard.commands", imports(p, "wizard.commands.tui"))


def test_who_imports_sh_textual_and_torch() -> None:
    """Also: nothing imports dataclasses; value classes are ``wizard.record`` records (no generated code at import)."""
    allowed = {"dataclasses": (), "sh": ("wizard/runner/shell.py",), "textual": ("wizard/tui/",),
               "torch": ("wizard/verify/suite.py",), "ansible": ("wizard/fleet/plugins/",)}
    bad = []
    for path in sources():
        rel = str(path.relative_to(ROOT))
        for line, target in imports(path):
            top = target.split(".")[0]
            if top in allowed and not rel.startswith(allowed[top]):
                bad.append(f"{rel}:{line}: imports {target}")
    assert not bad, "\n".join(bad)


def test_patterns_are_compiled_on_first_use() -> None:
    """Every regular expression is ``lazy_re.compile``d: a start pays only for the patterns it uses (code in
    strings, run by another interpreter, keeps ``re``: it has no wizard to import)."""
    import io
    import tokenize

    bad = []
    for p in sources():
        rel = str(p.relative_to(ROOT))
        if p.name == "lazy_re.py" or rel.startswith("wizard/fleet/plugins/"):  # plugins run inside ansible
            continue
        for tok in tokenize.generate_tokens(io.StringIO(p.read_text(encoding="utf-8")).readline):
            if tok.type == tokenize.NAME and tok.string == "re" and tok.line[tok.end[1]:].startswith(".compile("):
                bad.append(f"{rel}:{tok.start[0]}")
            if tok.type == tokenize.STRING and "lazy_re" in tok.string and "lazy_re.Pattern" not in tok.string:
                bad.append(f"{rel}:{tok.start[0]} (code run elsewhere has no lazy_re)")
    assert not bad, "use lazy_re.compile: " + ", ".join(bad)


def test_detect_does_not_import_packaging_version() -> None:
    """packaging.version compiles its version pattern on import (~25 ms on this VM, a third of `detect --json`);
    detect reaches it only where a kernel series is compared (benchmarks/detect_speed.py)."""
    import subprocess
    import sys

    code = ("import sys, io, contextlib\nfrom wizard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['detect', '--json', '--from', 'seed-5600xt'])\n"
            "print('packaging.version' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr
