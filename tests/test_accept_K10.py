"""What helper A9's walk of issue 21 left (helper K10): each gap shown failing first, with a near miss that must not
change.

* A Core SDK 10.x read from its packages alone (a pasted ``dpkg -l``, a bundle's dpkg status) showed its version as
  "?": the probe anchored on the exact names ``amdrocm-core`` / ``rocm-core``, while TheRock names a versioned
  package ``<name><major.minor>`` (``amdrocm-core10.1``, ``amdrocm10.1-gfx1151``; ROCm/TheRock@430a8a89
  build_tools/packaging/linux/packaging_utils.py update_package_name, as the knowledge base's 10.1.0 record says).
* ``memory-aperture-violation`` told a machine with an override set "If no override is set, disable the compiled
  path ...": that advice is now a fix branch on ``override_set: false``.
* A Strix Halo whose only evidence of its memory is values (mem_info_gtt_total and /proc/meminfo's MemTotal)
  found nothing: ``strix-halo-gtt-limit`` fired only on dmesg lines or "only seeing X GB" wording. The kernel's
  default GTT limit is half the system memory (amdgpu's gttsize docs; TTM's ttm_global_init), so a GTT total at
  half of MemTotal lists it "to check".
* A fix whose plan is refused on a bare error paste (no GPU read at all) said "(the pip-only plan does not fit this
  machine: no AMD GPU was detected)", which reads as a finding about the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reading_helpers import detect_paste
from wizard.diagnose import Finding, diagnose
from wizard.host import open_recorded
from wizard.kb import load_kb
from wizard.model import Driver, EnvSetting, EvidenceText, Facts, Gpu
from wizard.planner import fitting_fix_plans
from wizard.probes import detect
from wizard.probes.rocm import Package, probe_rocm

pytestmark = pytest.mark.unit


# -- 1. the Core SDK release from its package names -------------------------------------------------------------

DPKG_L = ("$ dpkg -l | grep amdrocm\n"
          "ii  amdrocm-core10.1          10.1.0-12    amd64   ROCm core\n"
          "ii  amdrocm10.1-gfx1151       10.1.0-12    amd64   ROCm gfx1151\n"
          "ii  amdrocm-runtime10.1       10.1.0-12    amd64   ROCm runtime\n")


def test_a_pasted_dpkg_list_of_10_1_packages_gives_the_release(tmp_path: Path) -> None:
    rocm = detect_paste(tmp_path, DPKG_L).rocm
    assert rocm.version == "10.1.0" and rocm.stream == "core-sdk"
    rel = load_kb().release(rocm.version)
    assert rel is not None and rel.version == "10.1.0"


def test_a_bundles_dpkg_status_of_10_1_packages_gives_the_release(tmp_path: Path) -> None:
    status = tmp_path / "root" / "var" / "lib" / "dpkg"
    status.mkdir(parents=True)
    (status / "status").write_text(
        "Package: amdrocm10.1-gfx1100\nStatus: install ok installed\nVersion: 10.1.0-12\nArchitecture: amd64\n\n"
        "Package: amdrocm-runtime10.1\nStatus: install ok installed\nVersion: 10.1.0-12\nArchitecture: amd64\n\n"
        "Package: bash\nStatus: install ok installed\nVersion: 5.2.21-2ubuntu4\nArchitecture: amd64\n\n",
        encoding="utf-8")
    (tmp_path / "lspci.txt").write_text("", encoding="utf-8")
    facts = detect(open_recorded(str(tmp_path)))
    assert facts.rocm.version == "10.1.0" and facts.rocm.stream == "core-sdk", facts.rocm


class _Folders:
    """A recorded host whose only folders are ``dirs`` (no file reads, no captures): what probe_rocm looks at."""

    is_live = False

    def __init__(self, *dirs: str) -> None:
        self.dirs = dirs

    def listdir(self, p: str) -> list[str]:
        return sorted(d.rsplit("/", 1)[1] for d in self.dirs if d.rsplit("/", 1)[0] == p)

    def exists(self, p: str) -> bool:
        return p in self.dirs

    def is_dir(self, p: str) -> bool:
        return self.exists(p)

    def realpath(self, p: str) -> str:
        return p

    def read_text(self, p: str, limit: int = 0) -> str | None:
        return None

    def captured(self, name: str) -> str | None:
        return None


def test_a_10_x_package_without_a_full_version_gives_the_series_as_the_core_folder_does() -> None:
    """Near miss: a version column that is not of the series the name carries says only the series, "10.1", the
    version an /opt/rocm/core-10.1 folder without its .info/version reads as."""
    folder = probe_rocm(_Folders("/opt", "/opt/rocm", "/opt/rocm/core-10.1"), [])  # type: ignore[arg-type]
    assert folder.version == "10.1"
    for version in ("", "1.2.3-1", "10.10.0-1"):
        pkgs = [Package("amdrocm10.1-foo", version, "dpkg.txt", 1)]
        assert probe_rocm(_Folders(), pkgs).version == folder.version, version  # type: ignore[arg-type]


def test_newest_series_wins_and_legacy_rocm_core_is_read_as_before() -> None:
    both = [Package("amdrocm10.0-gfx1100", "10.0.0-3", "dpkg.txt", 1),
            Package("amdrocm-core10.1", "10.1.0-12", "dpkg.txt", 2)]
    assert probe_rocm(_Folders(), both).version == "10.1.0"  # type: ignore[arg-type]
    # near miss: a 7.x legacy install keeps its rocm-core anchor and its build-coded version
    legacy = [Package("rocm-core", "7.2.0.70200-43~24.04", "dpkg.txt", 1),
              Package("rocminfo", "1.0.0.70200-43~24.04", "dpkg.txt", 2)]
    rocm = probe_rocm(_Folders(), legacy)  # type: ignore[arg-type]
    assert rocm.version == "7.2.0" and rocm.stream == "legacy"
    # near miss: the unversioned amdrocm-core meta package still anchors as before
    meta = [Package("amdrocm-core", "7.14.0-2", "dpkg.txt", 1)]
    assert probe_rocm(_Folders(), meta).version == "7.14.0"  # type: ignore[arg-type]


# -- 2. memory-aperture-violation's advice by whether an override is set -----------------------------------------

APERTURE = ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest "
            "legal address. code: 0x29")
NO_OVERRIDE_ADVICE = "If no override is set, disable the compiled path"


def _aperture_facts(gfx: str | None, env: dict[str, str], env_read: bool = True) -> Facts:
    texts = [EvidenceText("error.txt", APERTURE, 1, "text", True)]
    if env_read:
        texts.append(EvidenceText("env.txt", "PATH=/usr/bin\n", 1, "env.txt", True))
    gpus = (Gpu(name="AMD GPU", gfx=gfx, gfx_reported=gfx, integrated=False, hip_index=0),) if gfx else ()
    return Facts(gpus=gpus, env=tuple(EnvSetting(k, v, "env.txt:1") for k, v in env.items()), origin="test",
                 texts=tuple(texts))


def _aperture_fix(facts: Facts) -> str:
    return {f.id: f for f in diagnose(facts)}["memory-aperture-violation"].fix


def test_a_machine_with_an_override_set_is_not_told_what_to_do_without_one() -> None:
    for gfx, value in (("gfx1100", "11.0.0"), ("gfx1031", "10.3.0"), ("gfx1010", "10.3.0")):
        fix = _aperture_fix(_aperture_facts(gfx, {"HSA_OVERRIDE_GFX_VERSION": value}))
        assert NO_OVERRIDE_ADVICE not in fix, (gfx, fix)
    # RDNA1 spoofed: the RDNA1 branch, not the general one
    rdna1 = _aperture_fix(_aperture_facts("gfx1010", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}))
    assert "Do not spoof RDNA1" in rdna1 and "run once without the override" not in rdna1
    assert "run once without the override" in _aperture_fix(_aperture_facts("gfx1100",
                                                                            {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}))


def test_a_machine_without_an_override_or_not_known_still_gets_the_compiled_path_advice() -> None:
    """Near miss: no override (the environment read), or the environment not read at all (a bare paste)."""
    none_set = _aperture_fix(_aperture_facts("gfx1100", {}))
    assert NO_OVERRIDE_ADVICE in none_set and "run once without the override" not in none_set
    assert NO_OVERRIDE_ADVICE in _aperture_fix(_aperture_facts(None, {}, env_read=False))


def test_the_benchmarks_advice_checker_finds_nothing_against_either_branch() -> None:
    from benchmarks.reading_score import contradicting_advice

    for gfx, env in (("gfx1100", {}), ("gfx1100", {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}),
                     ("gfx1010", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})):
        f = {x.id: x for x in diagnose(_aperture_facts(gfx, env))}["memory-aperture-violation"]
        advice = " ".join([f.fix, *f.fix_commands, *(f"{k}={v}" for k, v in f.fix_env)])
        detected = {"gpus": [{"gfx": gfx}], "env": env, "origin": "test", "texts": [{"kind": "env.txt"}]}
        assert contradicting_advice(detected, advice) == [], (gfx, env)


# -- 3. a Strix Halo's default GTT limit from its values ---------------------------------------------------------

GIB = 1 << 30
ROCMINFO_8060S = ('$ rocminfo | grep -E "Name|Marketing"\n  Name:                    gfx1151\n'
                  "  Marketing Name:          AMD Radeon 8060S Graphics\n")
DEFAULT_VALUES = ("$ grep . /sys/class/drm/card1/device/mem_info_gtt_total "
                  "/sys/class/drm/card1/device/mem_info_vram_total\n"
                  "/sys/class/drm/card1/device/mem_info_gtt_total:66571993088\n"
                  "/sys/class/drm/card1/device/mem_info_vram_total:536870912\n"
                  "$ grep MemTotal /proc/meminfo\nMemTotal:       130023568 kB\n")


def test_parse_gpu_memory_reads_the_sysfs_files_rocm_smi_and_meminfo() -> None:
    from wizard.parsers.gpu_memory import parse_gpu_memory

    read = parse_gpu_memory.__wrapped__  # type: ignore[attr-defined]
    got = read(DEFAULT_VALUES)
    assert got.gtt == (66571993088,) and got.vram == (536870912,) and got.mem_total == 130023568 * 1024
    cat = ("$ cat /sys/class/drm/card*/device/mem_info_gtt_total /sys/class/drm/card*/device/mem_info_vram_total\n"
           "66571993088\n536870912\n")
    got = read(cat)
    assert got.gtt == (66571993088,) and got.vram == (536870912,)
    smi = "GPU[0]\t\t: GTT Total Memory (B): 66571993088\nGPU[0]\t\t: GTT Total Used Memory (B): 123\n"
    assert read(smi).gtt == (66571993088,)
    # near miss: two files named, one number printed: which file it is of is not known
    assert read(cat.replace("536870912\n", "")).gtt == ()


def _halo(tmp_path: Path, text: str) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(detect_paste(tmp_path, text))}


def test_a_strix_halo_at_the_default_gtt_limit_lists_it_to_check(tmp_path: Path) -> None:
    f = _halo(tmp_path, ROCMINFO_8060S + DEFAULT_VALUES).get("strix-halo-gtt-limit")
    assert f is not None and f.to_check is not None  # a risk to check, not a cause
    assert any("62.0 GiB" in e and "MemTotal 124.0 GiB" in e for e in f.evidence), f.evidence


def test_a_raised_gtt_or_a_discrete_card_or_no_memtotal_lists_nothing(tmp_path: Path) -> None:
    raised = DEFAULT_VALUES.replace("66571993088", str(96 * GIB))
    assert "strix-halo-gtt-limit" not in _halo(tmp_path, ROCMINFO_8060S + raised)
    no_total = DEFAULT_VALUES.split("$ grep MemTotal")[0]
    assert "strix-halo-gtt-limit" not in _halo(tmp_path, ROCMINFO_8060S + no_total)
    # a discrete card with the same values (its GTT default is the same half of the system memory)
    gpu = Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", gfx_reported="gfx1100", integrated=False, hip_index=0)
    dgpu = Facts(gpus=(gpu,), origin="test", texts=(EvidenceText("paste.txt", DEFAULT_VALUES, 1, "text", True),))
    assert "strix-halo-gtt-limit" not in {f.id for f in diagnose(dgpu)}
    # the words that fired it before still do, with no values shown
    said = ROCMINFO_8060S + "I'm only seeing 62 GB instead of the allocated 96 GB\n"
    assert "strix-halo-gtt-limit" in _halo(tmp_path, said)


# -- 4. a plan's fit where no GPU was read ----------------------------------------------------------------------

LIBS = "ImportError: libamdhip64.so.6: cannot open shared object file: No such file or directory\n"


def _fitted(facts: Facts) -> str:
    found = diagnose(facts)
    assert {f.id: f.fix_plan for f in found}["rocm-libraries-not-found"] == "pip-only"
    return {f.id: f for f in fitting_fix_plans(found, facts)}["rocm-libraries-not-found"].fix


def test_a_bare_error_paste_says_nothing_about_the_machine_when_a_plan_cannot_be_checked(tmp_path: Path) -> None:
    fix = _fitted(detect_paste(tmp_path, LIBS))
    assert "does not fit this machine" not in fix and "no AMD GPU was detected" not in fix
    assert "whether the pip-only plan fits this machine is not known" in fix


def test_gpus_read_and_none_amd_still_says_the_plan_does_not_fit(tmp_path: Path) -> None:
    """Near miss: lspci read, an NVIDIA card only: that no AMD GPU was found is a finding about the machine."""
    text = ("$ lspci -nn | grep -i vga\n01:00.0 VGA compatible controller [0300]: NVIDIA Corporation AD102 "
            "[GeForce RTX 4090] [10de:2684] (rev a1)\n$ python train.py\n" + LIBS)
    fix = _fitted(detect_paste(tmp_path, text))
    assert "(the pip-only plan does not fit this machine: no AMD GPU was detected)" in fix
    # and probed facts with no GPU (a live machine) are read GPUs too
    live = Facts(origin="live", driver=Driver(), texts=(EvidenceText("error.txt", LIBS, 1, "text", True),))
    assert "does not fit this machine: no AMD GPU was detected" in _fitted(live)
