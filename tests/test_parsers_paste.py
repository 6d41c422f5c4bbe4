"""The paste splitter: one mixed text cut into the outputs it holds, by shape, with whose post each is."""

from __future__ import annotations

import pytest

from wizard.parsers.paste import split_paste

pytestmark = pytest.mark.unit

ISSUE = """\
# GPU not detected after upgrade

alice · description · 2024-03-01
I run Ubuntu 22.04 with an RX 6800.

```
$ rocminfo
ROCk module is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.1
```

Output of `lspci -nn | grep VGA`:
```
03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 [1002:73bf] (rev c1)
```

<details><summary>pip list</summary>

torch 2.4.1+rocm6.1
</details>

bob · comment · 2024-03-02
Same here on my 7900 XTX:
```
user@box:~$ uname -a
Linux box 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux
```
"""


def _by_kind(text: str) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for s in split_paste(text).segments:
        out.setdefault(s.kind, []).append(s)
    return out


def test_outputs_are_cut_by_prompt_label_and_summary() -> None:
    kinds = _by_kind(ISSUE)
    ri = kinds["rocminfo.txt"][0]
    assert ri.command == "rocminfo" and ri.lines[0] == "ROCk module is loaded"
    assert ISSUE.splitlines()[ri.start - 1] == "ROCk module is loaded"
    (lspci,) = kinds["lspci.txt"]
    assert "Navi 21" in lspci.lines[0]
    (pip,) = kinds["pip-freeze.txt"]
    assert any("torch 2.4.1+rocm6.1" in ln for ln in pip.lines)
    (uname,) = kinds["uname.txt"]
    assert uname.command == "uname -a"


def test_posts_and_whose_machine() -> None:
    p = split_paste(ISSUE)
    assert p.title == "GPU not detected after upgrade"
    assert p.author == "alice"
    assert [(x.author, x.opening) for x in p.posts] == [("alice", True), ("bob", False)]
    own = {s.kind for s in p.segments if s.own}
    other = {s.kind for s in p.segments if not s.own}
    assert {"rocminfo.txt", "lspci.txt", "pip-freeze.txt"} <= own
    assert "uname.txt" in other and "uname.txt" not in own


def test_copied_github_page_headers() -> None:
    text = ("carol opened this issue on Mar 1, 2024 · 4 comments\n"
            "rocminfo says nothing\n"
            "dave commented on Mar 3, 2024\n"
            "works for me\n")
    p = split_paste(text)
    assert [(x.author, x.opening) for x in p.posts] == [("carol", True), ("dave", False)]
    assert [s.own for s in p.segments] == [True, False]


def test_prose_mentioning_a_date_is_not_a_post() -> None:
    p = split_paste("I commented on Mar 2 that it fails\nalice replied to me\n")
    assert p.posts == ()


def test_turn_headers() -> None:
    text = "[turn 0 by eve]\nmy GPU\n[turn 1 by frank]\nyours\n"
    p = split_paste(text)
    assert [(x.author, x.opening) for x in p.posts] == [("eve", True), ("frank", False)]


def test_bare_command_and_marker_without_a_prompt() -> None:
    text = "here is what I get\n\nrocminfo\nROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
    kinds = _by_kind(text)
    assert "rocminfo.txt" in kinds
    seg = kinds["rocminfo.txt"][0]
    assert seg.lines[-1].startswith("Unable to open /dev/kfd")


def test_prompt_of_a_uid_without_a_passwd_entry() -> None:
    text = ("I have no name!@39764af76254:/$ rocminfo | grep gfx*\n  Name:                    gfx90a\n"
            "  Name:                    gfx90a\n")
    (seg,) = _by_kind(text)["rocminfo.txt"]
    assert seg.command == "rocminfo | grep gfx*" and len(seg.lines) == 2


def test_rocm_smi_csv_output_stays_with_its_command() -> None:
    text = "```\n$ rocm-smi --showdriverversion --csv\ndevice,Driver version\ncardsystem,5.14.0-427.13.1.el9_4.x86_64\n```\n"
    (seg,) = _by_kind(text)["rocm-smi.txt"]
    assert seg.lines == ("device,Driver version", "cardsystem,5.14.0-427.13.1.el9_4.x86_64")


def test_line_numbers_count_every_line() -> None:
    text = "\r\n".join(["a", "", "```", "$ rocminfo", "ROCk module is loaded", "```"]) + "\r\n"
    (seg,) = _by_kind(text)["rocminfo.txt"]
    assert seg.start == 5


def test_odd_input_never_raises() -> None:
    for junk in ("", "```", "```\n" * 1000, "\x1b[31mred\x1b[0m", None, 3, b"\xff\xfe", "$ " * 5000):
        split_paste(junk)
