r"""Helper S8 (session seventeen): what systemd really gives a service, read the way systemd reads it.

Sources (read in systemd/systemd and its manual; quoted, not copied):
- src/core/load-fragment.c ``config_parse_environ``: each word comes from
  ``extract_first_word(&p, &word, NULL, EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE)``; on an error it logs "Invalid syntax,
  ignoring: %s" and returns (the words before stay set); a word that is no assignment: "Invalid environment
  assignment, ignoring: %s" and the next word is read. src/basic/escape.c ``cunescape_one``: the escapes
  a b f n r t v \\ \" \' s, xHH, octal nnn ("Don't allow bytes above 255", no NUL), uHHHH, UHHHHHHHH; anything else
  -EINVAL. src/basic/env-util.c ``env_value_is_valid``: "if (!utf8_is_valid(e)) return false".
- systemd.syntax(7) "Quoting" (https://www.freedesktop.org/software/systemd/man/latest/systemd.syntax.html#Quoting):
  "C-style escapes are supported ... Only escape patterns which match the syntax in the table are allowed"; lines
  "ending in a backslash are concatenated with the following line while reading and the backslash is replaced by a
  space character"; "When a comment line or lines follow a line ending with a backslash, the comment block is
  ignored". src/shared/conf-parser.c: only a backslash that is not itself escaped continues a line.
- systemd.unit(5) "Unit File Load Path"
  (https://www.freedesktop.org/software/systemd/man/latest/systemd.unit.html#Unit%20File%20Load%20Path): "Unit files
  found in directories listed earlier override files with the same name in directories lower in the list";
  /etc/systemd/system.control, /run/systemd/system.control, /run/systemd/transient, ..., /etc/systemd/system,
  /run/systemd/system ("Runtime units"), ..., /usr/local/lib/systemd/system ("System units installed by the
  administrator"), /usr/lib/systemd/system.
- systemd.unit(5) (systemd/systemd@00d0abd8bbaaef4a734f684e658cd3e8f25bff98:man/systemd.unit.xml): "For instantiated
  units, this logic will first look for the instance .d/ subdirectory (e.g. foo@bar.service.d/) and read its .conf
  files, followed by the template .d/ subdirectory (e.g. foo@.service.d/)"; "for a unit name foo-bar-baz.service not
  only the regular drop-in directory foo-bar-baz.service.d/ is searched but also both foo-bar-.service.d/ and
  foo-.service.d/"; "if a service getty@tty3.service is requested and no file by that name is found, systemd will look
  for getty@.service". NEWS (systemd/systemd@03a46b5ecabce700c198fda5e849336dc61910a5:NEWS, "CHANGES WITH 239"): "for a
  unit file name "foo-bar-baz.service" ... Now, it will also look in "foo-bar-.service.d/*.conf" and
  "foo-.service.d/"". src/shared/dropin.c ``unit_file_find_dropin_paths``: the drop-in directories are gathered for
  each unit directory in turn (instance, template, then the dash prefixes: "the more specific drop-ins may override
  the more generic drop-ins"), and the first file of a name wins.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.model import EnvSetting
from wizard.parsers.systemd_unit import environment_words, logical_lines, unit_environment
from wizard.probes import detect
from wizard.probes.env_settings import probe_env

from test_env_service_settings import ETC, HOME, host_for, write

pytestmark = pytest.mark.unit

USR = "/usr/lib/systemd/system"


def services(settings: list[EnvSetting]) -> dict[tuple[str | None, str], tuple[str, str]]:
    return {(s.service, s.name): (s.value, s.where) for s in settings if s.service}


def pairs(value: str) -> tuple[tuple[str, str], ...]:
    got = unit_environment(f"[Service]\nEnvironment={value}\n", "/root")
    return got[0].pairs if got else ()


# --------------------------------------------------------------------------- 1. escapes


@pytest.mark.parametrize(("value", "expected"), [
    (r"A=x\ty", "x\ty"),  # \t outside quotes too
    (r'"A=x\ny"', "x\ny"),
    (r"A=\x41\x42", "AB"),
    (r"A=\101", "A"),  # octal, three digits
    (r"A=C:\\rocm", "C:\\rocm"),
    (r'"A=say \"hi\""', 'say "hi"'),
    (r"'A=it\'s'", "it's"),
    (r"A=a\sb", "a b"),  # \s: a space, systemd's own
    (r"A=\u00e9\U0001F600", "\u00e9\U0001F600"),
    (r"A=\xc3\xa9", "\u00e9"),  # \x is a byte: two of them make one UTF-8 character
    (r"'A=\x41'", "A"),  # single quotes do not stop escapes in systemd (they do in a shell)
    ('A=a"b c"d', "ab cd"),  # a quote inside a word
    (r"A=\a\b\f\v\r", "\a\b\f\v\r"),
])
def test_each_escape_gives_the_character_systemd_gives(value: str, expected: str) -> None:
    assert pairs(value) == (("A", expected),)


def test_the_specifier_of_an_escape_is_expanded_after_it_is_decoded() -> None:
    # config_parse_environ: unit_env_printf(u, word, ...) runs on the word extract_first_word returned
    assert pairs(r"MIOPEN_USER_DB_PATH=\x25h/db") == (("MIOPEN_USER_DB_PATH", "/root/db"),)
    assert pairs(r"MIOPEN_USER_DB_PATH=%%h/db") == (("MIOPEN_USER_DB_PATH", "%h/db"),)


@pytest.mark.parametrize("bad", [r"\q", r"\x4", r"\xZZ", r"\x00", r"\000", r"\400", r"\u12", r"\UFFFFFFFF", "\\"])
def test_an_escape_systemd_refuses_ends_the_line_there(bad: str) -> None:
    """Near miss: shlex would keep the letter (``\\q`` -> ``q``); systemd logs "Invalid syntax, ignoring" and sets
    nothing from that word on, while the words before it stay set."""
    assert pairs(f"HIP_VISIBLE_DEVICES=0 HSA_OVERRIDE_GFX_VERSION=1{bad}z ROCR_VISIBLE_DEVICES=1") == (
        ("HIP_VISIBLE_DEVICES", "0"),)
    assert environment_words(f"A=1{bad}")[1] is False
    assert environment_words("A=1\\\\")[1] is True  # a doubled backslash is one backslash, read to the end


def test_a_value_that_is_no_utf8_is_no_assignment_but_the_next_word_is_read() -> None:
    assert pairs(r"A=\xff B=2") == (("B", "2"),)  # env_value_is_valid: utf8_is_valid
    assert pairs(r"1A=x _B=2 C-D=3 =4 E") == (("_B", "2"),)


def test_a_doubled_backslash_at_the_end_is_part_of_the_value_not_a_continuation() -> None:
    text = "[Service]\nEnvironment=ROCM_PATH=C:\\\\\nEnvironment=HIP_PATH=/opt/hip\n"
    assert [(ln.line, ln.pairs) for ln in unit_environment(text)] == [
        (2, (("ROCM_PATH", "C:\\"),)), (3, (("HIP_PATH", "/opt/hip"),))]
    # near miss: one backslash continues the line, and is a blank there
    text = "[Service]\nEnvironment=ROCM_PATH=/opt/rocm \\\n  HIP_PATH=/opt/hip\n"
    assert [(ln.line, ln.pairs) for ln in unit_environment(text)] == [
        (2, (("ROCM_PATH", "/opt/rocm"), ("HIP_PATH", "/opt/hip")))]


def test_a_comment_inside_a_continued_line_is_skipped_and_the_line_goes_on() -> None:
    text = ("[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0 \\\n# HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
            "; another\n    ROCR_VISIBLE_DEVICES=1\n")
    assert [(ln.line, ln.pairs) for ln in unit_environment(text)] == [
        (2, (("HIP_VISIBLE_DEVICES", "0"), ("ROCR_VISIBLE_DEVICES", "1")))]
    assert logical_lines("a=1\n# c \\\nb=2\n") == [(1, "a=1"), (2, "# c \\"), (3, "b=2")]  # a comment never continues


# --------------------------------------------------------------------------- 2. a quote left open


def test_a_quote_left_open_keeps_the_words_before_it() -> None:
    """config_parse_environ returns at the word extract_first_word cannot read ("Invalid syntax, ignoring: %s"): the
    assignments already made stay. The old reader (shlex) dropped the whole line."""
    assert pairs('HIP_VISIBLE_DEVICES=0 "HSA_OVERRIDE_GFX_VERSION=10.3.0 ROCR_VISIBLE_DEVICES=1') == (
        ("HIP_VISIBLE_DEVICES", "0"),)
    assert pairs("HIP_VISIBLE_DEVICES=0 HSA_OVERRIDE_GFX_VERSION='10.3.0") == (("HIP_VISIBLE_DEVICES", "0"),)
    # near miss: the quote closes, every word is set
    assert pairs('HIP_VISIBLE_DEVICES=0 "HSA_OVERRIDE_GFX_VERSION=10.3.0" ROCR_VISIBLE_DEVICES=1') == (
        ("HIP_VISIBLE_DEVICES", "0"), ("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), ("ROCR_VISIBLE_DEVICES", "1"))
    assert unit_environment('[Service]\nEnvironment="HSA_OVERRIDE_GFX_VERSION=10.3.0\n') == []


# --------------------------------------------------------------------------- 3. unit directories


@pytest.mark.parametrize("directory", ["/run/systemd/system", "/usr/local/lib/systemd/system",
                                       "/run/systemd/transient", "/etc/systemd/system.control"])
def test_a_unit_in_each_directory_is_read(tmp_path: Path, directory: str) -> None:
    write(tmp_path, f"{directory}/ollama.service", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{directory}/ollama.service:2")}
    assert detect(host_for(tmp_path)).services == ("ollama.service",)


@pytest.mark.parametrize(("higher", "lower"), [
    (ETC, "/run/systemd/system"),
    ("/run/systemd/system", "/usr/local/lib/systemd/system"),
    ("/usr/local/lib/systemd/system", USR),
    ("/run/systemd/transient", ETC),
])
def test_a_higher_priority_directory_hides_the_same_unit(tmp_path: Path, higher: str, lower: str) -> None:
    write(tmp_path, f"{lower}/ollama.service", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0\n")
    write(tmp_path, f"{higher}/ollama.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    assert services(probe_env(host_for(tmp_path), [])) == {
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("0", f"{higher}/ollama.service:2")}
    # near miss: a drop-in in the lower directory is still applied on top of the higher one's unit
    write(tmp_path, f"{lower}/ollama.service.d/gpu.conf", "[Service]\nEnvironment=ROCR_VISIBLE_DEVICES=1\n")
    assert set(services(probe_env(host_for(tmp_path), []))) == {
        ("ollama.service", "HIP_VISIBLE_DEVICES"), ("ollama.service", "ROCR_VISIBLE_DEVICES")}


def test_a_runtime_drop_in_of_the_same_name_hides_the_vendors_and_yields_to_etcs(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/ollama.service", "[Service]\nExecStart=/usr/bin/ollama serve\n")
    write(tmp_path, f"{USR}/ollama.service.d/gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0\n")
    write(tmp_path, "/run/systemd/system/ollama.service.d/gpu.conf",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): (
        "10.3.0", "/run/systemd/system/ollama.service.d/gpu.conf:2")}
    write(tmp_path, f"{ETC}/ollama.service.d/gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    assert services(probe_env(host_for(tmp_path), []))[("ollama.service", "HSA_OVERRIDE_GFX_VERSION")] == (
        "11.0.0", f"{ETC}/ollama.service.d/gpu.conf:2")


# --------------------------------------------------------------------------- 4. templates and prefixes


def _template(root: Path) -> None:
    write(root, f"{USR}/llama@.service",
          "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=%i\nExecStart=/opt/llama/server\n")


def test_an_enabled_instance_gets_its_template_and_both_drop_in_directories(tmp_path: Path) -> None:
    _template(tmp_path)
    write(tmp_path, f"{USR}/llama@.service.d/10-arch.conf", "[Service]\nEnvironment=PYTORCH_ROCM_ARCH=gfx1030\n")
    write(tmp_path, f"{ETC}/llama@gpu1.service.d/override.conf",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    (tmp_path / ETC.lstrip("/") / "multi-user.target.wants").mkdir(parents=True)
    (tmp_path / ETC.lstrip("/") / "multi-user.target.wants" / "llama@gpu0.service").symlink_to(
        f"{USR}/llama@.service")
    got = services(probe_env(host_for(tmp_path), []))
    assert got[("llama@gpu0.service", "PYTORCH_ROCM_ARCH")] == ("gfx1030", f"{USR}/llama@.service.d/10-arch.conf:2")
    assert got[("llama@gpu1.service", "HSA_OVERRIDE_GFX_VERSION")] == (
        "10.3.0", f"{ETC}/llama@gpu1.service.d/override.conf:2")
    assert got[("llama@gpu1.service", "PYTORCH_ROCM_ARCH")] == ("gfx1030", f"{USR}/llama@.service.d/10-arch.conf:2")
    assert ("llama@gpu0.service", "HSA_OVERRIDE_GFX_VERSION") not in got  # gpu1's drop-in is gpu1's alone
    assert got[("llama@.service", "PYTORCH_ROCM_ARCH")] == ("gfx1030", f"{USR}/llama@.service.d/10-arch.conf:2")
    facts = detect(host_for(tmp_path))
    assert facts.services == ("llama@.service", "llama@gpu0.service", "llama@gpu1.service")


def test_an_instances_own_drop_in_wins_over_the_templates_of_the_same_name(tmp_path: Path) -> None:
    _template(tmp_path)
    write(tmp_path, f"{ETC}/llama@.service.d/gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0\n")
    write(tmp_path, f"{ETC}/llama@gpu1.service.d/gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got[("llama@gpu1.service", "HSA_OVERRIDE_GFX_VERSION")] == (
        "10.3.0", f"{ETC}/llama@gpu1.service.d/gpu.conf:2")
    assert got[("llama@.service", "HSA_OVERRIDE_GFX_VERSION")] == ("9.0.0", f"{ETC}/llama@.service.d/gpu.conf:2")


def test_no_instance_is_invented_and_a_drop_in_without_unit_or_template_is_no_service(tmp_path: Path) -> None:
    _template(tmp_path)
    write(tmp_path, f"{ETC}/other@gpu0.service.d/override.conf",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    (tmp_path / USR.lstrip("/") / "multi-user.target.wants").mkdir(parents=True)
    (tmp_path / USR.lstrip("/") / "multi-user.target.wants" / "llama@vendor.service").symlink_to("../llama@.service")
    facts = detect(host_for(tmp_path))
    assert facts.services == ("llama@.service",)  # a vendor's *.wants enables no administrator's instance
    assert not facts.has_service("other@gpu0")  # neither a unit nor a template: its drop-in makes no service
    assert facts.service_env("other@gpu0.service") == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}  # read as before


def test_prefix_drop_ins_apply_and_the_more_specific_one_wins(tmp_path: Path) -> None:
    write(tmp_path, f"{USR}/comfyui-gpu-worker.service", "[Service]\nExecStart=/srv/c/venv/bin/python main.py\n")
    write(tmp_path, f"{ETC}/comfyui-.service.d/10-gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0\n")
    write(tmp_path, f"{ETC}/comfyui-gpu-.service.d/10-gpu.conf",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    write(tmp_path, f"{ETC}/comfyui-.service.d/20-dev.conf", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {
        ("comfyui-gpu-worker.service", "HSA_OVERRIDE_GFX_VERSION"): (
            "10.3.0", f"{ETC}/comfyui-gpu-.service.d/10-gpu.conf:2"),
        ("comfyui-gpu-worker.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/comfyui-.service.d/20-dev.conf:2"),
    }  # and no service named comfyui-.service: a prefix directory is no unit
    # near miss: a name that does not begin with the prefix gets nothing from it
    write(tmp_path, f"{USR}/comfy.service", "[Service]\nExecStart=/srv/c/venv/bin/python main.py\n")
    assert not [k for k in services(probe_env(host_for(tmp_path), [])) if k[0] == "comfy.service"]


def test_drop_in_names_follow_systemds_order() -> None:
    from wizard.probes.env_discovery import dropin_names

    assert dropin_names("foo-bar-baz.service") == ["foo-bar-baz.service", "foo-bar-.service", "foo-.service"]
    assert dropin_names("foo-bar@baz.service") == [
        "foo-bar@baz.service", "foo-bar@.service", "foo-.service", "foo-@baz.service", "foo-@.service"]
    assert dropin_names("ollama.service") == ["ollama.service"]
    assert dropin_names("-foo.service") == ["-foo.service"]  # a leading dash: no prefix


def test_a_template_file_is_read_once_for_all_its_instances(tmp_path: Path) -> None:
    from wizard.probes.env_discovery import service_units

    _template(tmp_path)
    wants = tmp_path / ETC.lstrip("/") / "multi-user.target.wants"
    wants.mkdir(parents=True)
    for i in range(3):
        (wants / f"llama@gpu{i}.service").symlink_to(f"{USR}/llama@.service")
    host = host_for(tmp_path)
    reads: list[str] = []
    real = host.read_text

    def counting(path: str, limit: int = 1 << 20) -> str | None:
        reads.append(path)
        return real(path, limit=limit)

    host.read_text = counting  # type: ignore[method-assign]
    units = dict(service_units(host, [HOME]))
    assert set(units) == {"llama@.service", "llama@gpu0.service", "llama@gpu1.service", "llama@gpu2.service"}
    assert reads.count(f"{USR}/llama@.service") == 1
    assert all(files[0].main and files[0].path == f"{USR}/llama@.service" for files in units.values())
