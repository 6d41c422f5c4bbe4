"""Second security review, B9: a plain http:// or file:// mirror of a source root installs packages from
(repo.radeon.com: the amdgpu-install package and AMD's repositories; repo.amd.com: the Core SDK) was accepted, so
anyone on the way, or anyone who can write the directory, chose what root installs. Such a mirror is now refused
with one line unless it pins its signing key or its mirrors.toml entry says ``insecure = true`` (which the plan's
review then shows). The amdgpu-install ``.deb`` itself: AMD publishes no index carrying its hash, so the plan keeps
saying it is installed without a hash check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from runner_helpers import wizard

pytestmark = pytest.mark.integration

FPR = "A" * 40


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/radeon", "file:///srv/mirror/radeon"])
def test_a_plain_root_source_mirror_is_refused_in_one_line(tmp_path: Path, url: str) -> None:
    r = wizard(["--from", "seed-7900xt", "--mirror", f"repo.radeon.com={url}", "--plan", "downgrade-6.2", "--dry-run"],
               env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert r.returncode != 0 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "root installs packages from it" in lines[0] and url.split(":")[0] + "://" in lines[0]
    assert "wget" not in r.stdout and url not in r.stdout


def test_a_plain_root_source_mirror_with_a_pinned_key_or_marked_insecure_is_used(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/radeon"
    r = wizard(["--from", "seed-7900xt", "--mirror", f"repo.radeon.com={url}", "--mirror-key", f"repo.radeon.com={FPR}",
                "--plan", "downgrade-6.2", "--dry-run"], env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert r.returncode == 0, r.stderr
    assert url in r.stdout
    cfg = tmp_path / "xdg" / "rocm-wizard" / "mirrors.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[mirrors."repo.radeon.com"]\nurl = "{url}"\ninsecure = true\n')
    os.chmod(cfg, 0o600)
    r = wizard(["--from", "seed-7900xt", "--plan", "downgrade-6.2", "--dry-run"],
               env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.replace("#", " ").split())  # the script's comments are wrapped
    assert url in r.stdout and "(insecure: plain http/file, no key, as mirrors.toml says)" in text
    assert "installed without a hash check" in text  # AMD publishes no hash for the package: the plan says so


def test_a_plain_mirror_of_a_user_wheel_index_is_accepted(tmp_path: Path) -> None:
    """pip installs into the user's venv from download.pytorch.org, never as root: its mirror may be plain http."""
    r = wizard(["--from", "seed-7900xt", "--mirror", "download.pytorch.org=http://127.0.0.1:9/pt", "--plan", "pip-only",
                "--dry-run"], env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert r.returncode == 0, r.stderr
    assert "http://127.0.0.1:9/pt" in r.stdout


def test_insecure_must_be_a_boolean() -> None:
    from wizard.mirror.config import MirrorConfigError, parse_mirrors_toml

    with pytest.raises(MirrorConfigError, match="insecure must be true or false"):
        parse_mirrors_toml('[mirrors."repo.radeon.com"]\nurl = "http://x"\ninsecure = "yes"\n', "m.toml")
