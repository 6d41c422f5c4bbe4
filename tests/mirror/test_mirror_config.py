"""The mirror configuration model: --mirror ORIGIN=URL, mirrors.toml (system, then user), rewrite()."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.mirror.config import (
    Mirror,
    MirrorConfig,
    MirrorConfigError,
    config_paths,
    load_config,
    parse_mirror_arg,
    parse_mirror_key_arg,
    parse_mirrors_toml,
)

pytestmark = pytest.mark.integration

FPR = "0123456789ABCDEF0123456789ABCDEF01234567"


def cfg(*args: str) -> MirrorConfig:
    return load_config(args, paths=())


def test_rewrite_maps_paths_one_to_one() -> None:
    c = cfg("repo.radeon.com=http://127.0.0.1:8080/repo.radeon.com",
            "download.pytorch.org=https://nexus.example/pytorch/")
    assert c.rewrite("https://repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb") \
        == "http://127.0.0.1:8080/repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb"
    assert c.rewrite("https://download.pytorch.org/whl/rocm6.2") == "https://nexus.example/pytorch/whl/rocm6.2"
    assert c.rewrite("https://download.pytorch.org/whl/rocm6.2/torch/?x=1#frag") \
        == "https://nexus.example/pytorch/whl/rocm6.2/torch/?x=1#frag"
    # another host, and a host that merely ends like the origin, are left alone
    assert c.rewrite("https://stable.repo.amd.com/rocm/whl-next") == "https://stable.repo.amd.com/rocm/whl-next"
    assert c.rewrite("https://pypi.org/simple/torch/") == "https://pypi.org/simple/torch/"
    assert c.rewrite("not a url") == "not a url"


def test_longest_origin_wins_and_paths_match_on_segments() -> None:
    c = cfg("download.pytorch.org=https://a.example", "download.pytorch.org/whl=https://b.example/whl-copy")
    assert c.rewrite("https://download.pytorch.org/whl/rocm7.2") == "https://b.example/whl-copy/rocm7.2"
    assert c.rewrite("https://download.pytorch.org/whl") == "https://b.example/whl-copy"
    assert c.rewrite("https://download.pytorch.org/whlx/y") == "https://a.example/whlx/y"
    assert c.rewrite("https://download.pytorch.org/libtorch/x.zip") == "https://a.example/libtorch/x.zip"


def test_rewrite_text_rewrites_apt_source_lines() -> None:
    c = cfg("repo.radeon.com=http://127.0.0.1:9/repo.radeon.com")
    line = "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/6.2.4 jammy main\n"
    assert c.rewrite_text(line) == ("deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] "
                                    "http://127.0.0.1:9/repo.radeon.com/rocm/apt/6.2.4 jammy main\n")


def test_docker_registry_mirror() -> None:
    c = cfg("docker.io=registry.example:5000/hub")
    assert c.rewrite_image("rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0") \
        == "registry.example:5000/hub/rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0"
    assert c.rewrite_image("docker.io/rocm/pytorch:latest") == "registry.example:5000/hub/rocm/pytorch:latest"
    assert c.rewrite_image("ubuntu:22.04") == "registry.example:5000/hub/library/ubuntu:22.04"
    assert c.rewrite_image("quay.io/x/y:1") == "quay.io/x/y:1"
    assert cfg().rewrite_image("rocm/pytorch:latest") == "rocm/pytorch:latest"
    # a registry mirror never rewrites http URLs
    assert c.rewrite("https://docker.io/v2/") == "https://docker.io/v2/"


@pytest.mark.parametrize(("arg", "message"), [
    ("repo.radeon.com", "expected ORIGIN=URL"),
    ("https://repo.radeon.com=http://x", "is a host name, not a URL"),
    ("repo.radon.com=http://x", "unknown origin 'repo.radon.com'"),
    ("repo.radeon.com=", "empty URL"),
    ("repo.radeon.com=ftp://x/y", "must start with http://, https://, file://"),
    ("repo.radeon.com=http:///nohost", "has no host"),
    ("repo.radeon.com=http://x/a b", "contains white space"),
    ("repo.radeon.com=http://x/?q=1", "must not have a query"),
    ("repo.radeon.com=http://x:99999/", "bad port"),
    ("repo.radeon.com=file://relative/path", "absolute file:// path"),
    ("docker.io=https://registry.example", "without a scheme"),
    ("docker.io/library=registry.example", "a registry takes none"),
    ("repo.radeon.com/a b=http://x", "a path must be plain segments"),
    ("repo radeon.com=http://x", "not a host name"),
])
def test_malformed_arguments_are_one_line_errors(arg: str, message: str) -> None:
    with pytest.raises(MirrorConfigError) as exc:
        parse_mirror_arg(arg)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)
    assert str(exc.value).startswith("--mirror")


def test_file_config_system_then_user_then_cli(tmp_path: Path) -> None:
    system = tmp_path / "etc.toml"
    user = tmp_path / "user.toml"
    system.write_text('[mirrors."repo.radeon.com"]\nurl = "https://sys.example/radeon"\n'
                      '[mirrors."download.pytorch.org"]\nurl = "https://sys.example/pt"\n')
    user.write_text(f'[mirrors."repo.radeon.com"]\nurl = "https://user.example/radeon"\n'
                    f'key_fingerprint = "{FPR[:20]} {FPR[20:]}"\nkey_url = "https://user.example/k.gpg"\n')
    c = load_config(paths=(system, user))
    by = {m.origin: m for m in c.origins_in_force()}
    assert by["repo.radeon.com"].url == "https://user.example/radeon"
    assert by["repo.radeon.com"].key_fingerprint == FPR
    assert by["repo.radeon.com"].source == str(user)
    assert by["download.pytorch.org"].source == str(system)
    c2 = load_config(["download.pytorch.org=http://127.0.0.1:1/pt"], paths=(system, user))
    assert c2.rewrite("https://download.pytorch.org/whl/rocm6.2") == "http://127.0.0.1:1/pt/whl/rocm6.2"
    assert [m.origin for m in c2.origins_in_force()] == ["download.pytorch.org", "repo.radeon.com"]


def test_missing_files_are_fine_and_paths_follow_xdg(tmp_path: Path) -> None:
    assert load_config(paths=(tmp_path / "none.toml", None)).mirrors == ()
    assert config_paths({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"})[1] == Path("/x/cfg/rocm-wizard/mirrors.toml")
    assert config_paths({"HOME": "/home/u"})[1] == Path("/home/u/.config/rocm-wizard/mirrors.toml")
    assert config_paths({"XDG_CONFIG_HOME": "relative", "HOME": "/home/u"})[1] \
        == Path("/home/u/.config/rocm-wizard/mirrors.toml")
    assert config_paths({})[1] is None
    assert config_paths({})[0] == Path("/etc/rocm-wizard/mirrors.toml")


@pytest.mark.parametrize(("text", "message"), [
    ('[mirrors."repo.radeon.com"]\nurl = ', "invalid TOML"),
    ('[other]\nx = 1\n', "unknown key 'other'"),
    ('mirrors = 3\n', "must be a table"),
    ('[mirrors]\n"repo.radeon.com" = "http://x"\n', "must be a table with url"),
    ('[mirrors."repo.radeon.com"]\nkey_fingerprint = "' + FPR + '"\n', "url is missing"),
    ('[mirrors."repo.radeon.com"]\nurl = "http://x"\nfingerprint = "1"\n', "unknown key 'fingerprint'"),
    ('[mirrors."repo.radeon.com"]\nurl = 5\n', "url must be a string"),
    ('[mirrors."repo.radeon.com"]\nurl = "http://x"\nkey_fingerprint = "ABCD"\n', "full 40 (or 64) hex digits"),
    ('[mirrors."repo.radeon.com"]\nurl = "http://x"\nkey_url = "http://x/k"\n', "without key_fingerprint"),
    ('[mirrors."REPO.radeon.com"]\nurl = "http://x"\n[mirrors."repo.radeon.com"]\nurl = "http://y"\n',
     "origin given twice"),
])
def test_malformed_files_name_the_file(text: str, message: str) -> None:
    with pytest.raises(MirrorConfigError) as exc:
        parse_mirrors_toml(text, "/etc/rocm-wizard/mirrors.toml")
    assert message in str(exc.value)
    assert str(exc.value).startswith("/etc/rocm-wizard/mirrors.toml")
    assert "\n" not in str(exc.value)


def test_unreadable_file_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(MirrorConfigError, match="not UTF-8"):
        load_config(paths=(bad,))
    with pytest.raises(MirrorConfigError, match="cannot read"):
        load_config(paths=(tmp_path,))


def test_key_only_by_explicit_fingerprint() -> None:
    k = parse_mirror_key_arg(f"repo.radeon.com=0x{FPR.lower()}")
    assert k.key_fingerprint == FPR
    c = load_config(["repo.radeon.com=https://m.example/r"], [f"repo.radeon.com={FPR}"], paths=())
    (m,) = c.origins_in_force()
    assert m == Mirror("repo.radeon.com", "https://m.example/r", "--mirror, --mirror-key", FPR)
    with pytest.raises(MirrorConfigError, match="no mirror is given for repo.amd.com"):
        load_config([], [f"repo.amd.com={FPR}"], paths=())
    with pytest.raises(MirrorConfigError, match="full 40"):
        parse_mirror_key_arg("repo.radeon.com=9386B48A1A693C5C")  # a long key id is not a fingerprint


def test_cli_origin_twice() -> None:
    assert len(cfg("repo.radeon.com=http://a", "repo.radeon.com=http://a").mirrors) == 1
    with pytest.raises(MirrorConfigError, match="given twice"):
        cfg("repo.radeon.com=http://a", "repo.radeon.com=http://b")


def test_detect_reports_the_mirrors_in_force(tmp_path: Path) -> None:
    """Issue 11: `detect` says which mirrors are in force, from the command line and the config file."""
    import json
    import os
    import subprocess
    import sys

    cfg = tmp_path / "xdg" / "rocm-wizard"
    cfg.mkdir(parents=True)
    (cfg / "mirrors.toml").write_text('[mirrors."download.pytorch.org"]\nurl = "https://nexus.example/pytorch"\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "ROCM_WIZARD_STATE_DIR": str(tmp_path / "state")}
    fpr = "A" * 40
    base = [sys.executable, "-m", "wizard", "--from", "seed-7900xt", "--mirror",
            "repo.radeon.com=https://mirror.example/radeon", "--mirror-key", f"repo.radeon.com={fpr}", "detect"]
    out = subprocess.run([*base, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = {m["origin"]: m for m in json.loads(out.stdout)["mirrors"]}
    assert got["repo.radeon.com"]["url"] == "https://mirror.example/radeon"
    assert got["repo.radeon.com"]["key_fingerprint"] == fpr and got["repo.radeon.com"]["source"] == "--mirror, --mirror-key"
    assert got["download.pytorch.org"]["url"] == "https://nexus.example/pytorch"
    assert str(cfg / "mirrors.toml") in got["download.pytorch.org"]["source"]
    table = subprocess.run(base, env=env, capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "Mirrors in force" in table.stdout
    assert "https://mirror.example/radeon" in table.stdout and fpr in table.stdout
    plain = subprocess.run([sys.executable, "-m", "wizard", "--from", "seed-7900xt", "detect", "--json"],
                           env={**env, "XDG_CONFIG_HOME": str(tmp_path / "none")}, capture_output=True, text=True,
                           timeout=120)
    assert json.loads(plain.stdout)["mirrors"] == []
