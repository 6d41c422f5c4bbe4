r"""Helper L9 (session eighteen): what a service and a login shell really set, read the way their programs read it.

Sources (read, quoted, not copied):

1. Specifiers. systemd.unit(5) "Specifiers" (https://www.freedesktop.org/software/systemd/man/latest/systemd.unit.html
   #Specifiers; the same text in Debian's systemd 252 manual): "Specifiers must be known and resolvable for the setting
   to be valid"; "%i" "For instantiated units this is the string between the first "@" character and the type suffix.
   Empty for non-instantiated units"; "%I" "Same as "%i", but with escaping undone"; "%n" "Full unit name"; "%N" "Same
   as "%n", but with the type suffix removed"; "%p" "For instantiated units, this refers to the string before the first
   "@" character of the unit name. For non-instantiated units, same as "%N""; "%P" "Same as "%p", but with escaping
   undone"; "%f" "This is either the unescaped instance name (if applicable) with / prepended (if applicable), or the
   unescaped prefix name prepended with /". systemd/systemd@8e542fcdc41db44895bbb7124909eea5fe2dea4d:
   src/basic/unit-name.c ``unit_name_unescape``: "-" becomes "/", "\xHH" a byte, any other backslash -EINVAL;
   ``unit_name_path_unescape``: "-" alone is "/", else "Don't accept trailing or leading slashes", "Prefix a slash
   again", and the path must be a plain one (systemd 252's ``systemd-escape --unescape --path a--b`` fails). systemd/systemd@2557246cc8e616977cc233f92b4e7fbc45d0946f:src/core/load-fragment.c
   ``config_parse_environ``: a word whose specifiers fail is skipped, "Failed to resolve specifiers in %s, ignoring:
   %m", and the next word is read. Checked on systemd 252 (``systemd-analyze verify`` of a unit with
   ``Environment=A=%i B=%Z%i C=ok``: "Failed to resolve specifiers in B=%Z%i, ignoring: Invalid slot").
2. Blanks around "=". systemd/systemd@2557246cc8e616977cc233f92b4e7fbc45d0946f:src/shared/conf-parser.c ``parse_line``:
   the line is cut at its first "=" and ``next_assignment`` gets ``strstrip(l)`` and ``strstrip(e)``: the key and the
   value, each stripped.
3. Directories. systemd.unit(5) "Unit File Load Path" (Debian's systemd 252 manual; man/systemd.unit.xml): the system
   list with /run/systemd/generator.early after /run/systemd/transient, /run/systemd/generator after
   /run/systemd/system, /run/systemd/generator.late last; the user list ~/.config/systemd/user.control,
   $XDG_RUNTIME_DIR/systemd/user.control, $XDG_RUNTIME_DIR/systemd/transient, $XDG_RUNTIME_DIR/systemd/generator.early,
   ~/.config/systemd/user, /etc/systemd/user, $XDG_RUNTIME_DIR/systemd/user, /run/systemd/user,
   $XDG_RUNTIME_DIR/systemd/generator, ..., $XDG_RUNTIME_DIR/systemd/generator.late. "Units also support a top-level
   drop-in with type.d/ ... Files in type.d/ have lower precedence compared to files in name-specific override
   directories ... a file in type.d/ applies to a unit only if there are no drop-ins or masks with that name in
   directories with higher precedence". systemd/systemd@03a46b5ecabce700c198fda5e849336dc61910a5:NEWS, "CHANGES WITH
   244": "Unit files now support top level dropin directories of the form <unit_type>.d/ (e.g. service.d/)".
   systemd/systemd@8b1aa3a942b5527f5bbe9db4e2eca64f9f376c3b:src/shared/dropin.c: the type's directories are added
   after every name's, "Add this last as it's the most generic and should be able to be overridden by more specific
   drop-ins".
4. Continued lines. Bash manual, "Escape Character" (https://www.gnu.org/software/bash/manual/bash.html#Escape-Character):
   "If a \newline pair appears, and the backslash itself is not quoted, the \newline is treated as a line continuation
   (that is, it is removed from the input stream and effectively ignored)"; "Single Quotes": "Enclosing characters in
   single quotes (''') preserves the literal value of each character within the quotes"; "Double Quotes": the backslash
   keeps its meaning before "$", "`", "\"", "\\" or newline. pam_env reads /etc/environment with
   linux-pam/linux-pam@ddab692c8409c9a3b5613bd21638dea404ba4edf:libpam_internal/pam_line.c ``_pam_line_assemble``:
   "Configuration lines may span across multiple lines in a file by ending a line with a backslash (\)": the last
   character before the line's end, blanks skipped, is looked at (no quoting, no escaping: a doubled backslash
   continues too), the backslash replaced by pam_env's NUL (modules/pam_env/pam_env.c ``_pam_line_assemble(conf,
   &buffer, '\0')``), a line holding "#" never continues and ends at it, each line's leading blanks are skipped, and a
   line still continued at the end of the file is an "Incomplete read": it sets nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.model import EnvSetting, FoundBy
from wizard.parsers.env_file import parse_shell_rc
from wizard.parsers.systemd_unit import unit_environment
from wizard.probes import detect
from wizard.probes.env_discovery import discover, service_units
from wizard.probes.env_settings import probe_env

from test_env_service_settings import ETC, HOME, host_for, write

pytestmark = pytest.mark.unit

USR = "/usr/lib/systemd/system"


def services(settings: list[EnvSetting]) -> dict[tuple[str | None, str], tuple[str, str]]:
    return {(s.service, s.name): (s.value, s.where) for s in settings if s.service}


def shell(settings: list[EnvSetting]) -> dict[str, tuple[str, str]]:
    return {s.name: (s.value, s.where) for s in settings if not s.service}


def _enable(root: Path, instance: str, template: str) -> None:
    wants = root / ETC.lstrip("/") / "multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    (wants / instance).symlink_to(f"{USR}/{template}")


# --------------------------------------------------------------------------- 1. specifiers


def test_instance_specifiers_are_the_instance_being_read(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/rocm-srv@.service",
          "[Service]\nEnvironment=ROCR_VISIBLE_DEVICES=%i HIP_PATH=%f ROCM_PATH=/x/%I\n"
          "Environment=PYTORCH_ROCM_ARCH=%p:%P MIOPEN_USER_DB_PATH=/var/cache/%N LD_PRELOAD=/%n\n")
    instance = "rocm-srv@opt-rocm\\x2d6.2.service"  # systemd-escape --template rocm-srv@.service --path /opt/rocm-6.2
    _enable(tmp_path, instance, "rocm-srv@.service")
    got = services(probe_env(host_for(tmp_path), []))
    where1, where2 = f"{USR}/rocm-srv@.service:2", f"{USR}/rocm-srv@.service:3"
    assert {k[1]: v for k, v in got.items() if k[0] == instance} == {
        "ROCR_VISIBLE_DEVICES": ("opt-rocm\\x2d6.2", where1),  # %i: as written in the name
        "HIP_PATH": ("/opt/rocm-6.2", where1),  # %f: unescaped as a path, "/" in front
        "ROCM_PATH": ("/x/opt/rocm-6.2", where1),  # %I: "-" is "/", \x2d is "-"
        "PYTORCH_ROCM_ARCH": ("rocm-srv:rocm/srv", where2),  # %p as written, %P unescaped
        "MIOPEN_USER_DB_PATH": ("/var/cache/rocm-srv@opt-rocm\\x2d6.2", where2),
        "LD_PRELOAD": (f"/{instance}", where2),
    }
    # near miss: the template read as a service of its own has no instance: its instance's specifiers stay as written
    # (no empty ROCR_VISIBLE_DEVICES, which would hide every GPU, is made up)
    template = {k[1]: v[0] for k, v in got.items() if k[0] == "rocm-srv@.service"}
    assert template["ROCR_VISIBLE_DEVICES"] == "%i" and template["HIP_PATH"] == "%f"
    assert template["PYTORCH_ROCM_ARCH"] == "rocm-srv:rocm/srv"  # the prefix is known


def test_a_plain_services_name_specifiers_and_its_empty_instance(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\nEnvironment=MIOPEN_USER_DB_PATH=/var/lib/%N/miopen HIP_PATH=%f ROCR_VISIBLE_DEVICES=x%iy\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert {k[1]: v[0] for k, v in got.items()} == {
        "MIOPEN_USER_DB_PATH": "/var/lib/ollama/miopen", "HIP_PATH": "/ollama", "ROCR_VISIBLE_DEVICES": "xy"}


def test_a_word_whose_specifier_systemd_does_not_know_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=%Z0 HSA_OVERRIDE_GFX_VERSION=10.3.0 'ROCM_PATH=/opt/%q%%'\n"
          "Environment=MIOPEN_USER_DB_PATH=/tmp/%%Z/%H\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert ("ollama.service", "HIP_VISIBLE_DEVICES") not in got  # %Z: no such specifier, the word is dropped
    assert got[("ollama.service", "HSA_OVERRIDE_GFX_VERSION")] == ("10.3.0", f"{ETC}/ollama.service:2")
    # near misses: %q (the pretty host name) is one systemd knows: the word stays, its value as written; "%%Z" is a
    # literal "%Z"; %H (the host name) stays as written
    assert got[("ollama.service", "ROCM_PATH")][0] == "/opt/%q%"
    assert got[("ollama.service", "MIOPEN_USER_DB_PATH")][0] == "/tmp/%Z/%H"
    assert unit_environment("[Service]\nEnvironment=HIP_VISIBLE_DEVICES=%Z0\n", "/root") == []


def test_an_instance_that_does_not_unescape_drops_only_the_words_that_need_it(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/gpu@.service",
          "[Service]\nEnvironment=HIP_PATH=%f ROCM_PATH=%I ROCR_VISIBLE_DEVICES=%i\n")
    for instance in ("gpu@a--b.service", "gpu@a\\qb.service"):  # "a//b" is no path; "\q" is no escape
        _enable(tmp_path, instance, "gpu@.service")
    got = services(probe_env(host_for(tmp_path), []))
    assert {k[1]: v[0] for k, v in got.items() if k[0] == "gpu@a--b.service"} == {
        "ROCM_PATH": "a//b", "ROCR_VISIBLE_DEVICES": "a--b"}  # %I is no path: "a//b" unescapes
    assert {k[1]: v[0] for k, v in got.items() if k[0] == "gpu@a\\qb.service"} == {"ROCR_VISIBLE_DEVICES": "a\\qb"}


def test_an_environment_file_named_by_the_instance_is_the_instances(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/llama@.service", "[Service]\nEnvironmentFile=-/etc/llama/%i.env\nEnvironmentFile=/etc/%Z.env\n")
    write(tmp_path, "/etc/llama/gpu1.env", "HIP_VISIBLE_DEVICES=1\n")
    write(tmp_path, "/etc/%Z.env", "HSA_OVERRIDE_GFX_VERSION=10.3.0\n")  # a file literally so named is never read
    _enable(tmp_path, "llama@gpu1.service", "llama@.service")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("llama@gpu1.service", "HIP_VISIBLE_DEVICES"): ("1", "/etc/llama/gpu1.env:1")}


# --------------------------------------------------------------------------- 2. blanks around "="


def test_exec_start_with_blanks_around_the_sign_names_its_environment(tmp_path: Path) -> None:
    write(tmp_path, "/srv/app/venv/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, f"{ETC}/app.service",
          "[Service]\nWorkingDirectory = /srv/app\nExecStart = venv/bin/python main.py\n")
    host = host_for(tmp_path)
    found = {c.prefix: c for c in discover(host, [HOME])}
    how = [(f.how, f.where, f.app) for f in found["/srv/app/venv"].found]
    assert how == [(FoundBy.SERVICE, f"{ETC}/app.service:3", "/srv/app")]
    # near miss: ExecStartPre is another setting, blanks or not; its program is not what the service runs
    write(tmp_path, f"{ETC}/app.service", "[Service]\nExecStartPre = /srv/app/venv/bin/python warm.py\n")
    assert "/srv/app/venv" not in {c.prefix for c in discover(host_for(tmp_path), [HOME])}


def test_environment_with_blanks_around_the_sign_is_read(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\nEnvironment = HSA_OVERRIDE_GFX_VERSION=10.3.0\nEnvironmentFile\t= -/etc/ollama.env\n")
    write(tmp_path, "/etc/ollama.env", "HIP_VISIBLE_DEVICES=1\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/ollama.service:2"),
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("1", "/etc/ollama.env:1")}


# --------------------------------------------------------------------------- 3. directories


def test_a_top_level_service_drop_in_applies_to_every_service_below_the_named_ones(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/ollama.service", "[Service]\nExecStart=/usr/bin/ollama serve\n")
    write(tmp_path, f"{USR}/llama.service", "[Service]\nExecStart=/usr/bin/llama-server\n")
    write(tmp_path, f"{ETC}/service.d/10-gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    write(tmp_path, f"{ETC}/service.d/20-dev.conf", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, f"{ETC}/socket.d/10-gpu.conf", "[Service]\nEnvironment=ROCR_VISIBLE_DEVICES=1\n")
    # a name's own drop-in of the same name wins, even from a lower directory
    write(tmp_path, f"{USR}/llama.service.d/10-gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    host = host_for(tmp_path)
    got = services(probe_env(host, []))
    assert got == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/service.d/10-gpu.conf:2"),
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/service.d/20-dev.conf:2"),
        ("llama.service", "HSA_OVERRIDE_GFX_VERSION"): ("11.0.0", f"{USR}/llama.service.d/10-gpu.conf:2"),
        ("llama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/service.d/20-dev.conf:2"),
    }  # and socket.d is another type's: nothing of a service
    assert detect(host_for(tmp_path)).services == ("llama.service", "ollama.service")  # a type drop-in is no service
    # every file is read once, however many services a type drop-in applies to
    reads: list[str] = []
    real = host.read_text

    def counting(path: str, limit: int = 1 << 20) -> str | None:
        reads.append(path)
        return real(path, limit=limit)

    host.read_text = counting  # type: ignore[method-assign]
    service_units(host, [HOME])
    assert sorted(reads) == sorted(set(reads)) and f"{ETC}/service.d/10-gpu.conf" in reads


@pytest.mark.parametrize(("higher", "lower"), [
    ("/run/systemd/generator.early", ETC),
    (ETC, "/run/systemd/generator"),
    ("/run/systemd/system", "/run/systemd/generator"),
    ("/run/systemd/generator", "/usr/local/lib/systemd/system"),
    (USR, "/run/systemd/generator.late"),
    ("/run/systemd/transient", "/run/systemd/generator.early"),
])
def test_generated_units_are_read_in_their_place(tmp_path: Path, higher: str, lower: str) -> None:
    write(tmp_path, f"{lower}/ollama.service", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("9.0.0", f"{lower}/ollama.service:2")}
    write(tmp_path, f"{higher}/ollama.service", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{higher}/ollama.service:2")}


def test_a_user_managers_runtime_units_are_read_with_its_home(tmp_path: Path) -> None:
    run = "/run/user/1000"
    write(tmp_path, f"{run}/systemd/user/comfy.service", "[Service]\nEnvironment=MIOPEN_USER_DB_PATH=%h/.miopen\n")
    write(tmp_path, "/run/systemd/user/sd.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, f"{run}/systemd/generator.late/app.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=1\n")
    write(tmp_path, "/run/user/1001/systemd/user/other.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=2\n")
    got = services(probe_env(host_for(tmp_path, XDG_RUNTIME_DIR=run), []))
    assert got == {
        ("comfy.service", "MIOPEN_USER_DB_PATH"): (f"{HOME}/.miopen", f"{run}/systemd/user/comfy.service:2"),
        ("sd.service", "HIP_VISIBLE_DEVICES"): ("0", "/run/systemd/user/sd.service:2"),
        ("app.service", "HIP_VISIBLE_DEVICES"): ("1", f"{run}/systemd/generator.late/app.service:2"),
    }  # near miss: another user's runtime folder is not this manager's


@pytest.mark.parametrize(("higher", "lower"), [
    ("{run}/systemd/transient", "{home}/.config/systemd/user"),
    ("{home}/.config/systemd/user.control", "{run}/systemd/user.control"),
    ("{home}/.config/systemd/user", "{run}/systemd/user"),
    ("/etc/systemd/user", "{run}/systemd/user"),
    ("{run}/systemd/user", "/run/systemd/user"),
    ("/run/systemd/user", "{run}/systemd/generator"),
])
def test_user_unit_directories_follow_the_manuals_order(tmp_path: Path, higher: str, lower: str) -> None:
    run = "/run/user/1000"
    hi, lo = (d.format(run=run, home=HOME) for d in (higher, lower))
    write(tmp_path, f"{lo}/sd.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, f"{hi}/sd.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=1\n")
    assert services(probe_env(host_for(tmp_path, XDG_RUNTIME_DIR=run), [])) == {
        ("sd.service", "HIP_VISIBLE_DEVICES"): ("1", f"{hi}/sd.service:2")}


# --------------------------------------------------------------------------- 4. continued lines


def _rc(tmp_path: Path, text: str) -> dict[str, tuple[str, str]]:
    write(tmp_path, f"{HOME}/.bashrc", text)
    return shell(probe_env(host_for(tmp_path), []))


def test_a_backslash_newline_continues_an_rc_line(tmp_path: Path) -> None:
    assert _rc(tmp_path, "export HSA_OVERRIDE_GFX_VERSION=\\\n10.3.0\nexport HIP_VISIBLE_DEVICES=0\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "~/.bashrc:1"), "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:3")}
    assert _rc(tmp_path, 'export HSA_OVERRIDE_GFX_VERSION="10.3\\\n.0"\n') == {  # in double quotes too
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "~/.bashrc:1")}
    assert _rc(tmp_path, "export HSA_OVERRIDE_\\\nGFX_VERSION=10.3.0\n") == {  # a name cut in two
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "~/.bashrc:1")}


def test_a_backslash_in_single_quotes_is_a_character_and_the_quote_goes_on(tmp_path: Path) -> None:
    assert _rc(tmp_path, "export HIP_PATH='/opt/my\\\nrocm'\nexport HIP_VISIBLE_DEVICES=0\n") == {
        "HIP_PATH": ("/opt/my\\\nrocm", "~/.bashrc:1"), "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:3")}
    # the second line is inside the alias's quotes: bash sets nothing there
    assert _rc(tmp_path, "alias gpu='cd /opt \\\nHSA_OVERRIDE_GFX_VERSION=10.3.0'\n") == {}


def test_a_doubled_backslash_or_a_comments_backslash_continues_nothing(tmp_path: Path) -> None:
    assert _rc(tmp_path, "export HSA_OVERRIDE_GFX_VERSION=10.3.0\\\\\nexport HIP_VISIBLE_DEVICES=0\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0\\", "~/.bashrc:1"), "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:2")}
    assert _rc(tmp_path, "# don't: export HIP_VISIBLE_DEVICES=9 \\\nexport HIP_VISIBLE_DEVICES=0\n") == {
        "HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:2")}
    assert _rc(tmp_path, "export HIP_VISIBLE_DEVICES=0\\ \nexport ROCR_VISIBLE_DEVICES=1\n") == {  # "\ " is a space
        "HIP_VISIBLE_DEVICES": ("0 ", "~/.bashrc:1"), "ROCR_VISIBLE_DEVICES": ("1", "~/.bashrc:2")}


def test_a_heredoc_body_and_an_unclosed_quote_are_left_as_they_were(tmp_path: Path) -> None:
    # L11: a quote open to the end of the file is bash's syntax error ("unexpected EOF while looking for matching"):
    # nothing from its command on runs, ROCR_VISIBLE_DEVICES is not set (bash 5.2; it was read here before)
    text = "cat <<EOF\ndon't\nEOF\nexport HIP_VISIBLE_DEVICES=0\necho 'never closed\nexport ROCR_VISIBLE_DEVICES=1\n"
    assert _rc(tmp_path, text) == {"HIP_VISIBLE_DEVICES": ("0", "~/.bashrc:4")}
    assert [(a.name, a.value, a.line) for a in parse_shell_rc("A=1 \\\n  B=2\n")] == [("A", "1", 1), ("B", "2", 1)]


def _etc(tmp_path: Path, text: str) -> dict[str, tuple[str, str]]:
    write(tmp_path, "/etc/environment", text)
    return shell(probe_env(host_for(tmp_path), []))


def test_etc_environment_continues_a_line_as_pam_env_does(tmp_path: Path) -> None:
    assert _etc(tmp_path, "HSA_OVERRIDE_GFX_VERSION=\\  \n   10.3.0\nHIP_VISIBLE_DEVICES=0\n") == {
        "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "/etc/environment:1"), "HIP_VISIBLE_DEVICES": ("0", "/etc/environment:3")}
    # pam_env looks at the last character alone: a doubled backslash continues too (one of the two stays), quotes too
    assert _etc(tmp_path, "HIP_VISIBLE_DEVICES=0\\\\\n1\nROCR_VISIBLE_DEVICES='2\\\n'\n") == {
        "HIP_VISIBLE_DEVICES": ("0\\1", "/etc/environment:1"), "ROCR_VISIBLE_DEVICES": ("2", "/etc/environment:3")}


def test_etc_environment_near_misses_a_comment_and_the_last_line(tmp_path: Path) -> None:
    # a line holding "#" ends there and never continues; a line continued at the end of the file sets nothing; the blank
    # before the "#" stays in the value (L11: pam_env strips no value, libpam 1.5.2 set HIP_VISIBLE_DEVICES="0 ")
    assert _etc(tmp_path, "HIP_VISIBLE_DEVICES=0 # gpu \\\nHSA_OVERRIDE_GFX_VERSION=10.3.0\nROCR_VISIBLE_DEVICES=1\\\n") == {
        "HIP_VISIBLE_DEVICES": ("0 ", "/etc/environment:1"), "HSA_OVERRIDE_GFX_VERSION": ("10.3.0", "/etc/environment:2")}
    from wizard.parsers.env_file import parse_pam_environment

    assert [(a.name, a.value, a.line) for a in parse_pam_environment("A=1\nB=2\\\n")] == [("A", "1", 1)]
