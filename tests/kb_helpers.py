"""Helpers for tests that work on a copy of the knowledge base."""

from __future__ import annotations

from pathlib import Path

from wizard.kb import KB_DIR


def kb_files_only(directory: str, names: list[str]) -> list[str]:
    """``shutil.copytree`` ignore: the knowledge package's own modules and caches, never an upstream snapshot
    (PyTorch's build matrix is a .py file kept verbatim under upstream/)."""
    own = Path(directory).resolve() == KB_DIR.resolve()
    return [n for n in names if n == "__pycache__" or (own and n.endswith(".py"))]


def copy_kb(tmp_path: Path) -> Path:
    """A copy of the knowledge base's data (no modules) under ``tmp_path/kb``, for tests that edit it."""
    import shutil

    d = tmp_path / "kb"
    shutil.copytree(KB_DIR, d, ignore=kb_files_only)
    return d
