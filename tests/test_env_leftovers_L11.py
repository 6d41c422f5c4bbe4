r"""Helper L11 (session nineteen): L9's leftovers, each a place where the wizard read a different environment than the
service or the login shell really gets. What each program does was read in its source and run here (Debian 12:
systemd 252.39, bash 5.2.15, libpam 1.5.2).

Sources (read, quoted, not copied):

1. A user manager's unit directories. systemd/systemd@0130cfdee0458d3a88ac7268b0f97dbd64167589:src/basic/path-lookup.c
   ``user_dirs``: the control and runtime directories, ``persistent_config`` ($XDG_CONFIG_HOME/systemd/user, else
   ~/.config/systemd/user), each $XDG_CONFIG_DIRS entry's systemd/user (``xdg_user_dirs``: "/etc/xdg" where the
   variable is not set), /etc/systemd/user ("global config has lower priority than the user config of the same type"),
   the runtime ones, the generators', ``data_home`` ($XDG_DATA_HOME/systemd/user, else ~/.local/share/systemd/user),
   each $XDG_DATA_DIRS entry's systemd/user ("/usr/local/share", "/usr/share" where it is not set), then
   ``user_data_unit_paths``: "/usr/local/lib/systemd/user", "/usr/local/share/systemd/user", USER_DATA_UNIT_DIR,
   "/usr/lib/systemd/user", "/usr/share/systemd/user", and the late generators' last; ``strv_uniq`` keeps a repeated
   directory in its first place. systemd.unit(5) "Unit File Load Path", Table 2 (Debian's 252 manual) says the same,
   and ``systemd-analyze --user unit-paths`` here lists it (with XDG_DATA_DIRS=/opt/share:/usr/share,
   /usr/local/share/systemd/user comes after /usr/local/lib/systemd/user: it is one of the built-in ones).
   Debian ships /etc/xdg/systemd/user as a link to ../../systemd/user (path-lookup.c: "we assume that is a link to
   /etc/systemd/ anyway").
2. Portable services. The same file's ``acquire_attached_dirs``: /etc/systemd/system.attached and
   /run/systemd/system.attached, system scope only ("Portable services are not available to regular users for now"),
   listed right after /etc/systemd/system and /run/systemd/system in ``lookup_paths_init``; systemd 252's
   ``systemd-analyze unit-paths`` here lists them there.
3. A backslash before CRLF. systemd: src/basic/fileio.c ``read_line_full`` "Considers EOF, \n, \r and \0 end of line
   delimiters (or combinations of these)" (categorize_eol), so src/shared/conf-parser.c ``config_parse``
   (systemd/systemd@2557246cc8e616977cc233f92b4e7fbc45d0946f) sees the line end in the backslash and continues it;
   ``systemd-analyze verify`` of "ExecStart=/bin/true \\\r\nFoo=bar\r\n" warns nothing (without the backslash: "Unknown
   key 'Foo' in section [Service], ignoring."). bash: the backslash quotes the carriage return, a character like any
   other; nothing continues (``export A=\\\r\n10.3.0\r\n`` sets A to $'\r' and runs "10.3.0\r": "command not found").
   pam_env: linux-pam/linux-pam@644dc6f0c15bccc7401e47785753e9c8d01018d3:libpam_internal/pam_line.c
   ``_pam_str_unescnl`` scans back over ' ', '\t' and '\n' only, so "\\\r\n" ends in a '\r' and does not continue;
   libpam 1.5.2's pam_env here (driven through ``pam_start_confdir`` with ``envfile=``) read "A=1\\\r\nB=2\r\n" as
   A=1\\\r and B=2\r.
4. A last line ending in a backslash, no newline after it. bash keeps the backslash (``export A=1\\`` at the file's
   end sets A to 1\\); with a newline after it the backslash-newline is removed (A=1). pam_env: "Incomplete read", the
   line sets nothing (L9's reader already). systemd: ``config_parse`` reads the continuation left at the end
   ("if (continuation) r = parse_line(...)"), the backslash a blank: ``Environment=A=1 B=%Z\\`` at the end is read
   ("Failed to resolve specifiers in B=%Z", systemd-analyze verify here).
5. A quote left open at the end of the file. bash reads the command to the end of the file, reports "unexpected EOF
   while looking for matching `"'" and runs nothing of it; the commands before it ran. pam_env:
   linux-pam/linux-pam@0588831303c27c32d6be8ae6cdf62daa40933745:modules/pam_env/pam_env.c ``_parse_env_file`` ("we try
   to be smart about quotes around the value, but not too smart"): only a value whose first character is a quote is
   touched: that quote goes, and a quote character is dropped only where it is the line's last; leading blanks of the
   value stay, a line starts with "export " (one blank) or with the name, whose characters are letters, digits or
   "_". libpam 1.5.2 here: A="1 -> 1, C="a"b" -> a"b, D=1" -> 1", E="x' -> x, F=  "sp" -> '  "sp"', H="h"<blank> ->
   'h" '.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.model import EnvSetting
from wizard.parsers.env_file import parse_pam_environment, parse_shell_rc
from wizard.probes.env_discovery import service_units
from wizard.probes.env_settings import probe_env

from test_env_service_settings import ETC, HOME, host_for, write

pytestmark = pytest.mark.unit

RUN = "/run/user/1000"
UNIT = "[Service]\nEnvironment=HIP_VISIBLE_DEVICES={}\n"


def services(settings: list[EnvSetting]) -> dict[tuple[str | None, str], tuple[str, str]]:
    return {(s.service, s.name): (s.value, s.where) for s in settings if s.service}


def shell(settings: list[EnvSetting]) -> dict[str, tuple[str, str]]:
    return {s.name: (s.value, s.where) for s in settings if not s.service}


# --------------------------------------------------------------------------- 1. a user manager's unit directories


@pytest.mark.parametrize("d", ["/usr/lib/systemd/user", "/usr/share/systemd/user", "/usr/local/lib/systemd/user",
                               "/usr/local/share/systemd/user", "{home}/.local/share/systemd/user",
                               "/etc/xdg/systemd/user"])
def test_a_packaged_user_unit_is_read_with_the_users_home(tmp_path: Path, d: str) -> None:
    d = d.format(home=HOME)
    write(tmp_path, f"{d}/comfy.service", "[Service]\nEnvironment=MIOPEN_USER_DB_PATH=%h/.miopen\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("comfy.service", "MIOPEN_USER_DB_PATH"): (f"{HOME}/.miopen", f"{d}/comfy.service:2")}


@pytest.mark.parametrize(("higher", "lower"), [
    ("{home}/.config/systemd/user", "/etc/xdg/systemd/user"),
    ("/etc/xdg/systemd/user", "/etc/systemd/user"),
    ("{run}/systemd/generator", "{home}/.local/share/systemd/user"),
    ("{home}/.local/share/systemd/user", "/usr/local/share/systemd/user"),
    ("/usr/local/share/systemd/user", "/usr/share/systemd/user"),
    ("/usr/share/systemd/user", "/usr/local/lib/systemd/user"),
    ("/usr/local/lib/systemd/user", "/usr/lib/systemd/user"),
    ("/usr/lib/systemd/user", "{run}/systemd/generator.late"),
])
def test_user_unit_directories_follow_path_lookup(tmp_path: Path, higher: str, lower: str) -> None:
    hi, lo = (d.format(run=RUN, home=HOME) for d in (higher, lower))
    write(tmp_path, f"{lo}/sd.service", UNIT.format(0))
    write(tmp_path, f"{hi}/sd.service", UNIT.format(1))
    assert services(probe_env(host_for(tmp_path, XDG_RUNTIME_DIR=RUN), [])) == {
        ("sd.service", "HIP_VISIBLE_DEVICES"): ("1", f"{hi}/sd.service:2")}


def test_the_users_xdg_variables_move_its_unit_directories(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": f"{HOME}/cfg", "XDG_CONFIG_DIRS": "/opt/xdg:relative", "XDG_DATA_HOME": f"{HOME}/data",
           "XDG_DATA_DIRS": "/opt/share"}
    for n, d in enumerate([f"{HOME}/cfg/systemd/user", "/opt/xdg/systemd/user", f"{HOME}/data/systemd/user",
                           "/opt/share/systemd/user", "/usr/share/systemd/user"]):
        write(tmp_path, f"{d}/s{n}.service", UNIT.format(n))
    # near misses: the defaults a set variable replaces are not read (/usr/share/systemd/user is built in: read)
    for n, d in enumerate([f"{HOME}/.config/systemd/user", "/etc/xdg/systemd/user", f"{HOME}/.local/share/systemd/user",
                           "/usr/local/share/systemd/user"], 5):
        write(tmp_path, f"{d}/s{n}.service", UNIT.format(n))
    got = services(probe_env(host_for(tmp_path, **env), []))
    assert sorted(k[0] for k in got) == ["s0.service", "s1.service", "s2.service", "s3.service", "s4.service",
                                         "s8.service"]


def test_debians_etc_xdg_link_is_etc_systemd_user_read_once(tmp_path: Path) -> None:
    """Near miss: /etc/xdg/systemd/user -> ../../systemd/user (Debian) is the administrator's directory: its units keep
    /etc/systemd/user's name and are read once."""
    write(tmp_path, "/etc/systemd/user/sd.service", UNIT.format(0))
    (tmp_path / "etc/xdg/systemd").mkdir(parents=True)
    (tmp_path / "etc/xdg/systemd/user").symlink_to("../../systemd/user")
    host = host_for(tmp_path)
    reads: list[str] = []
    real = host.read_text

    def counting(path: str, limit: int = 1 << 20) -> str | None:
        reads.append(path)
        return real(path, limit=limit)

    host.read_text = counting  # type: ignore[method-assign]
    assert [(s, [f.path for f in files]) for s, files in service_units(host, [HOME])] == [
        ("sd.service", ["/etc/systemd/user/sd.service"])]
    assert reads == ["/etc/systemd/user/sd.service"]


# --------------------------------------------------------------------------- 2. portable services


@pytest.mark.parametrize(("higher", "lower"), [
    (ETC, "/etc/systemd/system.attached"),
    ("/etc/systemd/system.attached", "/run/systemd/system"),
    ("/run/systemd/system", "/run/systemd/system.attached"),
    ("/run/systemd/system.attached", "/run/systemd/generator"),
])
def test_attached_portable_units_are_read_in_their_place(tmp_path: Path, higher: str, lower: str) -> None:
    write(tmp_path, f"{lower}/llama.service", UNIT.format(0))
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("llama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{lower}/llama.service:2")}
    write(tmp_path, f"{higher}/llama.service", UNIT.format(1))
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("llama.service", "HIP_VISIBLE_DEVICES"): ("1", f"{higher}/llama.service:2")}


def test_a_portable_services_drop_in_is_read_and_users_have_no_attached_units(tmp_path: Path) -> None:
    att = "/etc/systemd/system.attached"
    write(tmp_path, f"{att}/llama.service", "[Service]\nExecStart=/usr/bin/llama-server\n")
    write(tmp_path, f"{att}/llama.service.d/20-portable.conf",
          "[Service]\nRootImage=/var/lib/portables/llama.raw\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    write(tmp_path, "/etc/systemd/user.attached/sd.service", UNIT.format(0))  # near miss: no such user directory
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("llama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{att}/llama.service.d/20-portable.conf:3")}


# --------------------------------------------------------------------------- 3. a backslash before CRLF


def _rc(tmp_path: Path, text: str) -> dict[str, tuple[str, str]]:
    write(tmp_path, f"{HOME}/.bashrc", text)
    return shell(probe_env(host_for(tmp_path), []))


def _etc(tmp_path: Path, text: str) -> dict[str, tuple[str, str]]:
    write(tmp_path, "/etc/environment", text)
    return shell(probe_env(host_for(tmp_path), []))


def test_bash_does_not_continue_a_line_at_a_backslash_before_crlf(tmp_path: Path) -> None:
    # the backslash quotes the carriage return (dropped, as every CRLF line's is): the next line is a command of its own
    assert _rc(tmp_path, "export HSA_OVERRIDE_GFX_VERSION=\\\r\n10.3.0\r\nexport HIP_VISIBLE_DEVICES=0\r\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("", "~/.bashrc:1"), "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:3")}
    # in double quotes the backslash is a character and the quote goes on over the line's end
    assert [(a.name, a.value, a.line) for a in parse_shell_rc('export HIP_PATH="/opt\\\r\nrocm"\r\n')] == [
        ("HIP_PATH", "/opt\\\nrocm", 1)]
    # near miss: a backslash before a plain newline still continues
    assert _rc(tmp_path, "export HSA_OVERRIDE_GFX_VERSION=\\\n10.3.0\r\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "~/.bashrc:1")}


def test_pam_env_does_not_continue_a_line_at_a_backslash_before_crlf(tmp_path: Path) -> None:
    assert _etc(tmp_path, "HSA_OVERRIDE_GFX_VERSION=10.3.0\\\r\nHIP_VISIBLE_DEVICES=0\r\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0\\", "/etc/environment:1"), "HIP_VISIBLE_DEVICES": ("0", "/etc/environment:2")}
    # near miss: blanks between the backslash and a plain newline are skipped: it continues
    assert _etc(tmp_path, "HSA_OVERRIDE_GFX_VERSION=\\ \t\n10.3.0\r\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "/etc/environment:1")}


def test_systemd_still_continues_a_unit_line_at_a_backslash_before_crlf(tmp_path: Path) -> None:
    """Near miss: read_line takes "\r\n" as one line end, so the unit's line ends in the backslash and goes on."""
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\r\nEnvironment=HIP_VISIBLE_DEVICES=0 \\\r\n  HSA_OVERRIDE_GFX_VERSION=10.3.0\r\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/ollama.service:2"),
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/ollama.service:2")}


# --------------------------------------------------------------------------- 4. a backslash at the file's very end


def test_bash_keeps_a_backslash_that_ends_the_file(tmp_path: Path) -> None:
    assert _rc(tmp_path, "export HIP_VISIBLE_DEVICES=0\nexport HIP_PATH=/opt/rocm\\") == {
        "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:1"), "HIP_PATH": ("/opt/rocm\\", "~/.bashrc:2")}
    assert _rc(tmp_path, "export HIP_PATH=/opt/rocm\\\n") == {"HIP_PATH": ("/opt/rocm", "~/.bashrc:1")}  # near miss


def test_pam_env_and_systemd_at_a_backslash_that_ends_the_file_are_as_they_were(tmp_path: Path) -> None:
    """Near misses: pam_env's "Incomplete read" sets nothing; systemd reads the continued line with a blank for it."""
    assert _etc(tmp_path, "HIP_VISIBLE_DEVICES=0\nHIP_PATH=/opt/rocm\\") == {
        "HIP_VISIBLE_DEVICES": ("0", "/etc/environment:1")}
    write(tmp_path, f"{ETC}/ollama.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0 HIP_PATH=/opt/rocm\\")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/ollama.service:2"),
        ("ollama.service", "HIP_PATH"): ("/opt/rocm", f"{ETC}/ollama.service:2")}


# --------------------------------------------------------------------------- 5. a quote left open at the end


def test_bash_runs_nothing_from_a_quote_left_open_to_the_end(tmp_path: Path) -> None:
    assert _rc(tmp_path, 'export HIP_VISIBLE_DEVICES=0\nexport HSA_OVERRIDE_GFX_VERSION="10.3.0\n') == {
        "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:1")}
    assert _rc(tmp_path, "echo 'never closed\nexport ROCR_VISIBLE_DEVICES=1\n") == {}
    # near miss: a quote closed on a later line is one value over the line's end
    assert _rc(tmp_path, 'export HIP_PATH="/opt/\nrocm"\nexport HIP_VISIBLE_DEVICES=0\n') == {
        "HIP_PATH": ("/opt/\nrocm", "~/.bashrc:1"), "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:3")}


@pytest.mark.parametrize(("line", "value"), [
    ('HSA_OVERRIDE_GFX_VERSION="10.3.0', "10.3.0"),  # a quote left open: dropped
    ('HSA_OVERRIDE_GFX_VERSION="10.3.0\'', "10.3.0"),  # the last character, of either kind
    ('HSA_OVERRIDE_GFX_VERSION="a"b"', 'a"b'),
    ('HSA_OVERRIDE_GFX_VERSION="h" ', 'h" '),
    ('HSA_OVERRIDE_GFX_VERSION=  "sp"', '  "sp"'),
    ("export HSA_OVERRIDE_GFX_VERSION='10.3.0'", "10.3.0"),
    ('HSA_OVERRIDE_GFX_VERSION="10.3.0"', "10.3.0"),  # near misses: as before
    ('HSA_OVERRIDE_GFX_VERSION=10.3.0"', '10.3.0"'),
])
def test_pam_env_takes_quotes_as_pam_env_does(line: str, value: str) -> None:
    assert [(a.name, a.value, a.line) for a in parse_pam_environment(f"{line}\n")] == [
        ("HSA_OVERRIDE_GFX_VERSION", value, 1)]


def test_pam_env_reads_no_other_shell_prefix() -> None:
    assert parse_pam_environment("declare -x HIP_VISIBLE_DEVICES=0\nexport  ROCR_VISIBLE_DEVICES=1\n") == ()
