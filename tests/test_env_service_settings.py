"""Variables a systemd service sets for its processes (Environment= / EnvironmentFile= of its unit and drop-ins) are
read as that service's own settings (EnvSetting.service), not the shell's.

How systemd reads them: systemd.exec(5) (systemd/systemd@004e3ed11aea1bd8644711055a97abf072a509cb:man/systemd.exec.xml):
"Environment=\\"VAR1=word1 word2\\" VAR2=word3" gives two variables; "If the empty string is assigned to this option,
the list of environment variables is reset"; EnvironmentFile= takes a file "optionally prefixed with "-""; "Settings
from these files override settings made with Environment=". systemd.unit(5)
(systemd/systemd@00d0abd8bbaaef4a734f684e658cd3e8f25bff98:man/systemd.unit.xml): drop-ins "are applied in
lexicographic order, regardless of which of the directories they reside in", those in /etc before /usr/lib's.
Ollama's documentation (https://github.com/ollama/ollama/blob/main/docs/gpu.md#overrides, the known issue's source)
sets HSA_OVERRIDE_GFX_VERSION for the server with `systemctl edit ollama.service` (a drop-in).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wizard.diagnose import diagnose
from wizard.facts_json import facts_to_json
from wizard.host import BundleHost, LiveHost
from wizard.model import EnvSetting, EvidenceText, Facts, Gpu
from wizard.parsers.systemd_unit import unit_environment
from wizard.probes import detect
from wizard.probes.env_settings import probe_env

pytestmark = pytest.mark.unit

HOME = "/home/alice"
ETC = "/etc/systemd/system"


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def host_for(root: Path, **env: str) -> LiveHost:
    (root / HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
    return LiveHost(root, environ={"HOME": HOME, "USER": "alice", "PATH": "/nonexistent", **env})


def services(settings: list[EnvSetting]) -> dict[tuple[str | None, str], tuple[str, str]]:
    return {(s.service, s.name): (s.value, s.where) for s in settings if s.service}


def test_quoting_several_words_and_specifiers() -> None:
    text = ('[Unit]\nEnvironment=HIP_VISIBLE_DEVICES=9\n\n[Service]\n# Environment=ROCM_PATH=/commented\n'
            'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0" \'HIP_PATH=/opt/my rocm\' OLLAMA_HOST=0.0.0.0\n'
            'Environment=MIOPEN_USER_DB_PATH=%h/.cache/miopen ROCM_PATH="/opt/rocm-6.2" \\\n'
            '    PYTORCH_ROCM_ARCH=gfx1030\nEnvironment="BROKEN=unclosed\n[Install]\nEnvironment=LD_PRELOAD=/x.so\n')
    lines = unit_environment(text, "/root")
    assert [(ln.line, ln.pairs) for ln in lines] == [
        (6, (("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), ("HIP_PATH", "/opt/my rocm"), ("OLLAMA_HOST", "0.0.0.0"))),
        (7, (("MIOPEN_USER_DB_PATH", "/root/.cache/miopen"), ("ROCM_PATH", "/opt/rocm-6.2"),
             ("PYTORCH_ROCM_ARCH", "gfx1030"))),
    ]  # [Unit]/[Install] lines, a comment and a line whose quotes do not close set nothing


def test_a_drop_in_is_the_services_setting_with_its_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "/usr/lib/systemd/system/ollama.service",
          "[Service]\nExecStart=/usr/bin/ollama serve\nEnvironment=\"PATH=/usr/bin\" OLLAMA_HOST=0.0.0.0\n")
    write(tmp_path, f"{ETC}/ollama.service.d/override.conf",
          "### Editing /etc/systemd/system/ollama.service.d/override.conf\n[Service]\n"
          "Environment=\"HSA_OVERRIDE_GFX_VERSION=10.3.0\"\n")
    got = probe_env(host_for(tmp_path), [])
    assert [(s.name, s.value, s.where, s.service) for s in got] == [
        ("HSA_OVERRIDE_GFX_VERSION", "10.3.0", f"{ETC}/ollama.service.d/override.conf:3", "ollama.service")]


def test_drop_ins_apply_in_name_order_over_the_unit_and_etc_hides_the_same_name(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/ollama.service",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.0.0 HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, "/usr/lib/systemd/system/ollama.service", "[Service]\nEnvironment=ROCR_VISIBLE_DEVICES=5\n")
    write(tmp_path, f"{ETC}/ollama.service.d/override.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    write(tmp_path, f"{ETC}/ollama.service.d/10-gpu.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    write(tmp_path, "/usr/lib/systemd/system/ollama.service.d/50-vendor.conf",
          "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=1\n")
    write(tmp_path, "/usr/lib/systemd/system/ollama.service.d/override.conf",
          "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=9.4.2\n")  # hidden by /etc's override.conf
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {
        ("ollama.service", "HSA_OVERRIDE_GFX_VERSION"): ("10.3.0", f"{ETC}/ollama.service.d/override.conf:2"),
        ("ollama.service", "HIP_VISIBLE_DEVICES"): ("1", "/usr/lib/systemd/system/ollama.service.d/50-vendor.conf:2"),
    }  # /usr/lib's ollama.service is not read: /etc holds the unit


def test_an_empty_environment_resets_what_came_before(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/comfyui.service",
          "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=1 HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
          "ExecStart=/srv/c/venv/bin/python\n")
    write(tmp_path, f"{ETC}/comfyui.service.d/override.conf",
          "[Service]\nEnvironment=\nEnvironment=ROCR_VISIBLE_DEVICES=0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {("comfyui.service", "ROCR_VISIBLE_DEVICES"): ("0", f"{ETC}/comfyui.service.d/override.conf:3")}
    # near miss: without the empty Environment= the unit's settings stay
    write(tmp_path, f"{ETC}/comfyui.service.d/override.conf", "[Service]\nEnvironment=ROCR_VISIBLE_DEVICES=0\n")
    assert set(services(probe_env(host_for(tmp_path), []))) == {
        ("comfyui.service", n) for n in ("HIP_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION", "ROCR_VISIBLE_DEVICES")}


def test_environment_files_override_environment_and_a_missing_one_sets_nothing(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/llama-server.service",
          "[Service]\nEnvironmentFile=-/etc/default/llama\nEnvironmentFile=-/etc/default/absent\n"
          "Environment=HSA_OVERRIDE_GFX_VERSION=11.0.0 HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, "/etc/default/llama",
          "# llama.cpp server\nHSA_OVERRIDE_GFX_VERSION=\"11.0.2\"\nLLAMA_ARG_PORT=8080\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {
        ("llama-server.service", "HSA_OVERRIDE_GFX_VERSION"): ("11.0.2", "/etc/default/llama:2"),
        ("llama-server.service", "HIP_VISIBLE_DEVICES"): ("0", f"{ETC}/llama-server.service:4"),
    }
    # an empty EnvironmentFile= drops the files named before it
    write(tmp_path, f"{ETC}/llama-server.service.d/no-file.conf", "[Service]\nEnvironmentFile=\n")
    assert services(probe_env(host_for(tmp_path), []))[("llama-server.service", "HSA_OVERRIDE_GFX_VERSION")] == (
        "11.0.0", f"{ETC}/llama-server.service:4")


def test_user_units_expand_their_home(tmp_path: Path) -> None:
    write(tmp_path, f"{HOME}/.config/systemd/user/sd.service",
          "[Service]\nEnvironment=MIOPEN_USER_DB_PATH=%h/.cache/miopen "
          "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True\n"
          "EnvironmentFile=%h/.config/sd.env\n")
    write(tmp_path, f"{HOME}/.config/sd.env", "HSA_ENABLE_SDMA=0\n")
    got = services(probe_env(host_for(tmp_path), []))
    assert got == {
        ("sd.service", "MIOPEN_USER_DB_PATH"): (f"{HOME}/.cache/miopen", f"{HOME}/.config/systemd/user/sd.service:2"),
        ("sd.service", "PYTORCH_HIP_ALLOC_CONF"): ("expandable_segments:True",
                                                   f"{HOME}/.config/systemd/user/sd.service:2"),
        ("sd.service", "HSA_ENABLE_SDMA"): ("0", f"{HOME}/.config/sd.env:1"),
    }


def test_a_unit_setting_only_other_variables_adds_nothing(tmp_path: Path) -> None:
    write(tmp_path, f"{ETC}/ollama.service.d/override.conf",
          "[Service]\nEnvironment=\"OLLAMA_HOST=0.0.0.0\" OLLAMA_IGPU_ENABLE=1 HSA_OVERRIDE_GFX_VERSION_0=10.3.0\n")
    write(tmp_path, f"{ETC}/ollama.service.d/gpu.conf", "[Unit]\nDescription=not a service setting\n")
    write(tmp_path, f"{ETC}/ollama.socket", "[Socket]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    assert probe_env(host_for(tmp_path), []) == []


def test_a_services_setting_is_not_the_shells(tmp_path: Path) -> None:
    """The shell's override is what the GPUs are read with and what env_values says; the service's one is its own,
    and a service set differently than the shell is no conflict."""
    write(tmp_path, f"{HOME}/.bashrc", "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    write(tmp_path, f"{ETC}/ollama.service.d/override.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    facts = detect(host_for(tmp_path))
    assert facts.env_values == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    assert facts.service_env("ollama") == facts.service_env("ollama.service") == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert not [c for c in facts.conflicts if c.id == "env-set-differently"]
    out = facts_to_json(facts)
    assert out["env"] == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    assert out["service_env"] == {"ollama.service": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}}
    assert out["env_sources"]["HSA_OVERRIDE_GFX_VERSION"] == [
        "~/.bashrc:1=11.0.0", f"{ETC}/ollama.service.d/override.conf:2=10.3.0"]
    # near miss: only the service sets it: nothing is in force for the shell
    (tmp_path / HOME.lstrip("/") / ".bashrc").unlink()
    alone = detect(host_for(tmp_path))
    assert alone.env_values == {} and alone.service_env("ollama") == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_a_bundle_carrying_the_units_is_read_the_same_way(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    write(bundle, "lspci.txt", "03:00.0 VGA compatible controller [0300]: AMD [1002:73df]\n")
    write(bundle, "env.txt", "PATH=/usr/bin\n")
    write(bundle / "root", f"{ETC}/ollama.service.d/override.conf",
          "[Service]\nEnvironment=\"HSA_OVERRIDE_GFX_VERSION=10.3.0\"\n")
    facts = detect(BundleHost(bundle))
    assert [(s.name, s.value, s.where, s.service) for s in facts.env] == [
        ("HSA_OVERRIDE_GFX_VERSION", "10.3.0", f"{ETC}/ollama.service.d/override.conf:2", "ollama.service")]
    assert facts.env_values == {}


_OLLAMA = 'msg="amdgpu is not supported (supported types:[gfx1030 gfx1100])" gpu_type=gfx1031'


def _ollama_advice(env: tuple[EnvSetting, ...], issue: str = "ollama-gpu-type-not-in-runtime",
                   text: str = _OLLAMA) -> str:
    gpu = Gpu(name="AMD gfx1031", gfx="gfx1031", gfx_reported="gfx1031", family="RDNA2", hip_index=0)
    facts = Facts(gpus=(gpu,), origin="live", env=env, texts=(EvidenceText("error.txt", text, 1, "text", True),))
    f = {x.id: x for x in diagnose(facts)}[issue]
    return " ".join([f.fix, *f.fix_commands, *(f"{k}={v}" for k, v in f.fix_env)])


def test_an_override_the_ollama_service_sets_already_is_not_advised_again() -> None:
    where = f"{ETC}/ollama.service.d/override.conf:3"
    done = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", where, "ollama.service"),)
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" not in _ollama_advice(done)
    # near misses: the service sets another value, another service sets it, nothing sets it: the advice stands
    for env in ((EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", where, "ollama.service"),),
                (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", f"{ETC}/comfyui.service:4", "comfyui.service"),),
                ()):
        assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _ollama_advice(env), env
    # the service's value decides over the shell's: 10.3.0 in ~/.bashrc does not reach a service set to 11.0.0
    mixed = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "~/.bashrc:1"),
             EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", where, "ollama.service"))
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _ollama_advice(mixed)


def test_a_services_override_does_not_make_a_shell_run_torch_see_it() -> None:
    """no-binary-for-gpu's RDNA2 branch is advice for torch started by hand (no `service` in its fix): an override
    only ollama's unit sets is not in force for it."""
    text = "RuntimeError: HIP error: hipErrorNoBinaryForGpu"
    service = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", f"{ETC}/ollama.service.d/override.conf:3",
                          "ollama.service"),)
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in _ollama_advice(service, "no-binary-for-gpu", text)
    # near miss: the same override in the shell is in force for it
    shell = (EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "~/.bashrc:1"),)
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" not in _ollama_advice(shell, "no-binary-for-gpu", text)


def test_the_service_units_found_are_a_fact(tmp_path: Path) -> None:
    """A service with a unit file is listed (system or user); a drop-in alone, a masked unit and a socket are not."""
    write(tmp_path, f"{ETC}/ollama.service", "[Service]\nExecStart=/usr/local/bin/ollama serve\n")
    write(tmp_path, f"{ETC}/comfyui.service.d/override.conf", "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0\n")
    write(tmp_path, f"{HOME}/.config/systemd/user/llama-server.service", "[Service]\nExecStart=/opt/llama/server\n")
    write(tmp_path, f"{ETC}/ollama.socket", "[Socket]\n")
    (tmp_path / ETC.lstrip("/") / "masked.service").symlink_to("/dev/null")
    write(tmp_path, f"{ETC}/empty.service", "")  # an empty unit file masks too
    write(tmp_path, f"{ETC}/empty.service.d/override.conf", "[Service]\nEnvironment=HSA_OVERRIDE_GFX_VERSION=10.3.0\n")
    facts = detect(host_for(tmp_path))
    assert facts.services == ("llama-server.service", "ollama.service")
    assert facts.has_service("ollama") and not facts.has_service("comfyui") and not facts.has_service("masked")
    assert not facts.has_service("empty") and facts.service_env("empty") == {}
    assert facts_to_json(facts)["service_units"] == ["llama-server.service", "ollama.service"]


def test_a_shell_override_does_not_reach_the_ollama_service() -> None:
    """ollama's unit exists and sets no override: an export in ~/.bashrc is not what the service runs with (the
    mistake the fix's summary warns of), so the advice to set it in the unit stands (helper V7's finding)."""
    shell = EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "~/.bashrc:1")
    gpu = Gpu(name="AMD gfx1031", gfx="gfx1031", gfx_reported="gfx1031", family="RDNA2", hip_index=0)

    def advice(services: tuple[str, ...]) -> str:
        facts = Facts(gpus=(gpu,), origin="live", env=(shell,), services=services,
                      texts=(EvidenceText("error.txt", _OLLAMA, 1, "text", True),))
        f = {x.id: x for x in diagnose(facts)}["ollama-gpu-type-not-in-runtime"]
        return " ".join([f.fix, *f.fix_commands, *(f"{k}={v}" for k, v in f.fix_env)])

    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in advice(("ollama.service",))
    # near miss: no unit of ollama was read (started by hand, or a recorded machine): the shell's value decides
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" not in advice(())
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" not in advice(("comfyui.service",))


@given(st.text(alphabet=" \tEnvironmFl=x", max_size=24))  # a line: "\r" ends one (tests/test_review_V8.py)
def test_an_empty_environment_line_is_read_as_the_pattern_it_replaced_read_it(line: str) -> None:
    import re

    from wizard.probes.env_settings import _is_reset

    assert _is_reset(line) == bool(re.fullmatch(r"[ \t]*Environment(?:File)?[ \t]*=[ \t]*", line))
