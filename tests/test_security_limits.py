"""Second security review, the size, shape and owner limits: a GNU long-name / pax member name of megabytes (B6: a 249 KB
archive cost 1.96 GB, 16.6 s and printed a 262 MB "one-line" error), and hostile ``mirrors.toml`` shapes (B16:
"internal error: RecursionError", 11 s for a 50 MB URL), and a user's mirrors.toml read by root (B7)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from wizard.inputs.archive import NAME_MAX_BYTES, ArchiveError, extract

pytestmark = pytest.mark.integration


def long_name_archive(path: Path, name_len: int, fmt: int = tarfile.GNU_FORMAT) -> None:
    """One empty member named ``../`` + ``a`` * ``name_len`` (the review's archive, smaller)."""
    info = tarfile.TarInfo("../" + "a" * name_len)
    info.size = 0
    with tarfile.open(path, "w:gz", format=fmt) as tf:
        tf.addfile(info)


def cli(*args: str, tmpdir: Path, env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TMPDIR": str(tmpdir), **(env or {})})
    return time.perf_counter() - t, res


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_a_member_name_of_megabytes_is_refused_on_its_header(tmp_path: Path, fmt: int) -> None:
    archive = tmp_path / "long.tar.gz"
    long_name_archive(archive, 20 << 20, fmt)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    with pytest.raises(ArchiveError, match="bytes") as exc:
        extract(archive)
    assert len(str(exc.value)) < 300
    base, res = cli("diagnose", "--from", "seed-7900xt", tmpdir=tmpdir)
    took, res = cli("diagnose", "--from", str(archive), tmpdir=tmpdir)
    assert res.returncode == 2, res.stderr[:500]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400 and "Traceback" not in res.stderr, res.stderr[:500]
    assert took < base + 2.0, (took, base)
    assert list(tmpdir.iterdir()) == []


def test_a_name_just_under_the_limit_still_reads_its_dotdot(tmp_path: Path) -> None:
    """The limit comes first; an ordinary long-but-legal name still meets the other checks (its '..')."""
    archive = tmp_path / "long.tar.gz"
    long_name_archive(archive, NAME_MAX_BYTES - 10)
    with pytest.raises(ArchiveError, match="leads outside the bundle") as exc:
        extract(archive)
    assert len(str(exc.value)) < 200  # the name is quoted shortened


@pytest.mark.parametrize("text, words", [
    ("[mirrors]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("# " + "x" * (2 << 20) + "\n", "larger than"),
], ids=["deep", "large"])
def test_a_hostile_mirrors_toml_is_one_line(tmp_path: Path, text: str, words: str) -> None:
    cfg = tmp_path / "home" / ".config" / "rocm-wizard"
    cfg.mkdir(parents=True)
    (cfg / "mirrors.toml").write_text(text)
    took, res = cli("--from", "seed-7900xt", "detect", tmpdir=tmp_path,
                    env={"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")})
    assert res.returncode != 0 and "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert words in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr[:500]
    assert took < 10


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is root reading a user's file")
def test_root_ignores_a_mirrors_toml_a_user_can_change(tmp_path: Path) -> None:
    """B7: ``sudo -E`` / ``su`` keep HOME and XDG_CONFIG_HOME; a user's mirrors.toml chose what root installs (its
    mirrors and key pins). Root reads a user file only when it is root's alone."""
    import pwd

    from wizard.mirror.config import load_config

    cfg = tmp_path / "home" / ".config" / "rocm-wizard" / "mirrors.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[mirrors."repo.radeon.com"]\nurl = "http://127.0.0.1:18099/evil-radeon"\n')
    env = {"HOME": str(tmp_path / "home")}
    assert load_config(environ=env, paths=[cfg]).mirrors  # root's own file: read
    os.chown(cfg, pwd.getpwnam("nobody").pw_uid, -1)
    assert load_config(environ=env, paths=[cfg]).mirrors == ()
    _took, res = cli("--from", "seed-7900xt", "--plan", "downgrade-6.2", "--dry-run", tmpdir=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    assert "127.0.0.1:18099" not in res.stdout
    os.chown(cfg, 0, -1)
    cfg.chmod(0o666)
    assert load_config(environ=env, paths=[cfg]).mirrors == ()  # writable by others: ignored as well
