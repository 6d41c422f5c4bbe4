"""wizard.downloads without a network: listings parsed, files picked by version and tag, the wheelhouse's
place and pruning, the pip step rewritten to download by hash (or left as it was, with a note)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from wizard.downloads import pin as pin_mod
from wizard.downloads.fetch import parse_files_json, requirements_text, files_json, DownloadError
from wizard.downloads.closure import Closure
from wizard.downloads.listing import ListingError, RemoteFile, parse_listing, pick, supported_tags
from wizard.downloads.wheelhouse import cache_dir, contents, prune
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace

pytestmark = pytest.mark.unit

SHA = "ab" * 32
PAGE = "https://download.pytorch.org/whl/rocm6.2/torch/"


def test_json_listing_urls_hashes_sizes_and_yanked() -> None:
    body = json.dumps({"meta": {"api-version": "1.1"}, "name": "torch", "files": [
        {"filename": "torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl", "url": "../torch-2.5.1%2Brocm6.2-cp312.whl",
         "hashes": {"sha256": SHA}, "size": 123},
        {"filename": "torch-2.5.0+rocm6.2-cp312-cp312-linux_x86_64.whl", "url": "x.whl", "hashes": {}, "yanked": True},
        {"nonsense": 1}]}).encode()
    links = parse_listing(body, "application/vnd.pypi.simple.v1+json", PAGE)
    assert [(lk.url, lk.sha256, lk.size, lk.yanked) for lk in links] == [
        ("https://download.pytorch.org/whl/rocm6.2/torch-2.5.1%2Brocm6.2-cp312.whl", SHA, 123, False),
        ("https://download.pytorch.org/whl/rocm6.2/torch/x.whl", None, None, True)]


def test_html_listing_reads_the_sha256_fragment_and_unquotes_the_name() -> None:
    body = (f'<html><body><a href="../torch-2.5.1%2Brocm6.2-cp312-cp312-linux_x86_64.whl#sha256={SHA}">t</a>'
            '<a href="/whl/torch-2.5.1-cp312-cp312-linux_x86_64.whl" data-yanked="">y</a></body></html>').encode()
    links = parse_listing(body, "text/html", PAGE)
    assert links[0].filename == "torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl"
    assert links[0].sha256 == SHA and links[0].url.endswith("torch-2.5.1%2Brocm6.2-cp312-cp312-linux_x86_64.whl")
    assert links[1].yanked and links[1].url == "https://download.pytorch.org/whl/torch-2.5.1-cp312-cp312-linux_x86_64.whl"


def test_a_broken_json_listing_is_one_line() -> None:
    with pytest.raises(ListingError, match="not a PEP 691 listing"):
        parse_listing(b"{oops", "application/vnd.pypi.simple.v1+json", PAGE)


def _links(*names: str, sha: str | None = SHA) -> list:
    body = "".join(f'<a href="{n}#sha256={sha}">{n}</a>' if sha else f'<a href="{n}">{n}</a>' for n in names)
    return parse_listing(body.encode(), "text/html", PAGE)


def test_pick_takes_the_pin_for_this_python_and_the_most_specific_tag() -> None:
    links = _links("torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl",
                   "torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl",
                   "torch-2.5.1+rocm6.2-cp312-cp312-manylinux_2_28_x86_64.whl",
                   "torch-2.6.0+rocm6.2-cp312-cp312-linux_x86_64.whl",
                   "torch-2.5.1+rocm6.2-cp312-cp312-win_amd64.whl")
    tags = supported_tags("3.12")
    got = pick(links, Requirement("torch==2.5.1"), tags)
    assert got.filename == "torch-2.5.1+rocm6.2-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert pick(links, Requirement("torch"), tags).filename.startswith("torch-2.6.0")
    pre = _links("torch-2.7.0rc1-cp312-cp312-linux_x86_64.whl", "torch-2.6.0-cp312-cp312-linux_x86_64.whl")
    assert pick(pre, Requirement("torch"), tags).filename.startswith("torch-2.6.0-")  # as pip: no pre-release
    assert pick(pre, Requirement("torch>=2.7.0rc1"), tags).filename.startswith("torch-2.7.0rc1")
    assert pick(pre[:1], Requirement("torch"), tags).filename.startswith("torch-2.7.0rc1")  # nothing else fits
    # the extras a TheRock requirement carries do not change the file
    assert pick(links, Requirement("torch[device-gfx1100]==2.5.1"), tags) == got


def test_pick_says_why_nothing_fits() -> None:
    tags = supported_tags("3.12")
    with pytest.raises(ListingError, match="no wheel for this Python"):
        pick(_links("torch-2.5.1-cp39-cp39-linux_x86_64.whl"), Requirement("torch==2.5.1"), tags)
    with pytest.raises(ListingError, match="publishes no sha256"):
        pick(_links("torch-2.5.1-cp312-cp312-linux_x86_64.whl", sha=None), Requirement("torch==2.5.1"), tags)
    free = supported_tags("3.13t")
    assert pick(_links("torch-2.5.1-cp313-cp313-linux_x86_64.whl", "torch-2.5.1-cp313-cp313t-linux_x86_64.whl"),
                Requirement("torch==2.5.1"), free).filename == "torch-2.5.1-cp313-cp313t-linux_x86_64.whl"
    with pytest.raises(ListingError, match="not a Python version"):
        supported_tags("three")


def test_listings_carry_requires_python_and_pep658_core_metadata() -> None:
    body = json.dumps({"files": [
        {"filename": "a-1.0-py3-none-any.whl", "url": "a.whl", "hashes": {"sha256": SHA}, "requires-python": ">=3.13",
         "core-metadata": {"sha256": "CD" * 32}},
        {"filename": "a-0.9-py3-none-any.whl", "url": "b.whl", "hashes": {"sha256": SHA}, "dist-info-metadata": True},
        {"filename": "a-0.8-py3-none-any.whl", "url": "c.whl", "hashes": {"sha256": SHA}, "core-metadata": False}]}).encode()
    links = parse_listing(body, "application/vnd.pypi.simple.v1+json", PAGE)
    assert [(lk.requires_python, lk.core_metadata) for lk in links] == [(">=3.13", "cd" * 32), (None, ""), (None, None)]
    html = (f'<a href="a-1.0-py3-none-any.whl#sha256={SHA}" data-requires-python="&gt;=3.13" '
            f'data-core-metadata="sha256={"cd" * 32}">a</a><a href="a-0.9-py3-none-any.whl#sha256={SHA}" '
            'data-dist-info-metadata="true">b</a>').encode()
    assert [(lk.requires_python, lk.core_metadata) for lk in parse_listing(html, "text/html", PAGE)] == [
        (">=3.13", "cd" * 32), (None, "")]
    tags = supported_tags("3.12")
    assert pick(links, Requirement("a"), tags, "3.12").filename == "a-0.9-py3-none-any.whl"  # 1.0 needs 3.13
    assert pick(links, Requirement("a"), tags, "3.13").filename == "a-1.0-py3-none-any.whl"
    assert pick(links, Requirement("a"), tags, "3.13", skip=["a-1.0-py3-none-any.whl"]).filename.startswith("a-0.9")


def test_a_source_only_package_is_named_as_such() -> None:
    with pytest.raises(ListingError, match="serves only a source distribution"):
        pick(_links("rocm-7.1.1.tar.gz"), Requirement("rocm[libraries]==7.1.1"), supported_tags("3.12"))


def test_metadata_must_be_the_wheels_own() -> None:
    from wizard.downloads.metadata import parse

    text = (b"Metadata-Version: 2.1\nName: Demo_Torch\nVersion: 2.5.1+rocm6.2\nRequires-Python: >=3.9\n"
            b"Provides-Extra: Device_GFX1100\nRequires-Dist: filelock\nRequires-Dist: rocm[libraries]==7.1.*; "
            b'extra == "device-gfx1100"\n\nlong description\nRequires-Dist: not-a-header\n')
    meta = parse(text, "demo_torch-2.5.1+rocm6.2-cp312-cp312-linux_x86_64.whl")
    assert meta.requires_dist == ("filelock", 'rocm[libraries]==7.1.*; extra == "device-gfx1100"')
    assert meta.requires_python == ">=3.9" and meta.provides_extra == ("device-gfx1100",)
    with pytest.raises(ListingError, match="not the wheel's own"):
        parse(text, "demo_torch-2.5.0-cp312-cp312-linux_x86_64.whl")


def test_files_json_round_trip_and_hashed_requirements(tmp_path: Path) -> None:
    files = (RemoteFile("torch", "torch-2.5.1-cp312-cp312-linux_x86_64.whl", "http://x/t.whl", SHA, 9),)
    assert parse_files_json(files_json(files)) == files
    assert requirements_text(files) == f"torch==2.5.1 --hash=sha256:{SHA}\n"
    with pytest.raises(DownloadError):
        parse_files_json("[[1, 2]]")


def test_cache_dir_precedence() -> None:
    assert cache_dir({"ROCM_WIZARD_CACHE_DIR": "/tmp/c"}, is_root=True) == Path("/tmp/c")
    assert cache_dir({}, is_root=True) == Path("/var/cache/rocm-wizard")
    assert cache_dir({"XDG_CACHE_HOME": "/x"}, is_root=False) == Path("/x/rocm-wizard")
    assert cache_dir({"HOME": "/home/u"}, is_root=False) == Path("/home/u/.cache/rocm-wizard")
    assert cache_dir({}, home="/home/v") == Path("/home/v/.cache/rocm-wizard")
    assert cache_dir({"SUDO_USER": "root"}, is_root=True) == Path("/var/cache/rocm-wizard")
    assert cache_dir({"SUDO_USER": "no-such-user-here"}, is_root=True) == Path("/var/cache/rocm-wizard")
    import pwd

    other = next(u for u in pwd.getpwall() if u.pw_name != "root")  # the user sudo was run by
    assert cache_dir({"SUDO_USER": other.pw_name}, is_root=True) == Path(other.pw_dir) / ".cache" / "rocm-wizard"


def test_prune_all_or_older_than(tmp_path: Path) -> None:
    (tmp_path / "old.whl").write_bytes(b"1" * 10)
    (tmp_path / "new.whl.part").write_bytes(b"2" * 5)
    os.utime(tmp_path / "old.whl", (1000, 1000))
    assert [(f.name, f.size, f.partial) for f in contents(tmp_path)] == [("new.whl.part", 5, True), ("old.whl", 10, False)]
    import fcntl

    with open(tmp_path / "new.whl.part", "ab") as held:  # a running download holds its .part
        fcntl.flock(held, fcntl.LOCK_EX)
        assert [f.name for f in prune(tmp_path)] == ["old.whl"]
    (tmp_path / "old.whl").write_bytes(b"1" * 10)
    os.utime(tmp_path / "old.whl", (1000, 1000))
    gone = prune(tmp_path, older_than_days=1)
    assert [f.name for f in gone] == ["old.whl"]
    assert [f.name for f in prune(tmp_path)] == ["new.whl.part"]
    assert contents(tmp_path) == () and contents(tmp_path / "none") == ()


def _plan() -> ResolvedPlan:
    py = "/home/u/venv/bin/python"
    check = (py, "-c", "assert")
    install = Action(argv=(py, "-m", "pip", "install", "--index-url", "https://idx/whl/rocm6.2", "torch==2.5.1",
                           "torchvision==0.20.1"), as_user=True, check=check, changes=("venv:/home/u/venv",),
                     timeout=7200)
    step = StepPlan(kind="pip_pin", title="pin", actions=(Action(argv=(py, "-m", "pip", "uninstall")), install),
                    params=(("venv", "/home/u/venv"),))
    return ResolvedPlan(name="pip-only", title="t", why="w", target=(("torch", "2.5.1"),), steps=(step,))


def _resolver(index: str, reqs, python: str) -> tuple[RemoteFile, ...]:
    assert (index, list(reqs), python) == ("https://idx/whl/rocm6.2", ["torch==2.5.1", "torchvision==0.20.1"], "3.12")
    return (RemoteFile("torch", "torch-2.5.1-cp312-cp312-linux_x86_64.whl", "https://idx/t.whl", SHA, 3 << 30),
            RemoteFile("torchvision", "torchvision-0.20.1-cp312-cp312-linux_x86_64.whl", "https://idx/v.whl", SHA, 1 << 20))


def _closure(index: str, reqs, python: str, installed) -> Closure:
    files = _resolver(index, reqs, python)
    dep = RemoteFile("filelock", "filelock-3.16.1-py3-none-any.whl", "https://idx/f.whl", SHA, 16 << 10)
    return Closure((*files, dep), tuple(sorted(installed.items())))


def _tangled(index: str, reqs, python: str, installed) -> Closure:
    raise ListingError("sympy 1.14.0 was picked (torch 2.5.1 needs sympy), but x needs sympy<1.14; settling that "
                       "needs backtracking")


def test_pin_plan_downloads_the_closure_by_hash_then_pip_installs_exactly_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)
    monkeypatch.delenv("ROCM_WIZARD_CACHE_DIR", raising=False)
    rp = pin_mod.pin_plan(_plan(), "3.12", "/usr/bin/python3", "/home/u", _resolver, _closure)
    step = rp.steps[0]
    argvs = [a.argv for a in step.actions]
    wh = "/home/u/.cache/rocm-wizard/wheelhouse"
    assert argvs[1][:6] == ("/usr/bin/python3", "-m", "wizard.downloads", "fetch", "--dest", wh)
    req = argvs[1][7]
    # pip's own resolver over exactly these files: no --no-deps, no index, no unpinned install after it
    assert argvs[2] == ("/home/u/venv/bin/python", "-m", "pip", "install", "--isolated", "--no-input", "--no-index",
                        "--find-links", wh, "--require-hashes", "-r", req)
    assert len(argvs) == 3
    assert step.actions[2].env == _plan().steps[0].actions[1].env
    before = _plan().steps[0].actions[1].check
    assert step.actions[1].check == step.actions[2].check == before  # a venv with the stack downloads nothing
    assert step.param("download_bytes") == (3 << 30) + (1 << 20) + (16 << 10)
    assert len(step.param("downloads")) == 3 and step.param("wheelhouse") == wh
    assert dict(rp.target)["download"] == "3.0 GiB"
    note = next(n for n in step.notes if n.startswith("downloads 3 file(s)"))
    assert "2 requirement(s) and 1 dependencies" in note and "may move a dependency" in note


def test_a_closure_that_cannot_be_settled_pins_the_requirements_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)
    monkeypatch.delenv("ROCM_WIZARD_CACHE_DIR", raising=False)
    rp = pin_mod.pin_plan(_plan(), "3.12", "/usr/bin/python3", "/home/u", _resolver, _tangled)
    step = rp.steps[0]
    argvs = [a.argv for a in step.actions]
    wh = "/home/u/.cache/rocm-wizard/wheelhouse"
    assert argvs[2] == ("/home/u/venv/bin/python", "-m", "pip", "install", "--isolated", "--no-input", "--no-index",
                        "--find-links", wh, "--require-hashes", "--no-deps", "-r", argvs[1][7])
    assert "--index-url" in argvs[3]  # the pins' dependencies, unpinned
    assert step.actions[3].check == ("/home/u/venv/bin/python", "-m", "pip", "check")  # not the stack's check:
    # it passes after the --no-deps install, and would skip the dependencies
    assert step.param("download_bytes") == (3 << 30) + (1 << 20)
    lines = pin_mod.review_lines(rp)
    assert len(lines) == 2 and lines[1].startswith(pin_mod.DEPS_NOT_PINNED) and "backtracking" in lines[1]


def test_pin_plan_says_so_when_the_listing_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)

    def down(index: str, reqs, python: str, installed=None) -> tuple[RemoteFile, ...]:
        raise ListingError("https://idx/whl/rocm6.2/torch/: cannot be reached (timed out)")

    before = _plan()
    rp = pin_mod.pin_plan(before, "3.12", "python3", "/home/u", down, down)
    assert rp.steps[0].actions == before.steps[0].actions and "download" not in dict(rp.target)
    assert any("could not be read at plan time" in n and "cannot be reached" in n for n in rp.steps[0].notes)
    unknown = pin_mod.pin_plan(before, None, "python3", "/home/u", down, down)
    assert any("Python version is unknown" in n for n in unknown.steps[0].notes)
    monkeypatch.setenv(pin_mod.OFF_VAR, "1")
    assert pin_mod.pin_plan(before, "3.12", "python3", "/home/u", down, down) == before


def test_what_the_venv_keeps_is_offered_to_the_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.model import PythonEnv

    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)
    seen: list[dict[str, str]] = []

    def spy(index: str, reqs, python: str, installed) -> Closure:
        seen.append(dict(installed))
        return _closure(index, reqs, python, installed)

    plan = _plan()
    step = replace(plan.steps[0], actions=(Action(argv=("/home/u/venv/bin/python", "-m", "pip", "uninstall", "-y",
                                                        "torch", "torchvision")), plan.steps[0].actions[1]))
    env = PythonEnv(path="/home/u/venv", torch="2.4.0", torchvision="0.19.0", torchaudio="2.4.0", numpy="1.26.4")
    rp = pin_mod.pin_plan(replace(plan, steps=(step,)), "3.12", "python3", "/home/u", _resolver, spy,
                          envs=(PythonEnv(path="/other", numpy="2.0.0"), env))
    # the step uninstalls torch and torchvision: only what stays counts
    assert seen == [{"torchaudio": "2.4.0", "numpy": "1.26.4"}]
    assert any("kept as installed: numpy 1.26.4, torchaudio 2.4.0" in n for n in rp.steps[0].notes)
    fresh = replace(step, params=(*step.params, ("new_venv", True)))
    assert pin_mod.installed_kept(fresh, (env,)) == {}


def test_root_and_env_wheelhouse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROCM_WIZARD_CACHE_DIR", raising=False)
    assert pin_mod.wheelhouse_for("/root") == "/var/cache/rocm-wizard/wheelhouse"
    assert pin_mod.wheelhouse_for(None) == "/var/cache/rocm-wizard/wheelhouse"
    monkeypatch.setenv("ROCM_WIZARD_CACHE_DIR", "/tmp/c/")
    assert pin_mod.wheelhouse_for("/home/u") == "/tmp/c/wheelhouse"


def test_the_plan_question_says_the_size_or_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)
    pinned = pin_mod.pin_plan(_plan(), "3.12", "python3", "/home/u", _resolver, _closure)
    assert pin_mod.review_lines(pinned) == [
        "downloads 3.0 GiB into the wheelhouse, each file pinned to its published sha256 (a kill or a dropped "
        "link resumes; a file already there is not fetched again)"]

    def down(index: str, reqs, python: str, installed=None) -> tuple[RemoteFile, ...]:
        raise ListingError("https://idx/whl/rocm6.2/torch/: HTTP 503")

    lines = pin_mod.review_lines(pin_mod.pin_plan(_plan(), "3.12", "python3", "/home/u", down, down))
    assert len(lines) == 1 and lines[0].startswith(pin_mod.NOT_PINNED) and "HTTP 503" in lines[0]


def test_the_ansible_export_downloads_in_bash_without_the_wizard_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.fleet.export import role_tasks

    monkeypatch.delenv(pin_mod.OFF_VAR, raising=False)
    pinned = pin_mod.pin_plan(_plan(), "3.12", "python3", "/home/u", _resolver, _closure)
    tasks = [t for block in role_tasks(pinned, "r") for t in block.get("block", [block])]
    shell = [t for t in tasks if "ansible.builtin.shell" in t]
    assert len(shell) == 1
    cmd = shell[0]["ansible.builtin.shell"]["cmd"]
    assert "wget -c" in cmd and "sha256sum -c" in cmd and "https://idx/t.whl" in cmd
    assert "https://idx/f.whl" in cmd  # a dependency of the closure: the controller's copy loops over it too
    copy = next(t for t in tasks if "ansible.builtin.copy" in t)
    assert "filelock-3.16.1-py3-none-any.whl" in str(copy["loop"])
    assert not any("wizard.downloads" in str(t) for t in tasks)


def test_progress_says_bytes_rate_and_time_left_once_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from wizard.downloads import fetch

    clock = iter([100.0, 100.5, 102.0, 104.0])
    monkeypatch.setattr(fetch.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    p = fetch.Progress(out)
    f = RemoteFile("torch", "torch.whl", "http://x/t.whl", SHA, 100 << 20)
    p.start(f, 20 << 20)  # resumed at 20 MiB
    p.update(21 << 20)  # half a second: nothing yet
    p.update(40 << 20)  # 20 MiB in 2 s: 10 MiB/s, 60 MiB left: 6 s
    p.update(100 << 20, final=True)
    assert out.getvalue().splitlines() == [
        "download torch.whl: 100.0 MiB, resuming at 20.0 MiB",
        "  torch.whl: 40.0 MiB of 100.0 MiB (40%), 10.0 MiB/s, 0m06s left",
        "  torch.whl: 100.0 MiB of 100.0 MiB (100%), 20.0 MiB/s"]


def test_an_unreachable_index_is_asked_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.error

    from wizard.downloads import listing, remote

    calls: list[str] = []

    def refuse(req, timeout: float):  # noqa: ANN001, ANN202 - urlopen's shape
        calls.append(req.full_url)
        raise urllib.error.URLError("Name or service not known")

    listing.forget()
    monkeypatch.setattr(remote.urllib.request, "urlopen", refuse)
    for _ in range(3):  # three plans of one recommend()
        with pytest.raises(ListingError, match="cannot be reached"):
            listing.resolve("https://download.example/whl/rocm6.2", ["torch==2.5.1", "torchvision"], "3.12")
    assert calls == ["https://download.example/whl/rocm6.2/torch/"]
    listing.forget()
