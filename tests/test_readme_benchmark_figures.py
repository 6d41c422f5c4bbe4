"""Every figure the README's Benchmarks table quotes as a current result is in a results file its benchmark wrote.

The brief: "Keep every figure the README quotes in a results file written by its benchmark on current code." A row
names its benchmark (`benchmarks/NAME.py` or `.sh`); its results are the files and folders under
`benchmarks/results/` whose name starts with NAME (a GPU run's folder: `verify-...`). A figure with a decimal point
in the row's last cell must be found there, written as in the README or with more decimals that round to it.
Figures of earlier runs stay allowed where the README says so: a clause (a part between `;`, `(` and `)`) that
names history ("was", "earlier", "before", "across runs", "in a run with", "in other runs") is not checked.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
HISTORY = re.compile(r"\b(?:was|were|earlier|before|across runs|in a run with|in other runs)\b")
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)")
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+")


def _rows(readme: str) -> list[tuple[str, str]]:
    """(benchmark name, last cell) of each row of the Benchmarks table."""
    section = readme.split("\n## Benchmarks", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.strip().strip("|").split(" | ")
        name = re.search(r"benchmarks/(\w+)\.(?:py|sh)", cells[0])
        assert name, f"a Benchmarks row names no benchmark: {cells[0]}"
        rows.append((name.group(1), cells[-1]))
    return rows


def _results_text(name: str) -> str:
    prefixes = (name, name.split("_")[0] + "-") if name.startswith("verify_") else (name,)
    texts = []
    for path in sorted(RESULTS.iterdir()):
        if not path.name.startswith(prefixes):
            continue
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        texts += [f.read_text(encoding="utf-8", errors="replace") for f in files]
    return "\n".join(texts)


def current_figures(cell: str) -> list[str]:
    """The decimal figures of a cell outside the clauses that quote earlier runs."""
    clauses = re.split(r"[;()]", cell)
    return [f for clause in clauses if not HISTORY.search(clause) for f in FIGURE.findall(clause)]


def found(figure: str, text: str) -> bool:
    """The figure is in the text as written, or as a longer number that rounds to it (1.0078 -> 1.008)."""
    want = Decimal(figure)
    places = Decimal(1).scaleb(want.as_tuple().exponent)  # type: ignore[arg-type]
    return any(Decimal(n).quantize(places) == want for n in set(NUMBER.findall(text)))


def test_current_figures_skip_history_clauses() -> None:
    cell = "1.95x (CPU time 1.80x; it was 2.25x before the change); a regular install 4.17x (was 5.11x), 0.94"
    assert current_figures(cell) == ["1.95", "1.80", "4.17", "0.94"]


def test_found_rounds_longer_numbers_only() -> None:
    assert found("1.008", "= 1.0078; files equal")
    assert found("1.95", "detect = 1.95x")
    assert not found("1.89", "detect = 1.95x")
    assert not found("1.008", "= 1.0052")


README_ROWS = _rows((REPO / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "cell"), README_ROWS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(README_ROWS)])
def test_readme_benchmark_figure_is_in_its_results_file(name: str, cell: str) -> None:
    text = _results_text(name)
    assert text, f"benchmarks/results/ holds nothing written by {name}"
    missing = [f for f in current_figures(cell) if not found(f, text)]
    assert missing == [], f"README quotes {missing} for {name}, which its results files do not hold"


PROSE_FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:x\b| ms\b)|(?<![\w.])(\d+\.\d+)(?![\w.]*\d)")
RESULTS_NAME = re.compile(r"`(?:benchmarks/results/)?([a-z_]+\.txt)`")


def prose_claims(readme: str) -> list[tuple[list[str], list[str]]]:
    """(results files, figures) of each README sentence outside the Benchmarks table that names a results file:
    its decimal figures and its whole-number `N ms` / `Nx` figures, history clauses left out."""
    before, after = readme.split("\n## Benchmarks", 1)
    text = before + "\n## " + after.split("\n## ", 1)[1] if "\n## " in after else before
    claims = []
    for sentence in re.split(r"(?<=[.:])\s+(?=[A-Z`(])|\n\n|\n[-*|] ", text):
        names = [n for n in RESULTS_NAME.findall(sentence) if (RESULTS / n).is_file()]
        if not names:
            continue
        figures = [a or b for clause in re.split(r"[;()]", sentence) if not HISTORY.search(clause)
                   for a, b in PROSE_FIGURE.findall(clause)]
        claims.append((names, figures))
    return claims


def test_prose_claims_read_figures_of_a_sentence_naming_a_results_file() -> None:
    text = ("x\n\n- `msgspec` took a median 21.7 ms (`library_choices.txt`), against 67 ms for `detect` "
            "(`detect_speed.txt`); it was 80 ms before. Version 0.22.0 is not a figure.\n\n## Benchmarks\n\n| a |")
    assert prose_claims(text) == [(["library_choices.txt", "detect_speed.txt"], ["21.7", "67"])]


PROSE = prose_claims((REPO / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("names", "figures"), PROSE, ids=[f"{'+'.join(n)}-{i}" for i, (n, _) in enumerate(PROSE)])
def test_readme_prose_figure_is_in_the_results_file_it_names(names: list[str], figures: list[str]) -> None:
    text = "\n".join((RESULTS / n).read_text(encoding="utf-8") for n in names)
    missing = [f for f in figures if not found(f, text) and not re.search(rf"(?<![\w.]){re.escape(f)}(?![\d])", text)]
    assert missing == [], f"README quotes {missing} citing {names}, which they do not hold"
