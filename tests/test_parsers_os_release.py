from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wizard.parsers.os_release import parse_os_release, unquote

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "os_release"


def test_ubuntu() -> None:
    o = parse_os_release((DATA / "ubuntu2404.txt").read_text())
    assert (o.id, o.version_id, o.version_codename) == ("ubuntu", "24.04", "noble")
    assert o.id_like == ("debian",) and o.pretty_name == "Ubuntu 24.04.3 LTS"
    assert o.version == "24.04.3 LTS (Noble Numbat)" and o.get("LOGO") == "ubuntu-logo"


def test_rhel_has_no_codename() -> None:
    o = parse_os_release((DATA / "rhel96.txt").read_text())
    assert (o.id, o.version_id, o.version_codename, o.id_like) == ("rhel", "9.6", None, ("fedora",))


def test_debian() -> None:
    o = parse_os_release((DATA / "debian13.txt").read_text())
    assert (o.id, o.version_id, o.version_codename) == ("debian", "13", "trixie")


def test_ubuntu_codename_fallback_and_comments() -> None:
    text = '# comment\nID=ubuntu\nUBUNTU_CODENAME=jammy # trailing\nID_LIKE="ubuntu debian"\n'
    o = parse_os_release(text)
    assert o.version_codename == "jammy" and o.id_like == ("ubuntu", "debian")


def test_unquote() -> None:
    assert unquote('"a \\"b\\" \\$c \\\\ d"') == 'a "b" $c \\ d'
    assert unquote("'single $x'") == "single $x"
    assert unquote('"unterminated') == "unterminated"
    assert unquote("bare # comment") == "bare"
    assert unquote("") == ""


@given(st.text(alphabet="export \tAB_1=x\"'#", max_size=20))
def test_an_assignment_is_read_as_the_pattern_it_replaced_read_it(line: str) -> None:
    import re

    from wizard.parsers.os_release import assignment

    s = line.strip()
    m = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", s)
    assert assignment(s) == ((m.group(1), m.group(2)) if m else None)
