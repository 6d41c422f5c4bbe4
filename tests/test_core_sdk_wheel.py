"""Which torch builds count as TheRock's Core SDK wheels is read from the knowledge base's releases, not typed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from wizard import diagnose

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("torch", "expected"), [
    ("2.12.0+rocm7.14.1", True),
    ("2.13.0a0+rocm7.14.0a20260612", True),  # a prerelease of the first Core SDK line
    ("2.13.0+rocm10.0.0", True),
    ("2.14.0+rocm10.3.0", True),  # a point release the knowledge base does not list yet: by its line
    ("2.9.1+rocm7.10.0", False),
    ("2.5.1+rocm6.2", False),
    ("2.6.0+cpu", False),
    (None, False),
])
def test_core_sdk_wheel_by_the_shipped_releases(torch: str | None, expected: bool) -> None:
    assert diagnose._core_sdk_wheel(torch) is expected


def test_the_first_core_sdk_line_comes_from_the_knowledge_base(monkeypatch: pytest.MonkeyPatch) -> None:
    class Kb:
        def releases(self, stream: str | None = None) -> tuple[SimpleNamespace, ...]:
            assert stream == "core-sdk"
            return (SimpleNamespace(version="7.12.0"), SimpleNamespace(version="8.0.0"))

    monkeypatch.setattr(diagnose, "load_kb", Kb)
    assert diagnose._core_sdk_wheel("2.9.1+rocm7.12.0") is True
    assert diagnose._core_sdk_wheel("2.9.1+rocm7.11.0") is False
