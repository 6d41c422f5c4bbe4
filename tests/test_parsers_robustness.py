"""Every parser, on every input: never raises, and noise (CRLF, ANSI colours) changes nothing.

The unguarded parser (``parse.__wrapped__``) is exercised, so a bug fails here instead of being
swallowed by the production guard.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard import record
from wizard.parsers import (
    amd_smi,
    clinfo,
    collect_env,
    dmesg,
    dpkg,
    env_file,
    kfd,
    lspci,
    os_release,
    pip_freeze,
    rocm_smi,
    rocminfo,
    rpm,
    traceback,
    uname,
    zypper,
)

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers"

# format directory -> guarded parser
PARSERS = {
    "kfd": kfd.parse_kfd_properties,
    "rocminfo": rocminfo.parse_rocminfo,
    "lspci": lspci.parse_lspci,
    "os_release": os_release.parse_os_release,
    "uname": uname.parse_uname,
    "collect_env": collect_env.parse_collect_env,
    "pip_freeze": pip_freeze.parse_pip_freeze,
    "rocm_smi": rocm_smi.parse_rocm_smi,
    "amd_smi": amd_smi.parse_amd_smi,
    "dpkg": dpkg.parse_dpkg,
    "rpm": rpm.parse_rpm,
    "env_file": env_file.parse_env_file,
    "shell_rc": env_file.parse_shell_rc,
    "activate": env_file.parse_activate,
    "dmesg": dmesg.parse_dmesg,
    "traceback": traceback.parse_error_text,
    "clinfo": clinfo.parse_clinfo,
    "zypper": zypper.parse_zypper,
}
RAW = {name: parser.__wrapped__ for name, parser in PARSERS.items()}  # type: ignore[attr-defined]
DATA_DIR = {"shell_rc": "env_file", "activate": "env_file"}


def _examples(name: str) -> list[Path]:
    return sorted((DATA / DATA_DIR.get(name, name)).glob("*.txt"))


ALL_EXAMPLES = [(name, path) for name in PARSERS for path in _examples(name)]


def _is_frozen_result(result: object) -> bool:
    """A parser's answer is a frozen record, or a tuple of them (never an exception, never a dict)."""
    items = result if isinstance(result, tuple) else (result,)
    return all(record.is_record(item) and type(item).__record_frozen__  # type: ignore[attr-defined]
               for item in items)


def test_every_format_has_real_examples_with_sources() -> None:
    for name in PARSERS:
        directory = DATA / DATA_DIR.get(name, name)
        assert _examples(name), f"no recorded example for {name}"
        sources = (directory / "SOURCES.md").read_text()
        for path in _examples(name):
            assert path.name in sources, f"{path} has no source line"


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_empty_and_none(name: str) -> None:
    for value in (None, "", b"", "\n\n", "\x00\xff", b"\xff\xfe\x00garbage", 12345):
        assert _is_frozen_result(RAW[name](value))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PARSERS)), text=st.text())
def test_arbitrary_text(name: str, text: str) -> None:
    assert _is_frozen_result(RAW[name](text))


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(sorted(PARSERS)), data=st.binary())
def test_arbitrary_bytes(name: str, data: bytes) -> None:
    assert _is_frozen_result(RAW[name](data))


_LINEISH = st.lists(
    st.one_of(
        st.text(alphabet=st.sampled_from("ab:= \t\"'#$\\[]()-_.0123456789xX*GPU\x1b"), max_size=30),
        st.sampled_from(
            [
                "Agent 1", "*******", "Pool Info:", "ISA Info:", "Name: gfx1100", "GPU[0]\t\t: Card series: x",
                "GPU: 0", "    ASIC:", "export A=1", "f() {", "}", "if true; then", "fi", "ii  a  1  amd64",
                "gfx_target_version 110000", "==> /sys/nodes/1/properties <==", "$ cat x", "Package: a",
                "Status: install ok installed", "[pip3] torch==2.5.1", "GPU models and configuration:",
                "GPU 0: AMD (gfx1100)", "03:00.0 VGA compatible controller [0300]: AMD [1002:744c]",
                "\tKernel driver in use: amdgpu", "A='unterminated", 'B="x\\', "-e git+https://x#egg=y",
                "[    1.0] amdgpu 0000:03:00.0: ring gfx_0.0.0 timeout", "Traceback (most recent call last):",
            ]
        ),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(PARSERS)), parts=_LINEISH)
def test_format_shaped_noise(name: str, parts: list[str]) -> None:
    assert _is_frozen_result(RAW[name]("\n".join(parts)))


@pytest.mark.parametrize(("name", "path"), ALL_EXAMPLES, ids=[f"{n}-{p.name}" for n, p in ALL_EXAMPLES])
def test_truncations_every_37th_byte(name: str, path: Path) -> None:
    data = path.read_bytes()
    for cut in range(0, len(data) + 1, 37):
        assert _is_frozen_result(RAW[name](data[:cut]))
        assert _is_frozen_result(RAW[name](data[cut:]))


@settings(max_examples=60, deadline=None)
@given(example=st.sampled_from(ALL_EXAMPLES), seed=st.integers(0, 2**32 - 1))
def test_random_line_shuffles(example: tuple[str, Path], seed: int) -> None:
    name, path = example
    text_lines = path.read_text().splitlines()
    random.Random(seed).shuffle(text_lines)
    assert _is_frozen_result(RAW[name]("\n".join(text_lines)))


def _colour(text: str) -> str:
    return "\n".join(f"\x1b[1;32m{line}\x1b[0m" if line else line for line in text.split("\n"))


@pytest.mark.parametrize(("name", "path"), ALL_EXAMPLES, ids=[f"{n}-{p.name}" for n, p in ALL_EXAMPLES])
def test_crlf_and_ansi_change_nothing(name: str, path: Path) -> None:
    text = path.read_text()
    clean = RAW[name](text)
    assert RAW[name](text.replace("\n", "\r\n")) == clean
    assert RAW[name](_colour(text)) == clean
    assert RAW[name](text.encode()) == clean


def test_guard_returns_default_on_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(_text: object) -> list[tuple[int, str]]:
        raise RuntimeError("boom")

    monkeypatch.setattr(kfd, "lines", boom)
    assert kfd.parse_kfd_properties("gfx_target_version 110000") == kfd.KfdTopology()
