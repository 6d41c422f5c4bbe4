"""Review V8 of the detect speed work (fc65a1d, 137cd22, db2f252): where it changed what detect reports.

Each case here failed on the code of those commits and passes on the mend; each has a near miss that must not fire.
Old behaviour is the code before fc65a1d (fc65a1d^), run on the same inputs.

systemd reads a unit's lines as read_line_full does (systemd/systemd@8ccfcf2ca023b4e071a4ee43ae1c657ce0a1158f:
src/basic/fileio.c): "Considers EOF, \\n, \\r and \\0 end of line delimiters".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from wizard.host import LiveHost
from wizard.model import FoundBy
from wizard.probes import detect

pytestmark = pytest.mark.unit

HOME = "/home/alice"


def write(root: Path, rel: str, text: str | bytes = "") -> Path:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, newline="")  # as written: "\r\n" stays "\r\n"
    return p


def host_for(root: Path) -> LiveHost:
    (root / HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
    return LiveHost(root, environ={"HOME": HOME, "USER": "alice", "PATH": "/nonexistent"})


def make_venv(root: Path, prefix: str, torch: str = "2.5.1+rocm6.2") -> None:
    write(root, f"{prefix}/pyvenv.cfg", "home = /usr/bin\nversion = 3.10.12\n")
    write(root, f"{prefix}/bin/python")
    site = f"{prefix}/lib/python3.10/site-packages"
    (root / site.lstrip("/") / f"torch-{torch}.dist-info").mkdir(parents=True)
    write(root, f"{site}/torch/version.py", f"__version__ = '{torch}'\nhip = '6.2.41133'\ncuda = None\n")


def service_envs(root: Path) -> dict[str, list[str]]:
    return {e.path: [f.where for f in e.found if f.how is FoundBy.SERVICE]
            for e in detect(host_for(root)).python_envs if e.path}


# --------------------------------------------------------------------------- dpkg status


def _status(stanzas: list[tuple[str, str]], nl: str = "\n", blank: str = "") -> str:
    return "".join(f"Package: {n}{nl}Status: install ok installed{nl}Version: {v}{nl}{blank}{nl}" for n, v in stanzas)


@pytest.mark.parametrize(("nl", "blank"), [("\r\n", ""), ("\n", " "), ("\n", "\t")],
                         ids=["crlf", "space-line", "tab-line"])
def test_dpkg_status_whose_stanzas_do_not_part_at_an_empty_line_keeps_only_rocm_packages(
        tmp_path: Path, nl: str, blank: str) -> None:
    """The quick scan keeps a ROCm stanza up to the next "\\n\\n"; a status file whose stanzas part otherwise (CRLF
    ends, a blank line holding a space) kept every stanza after it, and the parser reads a whitespace line as the
    end of a stanza: bash and firefox came back as ROCm packages (a distro ROCm install). The filter by name that
    ran after the parse (before fc65a1d) is back."""
    from wizard.probes.rocm import read_packages

    write(tmp_path, "var/lib/dpkg/status",
          _status([("rocm-core", "6.2.4.60204-139~24.04"), ("firefox", "120.0"), ("bash", "5.2"),
                   ("rdc", "1.0.0.60204-139~24.04"), ("zsh", "5.9")], nl, blank))
    names = [p.name for p in read_packages(LiveHost(tmp_path, environ={}))]
    assert names == ["rocm-core", "rdc"]


def test_dpkg_status_as_dpkg_writes_it_is_read_whole(tmp_path: Path) -> None:
    """Near miss: the ordinary file keeps every ROCm package, rdc mid-file included."""
    from wizard.probes.rocm import read_packages

    write(tmp_path, "var/lib/dpkg/status",
          _status([("rocm-core", "6.2.4.60204-139~24.04"), ("rdc", "1.0.0.60204-139~24.04"), ("bash", "5.2"),
                   ("hip-runtime-amd", "6.2.41134.60204-139~24.04")]))
    names = [p.name for p in read_packages(LiveHost(tmp_path, environ={}))]
    assert names == ["rocm-core", "rdc", "hip-runtime-amd"]


# --------------------------------------------------------------------------- ExecStart= lines


@pytest.mark.parametrize("sep", ["\r", "\x0c", "\x85", "\u2028"], ids=["cr", "ff", "nel", "ls"])
def test_a_unit_whose_lines_end_otherwise_than_newline_still_names_its_environment(tmp_path: Path, sep: str) -> None:
    """The reader of a unit (logical_lines) splits it as str.splitlines does: old Mac line ends ("\\r", which
    systemd reads as a line end too) included. The quick ExecStart= test looked for the word at the start of a
    "\\n" line only, so such a unit was passed over before the reader saw it."""
    make_venv(tmp_path, "/srv/app/venv")
    write(tmp_path, "etc/systemd/system/app.service",
          sep.join(["[Service]", "Description=app", "ExecStart=/srv/app/venv/bin/python main.py", ""]))
    assert service_envs(tmp_path).get("/srv/app/venv") == ["/etc/systemd/system/app.service:3"]


def test_exec_start_named_mid_line_is_no_exec_start(tmp_path: Path) -> None:
    """Near miss: the word inside another line (no line end before it) runs nothing."""
    make_venv(tmp_path, "/srv/app/venv")
    write(tmp_path, "etc/systemd/system/app.service",
          "[Service]\nDescription=x ExecStart=/srv/app/venv/bin/python main.py\nExecStart=/usr/bin/true\n")
    assert "/srv/app/venv" not in service_envs(tmp_path)


@given(st.lists(st.sampled_from(["ExecStart=/opt/app/venv/bin/python -m app", "  ExecStart=/usr/bin/true",
                                 "#ExecStart=/opt/x/bin/python", "ExecStartPre=/bin/mkdir -p /run/x",
                                 "Description=x\rExecStart=/srv/a/bin/app", "ExecStart=",
                                 "\tExecStart=-/srv/e/bin/app\r", "Description=ExecStart= here"]), max_size=10),
       st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"]))
@example(["Description=x", "ExecStart=/srv/a/bin/app"], "\r")
def test_exec_start_lines_are_the_lines_the_unit_reader_sees(lines: list[str], sep: str) -> None:
    from wizard.probes.env_discovery import _exec_start_lines

    text = sep.join(lines)
    assert _exec_start_lines(text) == [ln.strip() for ln in text.splitlines() if ln.lstrip().startswith("ExecStart=")]


# --------------------------------------------------------------------------- the unit budget


def _budget_machine(root: Path, dropin: str) -> None:
    write(root, "etc/systemd/system/a.service", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    write(root, "etc/systemd/system/ollama.service",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\nExecStart=/usr/bin/ollama serve\n")
    write(root, "etc/systemd/system/ollama.service.d/override.conf", dropin)


def _service_values(root: Path) -> dict[tuple[str | None, str], str]:
    from wizard.probes.env_settings import probe_env

    return {(s.service, s.name): s.value for s in probe_env(host_for(root), []) if s.service}


def test_a_service_whose_drop_ins_the_budget_left_unread_sets_nothing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """MAX_UNITS files are read in all. A service cut by the limit (its unit file read, a drop-in not) was left out
    of the settings before fc65a1d: its unread drop-in may reset what the unit file sets (here it does). The one
    walk kept it, so detect reported HSA_OVERRIDE_GFX_VERSION=10.3.0 for a service that does not run with it."""
    from wizard.probes import env_discovery

    _budget_machine(tmp_path, "[Service]\nEnvironment=\n")
    monkeypatch.setattr(env_discovery, "MAX_UNITS", 2)
    assert _service_values(tmp_path) == {("a.service", "HIP_VISIBLE_DEVICES"): "0"}


def test_a_service_read_whole_within_the_budget_sets_its_variables(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Near miss: with room for every file, the unit file's setting stands where its drop-in keeps it."""
    from wizard.probes import env_discovery

    _budget_machine(tmp_path, "[Service]\nEnvironment=OLLAMA_HOST=0.0.0.0\n")
    monkeypatch.setattr(env_discovery, "MAX_UNITS", 3)
    assert _service_values(tmp_path) == {("a.service", "HIP_VISIBLE_DEVICES"): "0",
                                         ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): "10.3.0"}


# --------------------------------------------------------------------------- site-packages prefilter


class _Listing:
    """A site-packages of names alone (every name a folder; no file in any)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def listdir(self, path: str) -> list[str]:
        return sorted(self.names) if path == "/site" else []

    def is_dir(self, path: str) -> bool:
        return False  # no torch folder: versions from the names only

    def read_text(self, path: str, limit: int = 0) -> str | None:
        return None


_LEADS = ["", "_", "__", ".", "-", "_.", "x"]
_CORES = ["rocm_sdk_device_gfx1100", "amd-torch-device-gfx942", "rocm_sdk_device_gfx1201", "torch", "Torch",
          "rocm", "rocm-sdk-core", "pytorch_triton_rocm", "numpy", "triton"]
_TAILS = ["", "-2.5.1.dist-info", "-0.0.1.dev0.dist-info", "-0.1.0.dist-info", "-1.0.egg-info"]


@given(st.lists(st.tuples(st.sampled_from(_LEADS), st.sampled_from(_CORES), st.sampled_from(_TAILS)), max_size=8))
@example([("__", "rocm_sdk_device_gfx1100", ""), ("", "torch", "-2.7.0.dist-info")])
@example([(".", "rocm_sdk_device_gfx1201", ""), ("", "torch", "-2.7.0.dist-info")])
def test_site_packages_prefilter_passes_over_nothing_the_reader_reports(
        parts: list[tuple[str, str, str]]) -> None:
    """The first-letters prefilter (_READ_PREFIXES) must not change what is read: a device package folder whose name
    starts with separators ("__rocm_sdk_device_gfx1100": _norm_name folds them to "_rocm_sdk_device") was read
    before 137cd22 and then passed over."""
    from wizard.probes import python_envs as pe

    names = ["".join(p) for p in parts]
    host = _Listing(names)
    fast = pe.read_site_packages(host, "/site")  # type: ignore[arg-type]
    saved = pe._READ_PREFIXES
    try:
        pe._READ_PREFIXES = ("",)  # every entry
        every = pe.read_site_packages(host, "/site")  # type: ignore[arg-type]
    finally:
        pe._READ_PREFIXES = saved
    assert fast == every


# --------------------------------------------------------------------------- CRLF units (before today too)


def test_a_crlf_unit_continues_its_exec_start_line(tmp_path: Path) -> None:
    """A unit written with CRLF ends whose ExecStart= goes on after a backslash: systemd reads "\\r\\n" as a line
    end, so the backslash continues the line (logical_lines joins it too); the quick test knew "\\\\\\n" only and
    passed the unit over (before today's work as well)."""
    make_venv(tmp_path, "/srv/app/venv")
    write(tmp_path, "etc/systemd/system/app.service",
          "[Service]\r\nExecStart=/usr/bin/env \\\r\n    /srv/app/venv/bin/python main.py\r\n")
    assert service_envs(tmp_path).get("/srv/app/venv") == ["/etc/systemd/system/app.service:2"]


def test_a_crlf_unit_running_a_system_program_names_no_environment(tmp_path: Path) -> None:
    """Near miss: a CRLF unit continued onto a system program's arguments names no environment."""
    make_venv(tmp_path, "/srv/app/venv")
    write(tmp_path, "etc/systemd/system/app.service",
          "[Service]\r\nExecStart=/usr/bin/env \\\r\n    /usr/bin/true /srv/app/venv\r\n")
    assert "/srv/app/venv" not in service_envs(tmp_path)


@pytest.mark.parametrize("reset", ["Environment=\r\n", "Environment =\t\r\n", "Environment=\xa0\n"],
                         ids=["crlf", "crlf-blanks", "nbsp"])
def test_an_empty_environment_line_of_any_spelling_resets_the_list(tmp_path: Path, reset: str) -> None:
    """A drop-in whose empty Environment= line ends in CRLF (or holds another blank) resets what the unit file set,
    as the unit reader (unit_environment) reads it; the quick test for a reset knew blanks and tabs before "\\n"
    only, so the drop-in went unread and the reset unseen (before today's work as well)."""
    _budget_machine(tmp_path, "[Service]\r\n" + reset + "Environment=OLLAMA_HOST=0.0.0.0\r\n")
    assert _service_values(tmp_path) == {("a.service", "HIP_VISIBLE_DEVICES"): "0"}


def test_a_crlf_drop_in_that_only_adds_keeps_the_unit_files_setting(tmp_path: Path) -> None:
    """Near miss: a CRLF drop-in with no empty Environment= line keeps the unit file's setting."""
    _budget_machine(tmp_path, "[Service]\r\nEnvironment=OLLAMA_HOST=0.0.0.0\r\n")
    assert _service_values(tmp_path) == {("a.service", "HIP_VISIBLE_DEVICES"): "0",
                                         ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): "10.3.0"}


@given(st.text(alphabet=" \tEnvironmFl=x\r\n\\\xa0#", max_size=40))
@example("Environment=\r\n")
@example("Environment=\\\r\n\r\n")
@example("Environment= \\")
def test_a_unit_text_in_which_the_reader_finds_a_reset_is_always_read(text: str) -> None:
    """The quick test (_may_set) passes over a unit text only where the unit's reader finds nothing in it: a reset
    included, whatever its line ends and blanks."""
    from wizard.parsers.systemd_unit import unit_environment
    from wizard.probes.env_settings import _may_set

    if any(ln.reset for ln in unit_environment("[Service]\n" + text)):
        assert _may_set(text)
