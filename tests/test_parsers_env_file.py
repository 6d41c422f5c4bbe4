from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.env_file import effective_exports, parse_activate, parse_env_file, parse_shell_rc

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "env_file"


def test_env_lines() -> None:
    text = (
        "HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
        'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"\n'
        "# comment\nexport ROCR_VISIBLE_DEVICES=0\ndeclare -x HIP_VISIBLE_DEVICES=\"1\"\nnot an assignment\nEMPTY=\n"
    )
    got = [(a.name, a.value, a.line) for a in parse_env_file(text)]
    assert got == [
        ("HSA_OVERRIDE_GFX_VERSION", "10.3.0", 1),
        ("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", 2),
        ("ROCR_VISIBLE_DEVICES", "0", 4),
        ("HIP_VISIBLE_DEVICES", "1", 5),
        ("EMPTY", "", 7),
    ]


RC = """# ~/.bashrc
export HSA_OVERRIDE_GFX_VERSION=11.0.0
export PATH="$PATH:/opt/rocm/bin" ROCM_PATH=/opt/rocm  # two at once
MIOPEN_FIND_MODE=FAST
export MIOPEN_FIND_MODE
PYTORCH_ROCM_ARCH=gfx1100 python train.py
my_fn() {
    export INSIDE_FUNCTION=1
}
function other {
  export ALSO_INSIDE=1
}
if [ -d /opt/rocm ]; then
    export ROCM_HOME=/opt/rocm
fi
[ -f ~/.x ] && export AFTER_AND=1
cat <<END
NOT_AN_ASSIGNMENT=1
END
export BROKEN="unterminated
"""


def test_shell_rc() -> None:
    a = parse_shell_rc(RC)
    names = [x.name for x in a]
    assert "INSIDE_FUNCTION" not in names and "ALSO_INSIDE" not in names
    assert "NOT_AN_ASSIGNMENT" not in names and "PYTORCH_ROCM_ARCH" not in names
    by = {x.name: x for x in a if x.value is not None}
    assert by["HSA_OVERRIDE_GFX_VERSION"].value == "11.0.0" and not by["HSA_OVERRIDE_GFX_VERSION"].conditional
    assert by["ROCM_PATH"].value == "/opt/rocm" and by["PATH"].value == "$PATH:/opt/rocm/bin"
    assert by["ROCM_HOME"].conditional and by["AFTER_AND"].conditional
    assert not by["MIOPEN_FIND_MODE"].exported
    ex = effective_exports(a)
    assert ex["MIOPEN_FIND_MODE"] == "FAST" and ex["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    # a quote open to the end of the file: bash 5.2 reports "unexpected EOF while looking for matching" and runs
    # nothing of the command (L11; it was read as BROKEN="" before)
    assert "BROKEN" not in ex


def test_activate_template_with_user_export() -> None:
    template = (DATA / "cpython_activate_template.txt").read_text()
    filled = template.replace("__VENV_DIR__", "'/home/u/venv'").replace("__VENV_BIN_NAME__", "'bin'")
    filled = filled.replace("__VENV_PROMPT__", "'(venv) '")
    plain = parse_activate(filled)
    assert plain.virtual_env == "/home/u/venv" and plain.added == ()
    edited = parse_activate(filled + "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    assert [(a.name, a.value) for a in edited.added] == [("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]
