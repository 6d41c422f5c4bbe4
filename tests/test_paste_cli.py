"""`detect --paste` and `diagnose --paste`: one mixed text read as a machine, from a file or stdin, with limits."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard import exit_codes
from wizard.cli import main

pytestmark = pytest.mark.integration

PASTE = """\
ROCm does not see my card

### Describe the bug
After installing ROCm 6.2 on Ubuntu 22.04 nothing works.

```
$ rocminfo
ROCk module is loaded
Unable to open /dev/kfd read-write: Permission denied
user is member of video group
```

```
$ lspci | grep VGA
03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT] (rev c1)
```
"""


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, input=stdin, timeout=120)


@pytest.fixture()
def paste_file(tmp_path: Path) -> Path:
    p = tmp_path / "issue-body.txt"
    p.write_text(PASTE)
    return p


def test_detect_paste_reads_facts_with_their_lines(paste_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--json", "--paste", str(paste_file)]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    assert [g["gfx"] for g in doc["gpus"]] == ["gfx1030"]
    assert doc["driver"]["kfd_accessible"] is False
    assert doc["driver"]["loaded"] is True
    # what was read from where: the splitter's texts, each with its source and first line
    kinds = {t["kind"] for t in doc["texts"]}
    assert "rocminfo.txt" in kinds and "lspci.txt" in kinds
    assert all(t["source"].endswith("issue-body.txt") for t in doc["texts"])


def test_detect_paste_table_names_the_sources(paste_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["detect", "--paste", str(paste_file)]) == exit_codes.OK
    out = capsys.readouterr().out
    assert "Read from" in out and "rocminfo" in out and "lspci" in out


def test_diagnose_paste_names_the_cause_with_file_and_line(paste_file: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--json", "--paste", str(paste_file)]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    # "Permission denied" from a member of video whose render membership was not read: the failure shows, which
    # of its causes holds (render group, the node's mode, a container) does not; it is listed to check, with its line
    assert not doc["findings"] and doc["to_check"], "a kfd permission error must be listed"
    top = doc["to_check"][0]
    assert "kfd" in top["id"] and top["shows_failure"] is True
    lines = PASTE.splitlines()
    m = top["matched"]
    assert m["source"].endswith("issue-body.txt") and "Permission denied" in lines[m["line"] - 1] == m["text"]


def test_paste_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PASTE.encode())))
    assert main(["detect", "--json", "--paste", "-"]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    assert [g["gfx"] for g in doc["gpus"]] == ["gfx1030"]
    assert {t["source"] for t in doc["texts"]} == {"stdin"}


@pytest.mark.parametrize("data, needle", [
    (b"x" * ((8 << 20) + 1), "more than 8 MiB"),
    (b"\x7fELF\x00\x00\x00binary", "binary"),
], ids=["oversized", "binary"])
def test_oversized_or_binary_paste_is_one_line_exit_2(data: bytes, needle: str) -> None:
    res = run_cli("diagnose", "--paste", "-", stdin=data)
    err = res.stderr.decode()
    assert res.returncode == exit_codes.USAGE, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], err


def test_missing_paste_file_is_one_line_exit_2(tmp_path: Path) -> None:
    res = run_cli("detect", "--paste", str(tmp_path / "nope.txt"))
    err = res.stderr.decode()
    assert res.returncode == exit_codes.USAGE and len(err.strip().splitlines()) == 1 and "--paste" in err


def test_paste_and_error_file_cannot_both_read_stdin() -> None:
    res = run_cli("diagnose", "--paste", "-", "--error-file", "-", stdin=b"")
    assert res.returncode == exit_codes.USAGE and "stdin" in res.stderr.decode()


def test_empty_paste_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "empty.txt"
    p.write_text("")
    assert main(["detect", "--json", "--paste", str(p)]) == exit_codes.USAGE  # was: an unknown machine, exit 0
    assert "empty" in capsys.readouterr().err  # issue 25: nothing to read is said, not "no known problem"


THEROCK = """\
# Hangs on Radeon 780M
The device packages do not include my GPU:

```
$ rocm-sdk targets
gfx1100;gfx1101;gfx1102
```

```
RuntimeError: HIP error: invalid device function
```

```
$ rocminfo | grep gfx
  Name:                    gfx1103
```
"""


def test_rocm_sdk_targets_name_the_missing_device_package(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "therock.txt"
    p.write_text(THEROCK)
    assert main(["detect", "--json", "--paste", str(p)]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    assert [e["rocm_sdk_targets"] for e in doc["python_envs"]] == [["gfx1100", "gfx1101", "gfx1102"]]
    assert main(["diagnose", "--json", "--paste", str(p)]) == exit_codes.OK
    ids = [f["id"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert ids[0] == "therock-missing-device-package", ids
