from __future__ import annotations

import pytest
import textual.constants


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Nothing of the developer's machine leaks in: state, XDG dirs, theme, animations."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("ROCM_WIZARD_STATE_DIR", raising=False)
    monkeypatch.delenv("ROCM_WIZARD_THEME", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")  # for a subprocess; this one read it when textual was imported
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", "none")  # what App() takes as animation_level
    monkeypatch.delenv("HSA_OVERRIDE_GFX_VERSION", raising=False)
