from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.pip_freeze import parse_pip_freeze, wheel_version

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "pip_freeze"


def test_pip_list_table() -> None:
    p = parse_pip_freeze((DATA / "torchchat_pip_list.txt").read_text())
    assert len(p.packages) == 29
    assert p.version("antlr4_python3_runtime") == "4.9.3"
    assert p.get("dataproperty").raw_name == "DataProperty"
    assert p.version("anyio") == "4.6.2.post1" and p.get("package") is None


def test_freeze_forms() -> None:
    text = """--index-url https://download.pytorch.org/whl/rocm6.2
--extra-index-url https://pypi.org/simple
numpy==1.26.4
pytorch_triton_rocm==3.1.0
torch @ https://download.pytorch.org/whl/rocm6.2/torch-2.5.1%2Brocm6.2-cp310-cp310-linux_x86_64.whl
torchvision @ file:///home/u/wheels/torchvision-0.20.1%2Brocm6.2-cp310-cp310-linux_x86_64.whl
-e git+https://github.com/x/y.git@abc#egg=my_pkg
-e /home/u/src/thing
# Editable install with no version control (thing==0.1)
"""
    p = parse_pip_freeze(text)
    assert p.index_url == "https://download.pytorch.org/whl/rocm6.2"
    assert p.extra_index_urls == ("https://pypi.org/simple",)
    assert p.version("pytorch-triton-rocm") == "3.1.0"
    assert p.version("torch") == "2.5.1+rocm6.2" and p.get("torch").url.startswith("https://")
    assert p.version("torchvision") == "0.20.1+rocm6.2"
    assert p.get("my-pkg").editable and p.get("my-pkg").version is None
    assert [x.name for x in p.packages] == ["numpy", "pytorch-triton-rocm", "torch", "torchvision", "my-pkg"]


def test_prompt_lines_are_not_packages() -> None:
    p = parse_pip_freeze("(venv) user@box:~$ pip freeze | grep torch\ntorch==2.5.1+rocm6.2\n")
    assert [(x.name, x.version) for x in p.packages] == [("torch", "2.5.1+rocm6.2")]


def test_wheel_version() -> None:
    assert wheel_version("https://x/torch-2.6.0.dev20241120%2Brocm6.2-cp311-cp311-linux_x86_64.whl") == "2.6.0.dev20241120+rocm6.2"
    assert wheel_version("https://x/thing.tar.gz") is None
    assert wheel_version("") is None
