"""The whole closure of a pip step resolved at plan time, against a 127.0.0.1 index (the rehearsal mirror's
server, which honours Range and counts the bytes it sends): fake wheels with real METADATA read through range
requests (a small fraction of each wheel) or PEP 658 metadata, markers false for the target left out,
extras (nested ones included) followed, a conflict named, an installed dependency kept, a server without
Range support refused, and real pip installing exactly the resolved closure with --require-hashes into a
fresh venv (nothing beyond 127.0.0.1)."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wizard.downloads import pin as pin_mod
from wizard.downloads.closure import marker_env, resolve_closure
from wizard.downloads.fetch import files_json, main as fetch_main
from wizard.downloads.listing import ListingError, forget
from wizard.mirror.server import MirrorServer
from wizard.mirror.simple_index import write_index
from wizard.mirror.wheels import WheelSpec, build_wheel
from wizard.model import Action, StepPlan

pytestmark = pytest.mark.integration

TAG = "py3-none-any"
BLOB = 2 << 20  # random, incompressible: each wheel is a few MiB, its METADATA a few hundred bytes

# name, version, requires_dist, provides_extra, requires_python
PROJECTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], str | None], ...] = (
    ("demo-torch", "2.5.1", ("demo-filelock", "demo-sympy>=1.13", 'demo-winonly; sys_platform == "win32"',
                             'demo-oldpy; python_version < "3.9"', "demo-rocm[libraries]==7.1.*",
                             'demo-torch-device-gfx1100==2.5.1; extra == "device-gfx1100"'), ("device-gfx1100",), None),
    ("demo-torch", "2.4.0", ("demo-filelock",), (), None),
    ("demo-vision", "0.20.1", ("demo-torch==2.5.1", "demo-filelock>=3"), (), None),
    ("demo-filelock", "3.16.1", (), (), None),
    ("demo-filelock", "3.10.0", (), (), None),
    ("demo-sympy", "1.13.3", ("demo-mpmath<1.4,>=1.1",), (), None),
    ("demo-sympy", "1.14.0", ("demo-mpmath<1.4,>=1.1",), (), ">=3.13"),  # the target is 3.12
    ("demo-mpmath", "1.3.0", (), (), None),
    ("demo-mpmath", "1.4.0", (), (), None),
    ("demo-rocm", "7.1.1", ("demo-rocm-core==7.1.1", 'demo-rocm-libraries==7.1.1; extra == "libraries"'),
     ("libraries",), None),
    ("demo-rocm-core", "7.1.1", (), (), None),
    ("demo-rocm-libraries", "7.1.1", (), (), None),
    ("demo-torch-device-gfx1100", "2.5.1", (), (), None),
    ("demo-winonly", "1.0", (), (), None),
    ("demo-oldpy", "1.0", (), (), None),
)
CLOSURE = ["demo_torch-2.5.1", "demo_filelock-3.16.1", "demo_sympy-1.13.3", "demo_rocm-7.1.1",
           "demo_torch_device_gfx1100-2.5.1", "demo_mpmath-1.3.0", "demo_rocm_core-7.1.1",
           "demo_rocm_libraries-7.1.1"]


def _build(d: Path, projects=PROJECTS, *, many_files: bool = True, core_metadata: bool = False) -> Path:
    rng = random.Random(1)
    for name, version, requires, extras, rp in projects:
        pkg = name.replace("-", "_")
        files = [(f"{pkg}/__init__.py", f"V = {version!r}\n".encode()), (f"{pkg}/blob.bin", rng.randbytes(BLOB))]
        if many_files and name == "demo-torch":  # a central directory larger than the first range read
            files += [(f"{pkg}/kernels/k{i:05d}_{'x' * 40}.dat", b"k") for i in range(1500)]
        build_wheel(WheelSpec(name, version, (TAG,), tuple(files), name, rp, requires, extras), TAG, d)
    write_index(d, core_metadata=core_metadata)
    return d


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    forget()
    yield _build(tmp_path / "whl")
    forget()


def _stems(files) -> list[str]:
    return [f.filename.rsplit("-", 3)[0] for f in files]


def test_markers_extras_and_nested_extras_read_through_a_small_fraction_of_each_wheel(index: Path) -> None:
    with MirrorServer(index.parent, idle_timeout=30) as srv:
        got = resolve_closure(f"{srv.base_url}/whl", ["demo-torch[device-gfx1100]==2.5.1"], "3.12")
        assert _stems(got.files) == CLOSURE and got.kept == ()
        for f in got.files:  # sizes from the Content-Range of the range answers, no HEAD needed
            assert f.size == (index / f.filename).stat().st_size
        assert not any(r.method == "HEAD" for r in srv.requests)
        wheels = [r for r in srv.requests if r.path.endswith(".whl")]
        assert {r.status for r in wheels} == {206}
        total = sum((index / f.filename).stat().st_size for f in got.files)
        # the torch wheel's central directory is larger than the first range: three ranges for it, one for others
        assert len(wheels) <= len(got.files) + 2
        assert srv.bytes_sent < 0.08 * total, (srv.bytes_sent, total)
        asked = len(srv.requests)
        # read once per process: a second plan asks nothing; without the extra, no device package
        plain = resolve_closure(f"{srv.base_url}/whl", ["demo-torch==2.5.1"], "3.12")
        assert len(srv.requests) == asked
        assert "demo_torch_device_gfx1100-2.5.1" not in _stems(plain.files)
        # an older Python: the marker python_version < "3.9" holds, and newer sympy's Requires-Python is no bar
        old = resolve_closure(f"{srv.base_url}/whl", ["demo-torch==2.5.1"], "3.8")
        assert "demo_oldpy-1.0" in _stems(old.files) and "demo_winonly-1.0" not in _stems(old.files)


def test_pep658_metadata_is_used_and_checked_when_the_listing_gives_it(tmp_path: Path) -> None:
    forget()
    d = _build(tmp_path / "whl", many_files=False, core_metadata=True)
    with MirrorServer(tmp_path, idle_timeout=30) as srv:
        got = resolve_closure(f"{srv.base_url}/whl", ["demo-vision"], "3.12")
        assert _stems(got.files)[:3] == ["demo_vision-0.20.1", "demo_torch-2.5.1", "demo_filelock-3.16.1"]
        # no byte of any wheel (their sizes from a HEAD: this listing has none)
        assert not [r for r in srv.requests if r.path.endswith(".whl") and r.method == "GET"]
        assert len([r for r in srv.requests if r.path.endswith(".whl.metadata")]) == len(got.files)
        # a .metadata that is not the one the listing hashed: refused, naming the file
        forget()
        meta = d / "demo_filelock-3.16.1-py3-none-any.whl.metadata"
        meta.write_bytes(meta.read_bytes() + b"Requires-Dist: demo-evil\n")
        with pytest.raises(ListingError, match=r"demo_filelock-3\.16\.1-py3-none-any\.whl\.metadata: sha256 .* does "
                                               "not match"):
            resolve_closure(f"{srv.base_url}/whl", ["demo-vision"], "3.12")
    forget()


def test_a_server_without_range_support_is_refused_at_once(index: Path) -> None:
    with MirrorServer(index.parent, idle_timeout=30, ranges=False) as srv:
        with pytest.raises(ListingError, match="does not honour HTTP range requests"):
            resolve_closure(f"{srv.base_url}/whl", ["demo-filelock"], "3.12")
        # the plan pins the requirements themselves and says why the dependencies are not
        forget()
        step, size = pin_mod.pin_step(_step(f"{srv.base_url}/whl", "demo-vision==0.20.1"), "3.12", "python3", "/home/u")
        assert size is not None
        assert step.actions[1].argv[3] == "fetch" and len(step.actions) == 4
        assert "--no-deps" in step.actions[2].argv and "--index-url" in step.actions[3].argv
        assert any(n.startswith(pin_mod.DEPS_NOT_PINNED) and "range requests" in n for n in step.notes)


def test_conflicts_are_named_instead_of_backtracked(tmp_path: Path) -> None:
    forget()
    d = _build(tmp_path / "whl", (
        ("demo-a", "1.0", ("demo-c==1.0",), (), None), ("demo-b", "1.0", ("demo-c==2.0",), (), None),
        ("demo-c", "1.0", (), (), None), ("demo-c", "2.0", (), (), None),
        ("demo-d", "1.0", ("demo-e",), (), None), ("demo-e", "1.0", ("demo-c==1.0",), (), None)), many_files=False)
    with MirrorServer(tmp_path, idle_timeout=30) as srv:
        url = f"{srv.base_url}/whl"
        with pytest.raises(ListingError, match=r"no file of demo-c takes every specifier asked of it: demo-a 1\.0 "
                                               r"needs demo-c==1\.0; demo-b 1\.0 needs demo-c==2\.0"):
            resolve_closure(url, ["demo-a", "demo-b"], "3.12")
        # a level later: demo-c 2.0 was picked for the plan, demo-e (under demo-d) needs 1.0
        with pytest.raises(ListingError, match=r"demo-c 2\.0 was picked \(the plan needs demo-c\), but demo-e 1\.0 "
                                               r"needs demo-c==1\.0; settling that needs backtracking"):
            resolve_closure(url, ["demo-c", "demo-d"], "3.12")
        assert _stems(resolve_closure(url, ["demo-c==1.0", "demo-d"], "3.12").files) == [
            "demo_c-1.0", "demo_d-1.0", "demo_e-1.0"]
    assert d.is_dir()
    forget()


def test_an_installed_dependency_that_fits_is_kept_and_not_downloaded(index: Path) -> None:
    with MirrorServer(index.parent, idle_timeout=30) as srv:
        url = f"{srv.base_url}/whl"
        got = resolve_closure(url, ["demo-vision"], "3.12", installed={"demo-filelock": "3.10.0"})
        assert got.kept == (("demo-filelock", "3.10.0"),) and "demo_filelock-3.16.1" not in _stems(got.files)
        # a requirement itself is never kept (the step reinstalls it); an installed version outside the specifier
        # is replaced
        top = resolve_closure(url, ["demo-filelock"], "3.12", installed={"demo-filelock": "3.10.0"})
        assert _stems(top.files) == ["demo_filelock-3.16.1"] and top.kept == ()
        low = resolve_closure(url, ["demo-vision"], "3.12", installed={"demo-filelock": "2.0"})
        assert "demo_filelock-3.16.1" in _stems(low.files) and low.kept == ()


def test_marker_environment_is_the_target_not_this_interpreter() -> None:
    env = marker_env("3.13t")
    assert env["python_version"] == "3.13" and env["python_full_version"] == "3.13.0"
    assert env["sys_platform"] == "linux" and env["platform_machine"] == "x86_64"
    assert marker_env("3.10", "aarch64")["platform_machine"] == "aarch64"


def _step(index_url: str, *reqs: str, venv: str = "/home/u/venv") -> StepPlan:
    py = f"{venv}/bin/python"
    install = Action(argv=(py, "-m", "pip", "install", "--isolated", "--no-input", "--index-url", index_url, *reqs),
                     as_user=True, check=(py, "-c", "assert"), changes=(f"venv:{venv}",), timeout=7200,
                     env=(("PIP_CONFIG_FILE", "/dev/null"),))
    return StepPlan(kind="pip_pin", title="pin", params=(("venv", venv),),
                    actions=(Action(argv=(py, "-m", "pip", "uninstall", "-y", "demo-torch")), install))


def test_pip_installs_exactly_the_resolved_closure_with_require_hashes(index: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's own actions, for real: the fetch, then pip with --no-index --require-hashes and no
    --no-deps into a fresh venv that already has a fitting demo-filelock (kept, not downloaded)."""
    venv = tmp_path / "venv"
    # pip's cache and configuration stay in the temporary directory
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PIP_CONFIG_FILE": "/dev/null"}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    py = str(venv / "bin" / "python")
    old = index / "demo_filelock-3.10.0-py3-none-any.whl"
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-index", "--no-deps", str(old)], check=True, env=env)
    monkeypatch.setenv("ROCM_WIZARD_CACHE_DIR", str(tmp_path / "cache"))
    with MirrorServer(index.parent, idle_timeout=60) as srv:
        step = _step(f"{srv.base_url}/whl", "demo-vision==0.20.1", "demo-torch==2.5.1", venv=str(venv))
        step, size = pin_mod.pin_step(step, f"{sys.version_info[0]}.{sys.version_info[1]}", sys.executable, None,
                                      installed={"demo-filelock": "3.10.0"})
        assert size is not None
        assert len(step.actions) == 3, [a.argv for a in step.actions]  # uninstall, fetch, install: no unpinned pip
        fetch, exact = step.actions[1], step.actions[2]
        assert "--no-deps" not in exact.argv and "--require-hashes" in exact.argv and "--no-index" in exact.argv
        note = next(n for n in step.notes if n.startswith("downloads "))
        assert "kept as installed: demo-filelock 3.10.0" in note and "may move a dependency" in note
        names = {f[0] for f in step.param("downloads")}
        assert not any(n.startswith("demo_filelock") for n in names)
        assert step.param("download_bytes") == sum(f[3] for f in step.param("downloads"))
        srv.clear_log()
        assert fetch_main(list(fetch.argv[4:])) == 0
        assert sorted(srv.fetched()) == sorted(f"/whl/{n}" for n in names)  # each whole file once, with its hash
    req = fetch.argv[fetch.argv.index("--requirements") + 1]
    done = subprocess.run([py, *exact.argv[1:]], capture_output=True, text=True, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    freeze = subprocess.run([py, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True,
                            env=env).stdout
    # by name and version (what a backup's pip freeze restores), not "name @ file://..."; the kept one was
    # installed from its file before the plan
    assert "demo_filelock-3.10.0" in freeze
    for want in ("demo-vision==0.20.1", "demo-torch==2.5.1", "demo-sympy==1.13.3",
                 "demo-mpmath==1.3.0", "demo-rocm==7.1.1", "demo-rocm-core==7.1.1", "demo-rocm-libraries==7.1.1"):
        assert want in freeze.replace("_", "-"), freeze
    assert "demo-winonly" not in freeze.replace("_", "-")
    assert subprocess.run([py, "-m", "pip", "check"], capture_output=True, check=False, env=env).returncode == 0
    # pip itself proves the closure complete: without one dependency's line it refuses (no index to reach)
    lines = Path(req).read_text().splitlines()
    short = tmp_path / "short.txt"
    short.write_text("".join(f"{x}\n" for x in lines if not x.startswith("demo-mpmath==")))
    assert len(short.read_text().splitlines()) == len(lines) - 1
    subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "demo-mpmath", "demo-sympy"], check=True, env=env)
    bad = subprocess.run([py, *exact.argv[1:-1], str(short)], capture_output=True, text=True, check=False, env=env)
    assert bad.returncode != 0 and "demo-mpmath" in bad.stderr.replace("_", "-"), bad.stderr


def test_files_json_of_a_closure_feeds_the_fetch(index: Path, tmp_path: Path) -> None:
    with MirrorServer(index.parent, idle_timeout=30) as srv:
        got = resolve_closure(f"{srv.base_url}/whl", ["demo-sympy"], "3.12")
        assert fetch_main(["--dest", str(tmp_path / "wh"), files_json(got.files)]) == 0
    assert sorted(p.name for p in (tmp_path / "wh").iterdir()) == sorted(f.filename for f in got.files)


def test_the_test_server_answers_every_single_range_form_or_none(tmp_path: Path) -> None:
    import urllib.request

    (tmp_path / "f.bin").write_bytes(bytes(range(100)))

    def get(srv: MirrorServer, rng: str) -> tuple[int, bytes, str | None]:
        req = urllib.request.Request(f"{srv.base_url}/f.bin", headers={"Range": rng})
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - 127.0.0.1
            return resp.status, resp.read(), resp.headers.get("Content-Range")

    with MirrorServer(tmp_path, idle_timeout=30) as srv:
        assert get(srv, "bytes=90-") == (206, bytes(range(90, 100)), "bytes 90-99/100")
        assert get(srv, "bytes=2-5") == (206, bytes([2, 3, 4, 5]), "bytes 2-5/100")
        assert get(srv, "bytes=-3") == (206, bytes([97, 98, 99]), "bytes 97-99/100")
        assert get(srv, "bytes=-300") == (206, bytes(range(100)), "bytes 0-99/100")
        deadline = time.monotonic() + 10  # the server counts a chunk once written: after the client has it
        while srv.bytes_sent < 117 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.bytes_sent == 10 + 4 + 3 + 100
    with MirrorServer(tmp_path, idle_timeout=30, ranges=False) as srv:
        assert get(srv, "bytes=-3") == (200, bytes(range(100)), None)


def test_a_zip64_wheel_is_read_through_ranges(tmp_path: Path) -> None:
    """More than 65535 entries: the zip has a ZIP64 end of central directory (as multi-GB torch wheels do)."""
    forget()
    d = tmp_path / "whl"
    big = build_wheel(WheelSpec("demo-big", "1.0", (TAG,), tuple((f"big/f{i}.py", b"") for i in range(66000)),
                                "big", None, ("demo-dep>=1",)), TAG, d)
    build_wheel(WheelSpec("demo-dep", "1.0", (TAG,), (("dep/__init__.py", b""),), "dep"), TAG, d)
    write_index(d)
    assert b"PK\x06\x06" in big.read_bytes()[-200:]  # the ZIP64 record
    with MirrorServer(tmp_path, idle_timeout=30) as srv:
        got = resolve_closure(f"{srv.base_url}/whl", ["demo-big"], "3.12")
    assert _stems(got.files) == ["demo_big-1.0", "demo_dep-1.0"]
    forget()


def test_a_listing_with_sizes_reads_the_zip_end_by_explicit_range(tmp_path: Path) -> None:
    """PEP 700 sizes in the JSON listing: the first range is bytes=SIZE-64KiB-SIZE-1 (no suffix range, no HEAD)."""
    import json

    forget()
    d = _build(tmp_path / "whl", PROJECTS[5:9], many_files=False)
    for page in d.glob("*/index.json"):
        doc = json.loads(page.read_text())
        for f in doc["files"]:
            f["size"] = (d / f["filename"]).stat().st_size
        page.write_text(json.dumps(doc))
    with MirrorServer(tmp_path, idle_timeout=30) as srv:
        got = resolve_closure(f"{srv.base_url}/whl", ["demo-sympy"], "3.12")
        assert _stems(got.files) == ["demo_sympy-1.13.3", "demo_mpmath-1.3.0"]
        assert [f.size for f in got.files] == [(d / f.filename).stat().st_size for f in got.files]
        assert not any(r.method == "HEAD" for r in srv.requests)
        assert [r.status for r in srv.requests if r.path.endswith(".whl")] == [206, 206]
    forget()
