"""Outputs of TheRock's `rocm-sdk` CLI and of uv's `--torch-backend` install read as evidence (issue 21)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from wizard import cli

pytestmark = pytest.mark.integration

# `rocm-sdk version` prints the `rocm` package's version alone; `rocm-sdk targets` the dist's gfx list
# (TheRock build_tools/packaging/python/templates/rocm/src/rocm_sdk/__main__.py @89553ce).
SDK = "$ rocm-sdk version\n7.14.0\n$ rocm-sdk targets\ngfx1100;gfx1101;gfx1102\n"
# uv's own test plan output for --torch-backend=auto on an MI300X (https://github.com/astral-sh/uv/pull/14176)
UV = ("root@rocm-jupyter-gpu-mi300x1-192gb-devcloud-atl1:~# ./uv pip install torch --torch-backend=auto\n"
      "Resolved 11 packages in 251ms\nPrepared 2 packages in 6ms\nInstalled 11 packages in 257ms\n"
      " + filelock==3.18.0\n + pytorch-triton-rocm==3.3.1\n + torch==2.7.1+rocm6.3\n + typing-extensions==4.14.0\n")


def _detect(tmp_path: Path, text: str) -> dict[str, object]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli.main(["detect", "--paste", str(paste), "--json"]) == 0
    doc = json.loads(buf.getvalue())
    assert isinstance(doc, dict)
    return doc


def test_rocm_sdk_version_and_targets(tmp_path: Path) -> None:
    envs = _detect(tmp_path, SDK)["python_envs"]
    assert isinstance(envs, list) and len(envs) == 1
    assert envs[0]["rocm_sdk"] == "7.14.0" and envs[0]["rocm_sdk_targets"] == ["gfx1100", "gfx1101", "gfx1102"]
    assert any(s.endswith(": 7.14.0") for s in envs[0]["sources"])


def test_a_failed_rocm_sdk_version_is_not_a_version(tmp_path: Path) -> None:
    text = "$ rocm-sdk version\nbash: rocm-sdk: command not found\n7.14.0\n"
    assert _detect(tmp_path, text)["python_envs"] == []


def test_uv_torch_backend_install_names_the_build(tmp_path: Path) -> None:
    envs = _detect(tmp_path, UV)["python_envs"]
    assert isinstance(envs, list) and len(envs) == 1
    assert envs[0]["torch"] == "2.7.1+rocm6.3" and envs[0]["build"] == "rocm"


def test_a_pip_install_from_amds_index_gets_a_progress_note() -> None:
    from wizard.model import Action
    from wizard.runner.engine import NO_METADATA_NOTE, progress_note

    amd = Action(argv=("/v/bin/python", "-m", "pip", "install", "--index-url", "https://stable.repo.amd.com/rocm/whl-next/",
                       "torch[device-gfx1201]==2.13.0+rocm10.0.0"), description="install")
    pytorch = Action(argv=("/v/bin/python", "-m", "pip", "install", "--index-url",
                           "https://download.pytorch.org/whl/rocm7.2", "torch==2.11.0+rocm7.2"), description="install")
    uninstall = Action(argv=("/v/bin/python", "-m", "pip", "uninstall", "-y", "torch"), description="remove")
    assert progress_note(amd) == NO_METADATA_NOTE and "PEP 658" in NO_METADATA_NOTE
    assert progress_note(pytorch) is None and progress_note(uninstall) is None
