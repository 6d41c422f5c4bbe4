"""Causes a recorded machine's own text states in words (issue 21): the signature families that match how people
write a cause down ("I use torch-cpu", "/dev/kfd owned by group render instead of video", "Secure Boot was
preventing the kernel from loading the amdgpu module"), and the facts that leave a condition undecided (a torch
version without its build tag). Each case has a near miss that must stay silent."""

from __future__ import annotations

import pytest

from wizard.diagnose import Finding, diagnose
from wizard.kb.families import family_of_gfx
from wizard.model import Driver, EnvSetting, EvidenceText, Facts, Gpu, OsInfo, PythonEnv
from wizard.record import replace

pytestmark = pytest.mark.unit


def _gpu(gfx: str, integrated: bool = False) -> Gpu:
    return Gpu(name=f"AMD {gfx}", gfx=gfx, integrated=integrated, family=family_of_gfx(gfx))


def _facts(text: str, *gpus: Gpu, own: bool = True, **kw: object) -> Facts:
    return Facts(gpus=gpus, origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", own),),
                 **kw)  # type: ignore[arg-type]


def _by_id(facts: Facts) -> dict[str, Finding]:
    return {f.id: f for f in diagnose(facts)}


def test_a_stated_cpu_torch_is_a_cause_without_its_version() -> None:
    text = "Finally I find the problem is that I use torch-cpu rather than torch-gpu."
    found = _by_id(_facts(text, _gpu("gfx1030")))["torch-cpu-build"]
    assert found.to_check is None
    for near in ("I don't use torch-cpu, I installed torch from the rocm6.2 index.",
                 "torch.cuda.is_available() returns False on my RX 6800"):
        assert "torch-cpu-build" not in _by_id(_facts(near, _gpu("gfx1030"))), near
    # a ROCm torch the facts show decides against it
    rocm = PythonEnv(path="/v", torch="2.5.1+rocm6.2", build="rocm")
    assert "torch-cpu-build" not in _by_id(_facts(text, _gpu("gfx1030"), python_envs=(rocm,)))


def test_a_torch_version_without_its_build_tag_leaves_the_build_undecided() -> None:
    text = "# [bug]: Installer installs torch CUDA even when ROCm is selected"
    bare = PythonEnv(path=None, torch="2.4.1", kind="recorded")  # read from a log line: no +rocm/+cu tag
    found = _by_id(_facts(text, _gpu("gfx1032"), python_envs=(bare,)))["torch-not-rocm-build"]
    assert found.to_check is None
    rocm = PythonEnv(path=None, torch="2.4.1+rocm6.1", build="rocm", kind="recorded")
    assert "torch-not-rocm-build" not in _by_id(_facts(text, _gpu("gfx1032"), python_envs=(rocm,)))
    for near in ("I installed torch with ROCm support in a fresh venv.",
                 "The installer installs torch with CUDA support only when an NVIDIA GPU is selected, and not here."):
        assert "torch-not-rocm-build" not in _by_id(_facts(near, _gpu("gfx1032"), python_envs=(bare,))), near


def test_secure_boot_stated_as_blocking_amdgpu_is_a_cause_where_its_state_was_not_read() -> None:
    text = ("The cause was related to Secure Boot, which was preventing the kernel from loading the amdgpu module.")
    found = _by_id(_facts(text))["secure-boot-dkms"]
    assert found.to_check is None
    assert _by_id(_facts("modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service"))["secure-boot-dkms"]
    for near in ("I checked that Secure Boot is not blocking the amdgpu module; it still does not load.",
                 "Secure Boot is disabled in the BIOS. amdgpu fails to load after the update."):
        assert "secure-boot-dkms" not in _by_id(_facts(near)), near
    # detection read Secure Boot off: the sentence is about another time, not this machine's state
    assert "secure-boot-dkms" not in _by_id(_facts(text, os=OsInfo(secure_boot=False)))


def test_kfd_permissions_stated_in_words_where_access_was_not_read() -> None:
    # /dev/kfd is listed (it exists), but nothing read who may open it
    present = Driver(kfd_present=True)
    for text in ("# /dev/kfd has the wrong permissions", "my `/dev/kfd` has the wrong permissions, so ROCm only runs "
                 "for root."):
        found = _by_id(_facts(text, driver=present))["kfd-inaccessible"]
        assert found.to_check is None and "udev rule" in found.fix, text
    near = "ROCm runs for root and for my user alike; /dev/kfd has the permissions the udev rule sets."
    assert "kfd-inaccessible" not in _by_id(_facts(near, driver=present))
    # access read from the machine decides it
    readable = Driver(kfd_present=True, kfd_accessible=True, user="me")
    assert "kfd-inaccessible" not in _by_id(_facts("# /dev/kfd has the wrong permissions", driver=readable))


def test_kfd_owned_by_render_instead_of_video_stated_in_words() -> None:
    text = "I ended up with /dev/kfd owned by group `render` instead of group `video`. rocminfo fails as normal user."
    found = _by_id(_facts(text))["kfd-render-group-not-video"]
    assert found.to_check is None
    assert "kfd-render-group-not-video" not in _by_id(_facts("/dev/kfd is owned by group render, and I am in it."))
    member = Driver(user="me", in_render_group=True, in_video_group=True, groups=("render", "video"))
    assert "kfd-render-group-not-video" not in _by_id(_facts(text, driver=member))


def test_an_smu_mismatch_named_in_words_is_listed_to_check() -> None:
    found = _by_id(_facts("# [Issue]: ROCm 7.2 SMU mismatch on Ubuntu 24.04.3 w/ AMD AI Pro R9700 GPU"))
    assert "smu-interface-mismatch" in found
    assert "smu-interface-mismatch" not in _by_id(_facts("amdgpu: SMU is initialized successfully!"))
    assert "smu-interface-mismatch" not in _by_id(_facts("Memory clock mismatch reported by amd-smi; SMU ok"))


def test_amdgpu_dkms_failing_on_a_mainline_kernel_is_named() -> None:
    found = _by_id(_facts("# [Issue]: amdgpu-dkms build fails with Ubuntu mainline kernel 6.18.7"))
    assert "dkms-mainline-kernel-unsupported" in found
    for near in ("amdgpu-dkms build fails on 6.8.0-45-generic", "amdgpu-dkms builds fine with the mainline kernel"):
        assert "dkms-mainline-kernel-unsupported" not in _by_id(_facts(near)), near


def test_a_kernel_downgrade_that_fixed_it_points_at_the_driver_build_to_check() -> None:
    text = "the supported kernels are 4.13 - 4.15, so I downgraded to 4.15. Now it works."
    found = _by_id(_facts(text))["dkms-build-fails-new-kernel"]
    assert found.to_check  # a symptom: an in-kernel regression would read the same
    for near in ("I downgraded the kernel to 4.15 but it still fails.", "I downgraded torch to 2.3 and now it works."):
        assert "dkms-build-fails-new-kernel" not in _by_id(_facts(near)), near


def test_a_gpu_that_works_only_with_the_10_3_0_override_is_listed_to_check() -> None:
    for text in ("I'm using an RX 6700 XT (gfx1031), which requires `HSA_OVERRIDE_GFX_VERSION` environment variable to "
                 "be set to 10.3.0 in order for the card to work in ROCm.",
                 "Everything works fine after I changed the value to 10.3.0."):
        found = _by_id(_facts(text, _gpu("gfx1031")))["rdna2-variant-needs-override"]
        assert found.to_check, text  # whether the override is set now is not known from a sentence
    for near in ("I tried HSA_OVERRIDE_GFX_VERSION=10.3.0 but it still crashes.",
                 "It doesn't work even with HSA_OVERRIDE_GFX_VERSION=10.3.0 set."):
        assert "rdna2-variant-needs-override" not in _by_id(_facts(near, _gpu("gfx1031"))), near
    # a GPU that has its own code in upstream wheels does not need it
    assert "rdna2-variant-needs-override" not in _by_id(_facts("Everything works fine after I changed the value to "
                                                               "10.3.0.", _gpu("gfx1030")))


def test_on_wsl_a_torch_that_bundles_its_own_runtime_or_is_a_nightly_is_named() -> None:
    wsl = OsInfo(kernel="6.6.87.2-microsoft-standard-WSL2", wsl=True)
    release = PythonEnv(path=None, torch="2.6.0+rocm6.4.2", build="rocm", kind="recorded")
    text = ("**Root Cause\nPyTorch wheels bundle an incompatible libhsa-runtime64.so library that conflicts with WSL2's "
            "DirectX-based GPU passthrough (/dev/dxg).**")
    found = _by_id(_facts(text, _gpu("gfx1100"), os=wsl, python_envs=(release,)))["wsl-torch-not-wsl-build"]
    assert found.to_check is None  # the version cannot tell whose wheel it is; the sentence states it
    # the same sentence on a native host is not this issue
    native = OsInfo(kernel="6.8.0-45-generic", wsl=False)
    assert "wsl-torch-not-wsl-build" not in _by_id(_facts(text, _gpu("gfx1100"), os=native, python_envs=(release,)))
    # a PyTorch nightly on WSL is not AMD's WSL build: a risk the facts show, listed to check without a failure
    nightly = PythonEnv(path=None, torch="2.5.0.dev20240802+rocm6.1", build="rocm", kind="recorded")
    risk = _by_id(_facts("", _gpu("gfx1100"), os=wsl, python_envs=(nightly,)))["wsl-torch-not-wsl-build"]
    assert risk.to_check and any("nightly" in e for e in risk.evidence)
    # a release torch (AMD's WSL wheel or not) alone shows nothing
    assert "wsl-torch-not-wsl-build" not in _by_id(_facts("", _gpu("gfx1100"), os=wsl, python_envs=(release,)))
    therock = PythonEnv(path=None, torch="2.13.0a0+rocm7.14.0a20260612", build="rocm", kind="recorded")
    assert "wsl-torch-not-wsl-build" not in _by_id(_facts("", _gpu("gfx1100"), os=wsl, python_envs=(therock,)))


def test_a_gpu_init_segfault_on_strix_with_therock_nightlies_is_the_714_initdma_regression() -> None:
    text = ("The llama.cpp test crashes on startup: the ROCm GPU-init segfault again.\n"
            "I can confirm the bug is related to the TheRock nightlies; builds up to June 8th work.")
    found = _by_id(_facts(text, _gpu("gfx1151", integrated=True)))["therock-714-initdma-segfault"]
    assert found.to_check is None
    assert "therock-714-initdma-segfault" in _by_id(_facts(
        "latest image segfaults at HIP init (torch 2.13.0a0+rocm7.14.0a20260612)", _gpu("gfx1151", integrated=True)))
    for near, gpu in ((text, _gpu("gfx1100")),  # another GPU
                      ("segfault at GPU init with the distribution's ROCm 6.4 packages", _gpu("gfx1151", True)),
                      ("TheRock nightly: rocminfo segfaults immediately after 'ROCk module is loaded'",
                       _gpu("gfx1151", True))):
        assert "therock-714-initdma-segfault" not in _by_id(_facts(near, gpu)), near


def test_a_request_to_support_an_rdna2_variant_is_listed_to_check() -> None:
    found = _by_id(_facts("Could you please add support for gfx1036?", _gpu("gfx1036", integrated=True)))
    assert found["rdna2-variant-needs-override"].to_check
    for near, gpu in (("Could you please add support for gfx1151?", _gpu("gfx1036", True)),
                      ("Could you please add support for gfx1036?", _gpu("gfx1100")),
                      ("rocBLAS doesn't need support for gfx1036 added: it runs here", _gpu("gfx1030"))):
        assert "rdna2-variant-needs-override" not in _by_id(_facts(near, gpu)), near


# --------------------------------------------------------------------------- the 52 machines of stop 34 (in-sample)


def test_nomodeset_on_the_command_line_or_in_the_log_or_in_words_is_checked_first() -> None:
    for text in ("BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=1234 ro quiet splash nomodeset",
                 'GRUB_CMDLINE_LINUX_DEFAULT="quiet splash nomodeset"',
                 "[    0.000000] Booted with the nomodeset parameter. Only the system framebuffer will be available",
                 'The grubby setting "nomodeset." This blocked amdgpu from binding to the Stix Halo.'):
        found = _by_id(_facts(text, _gpu("gfx1151", integrated=True), os=OsInfo(wsl=False)))["rock-module-not-loaded"]
        assert "nomodeset" in found.fix, text
    for near in ("BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=1234 ro quiet splash amdgpu.modeset=1 nomodeset",
                 "I booted without nomodeset and amdgpu loads; the problem is elsewhere.",
                 "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=1234 ro quiet splash"):
        assert "rock-module-not-loaded" not in _by_id(_facts(near, os=OsInfo(wsl=False))), near


def test_on_wsl_a_torch_that_finds_no_gpu_is_checked_for_amds_wsl_build() -> None:
    wsl = OsInfo(id="ubuntu", version="22.04", wsl=True)
    text = 'RuntimeError: No HIP GPUs are available'
    # the build unknown: to check
    found = _by_id(_facts(text, _gpu("gfx1100"), os=wsl))["wsl-torch-not-wsl-build"]
    assert found.to_check is not None
    # a PyTorch nightly shown: the failure and the build that cannot reach the GPU make it a cause
    nightly = PythonEnv(path=None, torch="2.8.0.dev20250529+rocm6.4", build="rocm", kind="recorded")
    assert _by_id(_facts(text, _gpu("gfx1100"), os=wsl, python_envs=(nightly,)))["wsl-torch-not-wsl-build"].to_check is None
    # not WSL: never
    assert "wsl-torch-not-wsl-build" not in _by_id(_facts(text, _gpu("gfx1100"), os=OsInfo(id="ubuntu", wsl=False)))


def test_psp_failing_at_load_is_an_amdgpu_init_failure_to_check() -> None:
    text = ("[Mon Dec 18 08:34:36 2023] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!\n"
            "[Mon Dec 18 08:34:37 2023] [drm:psp_v13_0_ring_destroy [amdgpu]] *ERROR* Fail to stop psp ring")
    assert _by_id(_facts(text))["amdgpu-init-failed"].to_check is not None
    assert "amdgpu-init-failed" not in _by_id(_facts("[drm] PSP is resuming...\n[drm] reserve 0x400000 from 0x83fe000000 for PSP TMR"))


def test_pcie_atomics_a_hypervisor_does_not_pass_in_words() -> None:
    said_by_other = "You failing due to VMware not allowing PCIe Atomics aka atomic completor through"
    found = _by_id(_facts(said_by_other, own=False))["pcie-atomics-rejected"]
    assert found.to_check == "seen only in another person's post"
    assert _by_id(_facts("The passthrough does not pass PCIe atomics to the guest."))["pcie-atomics-rejected"].to_check is None
    for near in ("VMware is allowing PCIe atomics now, the GPU still hangs.", "my PCIe atomics are fine on bare metal"):
        assert "pcie-atomics-rejected" not in _by_id(_facts(near)), near


def test_navi1x_cwsr_size_rejected_by_a_kernel_from_6_12() -> None:
    text = (":1:program.cpp :522 : devProgram.load() failed with buildLog=Error: Freezing the executable failed:\n"
            "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.")
    new = OsInfo(id="debian", version="13", kernel="6.12.101+deb13-amd64", wsl=False)
    found = _by_id(_facts(text, _gpu("gfx1012"), os=new))["hsakmt-cwsr-size-rejected-navi1x"]
    assert found.to_check is None and "kernel 6.12.101+deb13-amd64" in found.evidence
    # the kernel not read: to check; an older kernel, or another GPU: not this
    unknown = _by_id(_facts(text, _gpu("gfx1012"), os=OsInfo(wsl=False)))["hsakmt-cwsr-size-rejected-navi1x"]
    assert unknown.to_check is not None and "kernel" in unknown.to_check
    old = OsInfo(id="ubuntu", version="24.04", kernel="6.8.0-45-generic", wsl=False)
    assert "hsakmt-cwsr-size-rejected-navi1x" not in _by_id(_facts(text, _gpu("gfx1012"), os=old))
    assert "hsakmt-cwsr-size-rejected-navi1x" not in _by_id(_facts(text, _gpu("gfx1100"), os=new))


def test_on_wsl_a_missing_dev_kfd_is_not_the_kfd_fault_and_gets_no_group_or_driver_advice() -> None:
    # WSL has no KFD: ROCm for WSL reaches the GPU through /dev/dxg, so "join render / load amdgpu" is wrong there
    text = "# hsa_init Failed, possibly no supported GPU devices"
    wsl = _by_id(_facts(text, _gpu("gfx1201"), os=OsInfo(id="ubuntu", wsl=True), driver=Driver(kfd_present=False)))
    assert wsl["kfd-inaccessible"].contradicted is not None and wsl["kfd-inaccessible"].fix_commands == ()
    native = _by_id(_facts(text, _gpu("gfx1201"), os=OsInfo(id="ubuntu", wsl=False), driver=Driver(kfd_present=False),
                           in_container=False))
    assert native["kfd-inaccessible"].contradicted is None and native["kfd-inaccessible"].to_check is None


def test_the_override_and_its_working_in_one_post_around_a_fenced_block() -> None:
    from wizard.parsers.paste import split_paste
    from wizard.probes.texts import _segments_as_texts

    post = ("# Segmentation fault with rocm5.6 and rx6700\n\nuserbox020 · description · 2024-02-05\nIt segfaults.\n\n"
            "userbox020 · comment · 2024-02-07\nthen i set the follow enviromental variables\n```\n"
            "export ROCM_PATH=/opt/rocm\nexport HSA_OVERRIDE_GFX_VERSION=10.3.0\n```\n\n"
            "Now im able to run one rx 6900 and one rx 6700 all together. Everything working great now!\n")
    texts = tuple(_segments_as_texts("paste.txt", split_paste(post).segments))
    facts = Facts(gpus=(_gpu("gfx1031"),), origin="test", texts=texts)
    found = _by_id(facts)["rdna2-variant-needs-override"]
    assert found.matched is not None and found.matched.line == 10 and "\n" not in found.matched.text
    failed = post.replace("Now im able to run one rx 6900 and one rx 6700 all together. Everything working great now!",
                          "It still crashes, but everything is working great now on the RX 6900 alone.")
    texts = tuple(_segments_as_texts("paste.txt", split_paste(failed).segments))
    assert "rdna2-variant-needs-override" not in _by_id(Facts(gpus=(_gpu("gfx1031"),), origin="test", texts=texts))


def test_a_rootless_container_fixed_by_the_numeric_group_ids_in_words() -> None:
    text = ("Ok, turns out this is an issue with not setting docker as the execution engine for distrobox in addition "
            "I needed to use the group numeric ids for this to work.")
    assert _by_id(_facts(text))["container-kfd-group-not-mapped"].to_check is None
    for near in ("I did not use numeric group ids, the names work fine here.", "the group ids are 44 and 992"):
        assert "container-kfd-group-not-mapped" not in _by_id(_facts(near)), near


def test_cuda_wheels_loaded_in_words_is_a_cuda_torch() -> None:
    text = ("Running `nix develop .#rocm`, installing requirements, and launching ComfyUI still loaded CUDA wheels, "
            "so PyTorch tried to initialize NVIDIA and failed even on AMD hosts.")
    assert "torch-not-rocm-build" in _by_id(_facts(text, _gpu("gfx1100")))
    for near in ("It has not loaded CUDA wheels: torch is 2.5.1+rocm6.2.", "The CUDA wheels are for NVIDIA only."):
        assert "torch-not-rocm-build" not in _by_id(_facts(near, _gpu("gfx1100"))), near


def test_both_gpus_enumerated_in_words_on_an_igpu_and_dgpu_machine() -> None:
    text = "With no pin, llama.cpp enumerates *both* ROCm devices, and the load crashes."
    gpus = (_gpu("gfx1103", integrated=True), _gpu("gfx1201"))
    assert _by_id(_facts(text, *gpus))["igpu-visible-beside-dgpu"].to_check is None
    assert _by_id(_facts("ollama used the iGPU instead of the dGPU", *gpus))["igpu-visible-beside-dgpu"].to_check is None
    # without the words it stays a risk to check; one discrete GPU: never
    assert _by_id(_facts("the load crashes", *gpus))["igpu-visible-beside-dgpu"].to_check is not None
    assert "igpu-visible-beside-dgpu" not in _by_id(_facts(text, _gpu("gfx1201"), _gpu("gfx1100")))
    assert _by_id(_facts("it did not enumerate both devices", *gpus))["igpu-visible-beside-dgpu"].to_check is not None


def test_dxg_detection_is_not_missing_where_the_runtime_lists_the_gpu() -> None:
    wsl = OsInfo(id="ubuntu", version="24.04", wsl=True)
    from wizard.model import Rocm

    listed = ("WSL environment detected.\n*******\nAgent 2\n*******\n  Name:                    gfx1201\n"
              "  Marketing Name:          AMD Radeon RX 9070 XT\n  Device Type:             GPU\n")
    found = _by_id(_facts(listed, _gpu("gfx1201"), os=wsl, rocm=Rocm(version="7.2.2")))["wsl-dxg-detection-off"]
    assert found.to_check == "a line of the evidence speaks against it"
    failed = "WSL environment detected.\nhsa_init Failed, possibly no supported GPU devices\n"
    found = _by_id(_facts(failed, _gpu("gfx1201"), os=wsl, rocm=Rocm(version="7.2.2")))["wsl-dxg-detection-off"]
    assert found.to_check is None


def test_a_debug_trace_of_a_probing_dlopen_is_not_a_missing_library() -> None:
    # the thunk's debug trace logs each dlopen it tries, the ones it falls back from too
    trace = ("pid:14435 tid:0x750a661c8e80 [hsakmt_hsa_loader_init] dlopen libhsa-runtime64.so failed - "
             "libhsa-runtime64.so: cannot open shared object file: No such file or directory")
    assert "rocm-libraries-not-found" not in _by_id(_facts(trace))
    real = ("./llama-server: error while loading shared libraries: libhipblas.so.2: cannot open shared object file: "
            "No such file or directory")
    assert _by_id(_facts(real))["rocm-libraries-not-found"].to_check is None
    assert _by_id(_facts("OSError: libamdhip64.so: cannot open shared object file: No such file or directory"))


def test_a_bare_miopen_unknown_error_on_a_new_apu_is_to_check_not_the_missing_solvers() -> None:
    apu = _gpu("gfx1151", integrated=True)
    found = _by_id(_facts("RuntimeError: miopenStatusUnknownError", apu))["miopen-new-apu-solvers"]
    assert found.to_check is not None
    solver = "RuntimeError: No suitable algorithm was found to execute the required convolution"
    assert _by_id(_facts(solver, apu))["miopen-new-apu-solvers"].to_check is None


def test_a_family_libraries_package_carries_its_gpus_code_without_device_packages() -> None:
    freeze = ("rocm==7.10.0a20251015\nrocm-sdk-core==7.10.0a20251015\nrocm-sdk-libraries-gfx1151==7.10.0a20251015\n"
              "torch==2.10.0a0+rocm7.10.0a20251015\n")
    env = PythonEnv(path=None, torch="2.10.0a0+rocm7.10.0a20251015", build="rocm", rocm_sdk="7.10.0a20251015",
                    kind="recorded")
    apu = _gpu("gfx1151", integrated=True)
    assert "therock-missing-device-package" not in _by_id(_facts(freeze, apu, python_envs=(env,)))
    other = freeze.replace("libraries-gfx1151", "libraries-gfx110X-dgpu")  # another family's build
    assert "therock-missing-device-package" in _by_id(_facts(other, apu, python_envs=(env,)))


def test_the_per_device_override_is_not_the_cause_when_the_plain_one_did_nothing_either() -> None:
    tried = ("Ollama 0.12.4 shows 0 VRAM. I've attempted setting HSA_OVERRIDE_GFX_VERSION_0=12.0.1 or "
             "HSA_OVERRIDE_GFX_VERSION=12.0.1 and neither one affects the outcome.")
    assert _by_id(_facts(tried, _gpu("gfx1200")))["ollama-per-device-override-ignored"].to_check is not None
    set_only = "ollama serve with Environment=\"HSA_OVERRIDE_GFX_VERSION_0=10.3.0\": the GPU is not supported"
    assert _by_id(_facts(set_only, _gpu("gfx1032")))["ollama-per-device-override-ignored"].to_check is None


def test_the_two_known_issues_written_from_their_causes_md_specifications_speak_only_on_their_evidence() -> None:
    on_cpu = "0.30.0 and newer versions: Model runs on CPU\nollama ps\ngemma4:e4b  c6eb  9.5 GB  100% CPU  4096  now"
    apu = _gpu("gfx1150", integrated=True)
    assert _by_id(_facts(on_cpu, apu))["ollama-igpu-dropped-by-default"].to_check is None
    assert "ollama-igpu-dropped-by-default" not in _by_id(_facts(on_cpu, _gpu("gfx1151", integrated=True)))
    enabled = on_cpu + "\nEnvironment=\"OLLAMA_IGPU_ENABLE=1\""
    assert _by_id(_facts(enabled, apu))["ollama-igpu-dropped-by-default"].to_check is not None
    empty = 'Expected integer value from monitor, but got ""'
    assert _by_id(_facts(empty, _gpu("gfx1100")))["amdgpu-runtime-pm-smi-values-empty"].to_check == "a note, not a cause"
    igpu = empty + "\nGPU[0]\t\t: get_power_avg, Unexpected data received"
    assert _by_id(_facts(igpu, _gpu("gfx1100")))["amdgpu-runtime-pm-smi-values-empty"].contradicted is not None


def test_ollamas_gpu_discovery_crash_is_checked_against_its_bundled_targets() -> None:
    text = ('time=2025-10-24 level=INFO msg="failure during GPU discovery" OLLAMA_LIBRARY_PATH=[/usr/lib/ollama/rocm] '
            'extra_envs=map[] error="runner crashed"')
    assert _by_id(_facts(text, _gpu("gfx900")))["ollama-gpu-type-not-in-runtime"].to_check is not None
    assert "ollama-gpu-type-not-in-runtime" not in _by_id(_facts('msg="inference compute" library=rocm', _gpu("gfx900")))


def test_an_out_of_memory_error_alone_is_a_symptom_to_check() -> None:
    found = _by_id(_facts("# HIP Out of memory error in `pytorch-rocm-llms` playbook on Radeon PRO 9700", _gpu("gfx1201")))
    assert found["hip-out-of-memory"].to_check is not None


def test_a_rocm_library_a_tool_cannot_find_is_named_in_words_too() -> None:
    # the loader's own line, now with the thunk (libhsakmt) among ROCm's libraries
    assert "rocm-libraries-not-found" in _by_id(_facts(
        "rocminfo: error while loading shared libraries: libhsakmt.so.1: cannot open shared object file: No such file"))
    # the writer's words for the same failure
    for text in ("After the upgrade `rocminfo` cannot find `libhsakmt.so.1` any more.",
                 "llama-server failed to load libhipblas.so.3 at start."):
        assert "rocm-libraries-not-found" in _by_id(_facts(text, _gpu("gfx900"))), text
    for near in ("rocminfo cannot find the GPU; libhsakmt.so.1 is in /opt/rocm/lib.",
                 "cmake could not find libcudart.so.12",
                 "I can find libamdhip64.so in /opt/rocm/lib"):
        assert "rocm-libraries-not-found" not in _by_id(_facts(near, _gpu("gfx900"))), near


def test_a_dkms_module_only_added_is_a_build_failure_to_check_and_a_stated_one_is_a_cause() -> None:
    # `dkms status` in its old ("amdgpu, 1.9-307: added") and new ("amdgpu/6.3.6: added") forms: the module was
    # never built, for one of two causes (the kernel is outside the release's range, or its headers are missing)
    for line in ("amdgpu, 1.9-307: added", "amdgpu/6.3.6-1781449.22.04: added"):
        found = _by_id(_facts(f"$ dkms status\n{line}\n"))
        assert found["dkms-build-fails-new-kernel"].to_check and found["dkms-kernel-headers-missing"].to_check, line
    for near in ("amdgpu/6.3.6-1781449.22.04, 6.8.0-45-generic, x86_64: installed",
                 "amdgpu, 1.9-307, 4.15.0-39-generic, x86_64: built"):
        assert "dkms-build-fails-new-kernel" not in _by_id(_facts(f"$ dkms status\n{near}\n")), near
    # the module not building on a kernel, in words, is this cause (too new or, as for ROCm 1.9 on 4.4, too old)
    found = _by_id(_facts("The kernel module currently does not build with kernel 4.4 on Ubuntu."))
    assert found["dkms-build-fails-new-kernel"].to_check is None
    for near in ("The module builds with kernel 6.8 just fine.", "I could not build llama.cpp with the kernel headers"):
        assert "dkms-build-fails-new-kernel" not in _by_id(_facts(near)), near


def test_a_bare_hipblas_not_supported_status_is_a_symptom_and_hipblaslt_naming_it_is_the_cause() -> None:
    # HIPBLAS_STATUS_NOT_SUPPORTED is hipBLAS's status for any call its backend does not support; only where the
    # failing call is hipBLASLt's does it show that hipBLASLt has no kernel
    bare = _by_id(_facts("RuntimeError: HIPBLAS_STATUS_NOT_SUPPORTED", _gpu("gfx942")))
    assert bare["hipblaslt-no-kernel"].to_check
    lt = ("RuntimeError: CUDA error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasLtMatmul( ltHandle, "
          "computeDesc.descriptor(), &alpha_val, mat1_ptr, Adesc.descriptor(), ...)`")
    assert _by_id(_facts(lt, _gpu("gfx942")))["hipblaslt-no-kernel"].to_check is None
    assert _by_id(_facts("rocblaslt error: hipBLASLt error: Heuristic Fetch Failed!",
                         _gpu("gfx942")))["hipblaslt-no-kernel"].to_check is None
    assert "hipblaslt-no-kernel" not in _by_id(_facts("HIPBLAS_STATUS_SUCCESS after the update", _gpu("gfx942")))


def test_the_override_that_solved_it_and_a_missing_tensile_file_and_dkms_failing_on_a_kernel_in_words() -> None:
    assert "rdna2-variant-needs-override" in _by_id(_facts(
        "a simple `export HSA_OVERRIDE_GFX_VERSION=10.3.0` solved that", _gpu("gfx1032")))
    assert "rdna2-variant-needs-override" in _by_id(_facts(
        "I fixed it by adding HSA_OVERRIDE_GFX_VERSION=10.3.0 to the service", _gpu("gfx1032")))
    assert "rdna2-variant-needs-override" not in _by_id(_facts(
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 has not solved it", _gpu("gfx1032")))
    assert "tensile-library-missing" in _by_id(_facts("/usr/lib/ollama/rocblas/library TensileLibrary_lazy_gfx1010.dat is missing"))
    assert "tensile-library-missing" in _by_id(_facts("# Missing TensileLibrary_lazy_gfx1010.dat for the RX 5700 XT"))
    assert "tensile-library-missing" not in _by_id(_facts("TensileLibrary_lazy_gfx1030.dat is present in the library dir"))
    for text in ("# AMDGPU DKMS fails to build on Linux 6.15.8", "amdgpu-dkms fails on kernel 6.16.0 again"):
        assert "dkms-build-fails-new-kernel" in _by_id(_facts(text)), text
    for near in ("DKMS builds fine on kernel 6.8", "the build fails on Linux with CMake 3.30"):
        assert "dkms-build-fails-new-kernel" not in _by_id(_facts(near)), near


def test_rocblas_finding_no_tensile_kernels_for_the_gpu_in_its_other_words() -> None:
    # rocBLAS's warning before the error (justxi/rocm#182) and its "Could not load" form (ROCmLibs-for-gfx1103 #12)
    # for a target no ROCm release supports (gfx1103) the line is the cause; for one some release supports (gfx906)
    # with nothing read about the installed stack, a build without it or a broken install is to check
    for line in ("rocBLAS warning: No paths matched /usr/lib64/library/*gfx1103*co. Make sure that "
                 "ROCBLAS_TENSILE_LIBPATH is set correctly.",
                 "rocBLAS error: Could not load /opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1103.dat"):
        assert _by_id(_facts(line, _gpu("gfx1103", integrated=True)))["tensile-library-missing"].to_check is None, line
    gfx906 = ("rocBLAS warning: No paths matched /usr/lib64/library/*gfx906*co. Make sure that ROCBLAS_TENSILE_LIBPATH "
              "is set correctly.")
    assert _by_id(_facts(gfx906, _gpu("gfx906")))["tensile-library-missing"].to_check
    # the closing line alone says only that Tensile did not start: to check
    assert _by_id(_facts("rocBLAS error: Could not initialize Tensile library",
                         _gpu("gfx1103", integrated=True)))["tensile-library-missing"].to_check
    assert "tensile-library-missing" not in _by_id(_facts("rocBLAS info: loaded /opt/rocm/lib/rocblas/library/*gfx1100*co",
                                                          _gpu("gfx1100")))
    assert "hip-out-of-memory" in _by_id(_facts("RuntimeError: HIP error: out of memory", _gpu("gfx1100")))


def test_a_built_in_amdgpu_explains_a_tools_driver_not_loaded_and_render_added_beside_video() -> None:
    # amd-smi reads /sys/module/amdgpu/initstate (ROCm/amdsmi amdsmi_cli/amdsmi_init.py), which a built-in amdgpu has not
    text = ("ERROR:root:Unable to get devices, driver not initialized (amdgpu not found in modules)\n"
            "but I have amdgpu built directly into the kernel, not as a module (CONFIG_DRM_AMDGPU=y)\n")
    found = diagnose(_facts(text))
    assert found[0].id == "amdgpu-builtin-not-module" and found[0].to_check is None
    assert "amdgpu-builtin-not-module" not in _by_id(_facts("ROCk module is NOT loaded, possibly no GPU devices\n"))
    assert "amdgpu-builtin-not-module" not in _by_id(_facts("I build my kernels with CONFIG_DRM_AMDGPU=y and all works\n"))
    # already in video, the render group had to be added too (ROCm/legacy-rocm-build#1826)
    said = "Note: the user is already in the `video` group.\nI had to add the user to the `render` group as well.\n"
    assert "kfd-render-group-not-video" in _by_id(_facts(said, _gpu("gfx1033", integrated=True)))
    assert "kfd-render-group-not-video" not in _by_id(_facts("I added the user to the render group; still nothing.\n",
                                                             _gpu("gfx1033", integrated=True)))


def test_a_kernel_update_that_solved_it_is_the_kernel_userspace_gap_to_check() -> None:
    for text in ("I already solved it, apparently using kernel version 5 from 22.04 and updating to 24.04's 6.8",
                 "Updating the host kernel fixed it."):
        found = _by_id(_facts(text, _gpu("gfx803")))["incompatible-kernel-userspace"]
        assert found.to_check, text
    assert "incompatible-kernel-userspace" not in _by_id(_facts("I updated the kernel but it is not fixed.", _gpu("gfx803")))


def test_tensorflow_ignoring_an_rdna2_variant_for_its_amdgpu_version_is_the_variant_needing_the_override() -> None:
    line = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1990] Ignoring visible gpu device (device: 0, name: "
            "AMD Radeon RX 6600 XT, pci bus id: 0000:0c:00.0) with AMDGPU version : gfx1032. The supported AMDGPU "
            "versions are gfx1030, gfx900, gfx906, gfx908, gfx90a.")
    found = _by_id(_facts(line, _gpu("gfx1032")))["rdna2-variant-needs-override"]
    # listed; whether the override is already set is not in a log line, so it is to check, not a cause
    assert found.to_check is not None and "HSA_OVERRIDE_GFX_VERSION is set" in found.to_check
    # the same line for a card of another family, or for a core count, says nothing of the override
    other = line.replace("gfx1032.", "gfx1102.").replace("RX 6600 XT", "RX 7600")
    assert "rdna2-variant-needs-override" not in _by_id(_facts(other, _gpu("gfx1102")))
    cores = ("Ignoring visible gpu device (device: 0, name: AMD Radeon RX 6600 XT, pci bus id: 0000:0c:00.0) with core "
             "count: 8. The minimum required count is 16.")
    assert "rdna2-variant-needs-override" not in _by_id(_facts(cores, _gpu("gfx1032")))


def test_adding_the_user_to_render_and_video_that_worked_is_the_missing_membership() -> None:
    text = ("In that case add your user to those groups.\n`sudo usermod -a -G render me` `sudo usermod -a -G video me`\n"
            "Then do a full reboot, not just a logout and login.\n\nOmg it really worked, it took quite a time!")
    found = _by_id(_facts(text, _gpu("gfx1032")))["not-in-render-group"]
    assert found.to_check is None
    for near in ("sudo usermod -a -G render me\nI rebooted but it still doesn't work.",
                 "I added the user to render and video, rebooted, no luck. Then I reinstalled torch and it worked.",
                 "sudo usermod -a -G docker me\nthat worked for docker"):
        assert "not-in-render-group" not in _by_id(_facts(near, _gpu("gfx1032"))), near
    # the groups the machine shows decide against it
    member = Driver(in_render_group=True, in_video_group=True, user="me")
    assert "not-in-render-group" not in _by_id(_facts(text, _gpu("gfx1032"), driver=member))


def test_dpkg_naming_a_distribution_package_as_owner_of_hips_headers_is_the_shadowing_to_check() -> None:
    text = "$ dpkg -S /usr/include/hip/hip_runtime_api.h\nlibamdhip64-dev: /usr/include/hip/hip_runtime_api.h\n"
    found = _by_id(_facts(text, _gpu("gfx1100")))["distro-rocm-packages-shadow"]
    # which ROCm the build should have used is not in those lines: to check, not a cause
    assert found.to_check is not None and "beside AMD's" in found.to_check
    for near in ("rocm-core: /opt/rocm-6.4.1/.info/version", "libamdhip64-dev is what Debian calls the HIP headers"):
        assert "distro-rocm-packages-shadow" not in _by_id(_facts(near, _gpu("gfx1100"))), near


def test_a_stalling_convolution_is_not_read_from_install_or_converted() -> None:
    assert "miopen-first-conv-slow" not in _by_id(_facts(
        "the project has been converted to .toml and thus pip install -r requirements-dev.txt won't work", _gpu("gfx1102")))
    for text in ("The first conv2d hangs for ten minutes", "MIOpen stalls on the first convolution",
                 "VAE decode takes several minutes"):
        assert "miopen-first-conv-slow" in _by_id(_facts(text, _gpu("gfx1102"))), text


def test_a_cuda_torch_is_the_cause_where_its_user_says_the_machine_has_an_amd_gpu() -> None:
    # no tool names the GPU, but the reporter says what it is for: the CUDA wheel cannot use it
    cuda = PythonEnv(path="/home/u/.local", torch="2.0.1", build="cuda")
    said = "is there a torch ROCm version needed to make this work with ROCm enabled AMD GPUs?"
    assert _by_id(_facts(said, python_envs=(cuda,)))["torch-not-rocm-build"].to_check is None
    # near misses: a CUDA torch on a machine nothing says has an AMD GPU, and one said to have none
    for near in ("pip show torch below, the import works", "this box has no AMD GPU, only the CI runner"):
        assert "torch-not-rocm-build" not in _by_id(_facts(near, python_envs=(cuda,))), near
    # another person's post speaking of their AMD GPU says nothing about this machine
    assert "torch-not-rocm-build" not in _by_id(_facts(said, own=False, python_envs=(cuda,)))


def test_a_flatpak_sandbox_given_every_device_that_then_worked_is_kfd_inaccessible() -> None:
    # Alpaca#139: only --device=all shows /dev/kfd inside the sandbox; the reporter confirms it
    fixed = ("Could you run this and test if it works?\n\n`sudo flatpak override --device=all com.jeffser.Alpaca`\n\n"
             "@Jeffser That worked!")
    assert "kfd-inaccessible" in _by_id(_facts(fixed, _gpu("gfx1030")))
    for near in (fixed.replace("--device=all", "--device=dri"),
                 fixed.replace("That worked!", "still no GPU, it doesn't work"),
                 "I ran flatpak override --device=all and the models load, slowly, on the CPU."):
        assert "kfd-inaccessible" not in _by_id(_facts(near, _gpu("gfx1030"))), near


def test_an_index_past_the_gpus_the_prose_names_is_no_cause_where_others_may_exist() -> None:
    # HIP_VISIBLE_DEVICES=1 and only "my 7800 XT" known: index 1 may be the card beside an iGPU that is index 0
    env = (EnvSetting("HIP_VISIBLE_DEVICES", "1", "paste.txt:3"),)
    said = "Ollama does not detect my AMD GPU 7800xt and reverts to CPU mode."
    prose = Facts(gpus=(_gpu("gfx1101"),), env=env, origin="test",
                  texts=(EvidenceText("paste.txt", said, 1, "text", True),))
    assert "visible-devices-hide-all" not in _by_id(prose)
    # ... and where the runtime says it found no GPU, the index is what to check
    failed = replace(prose, texts=(EvidenceText("paste.txt", said + "\nRuntimeError: No HIP GPUs are available", 1, "text",
                                                True),))
    assert _by_id(failed)["visible-devices-hide-all"].to_check is not None
    # rocminfo lists every GPU: one GPU, index 1 names none of them
    listed = replace(prose, texts=prose.texts + (EvidenceText("paste.txt", "  Name:    gfx1101\n  Device Type: GPU", 5,
                                                                          "rocminfo.txt", True),))
    assert _by_id(listed)["visible-devices-hide-all"].to_check is None
    # an empty list or -1 hides every GPU however many there are
    hidden = replace(prose, env=(EnvSetting("HIP_VISIBLE_DEVICES", "-1", "paste.txt:3"),))
    assert _by_id(hidden)["visible-devices-hide-all"].to_check is None
