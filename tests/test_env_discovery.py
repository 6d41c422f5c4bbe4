"""Environment discovery (issue 27): homes laid out as each application's installer lays them out.

Layouts, from the installers' own files:
- AUTOMATIC1111 stable-diffusion-webui: webui.sh makes ``venv`` in the clone (``venv_dir="venv"``).
- ComfyUI: the manual install's ``python -m venv venv`` in ~/ComfyUI (the issue's report: ~/ComfyUI/venv).
- kohya_ss: setup.sh makes ``venv`` in the clone.
- Fooocus: its Linux instructions make ``fooocus_env`` in ~/Fooocus (``python3 -m venv fooocus_env``).
- SD.Next (vladmandic/automatic): webui.sh makes ``venv`` in the clone (~/automatic).
- text-generation-webui: start_linux.sh's ``INSTALL_ENV_DIR="$(pwd)/installer_files/env"``, a conda env
  beside the installer's own conda root (installer_files/conda).
- InvokeAI: the installer's root ~/invokeai with ``.venv`` in it.
- pipx: ~/.local/share/pipx/venvs/<app> (pipx >= 1.3 on Linux); uv tool: ~/.local/share/uv/tools/<tool>;
  a uv project: ``.venv`` beside pyproject.toml, here one level deeper (~/code/diffusers-play/.venv).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wizard.facts_json import facts_to_json
from wizard.host import BundleHost, LiveHost
from wizard.model import Facts, FoundBy, Gpu, PythonEnv
from wizard.probes import detect
from wizard.record import replace
from wizard.render import found_label

pytestmark = pytest.mark.unit

HOME = "/home/alice"


def write(root: Path, rel: str, text: str = "") -> Path:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def make_env(root: Path, prefix: str, torch: str, *, py: str = "3.10", conda: bool = False,
             gfx: tuple[str, ...] = ("gfx1030", "gfx1100")) -> None:
    """An environment as pip/conda leave it: the marker, bin/python, site-packages with torch's files."""
    if conda:
        write(root, f"{prefix}/conda-meta/history", "==> 2024-11-01 <==\n")
    else:
        write(root, f"{prefix}/pyvenv.cfg", f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {py}.12\n")
    write(root, f"{prefix}/bin/python", "")
    site = f"{prefix}/lib/python{py}/site-packages"
    (root / site.lstrip("/") / f"torch-{torch}.dist-info").mkdir(parents=True)
    hip = "'6.2.41133-dd7f95766'" if "+rocm" in torch else "None"
    write(root, f"{site}/torch/version.py", f"__version__ = '{torch}'\nhip = {hip}\ncuda = None\n")
    for g in gfx if "+rocm" in torch else ():
        write(root, f"{site}/torch/lib/rocblas/library/TensileLibrary_lazy_{g}.dat")


# (name, env prefix, torch, how, application folder)
LAYOUTS = [
    ("a1111", f"{HOME}/stable-diffusion-webui/venv", "2.3.1+rocm5.7", FoundBy.APP, f"{HOME}/stable-diffusion-webui"),
    ("comfyui", f"{HOME}/ComfyUI/venv", "2.5.1+rocm6.2", FoundBy.APP, f"{HOME}/ComfyUI"),
    ("kohya_ss", f"{HOME}/kohya_ss/venv", "2.4.1+rocm6.0", FoundBy.APP, f"{HOME}/kohya_ss"),
    ("fooocus", f"{HOME}/Fooocus/fooocus_env", "2.1.0+rocm5.6", FoundBy.APP, f"{HOME}/Fooocus"),
    ("sdnext", f"{HOME}/automatic/venv", "2.6.0+rocm6.2.4", FoundBy.APP, f"{HOME}/automatic"),
    ("textgen", f"{HOME}/text-generation-webui/installer_files/env", "2.4.1+rocm6.1", FoundBy.APP,
     f"{HOME}/text-generation-webui"),
    ("invokeai", f"{HOME}/invokeai/.venv", "2.4.1+rocm6.1", FoundBy.APP, f"{HOME}/invokeai"),
    ("opt", "/opt/comfyui/venv", "2.7.1+rocm6.3", FoundBy.APP, "/opt/comfyui"),
    ("pipx", f"{HOME}/.local/share/pipx/venvs/openai-whisper", "2.5.1+rocm6.2", FoundBy.PIPX, None),
    ("uv-tool", f"{HOME}/.local/share/uv/tools/whisperx", "2.5.1+rocm6.2", FoundBy.UV_TOOL, None),
    ("uv-project", f"{HOME}/code/diffusers-play/.venv", "2.6.0+rocm6.2.4", FoundBy.APP, f"{HOME}/code/diffusers-play"),
]


def lay_out_home(root: Path) -> None:
    for name, prefix, torch, _how, _app in LAYOUTS:
        conda = name == "textgen"
        make_env(root, prefix, torch, conda=conda)
    # what the installers put beside the environments
    write(root, f"{HOME}/stable-diffusion-webui/webui.sh", "#!/usr/bin/env bash\nvenv_dir=\"venv\"\n")
    write(root, f"{HOME}/stable-diffusion-webui/launch.py")
    (root / f"{HOME}/stable-diffusion-webui/models/Stable-diffusion".lstrip("/")).mkdir(parents=True)
    write(root, f"{HOME}/ComfyUI/main.py")
    (root / f"{HOME}/ComfyUI/custom_nodes/ComfyUI-Manager".lstrip("/")).mkdir(parents=True)
    write(root, f"{HOME}/kohya_ss/setup.sh")
    write(root, f"{HOME}/Fooocus/entry_with_update.py")
    write(root, f"{HOME}/automatic/webui.sh")
    write(root, f"{HOME}/text-generation-webui/start_linux.sh", 'INSTALL_ENV_DIR="$(pwd)/installer_files/env"\n')
    write(root, f"{HOME}/text-generation-webui/installer_files/conda/conda-meta/history")  # the installer's own conda
    write(root, f"{HOME}/invokeai/invokeai.yaml")
    write(root, f"{HOME}/code/diffusers-play/pyproject.toml", "[project]\nname = 'play'\n")
    write(root, f"{HOME}/code/diffusers-play/uv.lock")
    for i in range(30):  # a lived-in home: folders with files and folders, none an environment
        write(root, f"{HOME}/Documents/notes-{i}/readme.txt", "x")
    write(root, f"{HOME}/Pictures/img.png")
    write(root, "etc/os-release", "ID=ubuntu\nVERSION_ID=24.04\n")


def host_for(root: Path, **env: str) -> LiveHost:
    return LiveHost(root, environ={"HOME": HOME, "USER": "alice", "PATH": "/nonexistent", **env})


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root")
    lay_out_home(root)
    return root


@pytest.fixture(scope="module")
def found(home: Path) -> dict[str, PythonEnv]:
    return {e.path: e for e in detect(host_for(home)).python_envs if e.path}


@pytest.mark.parametrize("name,prefix,torch,how,app", LAYOUTS, ids=[x[0] for x in LAYOUTS])
def test_each_installer_layout_is_found_with_its_torch_and_evidence(found: dict[str, PythonEnv], name: str,
                                                                    prefix: str, torch: str, how: FoundBy,
                                                                    app: str | None) -> None:
    assert prefix in found, f"{name}: {prefix} not found; found {sorted(found)}"
    env = found[prefix]
    assert env.torch == torch and env.build == "rocm"
    assert env.kind == ("conda" if name == "textgen" else "venv")
    assert how in [f.how for f in env.found], env.found
    assert env.app == app


def test_the_issue_report_comfyui_venv_is_in_detect_json(home: Path) -> None:
    doc = facts_to_json(detect(host_for(home)))
    env = next(e for e in doc["python_envs"] if e["path"] == f"{HOME}/ComfyUI/venv")
    assert env["torch"] == "2.5.1+rocm6.2"
    assert env["found"] == [{"how": "app", "where": f"{HOME}/ComfyUI", "text": "venv/pyvenv.cfg",
                             "app": f"{HOME}/ComfyUI"}]
    # the keys detect --json had before are all still there, with their values
    assert {"path", "python", "python_version", "torch", "build", "gfx_targets", "kind", "sources"} <= set(env)


def test_noise_is_not_an_environment(found: dict[str, PythonEnv]) -> None:
    assert not [p for p in found if "Documents" in p or "Pictures" in p or "installer_files/conda" in p]


def fake_process(root: Path, pid: int, exe: str, argv: list[str], cwd: str, environ: dict[str, str] | None = None
                 ) -> None:
    d = root / "proc" / str(pid)
    d.mkdir(parents=True)
    os.symlink(exe, d / "exe")
    os.symlink(cwd, d / "cwd")
    (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in (environ or {}).items()) + b"\0")


def test_running_processes_in_a_proc_tree(tmp_path: Path) -> None:
    r = tmp_path
    lay_out_home(r)
    make_env(r, "/srv/sd/venv", "2.5.1+rocm6.2")  # nowhere discovery lists: only the process shows it
    make_env(r, "/data/envs/torch", "2.6.0+rocm6.2.4")
    fake_process(r, 4242, "/usr/bin/python3.10", [f"{HOME}/ComfyUI/venv/bin/python", "main.py", "--listen"],
                 f"{HOME}/ComfyUI")
    fake_process(r, 4343, "/usr/bin/python3.10", ["venv/bin/python", "launch.py"], "/srv/sd")
    fake_process(r, 4444, "/usr/bin/python3.10", ["python3", "-m", "server"], "/data/work",
                 {"VIRTUAL_ENV": "/data/envs/torch", "PATH": "/data/envs/torch/bin:/usr/bin"})
    write(r, "data/envs/torch/bin/python3")
    fake_process(r, 4545, "/usr/lib/firefox/firefox", ["firefox"], HOME)  # not Python: never read further
    envs = {e.path: e for e in detect(host_for(r)).python_envs if e.path}
    comfy = envs[f"{HOME}/ComfyUI/venv"]
    assert comfy.in_use and comfy.app == f"{HOME}/ComfyUI"
    proc = next(f for f in comfy.found if f.how is FoundBy.PROCESS)
    assert proc.where == "pid 4242"
    assert proc.text == f"{HOME}/ComfyUI/venv/bin/python main.py (+1 argument) (cwd {HOME}/ComfyUI)"
    assert envs["/srv/sd/venv"].torch == "2.5.1+rocm6.2" and envs["/srv/sd/venv"].app == "/srv/sd"
    assert envs["/data/envs/torch"].in_use and envs["/data/envs/torch"].app == "/data/work"
    assert "running (pid 4242)" in found_label(comfy)


def test_systemd_units_system_and_user(tmp_path: Path) -> None:
    r = tmp_path
    make_env(r, "/srv/comfy/venv", "2.5.1+rocm6.2")
    write(r, "etc/systemd/system/comfyui.service",
          "[Unit]\nDescription=ComfyUI\n\n[Service]\nUser=comfy\nWorkingDirectory=/srv/comfy\n"
          "ExecStart=/srv/comfy/venv/bin/python main.py \\\n    --listen 127.0.0.1\nRestart=always\n")
    write(r, "etc/systemd/system/multi-user.target.wants/.keep")
    make_env(r, f"{HOME}/apps/sd/.venv", "2.6.0+rocm6.2.4")
    write(r, f"{HOME}/.config/systemd/user/sd.service",
          "[Service]\nExecStart=/bin/bash -c 'cd %h/apps/sd && exec .venv/bin/python launch.py'\n")
    make_env(r, "/opt/invoke/.venv", "2.4.1+rocm6.1")
    write(r, "lib/systemd/system/invokeai.service", "[Service]\nExecStart=-/opt/invoke/.venv/bin/invokeai-web\n")
    write(r, "lib/systemd/system/ssh.service", "[Service]\nExecStart=/usr/sbin/sshd -D\n")
    envs = {e.path: e for e in detect(host_for(r)).python_envs if e.path}
    comfy = envs["/srv/comfy/venv"]
    svc = next(f for f in comfy.found if f.how is FoundBy.SERVICE)
    assert svc.where == "/etc/systemd/system/comfyui.service:7" and comfy.app == "/srv/comfy"
    assert svc.text == "/srv/comfy/venv/bin/python main.py (+2 arguments)"  # arguments may carry tokens: not shown
    assert found_label(comfy) == "service comfyui.service"
    sd = envs[f"{HOME}/apps/sd/.venv"]  # the user unit names it through bash -c (and the folder scan finds it)
    assert {f.how for f in sd.found} >= {FoundBy.SERVICE, FoundBy.APP}
    invoke = envs["/opt/invoke/.venv"]  # a console script in the venv's bin is the venv's too
    assert FoundBy.SERVICE in [f.how for f in invoke.found] and invoke.in_use


def test_a_unit_reads_percent_percent_h_as_a_literal(tmp_path: Path) -> None:
    """systemd.unit(5): "%%" is a single "%", so "%%h" is the two characters "%h", never the home (V7's finding on
    the env reader; the ExecStart and WorkingDirectory reader took "%h" first and then "%%")."""
    r = tmp_path
    make_env(r, "/srv/%h/venv", "2.5.1+rocm6.2")  # a directory literally named "%h"
    write(r, "etc/systemd/system/odd.service", "[Service]\nExecStart=/srv/%%h/venv/bin/python serve.py\n")
    envs = {e.path: e for e in detect(host_for(r)).python_envs if e.path}
    assert FoundBy.SERVICE in [f.how for f in envs["/srv/%h/venv"].found]
    assert not any(p.startswith("/srv/%/") or p.startswith("/srv/root") for p in envs)


def test_a_bundle_root_is_searched_the_same_way(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    lay_out_home(bundle / "root")
    write(bundle, "lspci.txt", "03:00.0 VGA compatible controller [0300]: AMD [1002:744c]\n")
    fake_process(bundle / "root", 77, "/usr/bin/python3.12", [f"{HOME}/ComfyUI/venv/bin/python", "main.py"],
                 f"{HOME}/ComfyUI")
    envs = {e.path: e for e in detect(BundleHost(bundle)).python_envs if e.path}
    for _name, prefix, torch, _how, _app in LAYOUTS:
        if not prefix.startswith(f"{HOME}/.local"):  # a bundle has no user: pipx/uv under each /home/* all the same
            assert envs[prefix].torch == torch
    assert envs[f"{HOME}/ComfyUI/venv"].in_use


def test_depth_and_counts_are_bounded(tmp_path: Path) -> None:
    make_env(tmp_path, f"{HOME}/a/b/c/venv", "2.5.1+rocm6.2")  # two levels below a folder of the home: not looked at
    make_env(tmp_path, f"{HOME}/a/b/venv", "2.5.1+rocm6.2")  # one level below: found
    envs = {e.path for e in detect(host_for(tmp_path)).python_envs}
    assert f"{HOME}/a/b/venv" in envs and f"{HOME}/a/b/c/venv" not in envs


def test_nothing_is_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lay_out_home(tmp_path)
    host = host_for(tmp_path)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("discovery ran a command")

    monkeypatch.setattr(host, "run", refuse)
    assert len([e for e in detect(host).python_envs if e.torch]) == len(LAYOUTS)


# --------------------------------------------------------------------------- the plan's choice


def _facts(*envs: PythonEnv) -> Facts:
    from wizard.model import Driver, OsInfo

    return Facts(os=OsInfo(id="ubuntu", version="24.04", codename="noble", kernel="6.8.0-48-generic",
                           like=("debian",), arch="x86_64", package_manager="apt", secure_boot=False),
                 gpus=(Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", integrated=False,
                           family="RDNA3", hip_index=0),),
                 driver=Driver(loaded=True, kind="in-tree", kfd_present=True, kfd_accessible=True, user="alice",
                               in_render_group=True, in_video_group=True),
                 python_envs=envs, origin="test")


def test_a_plan_pins_torch_beside_the_environment_the_user_runs(tmp_path: Path) -> None:
    from wizard.planner import ranked_venvs, resolve_plan, venv_roles

    lay_out_home(tmp_path)
    fake_process(tmp_path, 4242, "/usr/bin/python3.10", [f"{HOME}/ComfyUI/venv/bin/python", "main.py"],
                 f"{HOME}/ComfyUI")
    machine = _facts()
    facts = replace(detect(host_for(tmp_path)), os=machine.os, gpus=machine.gpus, driver=machine.driver)
    assert ranked_venvs(facts)[0].path == f"{HOME}/ComfyUI/venv"  # running, beside its application
    plan = resolve_plan("pip-only", facts, state_dir=str(tmp_path / "state"))
    venv = dict(plan.target)["venv"]
    assert venv == f"{HOME}/ComfyUI/venv-pip-only"
    roles = venv_roles(plan, facts)
    assert roles.changes == venv and roles.new and roles.beside == f"{HOME}/ComfyUI/venv"
    assert f"{HOME}/ComfyUI/venv" in roles.left_alone and f"{HOME}/kohya_ss/venv" in roles.left_alone
    assert venv not in roles.left_alone
    assert roles.lines()[0] == f"changes the venv {venv} (new, beside {HOME}/ComfyUI/venv)"


def test_ranking_prefers_torch_then_use_then_an_application() -> None:
    from wizard.model import Found
    from wizard.planner import ranked_venvs

    bare = PythonEnv(path="/h/venvs/x", kind="venv")
    cuda = PythonEnv(path="/h/venvs/cuda", torch="2.5.1+cu124", build="cuda", kind="venv")
    rocm = PythonEnv(path="/h/venvs/rocm", torch="2.5.1+rocm6.2", build="rocm", kind="venv")
    app = PythonEnv(path="/h/ComfyUI/venv", torch="2.5.1+rocm6.2", build="rocm", kind="venv",
                    found=(Found(FoundBy.APP, "/h/ComfyUI", "venv/pyvenv.cfg", "/h/ComfyUI"),))
    running = PythonEnv(path="/h/sd/venv", torch="2.3.1+rocm5.7", build="rocm", kind="venv",
                        found=(Found(FoundBy.PROCESS, "pid 9", "python launch.py", "/h/sd"),))
    order = [e.path for e in ranked_venvs(_facts(bare, cuda, rocm, app, running))]
    assert order == ["/h/sd/venv", "/h/ComfyUI/venv", "/h/venvs/rocm", "/h/venvs/cuda", "/h/venvs/x"]


def test_review_names_what_changes_and_what_is_left_alone(tmp_path: Path) -> None:
    from wizard.planner import resolve_plan
    from wizard.tui.screens.plans import review_head

    env = PythonEnv(path=f"{HOME}/ComfyUI/venv", python_version="3.12", torch="2.5.1+rocm6.2", build="rocm",
                    kind="venv")
    other = PythonEnv(path=f"{HOME}/venvs/old", python_version="3.12", torch="2.3.1+rocm5.7", build="rocm",
                      kind="venv")
    facts = _facts(env, other)
    plan = resolve_plan("pip-only", facts, state_dir=str(tmp_path))
    text = review_head(plan, False, facts).plain
    assert f"Venv: {HOME}/ComfyUI/venv-pip-only  new, beside {HOME}/ComfyUI/venv" in text
    assert f"Left alone: {HOME}/ComfyUI/venv, {HOME}/venvs/old" in text


def test_facts_round_trip_keeps_how_each_env_was_found(home: Path) -> None:
    from wizard.fleet.facts_io import dumps, loads

    facts = detect(host_for(home))
    back = loads(dumps(facts))
    assert back.python_envs == facts.python_envs
    assert all(isinstance(f.how, FoundBy) for e in back.python_envs for f in e.found)


def test_a_pasted_torch_is_found_where_the_paste_says_it() -> None:
    text = ("My setup:\n\n```\n$ python -m torch.utils.collect_env\nPyTorch version: 2.5.1+rocm6.2\n"
            "Is debug build: False\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 6.2.41133-dd7f95766\n```\n")
    facts = detect(None, paste=("thread.txt", text))
    env = next(e for e in facts.python_envs if e.torch)
    assert env.kind == "recorded" and [f.how for f in env.found] == [FoundBy.RECORDED]
    assert env.found[0].where.startswith("thread.txt") and env.found[0].text == "PyTorch version: 2.5.1+rocm6.2"


def test_a_tool_environment_is_never_the_plans_venv(tmp_path: Path) -> None:
    """pipx and uv manage their tools' venvs: a plan makes no sibling in pipx's venvs folder."""
    from wizard.planner import ranked_venvs, resolve_plan, venv_roles

    make_env(tmp_path, f"{HOME}/.local/share/pipx/venvs/openai-whisper", "2.5.1+rocm6.2")
    machine = _facts()
    facts = replace(detect(host_for(tmp_path)), os=machine.os, gpus=machine.gpus, driver=machine.driver)
    assert ranked_venvs(facts) == []
    plan = resolve_plan("pip-only", facts, state_dir=str(tmp_path / "state"))
    assert dict(plan.target)["venv"] == f"{HOME}/rocm-wizard-venv"
    assert venv_roles(plan, facts).left_alone == (f"{HOME}/.local/share/pipx/venvs/openai-whisper",)


@pytest.mark.parametrize("argv,shown", [
    (["/v/bin/python", "main.py", "--api-key", "hf_secret"], "/v/bin/python main.py (+2 arguments)"),
    (["python3", "-u", "-m", "uvicorn", "app:app", "--port", "1"], "python3 -u -m uvicorn (+3 arguments)"),
    (["python3", "-X", "utf8", "-c", "import time; time.sleep(30)"], "python3 -X utf8 -c 'import time; time.sleep(30)'"),
    (["/opt/x/.venv/bin/invokeai-web"], "/opt/x/.venv/bin/invokeai-web"),
])
def test_evidence_shows_what_runs_never_the_arguments_after_it(argv: list[str], shown: str) -> None:
    from wizard.probes.env_discovery import command_head

    assert command_head(argv) == shown


def test_how_an_env_was_found_reads_back_from_its_json(found: dict[str, PythonEnv]) -> None:
    """What a bundle's list of environments can carry, so a replay says how the machine found each."""
    from wizard.facts_json import found_from_json, found_json

    for env in found.values():
        assert found_from_json([found_json(f) for f in env.found]) == env.found
    assert found_from_json([{"how": "nonsense", "where": "x"}, {"how": "app"}, "x", None]) == ()
    assert found_from_json({"how": "app"}) == ()


def test_a_conda_root_is_found_once_with_its_envs(tmp_path: Path) -> None:
    make_env(tmp_path, f"{HOME}/miniforge3", "2.5.1+rocm6.2", conda=True)
    make_env(tmp_path, f"{HOME}/miniforge3/envs/sd", "2.6.0+rocm6.2.4", conda=True)
    make_env(tmp_path, "/opt/conda", "2.7.1+rocm6.3", conda=True)  # a system-wide conda
    envs = {e.path: e for e in detect(host_for(tmp_path)).python_envs}
    assert [(f.how, f.where) for f in envs[f"{HOME}/miniforge3"].found] == [(FoundBy.CONDA, f"{HOME}/miniforge3")]
    assert envs[f"{HOME}/miniforge3/envs/sd"].torch == "2.6.0+rocm6.2.4"
    assert [f.how for f in envs["/opt/conda"].found] == [FoundBy.CONDA] and envs["/opt/conda"].kind == "conda"


@given(st.lists(st.sampled_from(["ExecStart=/opt/app/venv/bin/python -m app", "  ExecStart=/usr/bin/true",
                                 "#ExecStart=/opt/x/bin/python", "ExecStartPre=/bin/mkdir -p /run/x",
                                 "Environment=A=ExecStart=/x", "ExecStart=", "\tExecStart=-/srv/e/bin/app\r",
                                 "[Service]", "", "Description=ExecStart= here"]), max_size=12),
       st.sampled_from(["\n", "\r\n"]))
def test_exec_start_lines_are_every_line_that_begins_with_the_word(lines: list[str], sep: str) -> None:
    from wizard.probes.env_discovery import _exec_start_lines

    text = sep.join(lines)
    assert _exec_start_lines(text) == [ln.strip() for ln in text.splitlines() if ln.lstrip().startswith("ExecStart=")]
