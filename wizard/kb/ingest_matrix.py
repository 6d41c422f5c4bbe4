"""Derived knowledge: PyTorch's binary build matrix (torch x ROCm x Python x gfx) from its own files.

``derived_build_matrix.json`` is generated from two snapshots of pytorch/pytorch at one commit:

* ``.github/scripts/generate_binary_build_matrix.py``: its data literals only, read with ``ast`` and never run
  (``ROCM_ARCHES``, ``FULL_PYTHON_VERSIONS``, ``PYTORCH_EXTRA_INSTALL_REQUIREMENTS``,
  ``PYTORCH_NIGHTLY_PIP_INDEX_URL``);
* ``.ci/docker/manywheel/build.sh``: which build path (``TARGET``) each ROCm builder image takes, from the
  ``[[ "$GPU_ARCH_VERSION" == <glob> ]]`` tests of its ``manylinux2_28-builder:rocm*`` case, and that path's
  ``PYTORCH_ROCM_ARCH`` (``ingest.rocm_arch_lists``).

The matrix is the one of the branch at that commit (main builds the nightlies): the torch version it builds is
not in these files, so the table names none. A wheel row that cites the matrix file at that commit must be on
one of its channels with its Python list.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from wizard import lazy_re

from .ingest import BUILD_SH, PYTORCH, IngestError, _snapshot, py_literals, rocm_arch_lists, rocm_case_lines

if TYPE_CHECKING:
    from .records import Wheel

DERIVED_BUILD_MATRIX = "derived_build_matrix.json"
MATRIX = ".github/scripts/generate_binary_build_matrix.py"
LITERALS = ("ROCM_ARCHES", "FULL_PYTHON_VERSIONS", "PYTORCH_EXTRA_INSTALL_REQUIREMENTS",
            "PYTORCH_NIGHTLY_PIP_INDEX_URL")
_BRANCH = lazy_re.compile(r'^(?:if|elif) \[\[ "\$GPU_ARCH_VERSION" == ([^ ]+) \]\]; then$')
_TARGET = lazy_re.compile(r"^TARGET=(\S+)$")


def matrix_literals(source: str, where: str) -> dict[str, Any]:
    """The matrix's data literals (LITERALS); the file is parsed, never executed."""
    out = py_literals(source, LITERALS, where)
    if not (isinstance(out["ROCM_ARCHES"], list) and isinstance(out["FULL_PYTHON_VERSIONS"], list)
            and isinstance(out["PYTORCH_EXTRA_INSTALL_REQUIREMENTS"], dict)):
        raise IngestError(f"{where}: ROCM_ARCHES / FULL_PYTHON_VERSIONS must be lists, "
                          "PYTORCH_EXTRA_INSTALL_REQUIREMENTS a mapping")
    return out


def rocm_branches(script: str, where: str) -> list[tuple[str | None, str]]:
    """(glob on GPU_ARCH_VERSION, TARGET) of each branch of the ``manylinux2_28-builder:rocm*`` case, in
    order; the ``else`` branch has no glob."""
    out: list[tuple[str | None, str]] = []
    glob: str | None = None
    for s, word, depth in rocm_case_lines(script):
        if word in ("if", "elif") and depth == 1:
            mo = _BRANCH.match(s)
            if mo is None:
                raise IngestError(f"{where}: a rocm branch test this reader does not know: {s[:60]}")
            glob = mo.group(1).replace('"', "")
            continue
        if word == "else" and depth == 1:
            glob = None
            continue
        if word == "fi":
            continue
        tm = _TARGET.match(s)
        if tm and depth == 1:
            out.append((glob, tm.group(1)))
    if not out:
        raise IngestError(f"{where}: no TARGET per branch in the manylinux2_28-builder:rocm* case")
    return out


def channel_name(arch: str) -> str:
    """The index and builder-tag name of one ROCM_ARCHES entry (rocm7.2 for 7.2; rocm-preview as is)."""
    return arch if arch.startswith("rocm") else f"rocm{arch}"


def derive_build_matrix(kb_dir: Path) -> dict[str, Any]:
    source, matrix_src = _snapshot(kb_dir, PYTORCH, MATRIX)
    script, script_src = _snapshot(kb_dir, PYTORCH, BUILD_SH)
    if matrix_src["commit"] != script_src["commit"]:
        raise IngestError(f"{MATRIX} and {BUILD_SH} are snapshots of different commits")
    lit = matrix_literals(source, MATRIX)
    branches = rocm_branches(script, BUILD_SH)
    gfx = rocm_arch_lists(script, BUILD_SH)
    requires = lit["PYTORCH_EXTRA_INSTALL_REQUIREMENTS"]
    channels = []
    for arch in lit["ROCM_ARCHES"]:
        name = channel_name(str(arch))
        version = name[len("rocm"):]  # what build.sh's GPU_ARCH_VERSION holds: the builder tag after "rocm"
        target = next((t for g, t in branches if g is None or fnmatch.fnmatchcase(version, g)), None)
        if target is None or target not in gfx:
            raise IngestError(f"{BUILD_SH}: no build path for the {name} builder")
        channels.append({
            "channel": name,
            "index_url": f"{lit['PYTORCH_NIGHTLY_PIP_INDEX_URL']}/{name}",
            "python": [str(p) for p in lit["FULL_PYTHON_VERSIONS"]],
            "requires": str(requires[arch]) if requires.get(arch) else None,
            "build_target": target,
            "gfx": gfx[target],
        })
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshots named in provenance; do not edit",
        "provenance": {"matrix": matrix_src, "gfx": script_src},
        "torch": None,
        "torch_note": "the matrix of the branch at this commit (main: nightly builds); the torch version it "
                      "builds is not in these files",
        "python_note": "Linux manywheel builds take every FULL_PYTHON_VERSIONS entry",
        "channels": channels,
    }


def build_matrix_problems(table: dict[str, Any], wheels: Sequence[Wheel]) -> list[str]:
    """Wheel rows that cite the matrix file at the table's commit but sit on another channel or carry
    another Python list."""
    url = str(((table.get("provenance") or {}).get("matrix") or {}).get("url") or "")
    by_channel = {c["channel"]: c for c in table.get("channels") or [] if isinstance(c, dict)}
    out = []
    for w in wheels:
        if not url or url not in w.sources:
            continue
        row = by_channel.get(w.index)
        if row is None:
            out.append(f"torch_wheels.json: wheels ({w.torch} {w.index}): cites {url}, whose matrix has no "
                       f"{w.index} channel ({DERIVED_BUILD_MATRIX})")
        elif list(w.python or ()) != row["python"]:
            out.append(f"torch_wheels.json: wheels ({w.torch} {w.index}): python ({', '.join(w.python or ())}) "
                       f"is not what {url} builds ({', '.join(row['python'])}; {DERIVED_BUILD_MATRIX})")
    return out
