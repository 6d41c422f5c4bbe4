

def test_a_system_plan_refuses_to_take_debians_python3_torch_along(tmp_path: Path) -> None:
    """core-sdk on the mixed machine: the purge of Debian's ROCm would take python3-torch (through libtorch2.6
    and its MPI/UCX libraries) along; apt's real simulation says so, the run stops naming them, and nothing
    of dpkg's state changed."""
    d = tmp_path / "root"
    made = wizard_cli("--sandbox", str(d), "--profile", "debian13-mixed", "--root", "debian13", "detect", timeout=3600)
    assert made.returncode == 0, made.stderr[-2000:]
    before = _dpkg(d)
    run = wizard_cli("--sandbox", str(d), "--plan", "core-sdk", "--yes")
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    mo = re.search(r"other installed packages depend on these and apt would remove them too: ([^;]+);", run.stdout)
    assert mo, run.stdout[-3000:]
    assert {"python3-torch", "libtorch2.6"} <= set(mo.group(1).split())
    assert _dpkg(d) == before
