"""Adversarial review of the known issues added in session 14 (helper V4).

Each test is a text on which a new issue fired where its source does not justify it, with the near miss that must
still fire.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found


pytestmark = pytest.mark.unit

RX6800: dict[str, Any] = {"gpus": [{"gfx": "gfx1030", "integrated": False}]}


# ROCm/MIOpen@2d1fd99:src/include/miopen/sqlite_db.hpp (and src/db.cpp, the same in rocm-5.0.0 .. rocm-6.2.0 with
# boost::filesystem): `if(!fs::create_directories(directory)) MIOPEN_LOG_W("Unable to create a directory: " ...)`.
# create_directories without an error_code throws on every error (gcc@0135f93 libstdc++-v3/src/c++17/fs_ops.cc:
# filesystem_error("cannot create directories", ...)), so it returns false, and the warning shows, only when it created
# nothing without an error: the directory was there by then (another process, e.g. another rank of the same job,
# created it between MIOpen's exists() and create_directories()). The database then opens; nothing failed.
def test_miopen_directory_warning_alone_is_no_cause() -> None:
    text = ("MIOpen(HIP): Warning [SQLiteBase] Unable to create a directory: \"/home/user/.config/miopen\"\n"
            "epoch 1: loss 0.412\n")
    assert "miopen-user-db-unwritable" not in _found(RX6800, text)


def test_miopen_directory_permission_error_still_the_cause() -> None:
    """The near miss: the exception create_directories throws when it could not create the directory."""
    text = ("MIOpen(HIP): Warning [SQLiteBase] Unable to create a directory: \"/home/user/.config/miopen\"\n"
            "MIOpen Error: filesystem error: cannot create directories: Permission denied "
            "[/home/user/.cache/miopen/3.2.0.a6f2d6b2b]\n")
    found = _found(RX6800, text)
    assert "miopen-user-db-unwritable" in found and found["miopen-user-db-unwritable"].to_check is None
