"""Issue 21, the in-sample recorded machines that were not read fully: the general rules that read them, each shown
on a small text of its own, with the case that must not be read that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from reading_helpers import detect_paste, read_mentions, said
from wizard.kb import load_kb
from wizard.kb.names import name_keys
from wizard.parsers.paste import split_paste

pytestmark = pytest.mark.unit


def _gpus(facts: object) -> list[tuple[str | None, bool | None]]:
    return [(g.gfx, g.integrated) for g in facts.gpus]


# --------------------------------------------------------------------------- Hawaii: R9 290/390 are gfx702


def test_an_r9_300_card_named_with_its_series_word_is_found() -> None:
    # pci.ids/amdgpu.ids name the Hawaii PRO "AMD Radeon R9 290 / AMD Radeon 390": people write "R9 390"
    kb = load_kb()
    assert {g.pci_id for g in kb.gpus_by_name("R9 390")} == {"1002:67b1"}
    assert {g.pci_id for g in kb.gpus_by_name("Radeon R9 390X")} == {"1002:67b0"}
    # a series word joined to a four-digit model is another card's name, not "R9" + a model
    assert name_keys("R9700") == ["r9700"]
    assert {g.gfx for g in kb.gpus_by_name("AI PRO R9700")} == {"gfx1201"}


def test_the_radeon_r9_290_and_390_are_gfx702_and_firepro_hawaii_gfx701() -> None:
    # LLVM's AMDGPUUsage processor table: gfx702 is the Radeon R9 290/290x/R390/R390x, gfx701 the FirePro Hawaii parts
    kb = load_kb()
    assert kb.gpu_by_pci("1002:67b1").gfx == "gfx702"  # type: ignore[union-attr]
    assert kb.gpu_by_pci("1002:67b0").gfx == "gfx702"  # type: ignore[union-attr]
    assert kb.gpu_by_pci("1002:67a0").gfx == "gfx701"  # type: ignore[union-attr]


def test_an_r9_390_named_in_prose_is_a_discrete_gfx702(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "Some notes on my box.\nI'm on FX-8350 and R9 390, the card works for OpenGL.\n")
    assert _gpus(facts) == [("gfx702", False)]


def test_an_r9_390_that_rocminfo_lists_as_gfx701_is_reported_so(tmp_path: Path) -> None:
    # KFD gives every Hawaii gfx_target_version 70001: the runtime prints gfx701, the card (its chip id) is a gfx702
    text = ("$ rocminfo\nROCk module is loaded\n*******\nAgent 2\n*******\n"
            "  Name:                    gfx701\n  Marketing Name:          Hawaii PRO [Radeon R9 290/390]\n"
            "  Device Type:             GPU\n  Chip ID:                 26545(0x67b1)\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.gfx, g.gfx_reported) for g in facts.gpus] == [("gfx702", "gfx701")]


# --------------------------------------------------------------------------- "RTX 480": a slip for AMD's RX 480


def test_a_three_digit_rtx_is_amds_polaris_rx(tmp_path: Path) -> None:
    # NVIDIA's RTX cards all have four digits (RTX 2060 ... RTX 5090): "RTX 480" can only be the RX 480
    assert said("+1 same problem. RTX 480 ubuntu 18.04", "gpu_prose") == ["RTX 480"]
    assert {g.gfx for g in load_kb().gpus_by_name("RTX 580")} == {"gfx803"}
    facts = detect_paste(tmp_path, "# hipErrorNoBinaryForGpu\n\nsame problem here. RTX 480 on ubuntu\n")
    assert _gpus(facts) == [("gfx803", False)]
    # NVIDIA's own names are not read as AMD cards
    assert said("my RTX 4080 works, my old GTX 480 too", "gpu_prose") == []
    assert load_kb().gpus_by_name("RTX 4080") == ()


# --------------------------------------------------------------------------- "Vega 7": an iGPU by its compute units


def test_a_vega_igpu_named_by_its_compute_units_is_the_processors_with_that_many() -> None:
    # AMD's spec CSV: every "Radeon Vega N Graphics" model has N graphics cores; the Ryzen 4000/5000 parts with 7
    # (4700U, 5500U, 5600U...) carry the gfx90c GPU (Renoir, Lucienne, Cezanne)
    kb = load_kb()
    assert {(g.gfx, g.integrated) for g in kb.gpus_by_name("AMD Radeon Vega 7")} == {("gfx90c", True)}
    assert dict(kb.apu_for_cpu("Ryzen 7 4700U").graphics_cores)["Ryzen 7 4700U"] == 7  # type: ignore[union-attr]
    # a name a row carries is that row's ("Radeon Vega 8 Graphics": Raven / Picasso), and a count no processor has
    # is nothing
    assert {g.gfx for g in kb.gpus_by_name("Radeon Vega 8")} == {"gfx902"}
    assert kb.gpus_by_name("Vega 2") == ()


def test_a_vega_7_named_in_a_title_is_an_integrated_gfx90c(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "# Getting HIP in Blender on my AMD Vega 7 GPU\n\nBlender shows no HIP device.\n")
    assert _gpus(facts) == [("gfx90c", True)]


def test_graphics_cores_must_name_a_listed_processor() -> None:
    from wizard.kb.parse import Problems, parse_apus

    row = {"cpus": ["Ryzen 7 4700U"], "graphics": "AMD Radeon Graphics", "pci_id": "1002:1636",
           "sources": ["https://example.org/amd-cpus.csv"]}
    doc = {"_meta": {"description": "d", "sources": ["https://example.org/amd-cpus.csv"]}, "apus": [
        dict(row, graphics_cores={"Ryzen 7 4700U": 7}), dict(row, graphics_cores={"Ryzen 5 4500U": 6}),
        dict(row, graphics_cores={"Ryzen 7 4700U": 0})]}
    problems = Problems("apus.json")
    rows = parse_apus(doc, problems)
    assert [r.graphics_cores for r in rows] == [(("Ryzen 7 4700U", 7),)]
    assert len(problems.lines) == 2


# --------------------------------------------------------------------------- a title about the image the writer runs


def test_a_title_about_the_docker_image_run_places_the_machine_in_a_container(tmp_path: Path) -> None:
    text = ("# Official ROCm docker images do not support the RX 7600 (gfx1102).\n\n"
            "alice · description · 2025-10-19\nHIP error: invalid device function\n")
    assert detect_paste(tmp_path, text).in_container is True
    # a question or a request for an image is not a run in one
    assert said("# Is there a docker image for gfx1102?", "container") == []
    assert said("# Please publish a docker image for gfx1102", "container") == []


# --------------------------------------------------------------------------- "until gfx1151 support is enabled"


def test_the_target_whose_support_is_missing_names_the_gpu_where_nothing_else_does(tmp_path: Path) -> None:
    text = ("# HIP error: invalid device function\n\n"
            "bob · comment · 2025-10-02\n"
            "Until gfx1151 support is enabled use `export HSA_OVERRIDE_GFX_VERSION=11.0.0` before running your app\n")
    facts = detect_paste(tmp_path, text)
    assert _gpus(facts) == [("gfx1151", True)]
    assert facts.env == ()  # the override is advice, not in force
    # a GPU the texts name otherwise is the machine's; the support talk does not add or replace one
    facts = detect_paste(tmp_path, text.replace("bob · comment", "I run an RX 7900 XTX.\n\nbob · comment"))
    assert _gpus(facts) == [("gfx1100", False)]
    # a document's name is no statement of support
    assert said("see the gfx1151 support matrix", "gfx_rt") == []


# --------------------------------------------------------------------------- GPUs named with their roles and indexes


def test_gpus_named_with_their_roles_are_each_a_gpu_of_the_machine() -> None:
    named = [(m.value, m.detail) for m in read_mentions("I have tried with iGPU 680M and dGPU RX 6500M, no luck")
             if m.kind == "gpu_name"]
    assert named == [("680M", "label"), ("RX 6500M", "label")]
    # a role word with no GPU after it names none
    assert said("my iGPU is disabled in the BIOS", "gpu_name") == []


def test_a_visible_devices_comment_gives_the_named_gpu_its_index(tmp_path: Path) -> None:
    assert [(m.value, m.detail) for m in read_mentions("HIP_VISIBLE_DEVICES=0  # or 1 for 680M")
            if m.kind == "gpu_name"] == [("680M", "index 1")]
    text = ("I have tried with iGPU 680M and dGPU RX 6500M using these variables:\n\n```\n"
            "HIP_VISIBLE_DEVICES=0  # or 1 for 680M\n```\n")
    facts = detect_paste(tmp_path, text)
    # the GPU given index 1 is second; the other takes the free place 0
    assert _gpus(facts) == [("gfx1034", False), ("gfx1035", True)]
    # without an index the GPUs stay in the order they were named
    facts = detect_paste(tmp_path, text.replace("  # or 1 for 680M", ""))
    assert _gpus(facts) == [("gfx1035", True), ("gfx1034", False)]


def test_an_override_does_not_reach_a_gpu_the_visible_devices_hide(tmp_path: Path) -> None:
    from wizard.diagnose import diagnose

    text = ("I have tried with iGPU 680M and dGPU RX 6500M using these variables:\n\n```\n"
            "HSA_OVERRIDE_GFX_VERSION=10.3.0\n{}```\n")
    ids = [f.id for f in diagnose(detect_paste(tmp_path, text.format("")))]  # type: ignore[arg-type]
    assert "override-applies-to-all-gpus" in ids
    ids = [f.id for f in diagnose(detect_paste(tmp_path, text.format("ROCR_VISIBLE_DEVICES=1\n")))]  # type: ignore[arg-type]
    assert "override-applies-to-all-gpus" not in ids


# --------------------------------------------------------------------------- bare `amd-smi`: its boxed table


_AMD_SMI_BOX = """\
+------------------------------------------------------------------------------+
| AMD-SMI 26.1.0+5df6c765      amdgpu version: 6.14.14  ROCm version: 7.0.2    |
| VBIOS version: 023.008.000.068.000001                                        |
| Platform: Linux Baremetal                                                    |
|-------------------------------------+----------------------------------------|
| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |
| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |
|=====================================+========================================|
| 0000:03:00.0 AMD Radeon RX 7900 XTX | 2 %      38 °C   0            29/327 W |
|   0       0     N/A             N/A | 1 %      0.0 %           521/24560 MB |
|-------------------------------------+----------------------------------------|
| 0000:0a:00.0    AMD Radeon RX 7600 | 0 %      33 °C   0             4/165 W |
|   1       1     N/A             N/A | 0 %      0.0 %            12/8176 MB |
+-------------------------------------+----------------------------------------+
"""


def test_bare_amd_smi_lists_each_gpu_by_place_and_name_with_the_versions() -> None:
    from wizard.parsers.amd_smi import parse_amd_smi

    smi = parse_amd_smi(_AMD_SMI_BOX)
    assert [(g.index, g.bdf, g.market_name) for g in smi.gpus] == [
        (0, "0000:03:00.0", "AMD Radeon RX 7900 XTX"), (1, "0000:0a:00.0", "AMD Radeon RX 7600")]
    assert (smi.tool_version, smi.amdgpu_version, smi.rocm_version) == ("26.1.0+5df6c765", "6.14.14", "7.0.2")


def test_a_pasted_amd_smi_box_gives_the_gpus_and_a_loaded_driver(tmp_path: Path) -> None:
    # no command line above the box (a paste that lost it): the box's own header says what it is
    facts = detect_paste(tmp_path, "My two cards hang in rocminfo.\n\n" + _AMD_SMI_BOX)
    assert [(g.gfx, g.bdf, g.integrated) for g in facts.gpus] == [
        ("gfx1100", "0000:03:00.0", False), ("gfx1102", "0000:0a:00.0", False)]
    assert facts.driver.loaded is True
    assert facts.rocm.version == "7.0.2"


def test_amd_smi_that_lists_no_gpu_does_not_say_the_driver_is_loaded(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "$ amd-smi list\nAMDSMI Tool: 24.6.3+9578815 | AMDSMI Library version: 24.6.3.0 | "
                              "ROCm version: 6.2.4\n")
    assert facts.driver.loaded is None


# --------------------------------------------------------------------------- a person's target beside a named card


def test_a_target_written_beside_a_card_of_another_target_is_the_cards(tmp_path: Path) -> None:
    # the RX 9070 XT is a gfx1201 (the gfx1200 is the RX 9060 XT): the title's "(gfx1200)" is the reporter's slip
    facts = detect_paste(tmp_path, "# RX 9070 XT (gfx1200) hangs in HSA discovery\n\n" + _AMD_SMI_BOX.replace(
        "AMD Radeon RX 7900 XTX", "AMD Radeon RX 9070 XT ").replace("   AMD Radeon RX 7600", "AMD Radeon RX 9070 XT"))
    assert [g.gfx for g in facts.gpus] == ["gfx1201", "gfx1201"]
    facts = detect_paste(tmp_path, "# RX 9070 XT (gfx1200) hangs when ollama starts\n\nNothing else to add.\n")
    assert _gpus(facts) == [("gfx1201", False)]


def test_a_target_written_beside_its_own_card_or_in_a_tools_output_is_read_as_written(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "# RX 6700 XT (gfx1031) hangs when ollama starts\n\nNothing else to add.\n")
    assert _gpus(facts) == [("gfx1031", False)]
    # torch's collect_env under HSA_OVERRIDE_GFX_VERSION=10.3.0 reports the target the runtime was told
    facts = detect_paste(tmp_path, "$ python -m torch.utils.collect_env\nCollecting environment information...\n"
                              "PyTorch version: 2.5.1+rocm6.2\nROCM used to build PyTorch: 6.2.41133-dd7f95766\n"
                              "GPU models and configuration: AMD Radeon RX 6700 XT (gfx1030)\n"
                              "HIP runtime version: 6.2.41133\n")
    assert [(g.gfx, g.gfx_reported) for g in facts.gpus] == [("gfx1031", "gfx1030")]


# --------------------------------------------------------------------------- a codename joined into a host or runner name


def test_a_two_word_codename_joined_by_a_hyphen_names_the_gpu(tmp_path: Path) -> None:
    # CI runners and hosts are named after the machine's APU ("linux-strix-halo-gpu-rocm-4", "strix_point-01")
    assert said("the job on linux-strix-halo-gpu-rocm-4 failed", "gpu_prose") == ["strix-halo"]
    assert said("queued on strix_point-01", "gpu_prose") == ["strix_point"]
    facts = detect_paste(tmp_path, "# `ci-strix-halo-2` fails its smoke test\n\nrocminfo exits 1 on that runner.\n")
    assert _gpus(facts) == [("gfx1151", True)]
    # a path or a longer word is not the codename
    assert said("cd /srv/strix-halo/logs", "gpu_prose") == []
    assert said("the strix-haloed runner", "gpu_prose") == []
    # a repository or guide about that GPU, linked: not the machine's GPU
    assert said("as https://github.com/someone/amd-strix-halo-guides says", "gpu_prose") == []
    assert said("cloned ~/src/strix_point-notes first", "gpu_prose") == []


# --------------------------------------------------------------------------- /dev/kfd and the groups, as people write them


def test_dev_kfd_exists_where_ls_lists_it_or_a_sentence_gives_its_owner(tmp_path: Path) -> None:
    # `ls -l /dev | grep kfd` prints the bare name after the character device's mode and numbers
    assert said("crw-rw----   1 root    video   236,   0 Jan  3 09:12 kfd", "kfd") == ["present"]
    assert said("after the upgrade /dev/kfd is owned by group `render`, not video", "kfd") == ["present"]
    assert said("my `/dev/kfd` device has the wrong permissions", "kfd") == ["present"]
    facts = detect_paste(tmp_path, "rocminfo only works with sudo.\n\n$ ls -l /dev | grep kfd\n"
                              "crw-------   1 root    root    236,   0 Jan  3 09:12 kfd\n")
    assert facts.driver.kfd_present is True
    # an instruction or a question about the owner says nothing about this machine's /dev/kfd
    assert said("please check that /dev/kfd is owned by render", "kfd") == []
    assert said("crw-rw----   1 root    video   236,   0 Jan  3 09:12 kfdtest.log", "kfd") == []


def test_the_reporter_in_the_render_group_by_their_own_words_or_a_quoted_groups(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "rocminfo fails. I am already a member of the render group.\n\n"
                              "groups shows: adm cdrom sudo video plugdev\n")
    d = facts.driver
    assert (d.in_render_group, d.in_video_group, d.user) == (True, True, None)
    assert said("I'm not a member of the video group", "video_group") == ["false"]
    # a condition, or a group the quoted line does not name, is not read
    assert said("Can you check if I am a member of the render group?", "render_group") == []
    assert said("groups shows: adm cdrom sudo plugdev", "render_group") == []


def test_the_kfd_error_in_a_quoted_title_ends_at_the_quote() -> None:
    assert said("# 'Unable to open /dev/kfd read-write: Operation not permitted' on Pop OS", "kfd") == [
        "Operation not permitted"]
    assert said("Unable to open /dev/kfd read-write: Invalid argument", "kfd") == ["Invalid argument"]


# --------------------------------------------------------------------------- a thread's title without its opening post


def test_a_setting_in_the_title_of_a_thread_without_its_opening_post_is_read(tmp_path: Path) -> None:
    # the stored thread keeps only a later comment: the title still says what the machine had set
    text = ("acme/tool · issue #12 · open · Go\n# ROCR_VISIBLE_DEVICES=-1 hides the GPU from the server\n\n"
            "bob · comment · 2026-01-02\nSame here on my box, it falls back to the CPU.\n")
    facts = detect_paste(tmp_path, text)
    assert [(s.name, s.value) for s in facts.env] == [("ROCR_VISIBLE_DEVICES", "-1")]
    # a post that sets the variable itself wins over the title
    facts = detect_paste(tmp_path, text + "\n$ export ROCR_VISIBLE_DEVICES=0\n")
    assert [(s.name, s.value) for s in facts.env] == [("ROCR_VISIBLE_DEVICES", "0")]


# --------------------------------------------------------------------------- the writer's environment is a container image


def test_the_writer_running_a_container_image_is_in_a_container(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "Training hangs at step 3.\n\nMy setup uses the `rocm/pytorch:rocm6.4_ubuntu24.04_py3.12` "
                              "docker image with flash-attn built for ROCm. The host has 2 GPUs.\n")
    assert facts.in_container is True
    assert said("I'm running the rocm/vllm docker image on the node", "container") == ["true"]
    # the past, a hypothetical, a denial: no statement about the run that failed
    assert said("I used the docker image before, now I run it natively.", "container") == []
    assert said("I would use a docker image if it had gfx1151", "container") == []
    assert said("We don't run a docker image.", "container") == []


def test_the_writers_own_container_or_the_image_they_pulled_is_a_container(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "I moved my Debian 12 container to ROCm 6.4 and rocminfo now fails.\n")
    assert facts.in_container is True
    assert said("I pulled docker and ran the test:", "container") == ["true"]
    assert said("We pulled the rocm/pytorch:latest docker image", "container") == ["true"]
    # the image as a thing, a hypothetical, the code: not where the run was
    assert said("my container image is 40 GB", "container") == []
    assert said("if my container had /dev/kfd it would work", "container") == []
    assert said("I pulled the latest code and rebuilt", "container") == []


# --------------------------------------------------------------------------- ROCm's version as people write it


def test_rocm_with_its_version_in_a_parenthesis_after_the_word(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "I installed the newest Rocm (apt says version 5.7.1) on Ubuntu 22.04 and rocminfo hangs.\n")
    assert facts.rocm.version == "5.7.1"
    assert said("installed Rocm v6.1 today", "rocm") == ["6.1"]
    # a parenthesis that gives another program's version is not ROCm's
    assert said("ROCm (and python version 3.10.12)", "rocm") == []


def test_dev_kfd_absent_where_the_reporter_says_dev_has_none(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "rocminfo fails with 4104. I also noticed there is no kfd device in /dev at all.\n")
    d = facts.driver
    assert (d.kfd_present, d.kfd_accessible) == (False, False)
    assert said("I have no `/dev/kfd` on this box", "kfd") == ["No such file or directory"]
    # a condition, or no kfd lines in a log, says nothing about /dev
    assert said("If there is no /dev/kfd, load amdgpu first", "kfd") == []
    assert said("no kfd messages in dmesg", "kfd") == []


def test_a_target_written_beside_a_card_under_an_override_is_what_the_runtime_reports(tmp_path: Path) -> None:
    # the override in force gives gfx1030: "RX 6700 XT (gfx1030)" is the card and what the runtime reports for it
    facts = detect_paste(tmp_path, "# ollama crashes\n\nGPU: RX 6700 XT (gfx1030)\n\n```\nexport HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
                              "ollama serve\n```\n")
    assert [(g.gfx, g.gfx_reported) for g in facts.gpus] == [("gfx1031", "gfx1030")]
    # without an override, the same line is one card, not a second GPU of the written target
    facts = detect_paste(tmp_path, "# ollama crashes\n\nGPU: RX 6700 XT (gfx1030)\n")
    assert _gpus(facts) == [("gfx1031", False)]


# --------------------------------------------------------------------------- a nightly's whole version in a banner


def test_a_banner_keeps_a_nightly_torch_version_whole() -> None:
    # ComfyUI prints "pytorch version: 2.11.0.dev20260120+rocm7.1": the nightly's date and build are its version
    assert said("pytorch version: 2.11.0.dev20260120+rocm7.1\n", "torch") == ["2.11.0.dev20260120+rocm7.1"]
    assert said("pytorch version: 2.7.0a0+git1234\n", "torch") == ["2.7.0a0+git1234"]
    assert said("pytorch version: 2.5.1+rocm6.2\n", "torch") == ["2.5.1+rocm6.2"]
    # a build's version is not torch's
    assert said("built with torch: 2.5.1+rocm6.2\n", "torch") == []


# --------------------------------------------------------------------------- /etc/redhat-release's line labels the OS


def test_a_release_files_line_labels_the_machines_distribution(tmp_path: Path) -> None:
    text = ("I have tested with multiple operating systems including Rocky8 and current Ubuntu Server (24.x.x).\n"
            "`Rocky Linux release 8.10 (Green Obsidian)`\n")
    facts = detect_paste(tmp_path, text)
    assert (facts.os.id, facts.os.version) == ("rocky", "8.10")
    assert said("Oracle Linux Server release 8.9\n", "os") == ["ol 8.9", "ol"]
    assert said("Fedora release 39 (Thirty Nine)\n", "os")[0] == "fedora 39"


def test_a_release_named_in_a_sentence_is_not_a_release_files_line(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "It broke after the Rocky Linux release 8.10 came out, on my Ubuntu 22.04 box too.\n")
    assert facts.os.id is None


# --------------------------------------------------------------------------- a userland on another distribution's kernel


@pytest.mark.parametrize(("os_id", "kernel", "container"), [
    ("ubuntu", "6.17.7-arch1-1", True),             # vLLM's Ubuntu image on an Arch host
    ("ubuntu", "4.18.0-553.8.1.el8_10.x86_64", True),
    ("fedora", "6.8.12-4-pve", True),               # a Fedora LXC on Proxmox VE
    ("debian", "6.11.4-301.fc41.x86_64", True),
    ("rocky", "6.8.0-45-generic", True),
    ("ubuntu", "6.8.0-45-generic", False),
    ("pop", "6.8.0-45-generic", False),
    ("linuxmint", "6.1.0-18-amd64", False),         # LMDE runs Debian's kernel
    ("endeavouros", "6.17.7-arch1-1", False),
    ("debian", "6.18.7-061807-generic", False),     # kernel.ubuntu.com's mainline build: anyone installs it
    ("neon", "6.8.0-45-generic", False),            # a distribution the table does not know is never judged
    ("ubuntu", "6.8.0-microsoft-standard-WSL2", False),
    ("ubuntu", None, False),
])
def test_a_kernel_built_by_another_distribution(os_id: str, kernel: str | None, container: bool) -> None:
    from wizard.parsers.uname import kernel_of_another_distribution

    assert kernel_of_another_distribution(os_id, kernel) is container


@pytest.mark.parametrize(("version", "kernel", "container"), [
    ("24.04", "5.15.0-119-generic", True),   # 22.04's GA kernel under a 24.04 userland
    ("22.04", "5.4.0-187-generic", True),
    ("24.04", "6.8.0-45-generic", False),    # 24.04's own GA kernel
    ("22.04", "6.8.0-45-generic", False),    # 22.04's HWE kernel
    ("20.04", "5.15.0-119-generic", False),
    ("24.10", "5.15.0-119-generic", False),  # not an LTS in the table: not judged
    ("24.04", "5.15.7-051507-generic", False),  # a mainline build
])
def test_an_ubuntu_lts_userland_on_an_older_releases_kernel(version: str, kernel: str, container: bool) -> None:
    from wizard.parsers.uname import kernel_of_another_distribution

    assert kernel_of_another_distribution("ubuntu", kernel, version) is container


def test_collect_env_run_in_an_image_on_another_distributions_kernel_is_in_a_container(tmp_path: Path) -> None:
    text = ("OS                           : Ubuntu 22.04.5 LTS (x86_64)\n"
            "Python platform              : Linux-6.17.7-arch1-1-x86_64-with-glibc2.35\n")
    assert detect_paste(tmp_path, text).in_container is True
    same = ("OS                           : Ubuntu 22.04.5 LTS (x86_64)\n"
            "Python platform              : Linux-6.8.0-45-generic-x86_64-with-glibc2.35\n")
    assert detect_paste(tmp_path, same).in_container is None


# --------------------------------------------------------------------------- kernels, nix-info, Strix Halo's names


def test_an_arch_kernel_release_with_its_package_release_is_the_kernel() -> None:
    assert said("Mine works fine. Arch Linux + Linux 6.15.7-arch1-1\n", "kernel") == ["6.15.7-arch1-1"]
    assert said("Linux 6.8.1-arch1\n", "kernel") == ["6.8.1-arch1"]
    assert said("see 6.15.7-arch1-1-foo.patch\n", "kernel") == []


def test_nix_infos_host_os_line_gives_the_kernel_and_the_release(tmp_path: Path) -> None:
    text = ' - system: `"x86_64-linux"`\n - host os: `Linux 6.8.7, NixOS, 24.05 (Uakari), 24.05.20240427.58a1abd`\n'
    facts = detect_paste(tmp_path, text)
    assert (facts.os.id, facts.os.version, facts.os.kernel) == ("nixos", "24.05", "6.8.7")
    assert said("the host os: Linux, NixOS works\n", "os") == ["nixos"]  # no release: only the name


@pytest.mark.parametrize(("title", "cpu"), [
    ("# ComfyUI crashes on image generation on AMD 395 AI MAX+", "Ryzen AI Max+ 395"),
    ("# llama.cpp segfault on an AI Max+ 395 box", "Ryzen AI Max+ 395"),
    ("# slow prompt processing, AI MAX PRO 390", "Ryzen AI Max PRO 390"),
    ("# Ryzen AI MAX+ 395 hangs", "Ryzen AI MAX+ 395"),
])
def test_strix_halo_written_without_ryzen_is_the_processor(title: str, cpu: str) -> None:
    assert said(title + "\n", "cpu_title") == [cpu]
    assert load_kb().gpu_for_cpu(cpu).gfx == "gfx1151"  # type: ignore[union-attr]


def test_a_number_beside_ai_is_not_a_processor() -> None:
    assert said("# model 395 AI things\n", "cpu_title") == []
    assert said("# AI Max 8060 benchmark\n", "cpu_title") == []
    assert said("# Ryzen AI Max+ 395 hangs\n", "cpu_title") == ["Ryzen AI Max+ 395"]  # counted once


def test_a_markdown_tables_kernel_row_is_the_kernel() -> None:
    assert said("| Kernel | 6.12.101+deb13-amd64 |\n", "kernel") == ["6.12.101+deb13-amd64"]
    assert said("| **Kernel version** | `6.8.0-45-generic` |\n", "kernel") == ["6.8.0-45-generic"]
    assert said("| kernel | none |\n", "kernel") == []
    assert said("| Kernel driver | amdgpu |\n", "kernel") == []


# --------------------------------------------------------------------------- DKMS in its other words, ROCmN, os-release


@pytest.mark.parametrize("line", [
    "amdgpu, 2.2-31, 4.15.0-46-generic, x86_64: installed",                 # dkms status, a two-part version
    "rock-dkms/Ubuntu 16.04,now 2.1-96 all [installed,automatic]",           # apt's installed list, ROCm's old name
    "filename:       /lib/modules/4.15.0-46-generic/updates/dkms/amdgpu.ko",  # modinfo of a DKMS-built module
])
def test_the_amdgpu_dkms_module_in_its_other_words(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, line + "\n").driver.kind == "dkms"


def test_an_in_tree_module_path_is_not_dkms(tmp_path: Path) -> None:
    text = "filename: /lib/modules/6.8.0-45-generic/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.zst\n"
    assert detect_paste(tmp_path, text).driver.kind != "dkms"


def test_llama_cpps_rocm_device_line_gives_the_hip_index(tmp_path: Path) -> None:
    text = ("- GPU: AMD Radeon RX 7800 XT (`gfx1101`), also tested with an RX 6600 XT (`gfx1032`) present\n"
            "Device enumeration succeeds (e.g. `ROCm1: AMD Radeon RX 7800 XT (16368 MiB, 16146 MiB free)`)\n")
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1032", "gfx1101"]
    assert said("ROCm 6: Radeon support\n", "gpu_index") == []  # a release, not a device


def test_os_releases_version_line_pasted_bare_is_ubuntus_release(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, 'OS:\nNAME="Ubuntu"\nVERSION="24.04.3 LTS (Noble Numbat)"\n')
    assert (facts.os.id, facts.os.version) == ("ubuntu", "24.04")
    assert said('VERSION="12 (bookworm)"\n', "os") == []  # no alliterative codename: whose release is not said


# --------------------------------------------------------------------------- "EDIT:" in the opening post


def test_a_setting_after_an_edit_mark_in_the_opening_post_is_the_fix_not_the_state(tmp_path: Path) -> None:
    head = "# HIP error: invalid device function\n\nklausbu · description · 2023-11-30\nIt fails on my card.\n"
    edited = head + "EDIT:\nexport HIP_VISIBLE_DEVICES=0; HSA_OVERRIDE_GFX_VERSION=10.3.0\nadding it fixes the problem.\n"
    env = {e.name: e.value for e in detect_paste(tmp_path, edited).env}
    assert "HSA_OVERRIDE_GFX_VERSION" not in env and "HIP_VISIBLE_DEVICES" not in env
    # the same lines without the mark are the machine as reported
    plain = head + "export HIP_VISIBLE_DEVICES=0; HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
    assert {e.name: e.value for e in detect_paste(tmp_path, plain).env}["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"
    # "**Update 2:**" marks it too; a word that only begins with it does not
    from wizard.parsers.paste import split_paste

    assert len(split_paste(head + "**Update 2:** it works now\n").posts) == 2
    assert len(split_paste(head + "Editing the config: no change\nUpdated: nothing\n").posts) == 1


def test_the_gpu_a_line_says_enumerates_first_is_device_0(tmp_path: Path) -> None:
    text = ("- **dGPU:** AMD Radeon AI PRO R9700 (Navi 48, **gfx1201**, RDNA4), connected as an **eGPU**\n"
            "- **iGPU:** Ryzen 7 255 / Radeon 780M (**gfx1103**) — always present, enumerates first\n")
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1103", "gfx1201"]
    near = text.replace("always present, enumerates first", "it is not enumerated first")
    assert [g.gfx for g in detect_paste(tmp_path, near).gpus] == ["gfx1201", "gfx1103"]


@pytest.mark.parametrize("line", [
    "[Fri Jul 10 20:23:53 2026] amdgpu 0000:c4:00.0: GPU reset begin!. Source:  3",
    "0       2     0x74a1,   55354  48.0°C      133.0W    NPS1, SPX, 0        139Mhz  900Mhz  0%   auto  750.0W  0%     0%",
])
def test_the_driver_speaking_of_a_device_or_its_sensors_in_rocm_smi_means_it_is_loaded(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, line + "\n").driver.loaded is True


def test_a_line_that_only_names_amdgpu_does_not_say_it_is_loaded(tmp_path: Path) -> None:
    for text in ("I think amdgpu 0000:03:00.0 is the card\n", "modprobe: FATAL: Module amdgpu not found\n",
                 "0  2  0x74a1,  55354  N/A  N/A\n"):
        assert detect_paste(tmp_path, text).driver.loaded is not True, text


def test_the_reporters_posts_are_theirs_whatever_the_case_of_their_login() -> None:
    from wizard.parsers.paste import split_paste

    text = ("# RX7900 XTX\n\nalvinshan · description · 2023-10-30\nMy card.\n\nkentrussell · comment · 2023-10-31\n"
            "Send dmesg.\n\nAlvinShan · comment · 2023-11-02\nHere it is.\n")
    own = {s.lines[0]: s.own for s in split_paste(text).segments if s.lines and s.lines[0].strip()}
    assert own["My card."] and own["Here it is."] and not own["Send dmesg."]


def test_the_writers_run_in_their_own_image_with_a_denial_in_another_sentence(tmp_path: Path) -> None:
    text = ("I just did the following in my rocm/pytorch:rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.7.1 docker "
            "image today. What do you mean by \"installed ROCm from the official repo, not the ROCK?\"\n")
    assert detect_paste(tmp_path, text).in_container is True
    for near in ("It did not work in my rocm/pytorch docker image either.\n",
                 "You should try it in my docker image, not on the host.\n"):
        assert detect_paste(tmp_path, near).in_container is None, near


def test_a_labelled_gpu_line_giving_only_a_target_and_a_labelled_bdf_in_backticks(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "Reproduced on:\nGPU: gfx1151\nGPU BDF: `0000:04:00.0`\n")
    assert [(g.gfx, g.bdf) for g in facts.gpus] == [("gfx1151", "0000:04:00.0")]
    assert said("GPU: gfx1151 and gfx1100 both fail\n", "gfx_rt") != ["gfx1151"]  # a sentence, not the field's value


@pytest.mark.parametrize("line", [
    "- Kernel driver in use: `/lib/modules/7.0.0-29-generic/updates/dkms/amdgpu.ko.zst`, version `6.19.4`",
    "\tKernel driver in use: amdgpu",
    "Aug 05 08:56:27.428131 my-server kernel: amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=SUSPEND",
])
def test_more_ways_the_driver_shows_it_is_bound(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, line + "\n").driver.loaded is True


def test_another_driver_in_use_says_nothing_of_amdgpu(tmp_path: Path) -> None:
    assert detect_paste(tmp_path, "\tKernel driver in use: vfio-pci\n\tKernel modules: amdgpu\n").driver.loaded is not True


def test_a_bare_vega_10_is_the_die_or_the_igpu_and_with_graphics_the_igpu(tmp_path: Path) -> None:
    kb = load_kb()
    assert {(g.gfx, g.integrated) for g in kb.gpus_by_name("AMD Vega 10")} == {("gfx900", False), ("gfx902", True)}
    assert {(g.gfx, g.integrated) for g in kb.gpus_by_name("Radeon Vega 10 Graphics")} == {("gfx902", True)}
    assert said("my AMD Radeon (TM)RX Vega 10 Graphics as my GPU\n", "gpu_prose") == ["AMD Radeon (TM)RX Vega 10 Graphics"]
    # the title's bare "Vega 10" decides neither: no target is claimed for it
    facts = detect_paste(tmp_path, "# 0.12.5-rocm AMD Vega 10 failure during GPU discovery\n")
    assert all(g.gfx is None for g in facts.gpus)


def test_the_firmware_rollback_that_fixed_it_in_words_on_an_rdna35_apu() -> None:
    from wizard.diagnose import diagnose
    from wizard.kb.families import family_of_gfx
    from wizard.model import EvidenceText, Facts, Gpu

    text = "Leaving this for posterity - downgrading to 1111 as per [this](https://x/troubleshooting-firmware.md) fixed it."
    gpu = Gpu(name="AMD Radeon 8060S", gfx="gfx1151", integrated=True, family=family_of_gfx("gfx1151"))
    facts = Facts(gpus=(gpu,), origin="test", texts=(EvidenceText("paste.txt", text, 1, "text", True),))
    assert "mes-firmware-0x83-hang" in [f.id for f in diagnose(facts)]
    facts = Facts(gpus=(gpu,), origin="test", texts=(EvidenceText("paste.txt", "I did not downgrade to 1111 yet.", 1, "text", True),))
    assert "mes-firmware-0x83-hang" not in [f.id for f in diagnose(facts)]


def test_a_setting_the_reporter_introduces_as_the_fix_is_not_the_failing_state(tmp_path: Path) -> None:
    text = ("# Ubuntu 24.04 support\n\nmikeperalta1 · comment · 2024-06-11\n"
            "I ended up using an ENV trick found elsewhere to get the program to run. Basically a var to force an "
            "earlier version that supports my card:\n```\nHSA_OVERRIDE_GFX_VERSION=10.3.0\n```\n")
    assert detect_paste(tmp_path, text).env == ()
    state = text.replace("I ended up using an ENV trick found elsewhere to get the program to run. ", "")
    assert [e.name for e in detect_paste(tmp_path, state).env] == ["HSA_OVERRIDE_GFX_VERSION"]


def test_a_torch_a_later_pip_install_asks_for_is_the_fix_not_the_failing_torch(tmp_path: Path) -> None:
    head = ("# ComfyUI installs Nvidia packages\n\nguinhill · description · 2024-09-14\n"
            "It fails at launch: RuntimeError: Found no NVIDIA driver on your system.\n")
    fix = ("I fix this from the console by going in to the venv of Comfy and running the following commands:\n\n"
           "pip install torch==2.3.1+rocm6.0 --index-url https://download.pytorch.org/whl/rocm6.0\n")
    assert all(e.torch is None for e in detect_paste(tmp_path, head + fix).python_envs)
    # the same command as the machine's own install, in the post as first written
    installed = head + "I installed it with:\npip install torch==2.3.1+rocm6.0 --index-url https://x/rocm6.0\n"
    assert [e.torch for e in detect_paste(tmp_path, installed).python_envs] == ["2.3.1+rocm6.0"]


# --------------------------------------------------------------------------- rocminfo's "ROCk module is NOT live"
# rocminfo (rocminfo.cc, CheckInitialState) prints it when /sys/module/amdgpu exists but its initstate is not "live":
# the module failed to initialise; like "is NOT loaded", the driver is not loaded (wizard/parsers/mentions.py "rock",
# wizard/parsers/rocminfo.py _ROCK_RE, wizard/parsers/paste.py's rocminfo marker)


def test_rocminfo_saying_the_rock_module_is_not_live_reads_the_driver_as_not_loaded(tmp_path: Path) -> None:
    from wizard.parsers.paste import split_paste
    from wizard.parsers.rocminfo import parse_rocminfo

    text = "After the reboot:\n$ rocminfo\nROCk module is NOT live, possibly no GPU devices\n"
    assert detect_paste(tmp_path, text).driver.loaded is False
    assert parse_rocminfo("ROCk module is NOT live, possibly no GPU devices\n").rock_loaded is False
    assert [s.kind for s in split_paste("ROCk module is NOT live, possibly no GPU devices\n").segments] == ["rocminfo.txt"]


@pytest.mark.parametrize("line", [
    "The ROCk module is live again after the update",  # not rocminfo's words: it prints no "is live"
    "is the ROCk module NOT live here?",
])
def test_other_words_about_the_rock_module_being_live_say_nothing(tmp_path: Path, line: str) -> None:
    assert said(line + "\n", "rock") == []
    assert detect_paste(tmp_path, line + "\n").driver.loaded is None


# --------------------------------------------------------------------------- rocm-smi's "Version of System Component"
# The library-based rocm-smi (rocm_smi_lib python_smi_tools/rocm_smi.py) exits ("Driver not initialized") unless
# amdgpu's initstate is "live", so its "Driver version" under that heading says the driver is loaded; the deprecated
# standalone rocm-smi printed the line without the heading, falling back to the kernel release (parse_rocm_smi's
# driver_component, read in wizard/probes/__init__.py _smi_versions)

_SMI_COMPONENT = """\
$ rocm-smi --showdriverversion
====================== ROCm System Management Interface ======================
======================== Version of System Component =========================
Driver version: 6.10.5
===============================================================================
============================= End of ROCm SMI Log =============================
"""


def test_rocm_smi_printing_its_system_component_driver_version_reads_the_driver_as_loaded(tmp_path: Path) -> None:
    from wizard.parsers.rocm_smi import parse_rocm_smi

    smi = parse_rocm_smi(_SMI_COMPONENT)
    assert (smi.driver_version, smi.driver_component) == ("6.10.5", True)
    driver = detect_paste(tmp_path, _SMI_COMPONENT).driver
    assert (driver.loaded, driver.version) == (True, "6.10.5")


@pytest.mark.parametrize("text", [
    # the deprecated rocm-smi: no heading over the line (it prints the kernel release without amdgpu)
    "====================== ROCm System Management Interface ======================\n"
    "Driver version: 4.15.0-20-generic\n"
    "============================= End of ROCm SMI Log =============================\n",
    # another tool's driver version
    "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\nDriver version: 535.104.05\n",
    # the heading with no version under it
    _SMI_COMPONENT.replace("Driver version: 6.10.5", "Driver version: N/A"),
])
def test_a_driver_version_line_outside_that_heading_does_not_say_the_driver_is_loaded(tmp_path: Path, text: str) -> None:
    assert detect_paste(tmp_path, text).driver.loaded is None


# --------------------------------------------------------------------------- torch's HIP labelled "PyTorch ROCm version"
# scripts print torch.version.hip as "PyTorch ROCm version: X.Y.NNNNN-<commit>": read as the environment's HIP only in
# HIP's own form (a five-digit build number) (wizard/parsers/mentions.py "hip version")


def test_pytorch_rocm_version_in_hip_form_is_the_environments_hip(tmp_path: Path) -> None:
    text = ("$ python check.py\n=== torch ===\nPyTorch version: 2.9.0+rocm7.1.0\n"
            "PyTorch ROCm version: 7.1.52802-ab12cd34e\nGPU available: True\n")
    assert [(e.torch, e.hip) for e in detect_paste(tmp_path, text).python_envs] == [("2.9.0+rocm7.1.0", "7.1.52802-ab12cd34e")]


@pytest.mark.parametrize("line", [
    "PyTorch ROCm version: 6.4",  # a release number, not torch.version.hip's form
    "ROCm version: 7.1.52802-ab12cd34e",  # not said to be torch's
])
def test_other_rocm_version_lines_are_not_torchs_hip(line: str) -> None:
    assert said(line + "\n", "hip") == []


# --------------------------------------------------------------------------- a Fedora/RHEL-style prompt in a container
# bash's prompt "[user@host dir]#" whose host is Docker's default one, the first 12 hex digits of the container's id
# (wizard/parsers/mentions.py "container")


@pytest.mark.parametrize("line", [
    "[root@3f2a9c1b7d4e work]# python -m pip install numpy",
    "`(.venv) [builder@0a1b2c3d4e5f src]$ make -j8`",
])
def test_a_bracketed_prompt_on_a_container_host_reads_in_container(tmp_path: Path, line: str) -> None:
    assert said(line + "\n", "container") == ["true"]
    assert detect_paste(tmp_path, "Output:\n" + line + "\n").in_container is True


@pytest.mark.parametrize("line", [
    "[root@gpu-node-01 work]# python -m pip install numpy",  # a named host
    "[root@3f2a9c1b7d4e5 work]# ls",  # thirteen hex digits: not Docker's short id
    "see [root@3f2a9c1b7d4e work]# in the log",  # not at the line's start: not a prompt
])
def test_a_bracketed_prompt_on_another_host_is_not_a_container(tmp_path: Path, line: str) -> None:
    assert said(line + "\n", "container") == []
    assert detect_paste(tmp_path, line + "\n").in_container is None
# --------------------------------------------------------------------------- an env list value: every item of it


def test_an_unquoted_env_value_keeps_every_item_of_its_comma_separated_list(tmp_path: Path) -> None:
    # mentions._ASSIGN_RE: "HIP_VISIBLE_DEVICES=0,1" names two devices; the value is the whole list, wherever written
    assert said("$ ROCR_VISIBLE_DEVICES=2,3 HSA_OVERRIDE_GFX_VERSION=11.0.0 ./bench -d 0\n", "env") == [
        "ROCR_VISIBLE_DEVICES=2,3", "HSA_OVERRIDE_GFX_VERSION=11.0.0"]
    assert said('level=INFO msg="server config" env="map[HIP_VISIBLE_DEVICES:1,2 ROCR_VISIBLE_DEVICES:]"\n', "env") == [
        "HIP_VISIBLE_DEVICES=1,2"]
    facts = detect_paste(tmp_path, "I start it like this:\n\nHIP_VISIBLE_DEVICES=0,2,3 python train.py --bf16\n")
    assert facts.env_values.get("HIP_VISIBLE_DEVICES") == "0,2,3"


def test_a_comma_that_starts_the_next_assignment_or_ends_the_sentence_is_not_part_of_the_value() -> None:
    assert said("docker run -e HSA_OVERRIDE_GFX_VERSION=10.3.0,HIP_VISIBLE_DEVICES=0 img\n", "env") == [
        "HSA_OVERRIDE_GFX_VERSION=10.3.0", "HIP_VISIBLE_DEVICES=0"]
    assert said("$ export HIP_VISIBLE_DEVICES=1, and then rocminfo lists one agent\n", "env") == ["HIP_VISIBLE_DEVICES=1"]


# --------------------------------------------------------------------------- the booted kernel on its command line


@pytest.mark.parametrize("line, kernel", [
    ("$ cat /proc/cmdline\nBOOT_IMAGE=/boot/vmlinuz-6.8.0-49-generic root=UUID=0a1b ro quiet splash amdgpu.ppfeaturemask=0xffffffff\n",
     "6.8.0-49-generic"),
    ("[    0.000000] Command line: BOOT_IMAGE=(hd1,gpt3)/vmlinuz-6.12.9-200.fc41.x86_64 root=UUID=77 ro rhgb\n",
     "6.12.9-200.fc41.x86_64"),
    ("Jan 03 09:12:44 box kernel: Kernel command line: BOOT_IMAGE=/vmlinuz-6.1.0-28-amd64 root=/dev/nvme0n1p2 ro\n",
     "6.1.0-28-amd64"),
])
def test_the_kernel_grub_booted_is_read_from_the_command_line(tmp_path: Path, line: str, kernel: str) -> None:
    # mentions "kernel cmdline": GRUB passes the image it booted as BOOT_IMAGE; /proc/cmdline and the kernel log show it
    assert detect_paste(tmp_path, line).os.kernel == kernel


def test_a_vmlinuz_that_is_only_installed_or_a_bootimage_without_a_release_names_no_kernel(tmp_path: Path) -> None:
    text = ("$ ls /boot\nconfig-6.8.0-49-generic  vmlinuz-6.8.0-49-generic\n"
            "menuentry 'Ubuntu' {\n\tlinux /boot/vmlinuz-6.5.0-41-generic root=UUID=0a1b ro\n}\n")
    assert said(text, "kernel") == []
    assert said("BOOT_IMAGE=/vmlinuz-linux root=UUID=0a1b rw loglevel=3\n", "kernel") == []


# --------------------------------------------------------------------------- collect_env's library list without its head


def test_collect_envs_library_list_is_read_when_the_head_of_the_report_is_cut_off(tmp_path: Path) -> None:
    # paste._MARKERS: "Versions of relevant libraries:" and the "[pip3] name==version" lines only collect_env prints
    # (torch's and vLLM's) start a collect_env segment, so its torch is the machine's even with the "PyTorch version:"
    # head lost; a source build's local version (+git<sha>) included
    text = ("same error on my node, the end of what it printed:\n\nVersions of relevant libraries:\n[pip3] numpy==1.26.4\n"
            "[pip3] torch==2.6.0a0+gitd3a1b2c\n[pip3] triton==3.2.0\n[conda] Could not collect\n")
    assert [e.torch for e in detect_paste(tmp_path, text).python_envs] == ["2.6.0a0+gitd3a1b2c"]
    bare = "[pip3] pytorch-triton-rocm==3.3.0+git96316ce5\n[pip3] torch==2.8.0a0+git7c1f2e9\n"
    assert [e.torch for e in detect_paste(tmp_path, bare).python_envs] == ["2.8.0a0+git7c1f2e9"]


def test_a_bracketed_pip_line_that_lists_no_package_starts_no_library_list(tmp_path: Path) -> None:
    text = "[pip3] Could not collect\n[conda] Could not collect\n[notice] A new release of pip is available: 23.0 -> 24.2\n"
    assert detect_paste(tmp_path, text).python_envs == ()


# --------------------------------------------------------------------------- "Radeon RX Vega": the discrete Vega 10 board


def test_a_radeon_rx_vega_without_a_number_is_the_discrete_vega_10(tmp_path: Path) -> None:
    # mentions.PRODUCT: amdgpu.ids names the RX Vega 56/64 board (1002:687f) "AMD Radeon RX Vega"; Mesa's renderer
    # string starts with that name ("<name> (<chip>, DRM ..., <kernel>, LLVM ...)"), and people write it so
    renderer = "OpenGL renderer string: AMD Radeon RX Vega (VEGA10, DRM 3.35.0, 5.3.0-62-generic, LLVM 9.0.0)\n"
    assert _gpus(detect_paste(tmp_path, renderer)) == [("gfx900", False)]
    assert _gpus(detect_paste(tmp_path, "Setup: Ryzen 7 2700X, RX Vega, Ubuntu 18.04.4\n")) == [("gfx900", False)]


@pytest.mark.parametrize("text", [
    "GPU: AMD Radeon RX Vega M GH Graphics\n",  # Kaby Lake-G's Polaris 22, not a Vega 10
    "The Vega architecture has rapid packed math.\n",  # the architecture, no board
])
def test_rx_vega_m_and_a_bare_vega_name_no_discrete_vega_10(tmp_path: Path, text: str) -> None:
    assert ("gfx900", False) not in _gpus(detect_paste(tmp_path, text))
    assert said("my AMD Radeon RX Vega 10 Graphics\n", "gpu_prose") == ["AMD Radeon RX Vega 10 Graphics"]  # an iGPU's CUs


# --------------------------------------------------------------------------- a codename that is also a plain word
# Phoenix, Raphael, Renoir, Picasso ... are people, painters, a city: such a codename names the GPU only on a line that
# speaks of hardware (wizard/parsers/mentions.py _plain_word_alone)


@pytest.mark.parametrize("text, gfx", [
    ("My laptop has a Phoenix APU and torch does not see it.", "gfx1103"),
    ("# Crash on the Raphael iGPU", "gfx1036"),
    ("AMD Renoir, ROCm 5.2", "gfx90c"),
])
def test_a_plain_word_codename_on_a_hardware_line_is_the_gpu(tmp_path: Path, text: str, gfx: str) -> None:
    assert [g.gfx for g in detect_paste(tmp_path, text + "\n").gpus] == [gfx]


@pytest.mark.parametrize("text", ["Thanks Raphael, that worked.", "I live in Phoenix and my venv is broken.",
                                  "RAPHAEL", "The Renoir print on my wall"])
def test_a_plain_word_codename_alone_names_no_gpu(tmp_path: Path, text: str) -> None:
    assert not detect_paste(tmp_path, text + "\n").gpus


# --------------------------------------------------------------------------- Mesa's renderer string names the chip
# glxinfo's "OpenGL renderer string", vulkaninfo's deviceName and llama.cpp's Vulkan device list carry Mesa's chip name:
# a gfx name from gfx11.5 on (and Phoenix's gfx1103_r1), an older chip by its codename (wizard/parsers/mentions.py
# "mesa chip")


@pytest.mark.parametrize("line, gfx, integrated", [
    ("ggml_vulkan: 0 = AMD Radeon Graphics (RADV GFX1151) (radv) | uma: 1 | fp16: 1 | warp size: 64", "gfx1151", True),
    ("OpenGL renderer string: AMD Radeon Graphics (radeonsi, gfx1103_r1, LLVM 17.0.6, DRM 3.57, 6.8.0-45-generic)",
     "gfx1103", True),
    ("OpenGL renderer string: AMD Radeon Graphics (raven, LLVM 15.0.7, DRM 3.54, 6.5.0-14-generic)", "gfx902", True),
    ("OpenGL renderer string: AMD Radeon RX 9070 XT (radeonsi, gfx1201, LLVM 19.1.1, DRM 3.61, 6.14.0-15-generic)",
     "gfx1201", False),
])
def test_mesas_renderer_string_names_the_chip(tmp_path: Path, line: str, gfx: str, integrated: bool) -> None:
    assert [(g.gfx, g.integrated) for g in detect_paste(tmp_path, line + "\n").gpus] == [(gfx, integrated)]


def test_a_renderer_chip_that_disagrees_with_its_product_names_no_target(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "ggml_vulkan: 0 = AMD Radeon RX 7900 XTX (RADV NAVI33) (radv)\n")
    assert [g.gfx for g in facts.gpus] == [None] and facts.conflicts
    for near in ("OpenGL renderer string: llvmpipe (LLVM 15.0.7, 256 bits)", "I built it (release, LLVM 17) myself"):
        assert not detect_paste(tmp_path, near + "\n").gpus, near


# --------------------------------------------------------------------------- inxi's bound driver
# inxi -G prints the driver bound to the device as "driver: amdgpu v: kernel"; with none bound, "driver: N/A" and the
# loadable "modules: amdgpu" (wizard/parsers/mentions.py "driver bound")


def test_inxis_bound_driver_is_the_driver_loaded(tmp_path: Path) -> None:
    text = ("Graphics:\n  Device-1: AMD Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] vendor: Sapphire\n"
            "    driver: amdgpu v: kernel arch: RDNA-3 pcie: speed: 16 GT/s lanes: 16 bus-ID: 03:00.0 chip-ID: 1002:744c\n")
    assert detect_paste(tmp_path, text).driver.loaded is True
    for near in ("Graphics:\n  Device-1: AMD Navi 31 vendor: Sapphire driver: N/A modules: amdgpu bus-ID: 03:00.0\n",
                 "I set driver: amdgpu in the config\n"):
        assert detect_paste(tmp_path, near).driver.loaded is None, near


# --------------------------------------------------------------------------- an Ubuntu release is year.month
# Ubuntu's releases come in April and October (and 6.06): "(Ubuntu 13.3.0-6ubuntu2~24.04)" in /proc/version or the
# kernel log's "Linux version" line is the compiler's package, not the release (wizard/parsers/mentions.py os_from_name)


def test_a_compilers_ubuntu_package_version_is_not_the_release(tmp_path: Path) -> None:
    line = ("Linux version 6.11.0-29-generic (buildd@lcy02-amd64-071) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04)"
            " 13.3.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #29-Ubuntu SMP PREEMPT_DYNAMIC\n")
    facts = detect_paste(tmp_path, line)
    assert (facts.os.id, facts.os.version, facts.os.kernel) == ("ubuntu", None, "6.11.0-29-generic")
    # the same kernel as an HWE build names its release in its own version ("#29~24.04.1-Ubuntu"), not the compiler's
    hwe = detect_paste(tmp_path, line.replace("#29-Ubuntu", "#29~24.04.1-Ubuntu"))
    assert (hwe.os.id, hwe.os.version) == ("ubuntu", "24.04")
    for text, version in (("Description:\tUbuntu 22.04.4 LTS\n", "22.04"), ("I run Ubuntu 24.10 here\n", "24.10"),
                          ("Ubuntu 6.06 LTS\n", "6.06")):
        assert detect_paste(tmp_path, text).os.version == version, text


# --------------------------------------------------------------------------- `pip show torch`
# pip show prints "Name: torch", then "Version: <version>" (wizard/parsers/mentions.py read_mentions)


def test_pip_show_torch_gives_the_torch_version(tmp_path: Path) -> None:
    text = "$ pip show torch\nName: torch\nVersion: 2.5.1+rocm6.2\nSummary: Tensors and Dynamic neural networks\n"
    assert [(e.torch, e.build) for e in detect_paste(tmp_path, text).python_envs] == [("2.5.1+rocm6.2", "rocm")]
    for near in ("Name: torchvision\nVersion: 0.20.1+rocm6.2\n", "Name: torch\nSummary: Tensors\nVersion: 2.5.1\n",
                 "Version: 2.5.1+rocm6.2\n"):
        assert all(e.torch is None for e in detect_paste(tmp_path, near).python_envs), near


# --------------------------------------------------------------------------- settings that are not the machine's state
# A Markdown code span's backtick (or a shell's ";") ends an unquoted value; a setting a line says solved the problem is
# the fix, not the failing state; a setting inside a script's conditional block is made only when its condition holds
# (wizard/parsers/mentions.py _UNQUOTED_ITEM, _TELLING, _CONDITIONAL)


def test_a_backtick_or_semicolon_ends_an_unquoted_value(tmp_path: Path) -> None:
    assert said("My script has `export HIP_VISIBLE_DEVICES=0,1` at its top", "env") == ["HIP_VISIBLE_DEVICES=0,1"]
    assert said("export HSA_OVERRIDE_GFX_VERSION=11.0.0; python x.py", "env") == ["HSA_OVERRIDE_GFX_VERSION=11.0.0"]


def test_a_setting_said_to_have_solved_it_is_the_fix_not_the_state(tmp_path: Path) -> None:
    for line in ("a simple `export HSA_OVERRIDE_GFX_VERSION=10.3.0` solved that",
                 "HSA_OVERRIDE_GFX_VERSION=10.3.0 fixed it for me", "export HIP_VISIBLE_DEVICES=1 did the trick"):
        assert detect_paste(tmp_path, line + "\n").env == (), line
    assert [e.value for e in detect_paste(tmp_path, "export HSA_OVERRIDE_GFX_VERSION=10.3.0\n").env] == ["10.3.0"]


def test_a_setting_inside_a_conditional_block_is_not_the_machines(tmp_path: Path) -> None:
    julia = 'if node_name == "navy_flounder"\n    ENV["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"\n    break\nend\n'
    shell = "if [ -e /dev/kfd ]; then\n  export HSA_OVERRIDE_GFX_VERSION=11.0.0\nfi\nexport HIP_VISIBLE_DEVICES=1\n"
    assert detect_paste(tmp_path, julia).env == ()
    assert [(e.name, e.value) for e in detect_paste(tmp_path, shell).env] == [("HIP_VISIBLE_DEVICES", "1")]
    # after the block, at its own indentation, a setting is the script's again
    python = 'if args.fast:\n    os.environ["HIP_VISIBLE_DEVICES"] = "0"\nos.environ["HSA_OVERRIDE_GFX_VERSION"] = "11.0.0"\n'
    assert [(e.name, e.value) for e in detect_paste(tmp_path, python).env] == [("HSA_OVERRIDE_GFX_VERSION", "11.0.0")]
    # a sentence that starts with "If" is no code: the indented command below it is what the writer ran
    prose = "If I run this:\n    HSA_OVERRIDE_GFX_VERSION=10.3.0 python x.py\nit crashes.\n"
    assert [(e.name, e.value) for e in detect_paste(tmp_path, prose).env] == [("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]


# --------------------------------------------------------------------------- torch.__version__ printed, lshw's driver
def test_a_printed_torch_dunder_version_is_the_torch(tmp_path: Path) -> None:
    text = "torch.__version__: 2.6.0+cu124\ntorch.version.hip: None\n"
    assert [e.torch for e in detect_paste(tmp_path, text).python_envs] == ["2.6.0+cu124"]
    assert all(e.torch is None for e in detect_paste(
        tmp_path, "print('torch.__version__:', torch.__version__)\n").python_envs)


def test_lshws_bound_driver_is_the_driver_loaded(tmp_path: Path) -> None:
    text = ("  *-display\n       description: VGA compatible controller\n       vendor: Advanced Micro Devices, Inc. [AMD/ATI]\n"
            "       configuration: driver=amdgpu latency=0\n")
    assert detect_paste(tmp_path, text).driver.loaded is True
    assert detect_paste(tmp_path, "       configuration: driver=nvidia latency=0\n").driver.loaded is None


# --------------------------------------------------------------------------- Python's prompt echoes a value
# ">>> torch.version.hip" then "'6.1.40091-a8dbc0c19'" (and IPython's In [n]: / Out[n]:): the line below the expression
# is its value (wizard/parsers/mentions.py _ASKED, which also reads pip show's "Name: torch" / "Version:")


def test_the_python_prompt_echoes_torch_its_hip_and_the_gpus_target(tmp_path: Path) -> None:
    text = (">>> import torch\n>>> torch.__version__\n'2.4.1+rocm6.1'\n>>> torch.version.hip\n'6.1.40091-a8dbc0c19'\n"
            ">>> torch.cuda.get_device_properties(0).gcnArchName\n'gfx1100:sramecc-:xnack-'\n")
    facts = detect_paste(tmp_path, text)
    assert [(e.torch, e.hip) for e in facts.python_envs] == [("2.4.1+rocm6.1", "6.1.40091-a8dbc0c19")]
    assert [g.gfx for g in facts.gpus] == ["gfx1100"]
    ipython = "In [2]: torch.version.hip\nOut[2]: '6.2.41133-dd7f95766'\nIn [3]: print(torch.__version__)\n2.5.1+rocm6.2\n"
    assert [(e.torch, e.hip) for e in detect_paste(tmp_path, ipython).python_envs] == [("2.5.1+rocm6.2", "6.2.41133-dd7f95766")]
    # a value on any other line, or the prompt's next line being another prompt, is no answer
    for near in (">>> torch.version.hip\n>>> x = '6.1.40091-a8dbc0c19'\n", "'6.1.40091-a8dbc0c19'\n>>> torch.version.hip\n"):
        assert all(e.hip is None for e in detect_paste(tmp_path, near).python_envs), near


# --------------------------------------------------------------------------- clinfo --list, a "PCI ID" address, ROCm by place
def test_clinfo_list_names_the_devices_target(tmp_path: Path) -> None:
    text = "$ clinfo --list\nPlatform #0: AMD Accelerated Parallel Processing\n `-- Device #0: gfx1100\n"
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1100"]
    assert not detect_paste(tmp_path, "Platform #0: Intel(R) OpenCL\n `-- Device #0: Intel(R) UHD Graphics 770\n").gpus


def test_a_pci_id_label_on_a_bus_address_is_the_address(tmp_path: Path) -> None:
    assert said("  - PCI ID: `0000:03:00.0`", "bdf") == ["0000:03:00.0"]
    assert said("PCI address: 0000:c3:00.0", "bdf") == ["0000:c3:00.0"]
    assert said("PCI ID: 1002:744c", "bdf") == [] and said("PCI ID: 1002:744c", "pci_id") == ["1002:744c"]


def test_a_launcher_naming_rocm_by_its_place_gives_its_version(tmp_path: Path) -> None:
    line = "[Info] (BackendManager) Explicitly-selected system ROCm at /opt/rocm version '7.2.4' vs expected '7.13.0'\n"
    assert detect_paste(tmp_path, line).rocm.version == "7.2.4"
    assert detect_paste(tmp_path, "the ROCm at /opt/rocm has no version file\n").rocm.version is None


# --------------------------------------------------------------------------- round 8 (in-sample)


def test_a_heading_naming_what_it_is_the_output_of_hints_the_block_under_it(tmp_path: Path) -> None:
    text = "### Output of `groups`\n\n```shell\nalice wheel docker libvirt\n```\n"
    facts = detect_paste(tmp_path, text)
    assert (facts.driver.in_render_group, facts.driver.in_video_group) == (False, False)
    # a heading about something else leaves the same words prose
    facts = detect_paste(tmp_path, "### Output of the training run\n\n```shell\nalice wheel docker libvirt\n```\n")
    assert (facts.driver.in_render_group, facts.driver.in_video_group) == (None, None)


def test_dev_kfd_that_exists_means_the_driver_is_loaded(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "$ ls -l /dev/kfd\ncrw-rw---- 1 root render 235, 0 Jul  9 10:00 /dev/kfd\n")
    assert (facts.driver.kfd_present, facts.driver.loaded) == (True, True)
    # its absence says nothing of the module (amdgpu may be loaded with KFD failed, or not at all)
    facts = detect_paste(tmp_path, "$ ls -l /dev/kfd\nls: cannot access '/dev/kfd': No such file or directory\n")
    assert (facts.driver.kfd_present, facts.driver.loaded) == (False, None)


@pytest.mark.parametrize("line", ["On Talos `/dev/kfd` isn't present, so the labeller fails",
                                  "/dev/kfd isn't there after boot"])
def test_dev_kfd_said_not_to_be_present_is_missing(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, line + "\n").driver.kfd_present is False


def test_vllms_padded_collect_env_is_read_as_collect_env(tmp_path: Path) -> None:
    text = ("```\nIs CUDA available            : True\n"
            "GPU models and configuration : AMD Instinct MI300X (gfx942:sramecc+:xnack-)\n"
            "HIP runtime version          : 7.0.51831\n```\n")
    facts = detect_paste(tmp_path, text)
    # gfx942 alone is the MI300X or the MI300A APU: the product name decides it is a discrete accelerator
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx942", False)]


def test_a_distributions_rocm_package_answers_the_rocm_version_field(tmp_path: Path) -> None:
    text = "### ROCm Version\n\nrocm-7.1.0-3.fc44.noarch\n\n### ROCm Component\n\namdsmi\n"
    assert detect_paste(tmp_path, text).rocm.version == "7.1.0"
    # another package's version is not the release
    assert detect_paste(tmp_path, "### ROCm Version\n\nhipblaslt-1.1.0-2.fc44.x86_64\n").rocm.version is None


@pytest.mark.parametrize("line", ["Labels:             beta.amd.com/gpu.device-id.67df=1", "  amd.com/gpu.device-id=67df"])
def test_the_node_labellers_device_id_label_names_the_gpu(tmp_path: Path, line: str) -> None:
    # as `kubectl describe node` prints them
    facts = detect_paste(tmp_path, "$ kubectl describe node node-1\nName:               node-1\nRoles:              <none>\n"
                         + line + "\n")
    assert [(g.pci_id, g.gfx, g.integrated) for g in facts.gpus] == [("1002:67df", "gfx803", False)]
    assert not detect_paste(tmp_path, "amd.com/gpu.vram.8G=1\n").gpus


def test_tensorflows_device_line_gives_the_bus_address(tmp_path: Path) -> None:
    line = ("2022-12-21 09:16:33.582542: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1990] Ignoring visible gpu "
            "device (device: 0, name: AMD Radeon RX 6600 XT, pci bus id: 0000:0c:00.0) with AMDGPU version : gfx1032.\n")
    facts = detect_paste(tmp_path, line)
    assert [(g.gfx, g.bdf) for g in facts.gpus] == [("gfx1032", "0000:0c:00.0")]


def test_ollamas_pci_id_is_the_bus_address(tmp_path: Path) -> None:
    line = ('time=2025-10-21T15:33:57.731+05:30 level=INFO source=types.go:42 msg="inference compute" id=0 library=rocm '
            'compute=gfx1031 description="AMD Radeon RX 6700 XT" pci_id=0d:00.0 total="12.0 GiB"\n')
    assert [(g.gfx, g.bdf) for g in detect_paste(tmp_path, line).gpus] == [("gfx1031", "0000:0d:00.0")]
    assert said('pci_id=0000:c3:00.0 type=discrete', "bdf") == ["0000:c3:00.0"]
    assert said('pci_id="" library=cpu', "bdf") == []


def test_a_distribution_inside_a_build_or_file_name_is_not_the_os(tmp_path: Path) -> None:
    text = ("**System:** Debian 13 (with kernel 6.18.12 from backports)\n"
            "**Lemonade build:** llama-b1207-ubuntu-rocm-gfx1151-x64.zip\n")
    facts = detect_paste(tmp_path, text)
    assert (facts.os.id, facts.os.version) == ("debian", "13")
    assert said("Ubuntu-22.04 is the WSL distribution", "os") == ["ubuntu"]  # a name that begins the token still is


def test_ollamas_detected_amdgpu_versions_name_the_gpus_targets(tmp_path: Path) -> None:
    line = 'time=2024-03-16T02:53:16.858Z level=INFO source=amd_linux.go:88 msg="detected amdgpu versions [gfx1103]"\n'
    assert [(g.gfx, g.integrated) for g in detect_paste(tmp_path, line).gpus] == [("gfx1103", True)]
    # two targets: two GPUs, but not one GPU of two targets (see test_ollamas_detected_amdgpu_versions_are_one_gpu_each)
    assert said('msg="detected amdgpu versions [gfx1030 gfx906]"', "gpu_count") == ["2"]
    assert said('msg="detected amdgpu versions []"', "gfx_rt") == []


def test_a_python_one_liners_output_answers_what_it_printed(tmp_path: Path) -> None:
    text = ('$ python -c "import torch; print(torch.__version__)"\n2.3.0.dev20240309+rocm6.0\n'
            '$ python -c "import torch; print(torch.version.hip)"\n6.0.32830-d62f6a171\n')
    envs = detect_paste(tmp_path, text).python_envs
    assert [(e.torch, e.hip) for e in envs] == [("2.3.0.dev20240309+rocm6.0", "6.0.32830-d62f6a171")]
    # a one-liner printing something else, and a line that is not its output, answer nothing
    assert not detect_paste(tmp_path, '$ python -c "import torch; print(torch.cuda.is_available())"\n'
                                      '6.0.32830-d62f6a171\n').python_envs


@pytest.mark.parametrize("text, runtime", [
    ("DON'T INSTALL FULL AMDGPU-PRO DRIVER, install only its OpenCL (headless mode)\n", None),
    ("You're probably just using the older OpenCL from the amdgpu-pro driver.\n", None),
    ("export LD_LIBRARY_PATH=/opt/amdgpu-pro/lib/x86_64-linux-gnu\n", "/opt/amdgpu-pro/lib/x86_64-linux-gnu"),
    ("$ sudo ./amdgpu-pro-install -y --opencl=legacy\n", "amdgpu-pro-install"),
])
def test_amdgpu_pro_named_in_prose_is_not_its_runtime_on_the_machine(tmp_path: Path, text: str,
                                                                     runtime: str | None) -> None:
    assert detect_paste(tmp_path, text).rocm.amdgpu_pro == runtime


def test_pip_show_torch_requiring_nvidias_runtime_wheels_is_a_cuda_build(tmp_path: Path) -> None:
    show = ("$ python3.11 -m pip show torch\nName: torch\nVersion: 2.0.1\nLocation: /home/u/.local/lib/python3.11/site-packages\n"
            "Requires: filelock, jinja2, nvidia-cublas-cu11, nvidia-cuda-runtime-cu11, sympy, triton\n")
    assert [(e.torch, e.build) for e in detect_paste(tmp_path, show).python_envs] == [("2.0.1", "cuda")]
    # without NVIDIA's wheels the build is not known; another package's requirements say nothing of torch's
    plain = show.replace("nvidia-cublas-cu11, nvidia-cuda-runtime-cu11, ", "")
    assert [(e.torch, e.build) for e in detect_paste(tmp_path, plain).python_envs] == [("2.0.1", None)]
    other = plain + "\nName: vllm\nVersion: 0.4.0\nRequires: nvidia-ml-py, nvidia-cublas-cu12, torch\n"
    assert [(e.torch, e.build) for e in detect_paste(tmp_path, other).python_envs] == [("2.0.1", None)]


def test_the_card_the_prose_names_is_the_gpu_the_runtime_knows_only_by_the_overrides_target(tmp_path: Path) -> None:
    text = ("I have an RX 6700 XT.\n$ export HSA_OVERRIDE_GFX_VERSION=10.3.0\n"
            "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1030\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.gfx, g.gfx_reported) for g in facts.gpus] == [("gfx1031", "gfx1030")]
    # without the override the runtime's target is the card's own: a card the prose names beside it is not merged in
    plain = text.replace("$ export HSA_OVERRIDE_GFX_VERSION=10.3.0\n", "")
    assert [g.gfx_reported for g in detect_paste(tmp_path, plain).gpus if g.gfx_reported] == ["gfx1030"]
    # a target written in the prose is what the person calls the card, not the card: the override's target stays reported
    written = text.replace("I have an RX 6700 XT.", "I have a gfx1030 card.")
    assert [(g.gfx, g.gfx_reported) for g in detect_paste(tmp_path, written).gpus] == [(None, "gfx1030")]
    # two cards in the prose: neither is taken
    two = text.replace("an RX 6700 XT", "an RX 6700 XT and an RX 7900 XTX")
    assert [(g.gfx, g.gfx_reported) for g in detect_paste(tmp_path, two).gpus] == [(None, "gfx1030")]


def test_a_turn_continued_by_its_writer_after_a_stored_fragment_is_the_same_post(tmp_path: Path) -> None:
    text = ("bob · description · 2025-02-01\nOllama uses the CPU only.\n\n[turn 0 by bob, continued]\n```\n"
            'time=2025-01-31T19:32:23.233-05:00 level=INFO source=amd_linux.go:389 msg="skipping rocm gfx compatibility '
            'check" HSA_OVERRIDE_GFX_VERSION=10.3.0\n```\n')
    posts = split_paste(text).posts
    assert [p.author for p in posts] == ["bob"]
    assert [(s.name, s.value) for s in detect_paste(tmp_path, text).env] == [("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]
    # another writer's turn is another post: its settings are not the reporter's machine as first reported
    other = text.replace("[turn 0 by bob, continued]", "[turn 1 by alice]")
    assert len(split_paste(other).posts) == 2 and not detect_paste(tmp_path, other).env


@pytest.mark.parametrize("line, inside", [
    ("`amd-smi list` (within the amd-vgpu-metrics-exporter container):", True),
    ("I have a Tensorflow workload running in Jupyter in a pod.", True),
    ("It should work inside the rocm/pytorch container as well.", None),
    ("I don't run it in a container, it is the host.", None),
    ("Put the model in the models folder.", None),
])
def test_a_run_stated_inside_a_named_container_or_a_pod_is_in_a_container(tmp_path: Path, line: str,
                                                                          inside: bool | None) -> None:
    assert detect_paste(tmp_path, line + "\n").in_container is inside


def test_rocm_smi_answering_for_a_gpu_with_its_librarys_status_means_amdgpu_is_loaded(tmp_path: Path) -> None:
    text = ("$ rocm-smi --showvoltage\n"
            "============================ ROCm System Management Interface ============================\n"
            "==================================== Current voltage =====================================\n"
            "GPU[0]          : get_volt_metric, Not supported on the given system\n"
            "GPU[1]          : get_volt_metric, Not supported on the given system\n"
            "================================== End of ROCm SMI Log ===================================\n")
    assert detect_paste(tmp_path, text).driver.loaded is True
    # the same heading and an error that is not the library's answer for a device say nothing of the driver
    bare = text.replace("GPU[0]          : get_volt_metric, Not supported on the given system\n"
                        "GPU[1]          : get_volt_metric, Not supported on the given system\n",
                        "ERROR: No GPUs found\n")
    assert detect_paste(tmp_path, bare).driver.loaded is None


# --------------------------------------------------------------------------- a filtered rocminfo in prose


def test_a_filtered_rocminfo_in_prose_lists_each_gpu_agent(tmp_path: Path) -> None:
    # `rocminfo | grep Name` pasted under a label or after other commands: each GPU agent's name line opens its record
    text = ("Same here, my box:\n$ rocminfo | grep -E 'Name:'\nrocm-smi\nreadlink -f /opt/rocm\n"
            "  Name:                    AMD EPYC 9354 32-Core Processor\n"
            "  Marketing Name:          AMD EPYC 9354 32-Core Processor\n"
            "  Name:                    gfx1100\n  Marketing Name:          AMD Radeon PRO W7800\n"
            "      Name:                    amdgcn-amd-amdhsa--gfx1100\n"
            "  Name:                    gfx1030\n  Marketing Name:          AMD Radeon RX 6800\n"
            "      Name:                    amdgcn-amd-amdhsa--gfx1030\n")
    assert [s.kind for s in split_paste(text).segments if "gfx1100" in s.text] == ["rocminfo.txt"]
    facts = detect_paste(tmp_path, text)
    assert _gpus(facts) == [("gfx1100", False), ("gfx1030", False)]
    assert facts.driver.loaded is True  # rocminfo listed GPU agents


def test_a_device_name_line_of_clinfo_stays_in_clinfo() -> None:
    # clinfo prints a ROCm device's "Name:" as its target, in the same shape: inside clinfo's output it is clinfo's
    text = ("$ clinfo\nNumber of platforms:                             1\n  Platform Name:                                 "
            "AMD Accelerated Parallel Processing\n  Name:                                          gfx1030\n"
            "  Vendor:                                        Advanced Micro Devices, Inc.\n")
    assert [s.kind for s in split_paste(text).segments if "gfx1030" in s.text] == ["clinfo.txt"]


# --------------------------------------------------------------------------- a server processor carries no GPU


_SERVER = ("### CPU\n\n{cpu}\n\n### GPU\n\n2 qty AMD Instinct MI210 (gfx90a)\n\n"
           "rocm-smi --showuniqueid\nGPU[0]\t\t: Unique ID: N/A\nGPU[1]\t\t: Unique ID: N/A\n")


def test_the_gpus_of_a_server_whose_processor_has_no_graphics_are_the_one_model_named(tmp_path: Path) -> None:
    # AMD lists every EPYC 7002-9004 without graphics: the blank rows rocm-smi numbers are the MI210s the prose names
    facts = detect_paste(tmp_path, _SERVER.format(cpu="AMD EPYC 7763 64-Core Processor"))
    assert _gpus(facts) == [("gfx90a", False), ("gfx90a", False)]


def test_a_processor_with_graphics_leaves_a_blank_gpu_unnamed(tmp_path: Path) -> None:
    # a Ryzen 7 7700 carries the Raphael iGPU: the second row may be it
    facts = detect_paste(tmp_path, _SERVER.format(cpu="AMD Ryzen 7 7700 8-Core Processor"))
    assert _gpus(facts) == [("gfx90a", False), (None, None)]


# --------------------------------------------------------------------------- a card run as an override's target


def test_an_igpu_model_without_radeon_is_a_gpu_only_before_a_gpu_word() -> None:
    assert [m.value for m in read_mentions("This is a Ryzen 7 255 with 780m GPU and TheRock") if m.kind == "gpu_prose"] \
        == ["780m"]
    assert [m.value for m in read_mentions("the 890M iGPU of my laptop") if m.kind == "gpu_prose"] == ["890M"]
    assert not [m for m in read_mentions("we fine-tuned a 780M model on it") if m.kind == "gpu_prose"]


_RUN_AS = "My laptop: {card}, TheRock nightly.\n\n```\npytorch version: 2.7.1+rocm7.0.0\nAMD arch: {target}\n```\n"


def test_the_card_named_is_the_hardware_when_the_runtime_reports_a_target_overrides_set(tmp_path: Path) -> None:
    # a 780M (gfx1103) reported as gfx1100: only HSA_OVERRIDE_GFX_VERSION=11.0.0 does that, shown or not
    facts = detect_paste(tmp_path, _RUN_AS.format(card="Ryzen 7 with 780m GPU", target="gfx1100"))
    assert [(g.gfx, g.gfx_reported, g.integrated) for g in facts.gpus] == [("gfx1103", "gfx1100", True)]


@pytest.mark.parametrize("card, target", [
    ("RX 7900 XT", "gfx1101"),  # a card no override concerns: the runtime's target is what the machine has
    ("Ryzen 7 with 780m GPU", "gfx1030"),  # another generation's target: not an override of this card
])
def test_the_runtimes_target_stands_where_no_override_explains_it(tmp_path: Path, card: str, target: str) -> None:
    facts = detect_paste(tmp_path, _RUN_AS.format(card=card, target=target))
    assert [g.gfx for g in facts.gpus] == [target]


_INSTALLER = "Install log:\n```\n  gpu            AMD ROCm ({target})\n                 ROCm: /opt/rocm\n" \
             "                 GPU: AMD Radeon {card}\n{more}```\n"


def test_a_runtime_target_and_the_card_it_overrides_are_one_gpu(tmp_path: Path) -> None:
    # an RX 6600 (gfx1032) reports gfx1030 only under HSA_OVERRIDE_GFX_VERSION=10.3.0: the installer's two lines are one GPU
    facts = detect_paste(tmp_path, _INSTALLER.format(target="gfx1030", card="RX 6600", more=""))
    assert [(g.gfx, g.gfx_reported) for g in facts.gpus] == [("gfx1032", "gfx1030")]


@pytest.mark.parametrize("target, card, more", [
    ("gfx1100", "RX 6600", ""),  # another generation's target: not this card's override
    ("gfx1030", "RX 6600", "Number of HIP devices: 2\n"),  # a count of two: two GPUs
])
def test_a_runtime_target_no_override_of_the_card_explains_stays_a_gpu_of_its_own(tmp_path: Path, target: str, card: str,
                                                                                   more: str) -> None:
    facts = detect_paste(tmp_path, _INSTALLER.format(target=target, card=card, more=more))
    assert len(facts.gpus) == 2


@pytest.mark.parametrize("line", [
    "(base) me@box:~$ sudo docker exec -it gpustack-worker bash -c \"LOG=debug gpustack-runtime detect\"",
    "$ kubectl exec -it ollama-0 -- rocminfo",
    "$ podman exec --user root -e HIP_VISIBLE_DEVICES=0 llm rocm-smi",
])
def test_a_command_run_in_a_container_at_a_prompt_prints_the_containers_view(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, f"{line}\nROCk module is loaded\n").in_container is True


@pytest.mark.parametrize("line", ["you can docker exec into it later to look around", "$ docker ps"])
def test_an_exec_spoken_of_or_another_docker_command_is_not_a_container(tmp_path: Path, line: str) -> None:
    assert detect_paste(tmp_path, f"{line}\nROCk module is loaded\n").in_container is None


_AMD_SMI_HEADER = ("$ amd-smi\n+------------------------------------------------------------------------------+\n"
                "| AMD-SMI 26.2.2+unknown       amdgpu version: {driver} ROCm version: 7.2.2    |\n"
                "| VBIOS version: 00158738                                                      |\n")


def test_amd_smis_header_with_an_in_tree_drivers_version_means_amdgpu_is_loaded(tmp_path: Path) -> None:
    # an in-tree driver's version is /proc/version with its blanks dropped, which the box header cuts to "Linuxver"
    assert detect_paste(tmp_path, _AMD_SMI_HEADER.format(driver="Linuxver")).driver.loaded is True


def test_amd_smis_header_without_a_driver_version_says_nothing_of_the_driver(tmp_path: Path) -> None:
    assert detect_paste(tmp_path, _AMD_SMI_HEADER.format(driver="N/A")).driver.loaded is None


# --------------------------------------------------------------------------- round 12's in-sample misses


def test_an_igpu_model_alone_in_the_gpu_field_is_that_radeon(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, "System Info:\n* GPU: 780M aka gfx1103\n* OS: Ubuntu 25.10\n")
    assert _gpus(facts) == [("gfx1103", True)]
    assert not [m for m in read_mentions("* GPU: none, CPU only (a 780M model of ours)") if m.kind == "gpu_name"]


def test_ubuntus_quoted_version_string_answers_the_os_field(tmp_path: Path) -> None:
    # the form's field answered with os-release's VERSION as it is quoted there
    facts = detect_paste(tmp_path, '### Operating System\n\n"22.04.5 LTS (Jammy Jellyfish)"\n')
    assert (facts.os.id, facts.os.version) == ("ubuntu", "22.04")
    (tmp_path / "near").mkdir()
    assert detect_paste(tmp_path / "near", '### Operating System\n\n"22.04.5 (my build)"\n').os.id is None


@pytest.mark.parametrize("line, version", [
    ("- Install amdgpu, ROCm etc. from SLES 15.6 repo", "15.6"),
    ("I run SLES 15 SP6 on the node", "15.6"),
    ("on SUSE Linux Enterprise Server 15 SP5", "15.5"),
])
def test_suse_linux_enterprise_and_its_service_pack_are_the_os(line: str, version: str) -> None:
    assert [m.value for m in read_mentions(line) if m.kind == "os"] == [f"sles {version}"]


def test_sles_in_a_path_or_as_a_lower_case_word_is_not_the_os() -> None:
    for line in ("see /sles/15.6/ and the sles repo", "SLES packages are old"):
        assert not [m for m in read_mentions(line) if m.kind == "os"], line


def test_the_system_a_nixos_rebuild_builds_names_the_release() -> None:
    line = "  /nix/store/fv2bqfsa6rgcv73xj12277i0jfpdn9lq-nixos-system-main-23.05.2816.bfd953b2c6de.drv"
    assert [m.value for m in read_mentions(line) if m.kind == "os"] == ["nixos 23.05"]
    assert [m.value for m in read_mentions("building nixos-system-lap-24.11pre700000.abcdef1234") if m.kind == "os"][0] \
        == "nixos 24.11"
    assert [m.value for m in read_mentions("see nixos-system-x in the manual") if m.kind == "os"] == ["nixos"]


def test_a_rocm_version_field_in_any_case_beats_a_branch_named_in_prose(tmp_path: Path) -> None:
    text = ("GPU: Sapphire Pulse RX 7900 XTX\nROCm Version: 6.0.2\n\n### Reproduction\n\n"
            "Attempting to compile the ROCm 6.2 testing branch results in errors.\n")
    assert detect_paste(tmp_path, text).rocm.version == "6.0.2"


@pytest.mark.parametrize("line, inside", [
    ("1. Launch `docker run -it --name jax --device=/dev/kfd --group-add video rocm/jax-build:rocm6.0.0`", True),
    ("$ sudo docker run --rm -it --device /dev/kfd rocm/pytorch bash", True),
    ("you should docker run -it rocm/pytorch instead", None),
    ("docker run -d -it --device /dev/kfd ollama/ollama:rocm", None),
    ("I tried docker run -it and it failed", None),
])
def test_a_container_started_for_an_interactive_shell_in_ones_own_steps(tmp_path: Path, line: str, inside: bool | None) -> None:
    assert detect_paste(tmp_path, f"{line}\n\nROCk module is loaded\n").in_container is inside


def test_the_radeon_driver_naming_its_device_places_a_gpu(tmp_path: Path) -> None:
    # a card before GCN runs under radeon, which names its device in the kernel log as amdgpu does
    text = ("dmesg states the following:\n\n[ 0.783037] radeon 0000:01:00.0: Direct firmware load for "
            "radeon/CAICOS_pfp.bin failed with error -2\n[ 0.783273] radeon 0000:01:00.0: Fatal error during GPU init\n")
    assert [g.bdf for g in detect_paste(tmp_path, text).gpus] == ["0000:01:00.0"]
    assert not [m for m in read_mentions("the AMD Radeon 6450 card, bought 2011") if m.kind == "bdf"]


def test_a_variable_stated_to_be_set_is_the_machines_setting() -> None:
    said = [m.value for m in read_mentions("but `ROCM_PATH` is set to `/opt/rocm`.") if m.kind == "env"]
    assert said == ["ROCM_PATH=/opt/rocm"]
    for near in ("When `ROCBLAS_TENSILE_LIBPATH` is set to `/opt/rocm/lib/rocblas/library/`, it works as expected.",
                 "When `ROCM_PATH` is set to `/opt/rocm-6.2.0`, it works", "ROCM_PATH isn't set to anything"):
        assert not [m for m in read_mentions(near) if m.kind == "env"], near


def test_a_compose_default_of_the_variable_itself_is_its_value() -> None:
    said = [m.value for m in read_mentions("    HSA_OVERRIDE_GFX_VERSION=${HSA_OVERRIDE_GFX_VERSION:-}") if m.kind == "env"]
    assert said == ["HSA_OVERRIDE_GFX_VERSION="]  # defined, and empty where the host leaves it unset
    said = [m.value for m in read_mentions("  - HSA_OVERRIDE_GFX_VERSION=${HSA_OVERRIDE_GFX_VERSION:-11.0.0}") if m.kind == "env"]
    assert said == ["HSA_OVERRIDE_GFX_VERSION=11.0.0"]
    assert not [m for m in read_mentions("HIP_VISIBLE_DEVICES=${GPU_IDS}") if m.kind == "env"]  # another variable's value


@pytest.mark.parametrize("line", [
    "# Unable to open /dev/kfd read-write: Permission denied when installing ROCm in distrobox",
    "In the toolbox, `llama-cli` fails to detect a ROCm-capable device when run in a rootless Distrobox container",
    "I'm trying to install ollama on a distrobox running local LLM with my AMD GPU.",
])
def test_a_run_in_a_distrobox_or_toolbox_is_in_a_container(line: str) -> None:
    assert [m.value for m in read_mentions(line) if m.kind == "container"] == ["true"]


@pytest.mark.parametrize("line", ["You could run it in a distrobox instead", "distrobox create -n rocm --image x",
                                  "the toolbox version is 0.1", "I am not in a toolbox"])
def test_a_distrobox_advised_created_or_denied_is_not_a_container(line: str) -> None:
    assert not [m for m in read_mentions(line) if m.kind == "container"]


def test_the_writer_saying_the_amdgpu_module_loaded_and_which_rocm_libs(tmp_path: Path) -> None:
    text = ("I have all the rocm libs v 6.4.0 installed,  amdgpu module loaded. I also installed onnxruntime from "
            "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/ and rebuilt.\n")
    facts = detect_paste(tmp_path, text)
    assert facts.driver.loaded is True
    assert facts.rocm.version == "6.4.0"  # the index's release line, made precise by the writer's own statement
    for near in ("amdgpu module not loaded", "is the amdgpu module loaded?", "Make sure the amdgpu module is loaded",
                 "there is no amdgpu module loaded"):
        assert not [m for m in read_mentions(near) if m.kind == "rock"], near


@pytest.mark.parametrize("line, gfx", [
    ("rocBLAS warning: No paths matched /home/u/.julia/artifacts/1f/lib/rocblas/library/*gfx1031*co. Make sure that "
     "ROCBLAS_TENSILE_LIBPATH is set correctly.", "gfx1031"),
    ("HIP Devices [1]\n    1. HIPDevice(name=\"gfx1100\", id=1)", "gfx1100"),
])
def test_rocblas_looking_for_the_devices_code_and_amdgpu_jls_device_list_name_its_target(tmp_path: Path, line: str,
                                                                                        gfx: str) -> None:
    assert [g.gfx_reported for g in detect_paste(tmp_path, line + "\n").gpus] == [gfx]
    assert not [m for m in read_mentions("rocBLAS warning: No paths matched the pattern you gave") if m.kind == "gfx_rt"]


@pytest.mark.parametrize("line, torch", [
    ("{'sys.platform': 'linux', 'CUDA available': True, 'PyTorch': '1.9.0a0+gitdfbd030', 'TorchVision': '0.10.0'}",
     "1.9.0a0+gitdfbd030"),
    ("OrderedDict([('sys.platform', 'linux'), ('PyTorch', '2.0.0+rocm5.4.2'), ('TorchVision', '0.15.1')])",
     "2.0.0+rocm5.4.2"),
])
def test_mmcvs_collect_env_dict_names_the_torch(line: str, torch: str) -> None:
    assert [m.value for m in read_mentions(line) if m.kind == "torch"] == [torch]
    assert not [m for m in read_mentions("I use torch, 2.0 was fine") if m.kind == "torch"]


@pytest.mark.parametrize("line, kind, value", [
    ("OS                        : Linux-5.15.0-75-generic-x86_64-with-glibc2.31", "kernel", "5.15.0-75-generic"),
    ("modprobe: FATAL: Module amdgpu not found in directory /lib/modules/5.15.133.1-microsoft-standard-WSL2", "kernel",
     "5.15.133.1-microsoft-standard-WSL2"),
    ("Linux ryzen3 5.13.0-35-generic #40~20.04.1-Ubuntu SMP Mon Mar 7 09:18:32 UTC 2022 x86_64 GNU/Linux", "os", "ubuntu 20.04"),
    ("  /dev/kfd: found ✓", "kfd", "present"),
])
def test_cupys_platform_modprobes_tree_an_hwe_kernel_and_a_found_kfd(line: str, kind: str, value: str) -> None:
    assert [m.value for m in read_mentions(line) if m.kind == kind] == [value]


@pytest.mark.parametrize("line, kind", [
    ("Linux box 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC x86_64 GNU/Linux", "os"),  # no release in it
    ("OS: Windows-10-10.0.19045-SP0", "kernel"),
    ("ls /lib/modules/ shows 6.8.0-45-generic and 6.8.0-48-generic", "kernel"),
])
def test_near_misses_of_the_kernel_and_release_rules(line: str, kind: str) -> None:
    assert not [m for m in read_mentions(line) if m.kind == kind and m.detail != "token"]


def test_a_distribution_packages_debug_source_tree_names_the_rocm_release() -> None:
    line = ("TinyLlama.llamafile: /usr/src/debug/hip-runtime-amd/clr-rocm-6.0.2/rocclr/os/os_posix.cpp:321: "
            "static void amd::Os::currentStackInfo(unsigned char**, size_t*): Assertion failed.")
    assert [m.value for m in read_mentions(line) if m.kind == "rocm"] == ["6.0.2"]
    assert not [m for m in read_mentions("see https://github.com/ROCm/clr/tree/rocm-6.0.2/rocclr") if m.kind == "rocm"]


# darktable's OpenCL device key names ROCm's OpenCL device by its target; the key of another platform or a list does not
@pytest.mark.parametrize("line, gfx", [
    ("   UNIFIED MEM SIZE:         5120 MB reserved for 'amdacceleratedparallelprocessinggfx1035' id=0", "gfx1035"),
    ("cldevice_v5_amdacceleratedparallelprocessinggfx90asrameccxnack=0 250 0 16 16 1024 0 0 0.000 0.000 0.250", "gfx90a"),
])
def test_darktables_opencl_device_key_names_the_runtime_target(tmp_path: Path, line: str, gfx: str) -> None:
    assert said(line, "gfx_rt") == [gfx]
    assert [g.gfx_reported or g.gfx for g in detect_paste(tmp_path, line + "\n").gpus] == [gfx]
    for near in ("UNIFIED MEM SIZE:         7810 MB reserved for 'intelropenclgraphicsintelririsrxegraphics' id=0",
                 "cldevice_v5_amdacceleratedparallelprocessinggfx1035xyz=0 250"):
        assert said(near, "gfx_rt") == [], near


# the kernel's stack-dump header names the running kernel of any flavour; Arch's zen/hardened/lts and Debian 13's
# +debNN releases are read as bare tokens too
@pytest.mark.parametrize("line, kernel", [
    ("[  +0.000004] CPU: 5 PID: 4242 Comm: python3 Tainted: G        W  OE      6.8.0-45-generic #45-Ubuntu", "6.8.0-45-generic"),
    ("[ 812.1] CPU: 0 UID: 1000 PID: 77 Comm: kworker/0:2 Not tainted 6.12.1-arch1-1 #1", "6.12.1-arch1-1"),
    ("[ 99.2] CPU: 7 PID: 123 Comm: llama-server Tainted: G   D   6.9.3-zen1-2-zen #1 abcdef", "6.9.3-zen1-2-zen"),
])
def test_the_kernels_stack_dump_header_names_the_running_kernel(line: str, kernel: str) -> None:
    assert [m.value for m in read_mentions(line) if m.kind == "kernel" and m.detail != "token"] == [kernel]
    assert said("CPU: 5 PID: 4242 Comm: python3 exited with code 1", "kernel") == []


@pytest.mark.parametrize("line, kernel", [
    ("Linux kernel 6.12.48+deb13-amd64 here", "6.12.48+deb13-amd64"),
    ("running 6.12.9+bpo-amd64 from backports", "6.12.9+bpo-amd64"),
    ("uname: 6.10.2-zen1-1-zen", "6.10.2-zen1-1-zen"),
    ("uname: 6.6.44-hardened1-1-hardened", "6.6.44-hardened1-1-hardened"),
    ("uname: 6.6.30-1-lts", "6.6.30-1-lts"),
])
def test_debian_13_backports_and_arch_flavour_kernel_releases_are_tokens(line: str, kernel: str) -> None:
    assert said(line, "kernel") == [kernel]
    assert said("Ubuntu 24.04.1-lts and kernel-headers 6.6.30-1-lts.x86", "kernel") == []


# apt names the kernel packages a `$(uname -r)` asked for by the running release; without that command it says nothing
def test_apt_naming_the_uname_expanded_kernel_packages_gives_the_running_kernel(tmp_path: Path) -> None:
    text = ("me@box:~$ sudo apt install \"linux-headers-$(uname -r)\" \"linux-modules-extra-$(uname -r)\"\n"
            "Reading package lists... Done\n"
            "linux-headers-6.1.0-28-amd64 is already the newest version (6.1.119-1).\n"
            "E: Unable to locate package linux-modules-extra-6.1.0-28-amd64\n")
    assert detect_paste(tmp_path, text).os.kernel == "6.1.0-28-amd64"
    typed = ("me@box:~$ sudo apt install linux-modules-extra-6.8.0-31-generic\n"
             "E: Unable to locate package linux-modules-extra-6.8.0-31-generic\n")
    assert said(typed, "kernel") == []
    # the kernel a later command installs is not the running one: apt's answer ends at a blank line or the next command
    later = ("sudo apt install linux-headers-$(uname -r) linux-modules-extra-$(uname -r)\n"
             "The following NEW packages will be installed:\n"
             "  linux-headers-6.8.0-49-generic linux-modules-extra-6.8.0-49-generic\n"
             "\n"
             "Still no /dev/kfd, so I moved to the HWE kernel:\n"
             "sudo apt install linux-generic-hwe-22.04\n"
             "The following NEW packages will be installed:\n"
             "  linux-image-6.8.0-50-generic\n")
    assert said(later, "kernel") == []
    assert said(later.replace("\n\nStill", "\nStill"), "kernel") == []
    assert detect_paste(tmp_path, later).os.kernel is None


# --------------------------------------------------------------------------- system tools' package lists (helper F)


@pytest.mark.parametrize("line", [
    "rocm-core.x86_64                          6.2.1.60201-112.el9           @rocm",  # dnf list installed
    "rocm-core-6.2.1.60201-112.el9.x86_64",  # rpm -qa
])
def test_a_rocm_package_version_with_its_build_code_is_not_a_kernel(line: str) -> None:
    assert not said(line, "kernel")
    # the kernels of the same shape stay read: a RHEL kernel and WSL's four-number one
    assert said("Kernel: 5.14.0-427.13.1.el9_4.x86_64", "kernel") == ["5.14.0-427.13.1.el9_4.x86_64"]
    assert said("running 5.15.153.1-microsoft-standard-WSL2", "kernel") == ["5.15.153.1-microsoft-standard-WSL2"]


def test_a_pacman_package_list_is_arch_linux_packages_not_apt(tmp_path: Path) -> None:
    # pacman -Q prints "name version" (archlinux pacman src/pacman/query.c, display())
    facts = detect_paste(tmp_path, "$ pacman -Q | grep rocm\nrocm-core 6.2.4-1\nrocm-hip-runtime 6.2.4-1\n"
                                   "hip-runtime-amd 6.2.4-1\n")
    assert facts.os.package_manager == "pacman"
    assert facts.rocm.version == "6.2.4"
    assert [i.packages for i in facts.rocm.installs] == [("rocm-core", "rocm-hip-runtime", "hip-runtime-amd")]
    # another layout of pacman's (-Qi's "Name : ...") is not a package list, and dpkg's stays apt's
    assert detect_paste(tmp_path, "$ pacman -Qi rocm-core\nName            : rocm-core\n").os.package_manager is None
    assert detect_paste(tmp_path, "$ dpkg -l | grep rocm\nii  rocm-core  6.3.1.60301-48~24.04  amd64  ROCm\n"
                        ).os.package_manager == "apt"


def test_a_dnf_list_row_names_an_installed_rocm_package(tmp_path: Path) -> None:
    # dnf list's columns: name.arch, [epoch:]version-release, @repo (dnf/cli/output.py, Output.simpleList)
    facts = detect_paste(tmp_path, "$ dnf list installed | grep rocm\n"
                                   "rocm-core.x86_64                          6.2.1.60201-112.el9           @rocm\n")
    assert [(i.version, i.packages) for i in facts.rocm.installs] == [("6.2.1", ("rocm-core",))]
    assert facts.os.package_manager == "dnf" and facts.os.kernel is None
    from wizard.parsers.rpm import parse_rpm
    assert parse_rpm("rocm-core.x86_64 6.2.1.60201-112.el9\nrocm-core.gfx1100 6.2.1-1 @rocm\nrocm core 6.2.1-1 @x\n") == ()
    # a row without "@" is a package the repos offer, not one installed: under "Available Packages" or grepped
    offered = detect_paste(tmp_path, "$ dnf list rocm-core hip-runtime-amd\n"
                                     "Installed Packages\n"
                                     "rocm-core.x86_64                     6.2.1.60201-112.el9                 @rocm\n"
                                     "Available Packages\n"
                                     "hip-runtime-amd.x86_64               6.3.0.60300-39.el9                  rocm\n")
    assert [(i.version, i.packages) for i in offered.rocm.installs] == [("6.2.1", ("rocm-core",))]
    grepped = "$ dnf list | grep rocm-core\nrocm-core.x86_64      6.3.0.60300-39.el9      rocm\n"
    assert detect_paste(tmp_path, grepped).rocm.installs == ()
    assert [p.version for p in parse_rpm("Installed packages\nrocm-core.x86_64  6.2.1.60201-112.el9  rocm\n")] == ["6.2.1.60201"]


# --------------------------------------------------------------------------- rocm-smi's product info (helper F)

_SMI_NEW = ("============================ ROCm System Management Interface ============================\n"
            "====================================== Product Info ======================================\n"
            "GPU[0]\t\t: Card Series: \t\tNavi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]\n"
            "GPU[0]\t\t: Card Model: \t\t0x744c\n"
            "GPU[0]\t\t: Card Vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]\n"
            "GPU[0]\t\t: Subsystem ID: \t0x5304\n"
            "GPU[0]\t\t: GFX Version: \t\tgfx1100\n"
            "================================== End of ROCm SMI Log ===================================\n")


@pytest.mark.parametrize("text", [
    _SMI_NEW,
    '$ rocm-smi --showproductname --json\n{"card0": {"Card Series": "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", '
    '"Card Model": "0x744c", "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "GFX Version": "gfx1100"}}\n',
    '{"card0": {"Card Model": "0x744c", "GFX Version": "gfx1100"}}\n',
    "$ rocm-smi --showproductname --csv\ndevice,Card Series,Card Model,Card Vendor,GFX Version\n"
    "card0,Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M],0x744c,Advanced Micro Devices Inc. [AMD/ATI],gfx1100\n",
])
def test_rocm_smi_6s_card_model_is_the_pci_device_id(tmp_path: Path, text: str) -> None:
    # rocm_smi_lib 4b5ccb5 (2024-01-31): showProduct's 'Card Model' is getDRMDeviceId; --json is one json.dumps line
    assert [(g.gfx, g.pci_id) for g in detect_paste(tmp_path, text).gpus] == [("gfx1100", "1002:744c")]


def test_older_rocm_smis_card_model_is_the_boards_subsystem_not_its_device(tmp_path: Path) -> None:
    text = ("======================= ROCm System Management Interface =======================\n"
            "================================= Product Info =================================\n"
            "GPU[0]\t\t: Card series: \t\tNavi 21 [Radeon RX 6800/6800 XT / 6900 XT]\n"
            "GPU[0]\t\t: Card model: \t\t0x0e3a\n"
            "============================= End of ROCm SMI Log ==============================\n")
    assert [g.pci_id for g in detect_paste(tmp_path, text).gpus] == [None]


# --------------------------------------------------------------------------- lspci's machine-readable layouts (helper F)


@pytest.mark.parametrize("text", [
    '$ lspci -mm -nn\n03:00.0 "VGA compatible controller [0300]" "Advanced Micro Devices, Inc. [AMD/ATI] [1002]" '
    '"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [744c]" -rc8 "Sapphire Technology Limited [1da2]" "Device [471e]"\n',
    '00:01.0 "Host bridge [0600]" "Advanced Micro Devices, Inc. [AMD] [1022]" "Raphael/Granite Ridge Root Complex [14d8]" "" ""\n'
    '03:00.0 "VGA compatible controller [0300]" "Advanced Micro Devices, Inc. [AMD/ATI] [1002]" '
    '"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [744c]" -rc8 -p00 "Sapphire Technology Limited [1da2]" "Device [471e]"\n',
    "$ lspci -vmm -nn -k\nSlot:\t03:00.0\nClass:\tVGA compatible controller [0300]\n"
    "Vendor:\tAdvanced Micro Devices, Inc. [AMD/ATI] [1002]\nDevice:\tNavi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [744c]\n"
    "SVendor:\tSapphire Technology Limited [1da2]\nSDevice:\tDevice [471e]\nRev:\tc8\nDriver:\tamdgpu\nModule:\tamdgpu\n",
    "Slot:\t0000:03:00.0\nClass:\tVGA compatible controller [0300]\nVendor:\tAdvanced Micro Devices, Inc. [AMD/ATI] [1002]\n"
    "Device:\tNavi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [744c]\n",
])
def test_lspci_mm_and_vmm_name_the_gpus_pci_id_and_address(tmp_path: Path, text: str) -> None:
    # pciutils lspci.c show_machine(): -mm quoted fields with -nn's [ids], -vmm "Key:\tvalue" blocks
    assert [(g.gfx, g.pci_id, g.bdf) for g in detect_paste(tmp_path, text).gpus] == [("gfx1100", "1002:744c", "0000:03:00.0")]


def test_lspci_mm_and_vmm_of_other_devices_are_no_amd_gpu(tmp_path: Path) -> None:
    text = ('$ lspci -mm -nn\n01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" "AD102 [GeForce RTX 4090] '
            '[2684]" -ra1 "" ""\n05:00.0 "Ethernet controller [0200]" "Intel Corporation [8086]" "I225-V [15f3]" -r03 "" ""\n'
            "$ lspci -vmm\nSlot:\t06:00.0\nClass:\tNon-Volatile memory controller\nVendor:\tSamsung Electronics Co Ltd\n"
            "Device:\tNVMe SSD Controller PM9A1/PM9A3/980PRO\n")
    facts = detect_paste(tmp_path, text)
    assert facts.gpus == () or all(g.pci_id is None or not g.pci_id.startswith("1002:") for g in facts.gpus)
    assert not [g for g in facts.gpus if g.bdf in ("0000:05:00.0", "0000:06:00.0")]


# --------------------------------------------------------------------------- amd-smi's --json and --csv (helper F)

_AMD_SMI_JSON = ('$ amd-smi static --asic --bus --json\n[\n    {\n        "gpu": 0,\n        "asic": {\n'
                 '            "market_name": "AMD Radeon RX 7900 XTX",\n            "vendor_id": "0x1002",\n'
                 '            "device_id": "0x744c",\n            "target_graphics_version": "gfx1100"\n        },\n'
                 '        "bus": {\n            "bdf": "0000:03:00.0"\n        }\n    }\n]\n')


@pytest.mark.parametrize("text", [
    _AMD_SMI_JSON,
    "$ amd-smi static --asic --bus --csv\ngpu,market_name,vendor_id,device_id,target_graphics_version,bdf\n"
    "0,AMD Radeon RX 7900 XTX,0x1002,0x744c,gfx1100,0000:03:00.0\n",
    "gpu,market_name,vendor_id,device_id,target_graphics_version,bdf\n0,AMD Radeon RX 7900 XTX,0x1002,0x744c,gfx1100,0000:03:00.0\n",
])
def test_amd_smi_json_and_csv_pasted_after_their_command_name_the_gpu(tmp_path: Path, text: str) -> None:
    # amdsmi_cli/amdsmi_logger.py: --json is json.dumps(indent=4) of the per-GPU dicts, --csv flattens their keys
    assert [(g.gfx, g.pci_id, g.bdf) for g in detect_paste(tmp_path, text).gpus] == [("gfx1100", "1002:744c", "0000:03:00.0")]


def test_a_csv_that_is_not_amd_smis_is_no_gpu(tmp_path: Path) -> None:
    from wizard.parsers.amd_smi import parse_amd_smi
    assert parse_amd_smi("gpu,name,util\n0,RTX 4090,12\n").gpus == ()
    assert not detect_paste(tmp_path, "gpu,name,util\n0,RTX 4090,12\n").gpus


# --------------------------------------------------------------------------- vulkaninfo's and hwinfo's device ids (helper F)


@pytest.mark.parametrize("text", [
    "$ vulkaninfo --summary\nGPU0:\n\tapiVersion         = 1.3.289\n\tdriverVersion      = 24.2.8\n\tvendorID           = 0x1002\n"
    "\tdeviceID           = 0x744c\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n",
    "$ hwinfo --gfxcard\n29: PCI 300.0: 0300 VGA compatible controller (VGA)\n  Hardware Class: graphics card\n"
    '  Vendor: pci 0x1002 "ATI Technologies Inc"\n  Device: pci 0x744c \n  SubVendor: pci 0x1da2 "Sapphire Technology Limited"\n'
    '  SubDevice: pci 0x471e \n  Driver: "amdgpu"\n',
])
def test_vulkaninfo_and_hwinfo_name_the_device_id_on_the_line_after_amds_vendor_id(text: str) -> None:
    assert said(text, "pci_id") == ["1002:744c"]


@pytest.mark.parametrize("text", [
    "\tvendorID           = 0x10de\n\tdeviceID           = 0x2684\n",  # an NVIDIA GPU
    '  Vendor: pci 0x8086 "Intel Corporation"\n  Device: pci 0x56a0 "DG2 [Arc A770]"\n',
    '  SubVendor: pci 0x1002 "ATI Technologies Inc"\n  SubDevice: pci 0x0e3a \n',  # the board's subsystem
    "\tvendorID           = 0x1002\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n\tdeviceID = 0x744c\n",
])
def test_a_device_id_after_another_vendor_or_not_next_to_amds_is_not_read(text: str) -> None:
    assert not said(text, "pci_id")


def test_amdgpu_tops_dump_names_the_devices_address_and_id(tmp_path: Path) -> None:
    # amdgpu_top src/dump_info.rs device_info(): "Device Name : [...]", "PCI (domain:bus:dev.func): ...", "DeviceID.RevID"
    text = ("$ amdgpu_top -d\n\n--- AMDGPU info dump: 0 ---\nDevice Name              : [AMD Radeon RX 7900 XTX]\n"
            "PCI (domain:bus:dev.func): 0000:03:00.0\nDeviceID.RevID           : 0x744C.0xC8\n\nGPU Type  : dGPU\n")
    assert [(g.gfx, g.pci_id, g.bdf) for g in detect_paste(tmp_path, text).gpus] == [("gfx1100", "1002:744c", "0000:03:00.0")]
    assert not said("DeviceID.RevID: 744C.C8", "pci_id")  # not amdgpu_top's form
    assert not said("PCI (domain:bus:dev.func): see lspci", "bdf")


# --------------------------------------------------------------------------- colour codes left without their ESC (helper F)


def test_rocminfos_colour_codes_without_their_escape_byte_are_not_part_of_the_facts(tmp_path: Path) -> None:
    # rocminfo.cc prints its status lines between "\x1B[37m"/"\x1B[31m" and "\x1B[0m"; a web page drops the ESC byte
    text = ("[37mROCk module version 6.10.5 is loaded[0m\n[31mUnable to open /dev/kfd read-write: Permission denied[0m\n"
            '[31malice is not member of "render" group, the default DRM access group.[0m\n'
            "[37mHSA System Attributes[0m\n*******\nAgent 2\n*******\n  Name:                    gfx1100\n")
    d = detect_paste(tmp_path, text).driver
    assert (d.kfd_error, d.user, d.in_render_group, d.version) == ("Permission denied", "alice", False, "6.10.5")


def test_a_bracketed_m_without_a_colour_reset_on_its_line_is_text() -> None:
    from wizard.parsers._text import clean_line
    assert clean_line("timeout [5m] reached") == "timeout [5m] reached"
    assert clean_line("[1;31mERROR[0m: bad") == "ERROR: bad"


def test_rocminfos_rock_module_version_is_an_out_of_tree_driver_wherever_the_paste_cuts_it(tmp_path: Path) -> None:
    # rocminfo prints the version only from /sys/module/amdgpu/version, which amdgpu-dkms's module has and the kernel's not
    text = ("$ rocminfo\nROCk module version 6.10.5 is loaded\n=====================    \nHSA System Attributes    \n"
            "=====================    \nRuntime Version:         1.14\n*******                  \nAgent 2                  \n"
            "*******                  \n  Name:                    gfx1100                            \n")
    d = detect_paste(tmp_path, text).driver
    assert (d.version, d.kind) == ("6.10.5", "dkms")
    assert detect_paste(tmp_path, "ROCk module is loaded\n").driver.kind is None  # the in-kernel driver says no version


# --------------------------------------------------------------------------- inxi's bus-ID (helper F)


@pytest.mark.parametrize("line, bdf", [
    ("    lanes: 16 ports: active: DP-1 empty: DP-2,HDMI-A-1 bus-ID: 03:00.0 chip-ID: 1002:744c", "0000:03:00.0"),
    ("           bus ID: 0b:00.0 chip ID: 1002:73bf ", "0000:0b:00.0"),  # inxi 2.x
    ("  Device-2: AMD Raphael vendor: ASUSTeK driver: amdgpu v: kernel bus-ID: 0000:0e:00.0 chip-ID: 1002:164e", "0000:0e:00.0"),
])
def test_inxis_bus_id_beside_an_amd_chip_id_is_the_gpus_address(line: str, bdf: str) -> None:
    assert said(line, "bdf") == [bdf]


@pytest.mark.parametrize("line", [
    "  Device-2: AMD Navi 31 HDMI/DP Audio driver: snd_hda_intel v: kernel bus-ID: 03:00.1 chip-ID: 1002:ab30",
    "  Device-1: NVIDIA AD102 [GeForce RTX 4090] driver: nvidia v: 550.120 bus-ID: 01:00.0 chip-ID: 10de:2684",
    "    lanes: 16 bus-ID: 03:00.0",  # the chip id wrapped to the next line: whose address is not said here
    "  Device-3: AMD Family 17h USB 3.1 driver: xhci_hcd bus-ID: 0f:00.0 chip-ID: 1022:15b6",
])
def test_inxis_bus_id_of_another_device_or_function_is_not_a_gpus(line: str) -> None:
    assert not said(line, "bdf")


# --------------------------------------------------------------------------- dmesg's other time stamps (helper F)


@pytest.mark.parametrize("stamp", ["[Sat Nov 29 10:00:02 2025] ", "[Mon Dec  1 09:05:44 2025] ",
                                   "2025-11-29T10:00:02,123456+00:00 ", "2025-11-29T10:00:02+0000 box kernel: "])
def test_dmesg_with_ctime_or_iso_stamps_is_a_kernel_log(stamp: str) -> None:
    # util-linux sys-utils/dmesg.c: -T prints "[%a %b %e %H:%M:%S %Y] ", --time-format=iso ISO_TIMESTAMP_COMMA_T
    from wizard.parsers.dmesg import parse_dmesg
    text = (f"{stamp}[drm] initializing kernel modesetting (IP DISCOVERY 0x1002:0x744C 0x1DA2:0x471E 0xC8).\n"
            f"{stamp}kfd kfd: amdgpu: added device 1002:744c\n")
    assert [s.kind for s in split_paste(text).segments] == ["dmesg.txt"]
    assert {e.kind for e in parse_dmesg(text).events} >= {"ip_discovery", "kfd_added"}


def test_a_bracketed_date_that_is_not_dmesgs_stamp_is_no_kernel_log() -> None:
    assert [s.kind for s in split_paste("[Sat Nov 29 2025] I updated the kernel\n").segments] == ["text"]


def test_rocm_smi_6s_product_info_says_the_driver_is_loaded(tmp_path: Path) -> None:
    # the library-based rocm-smi exits before printing a GPU unless amdgpu is initialised (initializeRsmi)
    assert detect_paste(tmp_path, _SMI_NEW).driver.loaded is True
    assert detect_paste(tmp_path, '{"card0": {"Card Series": "Navi 31", "GFX Version": "gfx1100"}}\n').driver.loaded is True
    # an older product table's keys (small letters) do not tell the library-based tool from the standalone one
    old = ("======================= ROCm System Management Interface =======================\n"
           "GPU[0]\t\t: Card series: \t\tNavi 21 [Radeon RX 6800/6800 XT / 6900 XT]\n")
    assert detect_paste(tmp_path, old).driver.loaded is None


# --------------------------------------------------------------------------- one-fact system commands (helper F)


@pytest.mark.parametrize("text", ["$ systemd-detect-virt\ndocker\n", "$ systemd-detect-virt -c\npodman\n",
                                  "$ systemd-detect-virt --container\nlxc\n"])
def test_systemd_detect_virts_container_id_is_a_container(tmp_path: Path, text: str) -> None:
    # systemd src/basic/virt.c: the ids systemd-detect-virt prints for a container
    assert detect_paste(tmp_path, text).in_container is True


@pytest.mark.parametrize("text", ["$ systemd-detect-virt\nnone\n", "$ systemd-detect-virt\nkvm\n",
                                  "$ uname -n\ndocker\n", "docker\n"])
def test_a_vm_no_virtualisation_or_docker_said_by_another_command_is_not_a_container(tmp_path: Path, text: str) -> None:
    assert detect_paste(tmp_path, text).in_container is None


def test_amdgpus_sysfs_files_say_it_is_loaded_and_out_of_tree(tmp_path: Path) -> None:
    d = detect_paste(tmp_path, "$ cat /sys/module/amdgpu/version\n6.10.5\n").driver
    assert (d.loaded, d.version, d.kind) == (True, "6.10.5", "dkms")
    assert detect_paste(tmp_path, "$ cat /sys/module/amdgpu/initstate\nlive\n").driver.loaded is True
    d = detect_paste(tmp_path, "$ cat /sys/module/amdgpu/initstate\ncat: /sys/module/amdgpu/initstate: No such file or directory\n").driver
    assert d.loaded is None
    assert detect_paste(tmp_path, "$ cat /proc/version\n6.10.5\n").driver.version is None


def test_amd_smi_versions_csv_names_the_rocm_release(tmp_path: Path) -> None:
    # amdsmi_cli/amdsmi_commands.py version(): the keys tool, version, amdsmi_library_version, rocm_version
    text = ("$ amd-smi version --csv\ntool,version,amdsmi_library_version,rocm_version\n"
            "AMDSMI Tool,24.7.1+0012a68,24.7.1.0,6.3.1\n")
    assert detect_paste(tmp_path, text).rocm.version == "6.3.1"
    assert detect_paste(tmp_path, "tool,version,rocm_version\nmytool,1.0,N/A\n").rocm.version is None


# --------------------------------------------------------------------------- the kernel's KFD topology and DRM lines (helper F)


@pytest.mark.parametrize("line, kind, value", [
    ("[    3.500000] amdgpu: Topology: Add dGPU node [0x744c:0x1002]", "pci_id", "1002:744c"),
    ("[    3.500000] kfd kfd: Topology: Add APU node [0x15bf:0x1002]", "pci_id", "1002:15bf"),
    ("[    3.600000] [drm] Initialized amdgpu 3.57.0 20150101 for 0000:03:00.0 on minor 1", "bdf", "0000:03:00.0"),
    ("[    3.600000] [drm] Initialized amdgpu 3.61.0 for 0000:c5:00.0 on minor 0", "bdf", "0000:c5:00.0"),
])
def test_the_kernels_kfd_topology_and_drm_registration_name_the_gpu(line: str, kind: str, value: str) -> None:
    assert said(line, kind) == [value]


@pytest.mark.parametrize("line, kind", [
    ("[    3.500000] amdgpu: Topology: Add CPU node", "pci_id"),
    ("[    3.500000] Topology: Add dGPU node [0x2684:0x10de]", "pci_id"),  # not AMD's vendor id
    ("[    3.600000] [drm] Initialized i915 1.6.0 20230929 for 0000:00:02.0 on minor 0", "bdf"),
    ("[    3.600000] [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on minor 1", "bdf"),
])
def test_the_kernels_cpu_node_and_other_drivers_devices_are_not_an_amd_gpu(line: str, kind: str) -> None:
    assert not said(line, kind)


# --------------------------------------------------------------------------- other drivers' versions (helper F)


@pytest.mark.parametrize("line", [
    "  Driver version:\t\t\t\t 3614.0 (HSA1.1,LC)",  # ROCm's clinfo: the OpenCL runtime's version
    "  Driver version:                               3380.6 (PAL,HSAIL)",
    "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |",
    "    Driver Version                            : 550.54.14",  # nvidia-smi -q: its own line, CUDA's on the next
])
def test_the_opencl_runtimes_and_nvidias_driver_versions_are_not_amdgpus(line: str) -> None:
    assert not said(line, "driver_version")
    assert said("Driver version: 6.10.5", "driver_version") == ["6.10.5"]  # rocm-smi's own line stays read
    assert said("Driver version: 6.8.0-49-generic", "driver_version") == ["6.8.0-49-generic"]  # the in-tree driver's


# ---- applications' own device and environment lines, formats taken from their source (repo@commit:path in mentions.py)

@pytest.mark.parametrize("line, gfx, name", [
    # ollama/ollama@fb30760:discover/amd.go: the dropped device's target, on a line that lists the supported ones
    ('time=2025-09-30T10:12:01.100Z level=WARN source=amd.go:470 msg="dropping ROCm device — no rocblas support for gfx '
     'target" device="AMD Radeon RX 6700 XT" gfx_target=gfx1031 supported="map[gfx1030:true gfx1100:true gfx906:true]" '
     'hint="set HSA_OVERRIDE_GFX_VERSION to map to a supported target"', "gfx1031", "AMD Radeon RX 6700 XT"),
    # ollama/ollama@bc8909f^:discover/amd_linux.go
    ('time=2024-08-01T10:00:00.000Z level=WARN source=amd_linux.go:334 msg="amdgpu too old gfx803" gpu=0', "gfx803", None),
    # tensorflow/tensorflow@637eae5:tensorflow/core/common_runtime/gpu/gpu_device.cc
    ("2024-03-06 07:01:26.857236: I tensorflow/core/common_runtime/gpu/gpu_device.cc:2266] Ignoring visible gpu device "
     "(device: 0, name: AMD Radeon RX 7600, pci bus id: 0000:0d:00.0) with AMDGPU version : gfx1102. The supported AMDGPU "
     "versions are gfx1030, gfx900, gfx906, gfx908, gfx90a, gfx940, gfx941, gfx942.", "gfx1102", "AMD Radeon RX 7600"),
])
def test_ollama_and_tensorflow_name_the_target_of_the_device_they_drop(tmp_path: Path, line: str, gfx: str,
                                                                      name: str | None) -> None:
    gpus = detect_paste(tmp_path, line + "\n").gpus
    assert [(g.gfx_reported, g.name) for g in gpus] == [(gfx, name)]
    assert not [m for m in read_mentions(line) if m.kind == "driver_version"]  # "AMDGPU version : gfx1102" is no driver


@pytest.mark.parametrize("line", [
    'msg="rocm supported GPUs" types="[gfx1030 gfx1100 gfx906]"',
    "The supported AMDGPU versions are gfx1030, gfx900, gfx906, gfx908, gfx90a.",
    "cmake -DGFX_TARGET=gfx1030 ..",  # a build setting, not ollama's key
    "my amdgpu is not too old, gfx1030 is fine",
])
def test_near_misses_of_the_dropped_device_target_rules(line: str) -> None:
    assert not [m for m in read_mentions(line) if m.kind in ("gfx_rt", "gfx_hw")]


def test_ollamas_inference_compute_line_names_the_device_by_its_description(tmp_path: Path) -> None:
    # ollama/ollama@fb30760:discover/types.go ("inference compute"), discover/runner.go ("dropping integrated GPU")
    line = ('time=2025-09-30T10:12:01.123Z level=INFO source=types.go:130 msg="inference compute" id=0 filter_id=0 '
            'library=ROCm compute=gfx1100 name=ROCm0 description="AMD Radeon RX 7900 XTX" libdirs=ollama,rocm '
            'driver=60342.13 pci_id=0000:03:00.0 type=discrete total="24.0 GiB" available="23.2 GiB"\n'
            'time=2025-09-30T10:12:01.100Z level=INFO source=runner.go:405 msg="dropping integrated GPU; to enable, set '
            'OLLAMA_IGPU_ENABLE=1" id=0 library=ROCm compute=gfx1103 name=ROCm1 description="AMD Radeon 780M Graphics" '
            'pci_id=0000:c4:00.0\n')
    gpus = detect_paste(tmp_path, line).gpus
    assert [(g.name, g.gfx_reported, g.bdf, g.integrated) for g in gpus] == [
        ("AMD Radeon RX 7900 XTX", "gfx1100", "0000:03:00.0", False),
        ("AMD Radeon 780M Graphics", "gfx1103", "0000:c4:00.0", True)]
    assert not [m for m in read_mentions('msg="inference compute" id=0 library=CUDA compute=8.9 '
                                         'description="NVIDIA GeForce RTX 4090"') if m.kind == "gpu_name"]


def test_tensorflows_older_device_properties_line_gives_the_bus_address(tmp_path: Path) -> None:
    # tensorflow/tensorflow@637eae5:tensorflow/core/common_runtime/gpu/gpu_device.cc
    text = ("2021-03-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1734] Found device 0 with "
            "properties: \npciBusID: 0000:0b:00.0 name: Device 73bf     ROCm AMDGPU Arch: gfx1030\ncoreClock: 2.575GHz "
            "coreCount: 40 deviceMemorySize: 15.98GiB deviceMemoryBandwidth: 476.34GiB/s\n")
    assert [(g.gfx_reported, g.bdf) for g in detect_paste(tmp_path, text).gpus] == [("gfx1030", "0000:0b:00.0")]
    # the same lines of TensorFlow's CUDA build name an NVIDIA GPU's address, not an AMD GPU's
    nvidia = ("2020-10-01 12:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1716] Found device 0 with "
              "properties: \npciBusID: 0000:01:00.0 name: NVIDIA GeForce RTX 3090 computeCapability: 8.6\n"
              "2023-10-01 12:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device "
              "/job:localhost/replica:0/task:0/device:GPU:0 with 22000 MB memory:  -> device: 0, name: NVIDIA GeForce "
              "RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n")
    assert not said(nvidia, "bdf")
    assert detect_paste(tmp_path, nvidia).gpus == ()


@pytest.mark.parametrize("line, count", [
    ("[RocmDevice(id=0), RocmDevice(id=1), RocmDevice(id=2), RocmDevice(id=3)]", "4"),
    ("[RocmDevice(id=0)]", "1"),
])
def test_jaxs_device_list_counts_the_gpus(line: str, count: str) -> None:
    # ROCm/rocm-install-on-linux@5dd2ddf:docs/install/3rd-party/jax-install.rst
    assert said(line, "gpu_count") == [count]
    for near in ("Plain JAX still reports `RocmDevice(id=0)`.", "[CpuDevice(id=0)]",
                 "# Should show: [RocmDevice(id=0)]"):
        assert not said(near, "gpu_count"), near


@pytest.mark.parametrize("text, torch, hip", [
    # microsoft/DeepSpeed@0399e0b:deepspeed/env_report.py; the hip line: jagadish-amd/DeepSpeed@048a11c, same path
    ("DeepSpeed general environment info:\ntorch install path ............... ['/home/u/venv/lib/python3.10/site-packages/"
     "torch']\ntorch version .................... 2.4.0+rocm6.1\ntorch cuda version ............... None\n"
     "torch hip version ................ 6.1.40091-a8dbc0c19\nnvcc version ..................... None\n"
     "deepspeed wheel compiled w. ...... torch 2.4, hip 6.1\n", "2.4.0+rocm6.1", "6.1.40091-a8dbc0c19"),
    # huggingface/transformers@026b0db:src/transformers/commands/env.py (accelerate's and diffusers' env print the same)
    ("- `transformers` version: 4.46.2\n- Platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.35\n- Python version: 3.10.12\n"
     "- PyTorch version (GPU?): 2.5.1+rocm6.2 (True)\n", "2.5.1+rocm6.2", None),
])
def test_ds_report_and_the_hugging_face_env_reports_name_torch(tmp_path: Path, text: str, torch: str,
                                                               hip: str | None) -> None:
    facts = detect_paste(tmp_path, text)
    assert [(e.torch, e.hip) for e in facts.python_envs] == [(torch, hip)]
    if "Platform" in text:
        assert facts.os.kernel == "6.8.0-45-generic"
    for near in ("deepspeed wheel compiled w. ...... torch 2.4, hip 6.1", "torch version ..... None",
                 "- Tensorflow version (GPU?): 2.16.1 (True)", "- Platform: Windows-10-10.0.19045-SP0"):
        assert not [m for m in read_mentions(near) if m.kind in ("torch", "hip", "kernel")], near


def test_vllms_rocm_version_field_holds_hipccs_hip_version_not_the_release(tmp_path: Path) -> None:
    # vllm-project/vllm@030ea52:vllm/collect_env.py: "ROCM Version" is `hipcc --version`'s "HIP version: (\S+)"
    text = ("Clang version                : 19.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.3.1 24491 "
            "1e0fda770a2079fbd71e4b70974d74f62fd3af10)\nROCM Version                 : 6.3.42133-1b9c17779\n")
    assert detect_paste(tmp_path, text).rocm.version == "6.3.1"  # the compiler's release, not 6.3.42133
    assert not said("ROCM Version                 : 6.3.42133-1b9c17779", "rocm")
    assert said("ROCm version: 6.2.4", "rocm") == ["6.2.4"]


@pytest.mark.parametrize("text, gfx, count, torch, hip", [
    # vladmandic/sdnext@d62ee69:installer.py (the older lines)
    ("10:00:00-000004 INFO     ROCm: agents=['gfx1100']\n10:00:00-000005 INFO     Torch 2.3.0+rocm6.0\n"
     "10:00:00-000006 INFO     Torch backend: AMD ROCm HIP 6.0.32830-d62f6a171\n"
     "10:00:00-000007 INFO     Torch detected GPU: AMD Radeon RX 7900 XTX VRAM 24560 Arch (11, 0) Cores 48\n",
     "gfx1100", 1, "2.3.0+rocm6.0", "6.0.32830-d62f6a171"),
    # vladmandic/sdnext@058a7f0:installer.py (the current ones)
    ("ROCm: agents=['gfx1030', 'gfx1030']\nTorch 2.5.1+rocm6.2\n"
     "Torch backend: {'type': 'rocm', 'hip': '6.2.41133-dd7f95766'}\n"
     "Torch detected: {'gpu': 'AMD Radeon RX 6800 XT', 'vram': 16368, 'arch': (10, 3), 'cores': 36}\n"
     "Torch detected: {'gpu': 'AMD Radeon RX 6800 XT', 'vram': 16368, 'arch': (10, 3), 'cores': 36}\n",
     "gfx1030", 2, "2.5.1+rocm6.2", "6.2.41133-dd7f95766"),
])
def test_sdnexts_start_up_lines_name_the_agents_the_gpus_and_torchs_hip(tmp_path: Path, text: str, gfx: str, count: int,
                                                                       torch: str, hip: str) -> None:
    facts = detect_paste(tmp_path, text)
    assert [g.gfx_reported for g in facts.gpus] == [gfx] * count
    assert {g.name for g in facts.gpus} <= {"AMD Radeon RX 7900 XTX", "AMD Radeon RX 6800 XT"}
    assert [(e.torch, e.hip) for e in facts.python_envs] == [(torch, hip)]


@pytest.mark.parametrize("line", [
    "ROCm: agents=['gfx1100', 'gfx1036']",  # two targets on one line: not one GPU's
    "Torch backend: {'type': 'cuda', 'cuda': '12.4', 'cudnn': 90100}",
    "Torch detected: {'gpu': 'NVIDIA GeForce RTX 4090', 'vram': 24564, 'arch': (8, 9), 'cores': 128}",
])
def test_near_misses_of_the_sdnext_rules(line: str) -> None:
    assert not [m for m in read_mentions(line) if m.kind in ("gfx_rt", "gpu_count", "hip", "gpu_name")]


@pytest.mark.parametrize("line, gfx, override", [
    # blakeblackshear/frigate@087493b:frigate/detectors/plugins/rocm.py (the target read with the override unset)
    ("2024-05-01 10:00:00.000 WARNING  : AMD/ROCm: detected gfx1031, overriding HSA_OVERRIDE_GFX_VERSION=10.3.0",
     "gfx1031", "10.3.0"),
    ("2024-05-01 10:00:00.000 WARNING  : AMD/ROCm: detected gfx1103 but HSA_OVERRIDE_GFX_VERSION already present "
     "(11.0.0), not overriding!", "gfx1103", "11.0.0"),
])
def test_frigates_rocm_detector_names_the_hardware_target_and_the_override_in_force(tmp_path: Path, line: str, gfx: str,
                                                                                    override: str) -> None:
    facts = detect_paste(tmp_path, line + "\n")
    assert [g.gfx for g in facts.gpus] == [gfx]
    assert facts.env_values.get("HSA_OVERRIDE_GFX_VERSION") == override


@pytest.mark.parametrize("line, kind, value", [
    # astral-sh/uv@11f49f2:crates/uv-torch/src/accelerator.rs
    ("DEBUG Detected AMD GPU architecture from `rocm_agent_enumerator`: gfx1100", "gfx_rt", "gfx1100"),
    # invoke-ai/InvokeAI@59a8c0d:invokeai/app/run_app.py
    ("[2024-10-01 10:00:00,000]::[InvokeAI]::INFO --> Using torch device: AMD Radeon RX 7900 XTX", "gpu_name",
     "AMD Radeon RX 7900 XTX"),
])
def test_uvs_torch_backend_detection_and_invokeais_torch_device(line: str, kind: str, value: str) -> None:
    assert said(line, kind) == [value]


@pytest.mark.parametrize("line", [
    "DEBUG Detected AMD GPU architecture from `UV_AMD_GPU_ARCHITECTURE`: gfx1100",  # a setting, not the GPU
    "[InvokeAI]::INFO --> Using torch device: NVIDIA GeForce RTX 3090",
    "AMD/ROCm: loaded migraphx module",
    "On AMD/ROCm: detected gfx1031? Set HSA_OVERRIDE_GFX_VERSION=10.3.0 yourself",
])
def test_near_misses_of_the_uv_invokeai_and_frigate_rules(line: str) -> None:
    assert not [m for m in read_mentions(line) if m.kind in ("gfx_rt", "gfx_hw", "gpu_name")
                or (m.kind == "env" and m.detail == "log")]


def test_llama_cpps_using_device_lines_name_each_gpu_a_model_loads_onto(tmp_path: Path) -> None:
    # ggml-org/llama.cpp@5bc7a74:src/llama.cpp ("%s: using device %s (%s) - %zu MiB free")
    text = ("llama_model_load_from_file_impl: using device ROCm0 (AMD Radeon RX 7900 XTX) - 24390 MiB free\n"
            "llama_model_load_from_file_impl: using device ROCm1 (AMD Radeon RX 7600) - 8000 MiB free\n")
    assert [(g.name, g.gfx) for g in detect_paste(tmp_path, text).gpus] == [
        ("AMD Radeon RX 7900 XTX", "gfx1100"), ("AMD Radeon RX 7600", "gfx1102")]
    assert said("llama_model_load_from_file_impl: using device ROCm1 (AMD Radeon RX 7600) - 8000 MiB free",
                "gpu_index") == ["1"]
    # a Vulkan device's number is Vulkan's, not the HIP index; ggml's --list-devices row
    assert said("llama_model_load_from_file_impl: using device Vulkan1 (AMD Radeon RX 6600 XT) - 8176 MiB free",
                "gpu_index") == []
    assert "AMD Radeon RX 6600 XT" in said("  Vulkan0: AMD Radeon RX 6600 XT (RADV NAVI23) (8176 MiB, 8000 MiB free)",
                                           "gpu_name")
    for near in ("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 24000 MiB free",
                 "  CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23000 MiB free)"):
        assert not said(near, "gpu_name"), near


def test_sdnexts_platform_line_says_it_runs_in_its_container(tmp_path: Path) -> None:
    # vladmandic/sdnext@058a7f0:installer.py get_platform (docker= is whether SD_DOCKER is set), launch.py
    line = ("10:00:00-000002 INFO     Platform: arch=x86_64 cpu=x86_64 system=Linux release=6.8.0-49-generic "
            "python=3.11.9 locale=('C', 'UTF-8') setuptools=69.5.1 docker=True pip=24.0 uv=0.4.0\n")
    facts = detect_paste(tmp_path, line)
    assert facts.in_container is True
    assert facts.os.kernel == "6.8.0-49-generic"
    for near in ("Platform: arch=x86_64 cpu=x86_64 system=Linux release=6.8.0-49-generic python=3.11.9 docker=False",
                 "Platform: arch=AMD64 cpu=x86 system=Windows release=10 python=3.11.9 docker=True"):
        assert not said(near, "container"), near


def test_automatic1111s_sysinfo_json_gives_the_kernel_and_torchs_hip(tmp_path: Path) -> None:
    # AUTOMATIC1111/stable-diffusion-webui@11f827c:modules/sysinfo.py: "Platform" is platform.platform(), "Torch env
    # info" collect_env's get_env_info()._asdict(), dumped with json.dumps(indent=4)
    text = ('{\n    "Platform": "Linux-6.5.0-35-generic-x86_64-with-glibc2.35",\n    "Python": "3.10.12",\n'
            '    "Torch env info": {\n        "torch_version": "2.1.2+rocm5.6",\n'
            '        "python_platform": "Linux-6.5.0-35-generic-x86_64-with-glibc2.35",\n'
            '        "nvidia_gpu_models": "AMD Radeon RX 7900 XTX",\n'
            '        "hip_compiled_version": "5.6.31061-8c743ae5d",\n        "hip_runtime_version": "5.6.31061",\n'
            '        "miopen_runtime_version": "2.20.0"\n    }\n}\n')
    facts = detect_paste(tmp_path, text)
    assert facts.os.kernel == "6.5.0-35-generic"
    assert [(e.torch, e.hip) for e in facts.python_envs] == [("2.1.2+rocm5.6", "5.6.31061-8c743ae5d")]
    for near in ('"Platform": "Windows-10-10.0.19045-SP0"', '"hip_compiled_version": "N/A"',
                 '"miopen_runtime_version": "2.20.0"'):
        assert not [m for m in read_mentions(near) if m.kind in ("kernel", "hip")], near


@pytest.mark.parametrize("text, count", [
    # pytorch/pytorch@17e3b6a:torch/cuda/__init__.py device_count, echoed by the Python prompt or printed by a one-liner
    (">>> import torch\n>>> torch.cuda.device_count()\n2\n", 2),
    ("In [3]: torch.cuda.device_count()\nOut[3]: 4\n", 4),
    ('$ python3 -c "import torch; print(torch.cuda.device_count())"\n2\n', 2),
])
def test_torchs_device_count_echoed_counts_the_gpus(tmp_path: Path, text: str, count: int) -> None:
    assert len(detect_paste(tmp_path, text).gpus) == count
    assert not said(">>> torch.cuda.is_available()\nTrue\n2", "gpu_count")
    assert not said(">>> torch.cuda.device_count()\n>>> 2", "gpu_count")


def test_torchs_device_name_echoed_names_the_gpu(tmp_path: Path) -> None:
    # pytorch/pytorch@17e3b6a:torch/cuda/__init__.py get_device_name, echoed by the prompt; the line after the question
    text = ">>> torch.cuda.get_device_name(0)\n'AMD Radeon RX 6800 XT'\n>>> torch.cuda.get_device_name(1)\n'AMD Radeon RX 6600'\n"
    assert [m.value for m in read_mentions(text) if m.kind == "gpu_name" and m.detail == "echo"] == [
        "AMD Radeon RX 6800 XT", "AMD Radeon RX 6600"]
    assert [(g.name, g.gfx) for g in detect_paste(tmp_path, text).gpus] == [
        ("AMD Radeon RX 6800 XT", "gfx1030"), ("AMD Radeon RX 6600", "gfx1032")]
    assert not said(">>> torch.cuda.get_device_name(0)\n'NVIDIA GeForce RTX 3090'", "gpu_name")


def test_tritons_hip_target_names_the_devices_target(tmp_path: Path) -> None:
    # triton-lang/triton@0009f6b:python/triton/backends/compiler.py: the GPUTarget dataclass's repr
    line = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: "
            "65536. target=GPUTarget(backend='hip', arch='gfx1100', warp_size=32)\n")
    assert [g.gfx_reported for g in detect_paste(tmp_path, line).gpus] == ["gfx1100"]
    for near in ("GPUTarget(backend='cuda', arch=89, warp_size=32)",
                 "[GPUTarget(backend='hip', arch='gfx942', warp_size=64), GPUTarget(backend='hip', arch='gfx90a', warp_size=64)]"):
        assert not said(near, "gfx_rt"), near


def test_the_first_rocm_releases_of_ollama_number_the_gpus_and_name_the_loaded_dkms_driver(tmp_path: Path) -> None:
    # ollama/ollama@6c5ccb1:gpu/amd_linux.go ("AMD Driver: " + the /sys/module/amdgpu/version it read, "amdgpu [%d] %s is
    # supported", "amdgpu [%d] %s is not supported by %s %v", "amdgpu [%d] too old %s")
    text = ('time=2024-03-10T10:00:00.000Z level=INFO source=amd_linux.go:50 msg="AMD Driver: 6.3.6"\n'
            'time=2024-03-10T10:00:00.000Z level=INFO source=amd_linux.go:119 msg="amdgpu [0] gfx1030 is supported"\n'
            'time=2024-03-10T10:00:00.000Z level=WARN source=amd_linux.go:114 msg="amdgpu [1] gfx1031 is not supported by '
            '/tmp/ollama2868838036/rocm [gfx1030 gfx1100 gfx1101 gfx1102 gfx900 gfx906 gfx908 gfx90a gfx940 gfx941 gfx942]"\n')
    facts = detect_paste(tmp_path, text)
    assert [g.gfx_reported for g in facts.gpus] == ["gfx1030", "gfx1031"]
    assert (facts.driver.loaded, facts.driver.version) == (True, "6.3.6")
    assert said('time=2024-03-10T10:00:00.000Z level=WARN source=amd_linux.go:84 msg="amdgpu [1] too old gfx803"',
                "gfx_rt") == ["gfx803"]
    for near in ("my amdgpu gfx1030 is not supported by ROCm 6", "is the amdgpu gfx1030 supported?",
                 "AMD Driver: the latest one from amd.com"):
        assert not [m for m in read_mentions(near) if m.kind in ("gfx_rt", "driver_version", "rock")], near


@pytest.mark.parametrize("text, gfxs", [
    # ollama/ollama@6c5ccb1:gpu/amd_linux.go ("detected amdgpu versions %v"): one target a GPU
    ('time=2024-03-10T10:00:00.000Z level=INFO source=amd_linux.go:88 msg="detected amdgpu versions [gfx1030 gfx1031]"\n'
     'time=2024-03-10T10:00:00.000Z level=INFO source=amd_linux.go:119 msg="amdgpu [0] gfx1030 is supported"\n'
     'time=2024-03-10T10:00:00.000Z level=WARN source=amd_linux.go:114 msg="amdgpu [1] gfx1031 is not supported by '
     '/tmp/ollama2868838036/rocm [gfx1030 gfx1100]"\n', ["gfx1030", "gfx1031"]),
    ('time=2024-03-10T10:00:00.000Z level=INFO source=amd_linux.go:88 msg="detected amdgpu versions [gfx1100 gfx1100]"\n',
     ["gfx1100", "gfx1100"]),
])
def test_ollamas_detected_amdgpu_versions_are_one_gpu_each(tmp_path: Path, text: str, gfxs: list[str]) -> None:
    assert [g.gfx_reported for g in detect_paste(tmp_path, text).gpus] == gfxs
    # two targets on one line are not one GPU's: the count, not a target
    assert said('msg="detected amdgpu versions [gfx1030 gfx1031]"', "gfx_rt") == []
    assert said('msg="detected amdgpu versions [gfx1030 gfx1031]"', "gpu_count") == ["2"]


@pytest.mark.parametrize("text, name, count, kernel", [
    # jax-ml/jax@0fb462e:jax/_src/environment_info.py (the older form)
    ("jax:    0.4.13\njaxlib: 0.4.13\nnumpy:  1.24.3\npython: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0]\n"
     "jax.devices (2 total, 2 local): [RocmDevice(id=0) RocmDevice(id=1)]\nprocess_count: 1\n", None, 2, None),
    # jax-ml/jax@4853515, same path (device kind and count, platform.uname())
    ("jax:    0.4.35\njaxlib: 0.4.35\nnumpy:  2.1.3\npython: 3.12.3 (main, Nov  6 2024, 18:32:19) [GCC 13.2.0]\n"
     'device info: AMD Instinct MI300X-8, 8 local devices"\nprocess_count: 1\n'
     "platform: uname_result(system='Linux', node='box', release='6.8.0-49-generic', version='#49-Ubuntu SMP "
     "PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024', machine='x86_64')\n", "AMD Instinct MI300X", 8, "6.8.0-49-generic"),
])
def test_jaxs_environment_info_gives_the_local_gpus_and_the_kernel(tmp_path: Path, text: str, name: str | None,
                                                                   count: int, kernel: str | None) -> None:
    facts = detect_paste(tmp_path, text)
    assert len(facts.gpus) == count
    assert {g.name for g in facts.gpus} == {name}
    assert facts.os.kernel == kernel
    for near in ("jax.devices (1 total, 1 local): [CudaDevice(id=0)]", 'device info: NVIDIA H100 80GB HBM3-8, 8 local devices"',
                 "platform: uname_result(system='Windows', node='box', release='10', version='10.0.19045', machine='AMD64')"):
        assert not [m for m in read_mentions(near) if m.kind in ("gpu_count", "gpu_name", "kernel")], near


# --------------------------------------------------------------------------- application formats, from their source


@pytest.mark.parametrize("header", [
    # ROCm/rccl-tests@043eef6:src/common.cu: "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s"
    "#   Rank {r} Pid  41234 on      ws-01 device  {r} [0x{b}] AMD Radeon RX 7900 XTX",
    # the later layout with the group, as nccl-tests prints it
    "#  Rank {r} Group  0 Pid  41234 on      ws-01 device  {r} [0x{b}] AMD Radeon RX 7900 XTX",
    # ROCm/rccl-tests@c0eac93:src/common.cu: the whole bus address
    "#   Rank {r} Pid  41234 on      ws-01 device  {r} [0000:{b}:00.0] AMD Radeon RX 7900 XTX",
    "#   Rank {r} Pid  41234 on      ws-01 device  {r} [00000000:{b}:00.0] AMD Radeon RX 7900 XTX",
])
def test_rccl_tests_device_table_names_each_ranks_gpu_and_its_index(tmp_path: Path, header: str) -> None:
    text = ("# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "#\n# Using devices\n" + "\n".join(header.format(r=r, b=b) for r, b in ((0, "03"), (1, "43"))) + "\n#\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.gfx) for g in facts.gpus] == [("AMD Radeon RX 7900 XTX", "gfx1100")] * 2
    if ":00.0]" in header:
        assert [g.bdf for g in facts.gpus] == ["0000:03:00.0", "0000:43:00.0"]
    for near in ("#   Rank  0 Pid  41234 on      ws-01 device  0 [0x17] NVIDIA H100 80GB HBM3",
                 "Rank 0 on device 0 AMD Radeon RX 7900 XTX hangs"):
        assert not [m for m in read_mentions(near) if m.kind in ("gpu_name", "gpu_index")], near


def test_blenders_cycles_hip_device_gives_the_gpus_name_and_place(tmp_path: Path) -> None:
    # blender/blender@a1de44d:intern/cycles/device/hip/device.cpp: "Added device \"%s\" with id \"HIP_%s_%04x:%02x:%02x\"."
    text = ("$ blender --debug-cycles\n"
            "I1129 10:00:02.123456 140123 device.cpp:171] Device has compute preemption or is not used for display.\n"
            'I1129 10:00:02.123490 140123 device.cpp:174] Added device "AMD Radeon RX 7900 XTX" with id '
            '"HIP_AMD Radeon RX 7900 XTX_0000:03:00".\n')
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.bdf) for g in facts.gpus] == [("AMD Radeon RX 7900 XTX", "0000:03:00.0")]
    for near in ('Added device "NVIDIA GeForce RTX 4090" with id "CUDA_NVIDIA GeForce RTX 4090_0000:01:00".',
                 'Added device "AMD Ryzen 9 7950X" with id "CPU".'):
        assert not said(near, "bdf"), near


def test_hashcats_device_lines_give_the_opencl_target_the_name_and_the_amd_address(tmp_path: Path) -> None:
    # hashcat/hashcat@a52b70d:src/terminal.c: -I's "Name...........: %s", "PCI.Addr.BDF...: %02x:%02x.%u" (AMD's OpenCL
    # devices only), the run's "* Device #%u: %s, %u/%u MB, %uMCU" and "* Device #%u: %s, skipped"
    text = ("hashcat (v6.2.6) starting in backend information mode\n\nHIP Info:\n=========\n\nHIP.Version.: 6.2.41133\n\n"
            "Backend Device ID #1 (Alias: #2)\n  Name...........: AMD Radeon RX 6800 XT\n  Processor(s)...: 36\n"
            "  Memory.Total...: 16368 MB\n  PCI.Addr.BDFe..: 0000:0b:00.0\n\nOpenCL Info:\n============\n\n"
            "OpenCL Platform ID #1\n  Vendor..: Advanced Micro Devices, Inc.\n  Name....: AMD Accelerated Parallel Processing\n"
            "  Version.: OpenCL 2.1 AMD-APP (3614.0)\n\n  Backend Device ID #2 (Alias: #1)\n    Type...........: GPU\n"
            "    Vendor.ID......: 1\n    Name...........: gfx1030\n    Driver.Version.: 3614.0 (HSA1.1,LC)\n"
            "    PCI.Addr.BDF...: 0b:00.0\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.gfx_reported, g.bdf) for g in facts.gpus] == [("AMD Radeon RX 6800 XT", "gfx1030", "0000:0b:00.0")]
    run = ("* Device #1: AMD Radeon RX 7900 XTX, 24448/24560 MB, 48MCU\n"
           "* Device #2: gfx1100, skipped\n")
    assert said(run, "gpu_name") == ["AMD Radeon RX 7900 XTX"] and said(run, "gfx_rt") == ["gfx1100"]
    for near in ("  Name...........: NVIDIA GeForce RTX 3070", "  PCI.Addr.BDFe..: 0000:42:00.0",
                 "* Device #1: NVIDIA GeForce RTX 4090, 23664/24080 MB, 128MCU", "    Name...........: Intel(R) UHD Graphics 770"):
        assert not [m for m in read_mentions(near) if m.kind in ("gpu_name", "gfx_rt", "bdf")], near


def test_modinfos_version_of_an_out_of_tree_amdgpu_is_the_drivers(tmp_path: Path) -> None:
    # kmod's modinfo prints the file, then the fields; mainline amdgpu declares no MODULE_VERSION
    text = ("$ modinfo amdgpu | head -3\nfilename:       /lib/modules/6.8.0-49-generic/extra/amdgpu.ko.xz\n"
            "version:        6.10.5\nlicense:        GPL and additional rights\n")
    driver = detect_paste(tmp_path, text).driver
    assert (driver.kind, driver.version, driver.loaded) == ("dkms", "6.10.5", None)
    for near in ("filename:       /lib/modules/6.8.0-49-generic/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.zst\n"
                 "license:        GPL and additional rights\nversion:        6.10.5\n",
                 "filename:       /lib/modules/6.8.0-49-generic/kernel/drivers/net/e1000e/e1000e.ko\nversion:        3.2.6-k\n",
                 "filename:       /lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko\nversion:        550.54.14\n"):
        assert not said(near, "driver_version"), near


def test_vllms_detected_rocm_platform_says_amdgpu_is_loaded(tmp_path: Path) -> None:
    # vllm-project/vllm@00e2bbc:vllm/platforms/__init__.py: "rocm" only where amdsmi listed an AMD GPU
    text = ("root@box:/app# vllm serve Qwen/Qwen2.5-7B-Instruct\n"
            "INFO 11-28 23:05:28 [__init__.py:225] Automatically detected platform rocm.\n"
            "(APIServer pid=13) INFO 11-28 23:05:33 [api_server.py:1876] vLLM API server version 0.11.1\n")
    assert detect_paste(tmp_path, text).driver.loaded is True
    for near in ("INFO 04-17 15:26:31 [__init__.py:239] Automatically detected platform cuda.",
                 "INFO 04-17 15:26:31 [__init__.py:239] No platform detected, vLLM is running on UnspecifiedPlatform"):
        assert not said(near, "rock"), near


def test_tgis_docker_label_places_the_launcher_in_its_image(tmp_path: Path) -> None:
    # huggingface/text-generation-inference@19bb224:launcher/src/env_runtime.rs ("Docker label: {}", "N/A" outside an image)
    text = ("Runtime environment:\nTarget: x86_64-unknown-linux-gnu\nCargo version: 1.85.1\n"
            "Commit sha: 0ff0ac5af1c2e3eeac2b2a4c6a7a1a2b8e4d8d7f\nDocker label: sha-0ff0ac5-rocm\nnvidia-smi:\nN/A\n"
            "xpu-smi:\nN/A\nhpu-smi:\nN/A\n")
    assert detect_paste(tmp_path, text).in_container is True
    for near in ("Docker label: N/A", "Docker label: latest"):
        assert not said(near, "container"), near


def _hipinfo_block(index: int, name: str, bus: int, gfx: str) -> str:
    # ROCm/hip-tests@3543bc3:samples/1_Utils/hipInfo/hipInfo.cpp printDeviceProp: keys left-aligned in 34 columns
    rows = [("device#", str(index)), ("Name: ", name), ("pciBusID: ", str(bus)), ("pciDeviceID: ", "0"),
            ("pciDomainID: ", "0"), ("multiProcessorCount: ", "48"), ("isIntegrated: ", "0"), ("gcnArchName: ", gfx),
            ("peers: ", ""), ("non-peers: ", "device#0 device#1 ")]
    return ("-" * 80 + "\n" + "".join(f"{k:<34}{v}\n" for k, v in rows) + "\n"
            + f"{'memInfo.total: ':<34}23.98 GB\n")


def test_hipinfos_device_blocks_are_one_gpu_each_at_their_pci_address(tmp_path: Path) -> None:
    text = ("$ /opt/rocm/bin/hipInfo\n\n" + _hipinfo_block(0, "AMD Radeon RX 7900 XTX", 3, "gfx1100")
            + _hipinfo_block(1, "AMD Radeon RX 7900 XTX", 67, "gfx1100"))
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.gfx, g.bdf) for g in facts.gpus] == [("AMD Radeon RX 7900 XTX", "gfx1100", "0000:03:00.0"),
                                                           ("AMD Radeon RX 7900 XTX", "gfx1100", "0000:43:00.0")]
    # PCI numbers outside a device block, or one left out, make no address
    for near in ("pciBusID: 3\npciDeviceID: 0\npciDomainID: 0\n",
                 "device#                           0\npciBusID:                         3\npciDomainID:                      0\n",
                 "device#                           0\n$ echo done\npciBusID: 3\npciDeviceID: 0\npciDomainID: 0\n"):
        assert not said(near, "bdf"), near


def test_boincs_opencl_gpu_line_names_the_target_when_no_board_name_was_read(tmp_path: Path) -> None:
    # BOINC/boinc@c5c6cb7:lib/opencl_boinc.cpp: "OpenCL: %s %d: %s" of "%.64s (driver version %.64s, device version ..."
    text = ("Oct 09 23:09:40 host boinc[1709]: 09-Oct-2022 23:09:40 [---] OpenCL: AMD/ATI GPU 0: gfx90c:xnack- (driver version "
            "3452.0 (HSA1.1,LC), device version OpenCL 2.0, 0.50GB, 0.50GB available, 1.79 TFLOPS peak)\n")
    assert [(g.gfx_reported, g.integrated) for g in detect_paste(tmp_path, text).gpus] == [("gfx90c", True)]
    assert said("[---] OpenCL: AMD/ATI GPU 1 (not used): gfx1030 (driver version 3614.0 (HSA1.1,LC), device version "
                "OpenCL 2.0, 16.00GB, 16.00GB available, 20.74 TFLOPS peak)", "gfx_rt") == ["gfx1030"]
    for near in ("[---] OpenCL: NVIDIA GPU 0: NVIDIA GeForce RTX 3060 (driver version 550.54.14, device version OpenCL 3.0 "
                 "CUDA, 12.00GB, 12.00GB available, 12.74 TFLOPS peak)",
                 "[---] OpenCL CPU: AMD Ryzen 7 5700G with Radeon Graphics (OpenCL driver vendor: The pocl project, "
                 "driver version 5.0, device version OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-znver3)"):
        assert not said(near, "gfx_rt"), near


def test_tinygrads_amd_device_line_names_the_nodes_target(tmp_path: Path) -> None:
    # tinygrad/tinygrad@a9069c1:tinygrad/runtime/ops_amd.py: "AMDDevice: opening {device_id} with target {target} arch {arch}"
    text = ('$ DEBUG=1 python3 -c "from tinygrad import Tensor; print((Tensor([1,2])+1).numpy())"\n'
            "AMDDevice: opening 0 with target (11, 0, 0) arch gfx1100\nopened device AMD from pid:12345\n")
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1100"]
    for near in ("assert failed: Unsupported arch: gfx1030", "AMDDevice: opening 0 with target (11, 0, 0)"):
        assert not said(near, "gfx_hw"), near


def test_ramalama_infos_hip_accelerator_says_kfd_lists_an_amd_gpu(tmp_path: Path) -> None:
    # containers/ramalama@8bc1f0a:ramalama/common.py check_rocm_amd ("hip" only from KFD's topology nodes)
    text = ('$ ramalama info\n{\n    "Accelerator": "hip",\n    "Engine": {\n        "Name": "podman"\n    },\n'
            '    "Image": "quay.io/ramalama/rocm:0.7"\n}\n')
    assert detect_paste(tmp_path, text).driver.loaded is True
    for near in ('    "Accelerator": "none",', '    "Accelerator": "cuda",', 'RAMALAMA_ACCEL="hip" is not set'):
        assert not said(near, "rock"), near


def test_ghws_pci_device_string_as_localai_logs_it_places_and_names_the_gpu(tmp_path: Path) -> None:
    # mudler/LocalAI@82c191a:core/application/startup.go logs ghw's GraphicsCard.String() (jaypipes/ghw pkg/pci Device.String)
    text = ("12:00AM DBG GPU count count=1\n12:00AM DBG GPU gpu=\"card #0 @0000:03:00.0 -> driver: 'amdgpu' class: 'Display "
            "controller' vendor: 'Advanced Micro Devices, Inc. [AMD/ATI]' product: 'Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 "
            "GRE/7900M]'\"\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.gfx, g.bdf) for g in facts.gpus] == [("gfx1100", "0000:03:00.0")]
    assert facts.driver.loaded is True
    for near in ("card #1 @0000:01:00.0 -> driver: 'nvidia' class: 'VGA compatible controller' vendor: 'NVIDIA Corporation' "
                 "product: 'AD102 [GeForce RTX 4090]'",
                 "0000:03:00.1 -> driver: 'snd_hda_intel' class: 'Multimedia controller' vendor: 'Advanced Micro Devices, "
                 "Inc. [AMD/ATI]' product: 'Navi 31 HDMI/DP Audio'"):
        assert not [m for m in read_mentions(near) if m.kind in ("bdf", "gpu_name", "driver_bound")], near


def test_rocm_bandwidth_tests_device_list_names_and_places_the_gpus_not_the_cpu(tmp_path: Path) -> None:
    # ROCm/rocm_bandwidth_test@6bd5c1a:rocm_bandwidth_test_report.cpp DisplayDevInfo ("Device: %u,  %s[,  %s,  %s]", the BDF
    # as rocm_bandwidth_test_topology.cpp PopulateBDF writes it) and rocm_bandwidth_test_print.cpp ("  Device  BDF:  %s")
    text = ("$ /opt/rocm/bin/rocm_bandwidth_test\n\n          RocmBandwidthTest Version: 2.6.0\n\n"
            "          Device: 0,  AMD Ryzen 9 7950X 16-Core Processor\n"
            "          Device: 1,  AMD Radeon RX 7900 XTX,  GPU-5a1b2c3d4e5f6a7b,  03:0.0\n"
            "          Device: 2,  AMD Radeon RX 7900 XTX,  GPU-6b2c3d4e5f6a7b8c,  43:0.0\n\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.bdf) for g in facts.gpus] == [("AMD Radeon RX 7900 XTX", "0000:03:00.0"),
                                                     ("AMD Radeon RX 7900 XTX", "0000:43:00.0")]
    assert said("            Device  BDF:                            c1:0.0", "bdf") == ["0000:c1:00.0"]
    for near in ("Device: 1,  NVIDIA GeForce RTX 4090,  GPU-5a1b2c3d,  01:0.0", "Device BDF: 03:0.0 is wrong"):
        assert not said(near, "bdf"), near


def test_transferbenchs_topology_rows_are_one_gpu_each_with_the_headers_target(tmp_path: Path) -> None:
    # ROCm/TransferBench@788840d:src/TransferBench.cpp: the gcnArchName header, then " GPU %02d |", link cells, " %11s | %4d |"
    text = ("$ ./TransferBench a2a\n\nDetected topology: 1 configured CPU NUMA node(s) [1 total]   2 GPU device(s)\n\n"
            "        | gfx1100 | gfx1100 |\n"
            "        | GPU 00 | GPU 01 | PCIe Bus ID  | #CUs | Closest NUMA | DMA engines\n"
            "--------+--------+--------+--------------+------+-------------+------------\n"
            " GPU 00 |    -   | PCIE-2 | 0000:03:00.0 |   96 | 0            |0,1\n"
            " GPU 01 | PCIE-2 |    -   | 0000:43:00.0 |   96 | 0            |0,1\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.gfx_reported, g.bdf) for g in facts.gpus] == [("gfx1100", "0000:03:00.0"), ("gfx1100", "0000:43:00.0")]
    # a row without the header above it (another table's) is not read
    assert not said(" GPU 00 |    -   | PCIE-2 | 0000:03:00.0 |   96 | 0            |0,1\n", "bdf")


def test_cupys_show_config_gives_each_devices_name_target_and_place_and_no_driver_version(tmp_path: Path) -> None:
    # cupy/cupy@0f4daa4:cupyx/_runtime.py: '{:width}: {}' rows; "Device {} Arch" on ROCm; "CUDA Driver Version" is HIP's
    records = [("OS", "Linux-6.8.0-49-generic-x86_64-with-glibc2.39"), ("CuPy Version", "13.3.0"), ("CUDA Root", "/opt/rocm"),
               ("CUDA Build Version", "60241134"), ("CUDA Driver Version", "60241134"), ("CUDA Runtime Version", "60241134"),
               ("Device 0 Name", "AMD Radeon RX 7900 XTX"), ("Device 0 Arch", "gfx1100"), ("Device 0 PCI Bus ID", "0000:03:00.0"),
               ("Device 1 Name", "AMD Radeon RX 7900 XTX"), ("Device 1 Arch", "gfx1100"), ("Device 1 PCI Bus ID", "0000:43:00.0")]
    text = ">>> import cupy; cupy.show_config()\n" + "".join(f"{k:<22}: {v}\n" for k, v in records)
    facts = detect_paste(tmp_path, text)
    assert [(g.gfx_reported, g.bdf) for g in facts.gpus] == [("gfx1100", "0000:03:00.0"), ("gfx1100", "0000:43:00.0")]
    assert facts.driver.version is None
    assert not said("Device 0 Name                 : NVIDIA GeForce RTX 4090", "gpu_name")
    assert not said("Device 0 Compute Capability   : 89", "gfx_rt")


def test_mlc_llms_found_rocm_devices_count_the_gpus(tmp_path: Path) -> None:
    # mlc-ai/mlc-llm@01ced33:python/mlc_llm/support/auto_device.py: "%s device: %s:%s" for each existing index
    text = ("[2024-06-01 10:00:00] INFO auto_device.py:88: Not found device: cuda:0\n"
            "[2024-06-01 10:00:01] INFO auto_device.py:79: Found device: rocm:0\n"
            "[2024-06-01 10:00:01] INFO auto_device.py:79: Found device: rocm:1\n"
            "[2024-06-01 10:00:02] INFO auto_device.py:79: Found device: vulkan:0\n")
    assert len(detect_paste(tmp_path, text).gpus) == 2
    for near in ("INFO auto_device.py:88: Not found device: rocm:0", "INFO auto_device.py:79: Found device: cuda:1",
                 "INFO auto_device.py:35: Using device: rocm:3"):
        assert not said(near, "gpu_count"), near


# what a guide says one should see is not this machine's: any version or device a program's line would give
@pytest.mark.parametrize("line", [
    "After installing, you should see: Using torch device: AMD Radeon RX 7900 XTX",
    "Expected output: jax.devices (2 total, 2 local): [RocmDevice(id=0), RocmDevice(id=1)]",
    "rocminfo should now show   Name:                    gfx1100",
    "torch.__version__ should be 2.4.1+rocm6.1",
])
def test_what_one_should_see_is_not_the_machines(line: str) -> None:
    assert [m for m in read_mentions(line) if m.kind not in ("user", "os")] == [], line


@pytest.mark.parametrize("line, kind", [
    ("Using torch device: AMD Radeon RX 7900 XTX", "gpu_name"),
    ("jax.devices (2 total, 2 local): [RocmDevice(id=0), RocmDevice(id=1)]", "gpu_count"),
    ("pytorch version: 2.4.1+rocm6.1 (as it should be)", "torch"),
])
def test_what_the_machine_shows_stays_read_beside_the_should_see_rule(line: str, kind: str) -> None:
    assert [m for m in read_mentions(line) if m.kind == kind], line


# --------------------------------------------------------------------------- zypper (openSUSE, SLES)


def test_a_zypper_search_table_names_installed_rocm_packages(tmp_path: Path) -> None:
    # zypper se -s: "S | Name | Type | Version | Arch | Repository", "i"/"i+" installed (openSUSE/zypper@04f0507:
    # src/search.cc, FillSearchTableSolvable)
    text = ("$ zypper se -s -i rocm\nLoading repository data...\nReading installed packages...\n\n"
            "S  | Name             | Type    | Version                | Arch   | Repository\n"
            "---+------------------+---------+------------------------+--------+-----------\n"
            "i+ | rocm-core        | package | 6.2.0.60200-sles155.66 | x86_64 | rocm\n"
            "i  | hip-runtime-amd  | package | 6.2.0.60200-sles155.66 | x86_64 | rocm\n"
            "v  | rocm-smi-lib     | package | 7.3.0.60200-sles155.66 | x86_64 | rocm\n"
            "   | rocblas          | package | 4.2.0.60200-sles155.66 | x86_64 | rocm\n")
    facts = detect_paste(tmp_path, text)
    assert facts.os.package_manager == "zypper"
    assert [(i.version, i.packages) for i in facts.rocm.installs] == [("6.2.0", ("rocm-core", "hip-runtime-amd"))]
    # the same table without its command line: the header starts it
    assert detect_paste(tmp_path, text.split("\n", 4)[4]).rocm.version == "6.2.0"


def test_a_zypper_packages_table_and_info_block_name_the_installed_version(tmp_path: Path) -> None:
    # zypper pa -i: "S | Repository | Name | Version | Arch" (src/search.cc, list_packages); zypper info: "Installed:
    # Yes" and "Status: out-of-date (version X installed)" (openSUSE/zypper@82e1a54:src/info.cc, printPkgInfo)
    pa = ("S  | Repository | Name        | Version                   | Arch\n"
          "---+------------+-------------+---------------------------+-------\n"
          "i+ | amdgpu     | amdgpu-dkms | 1:6.8.5.60200-2009582.sles155 | noarch\n"
          "i  | rocm       | rocm-core   | 6.2.0.60200-sles155.66    | x86_64\n")
    facts = detect_paste(tmp_path, pa)
    assert facts.rocm.version == "6.2.0" and facts.os.package_manager == "zypper"
    assert facts.driver.dkms_packages == ("amdgpu-dkms 1:6.8.5.60200-2009582.sles155",)
    info = ("$ zypper info rocm-core\nInformation for package rocm-core:\n-----------------------------------\n"
            "Repository     : rocm\nName           : rocm-core\nVersion        : 6.3.1.60301-sles156.48\n"
            "Arch           : x86_64\nInstalled      : Yes (automatically)\n"
            "Status         : out-of-date (version 6.2.4.60204-sles156.139 installed)\n")
    assert detect_paste(tmp_path, info).rocm.version == "6.2.4"
    # a package zypper info shows as not installed is not one the machine has
    absent = info.replace("Yes (automatically)", "No").replace("out-of-date (version 6.2.4.60204-sles156.139 installed)",
                                                                "not installed")
    assert detect_paste(tmp_path, absent).rocm.installs == ()
    from wizard.parsers.zypper import parse_zypper
    # near misses: search without -s (no version), another table's pipes, a markdown table of versions
    assert parse_zypper("S  | Name      | Summary                | Type\ni+ | rocm-core | ROCm Runtime software | package\n"
                        "| rocm-core | 6.2.0 | x86_64 |\n| i | rocm-core | 6.2.0-1 | x86_64 |\n"
                        "i  | rocm-core | srcpackage | 6.2.0.60200-sles155.66 | noarch | rocm\n") == ()


# --------------------------------------------------------------------------- SGLang / vLLM fused-MoE config, Lemonade


def test_the_moe_kernel_config_file_sglang_looks_for_names_the_running_gpu(tmp_path: Path) -> None:
    # get_config_file_name: "E={E},N={N},device_name={name with _}..." logged as "Config file not found at %s" /
    # "Using MoE kernel config from %s." (sgl-project/sglang@083d601:.../fused_moe_triton/fused_moe_triton_config.py)
    text = ("[2025-05-20 10:11:12 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file not "
            "found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_2_0/"
            "E=128,N=768,device_name=AMD_Instinct_MI300X.json, you can create them with https://github.com/sgl-project/"
            "sglang/tree/main/benchmark/kernels/fused_moe_triton\n")
    facts = detect_paste(tmp_path, text)
    assert [(g.name, g.gfx) for g in facts.gpus] == [("AMD Instinct MI300X", "gfx942")]
    assert said("INFO 05-20 10:11:12 [fused_moe.py:684] Using configuration from /usr/lib/python3/dist-packages/vllm/"
                "model_executor/layers/fused_moe/configs/E=8,N=14336,device_name=AMD_Radeon_RX_7900_XTX,dtype=fp8_w8a8"
                ".json for MoE layer.", "gpu_name") == ["AMD Radeon RX 7900 XTX"]
    for near in (
        # the configs folder listed, an NVIDIA GPU's file, torch's generic name, a file named in prose
        "E=8,N=4096,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8.json",
        "Config file not found at /x/configs/E=60,N=1408,device_name=NVIDIA_H100_80GB_HBM3.json",
        "Using MoE kernel config from /x/configs/E=256,N=256,device_name=AMD_Radeon_Graphics,dtype=fp8_w8a8.json.",
        "I copied E=8,N=8192,device_name=AMD_Instinct_MI325X,dtype=fp8_w8a8.json from the repo",
    ):
        assert not said(near, "gpu_name"), near


def test_lemonade_system_infos_gpu_family_is_the_gpus_target(tmp_path: Path) -> None:
    # system-info's amd_gpu objects: "family" from KFD's gfx_target_version ("name" is that number on Linux)
    # (lemonade-sdk/lemonade@e385039:src/cpp/server/system_info.cpp)
    text = ('$ curl -s http://localhost:8000/api/v1/system-info | jq .devices\n{\n  "amd_gpu": [\n    {\n'
            '      "available": true,\n      "family": "gfx1151",\n      "integrated": true,\n      "name": "110501",\n'
            '      "virtual_mem_gb": 62.5,\n      "vram_gb": 0.5\n    }\n  ],\n  "nvidia_gpu": []\n}\n')
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1151"]
    assert said('{"amd_gpu":[{"available":true,"family":"gfx1201","integrated":false,"name":"120001"}]}',
                "gfx_hw") == ["gfx1201"]
    for near in ('"family": "gfx110X",', '"family": "gfx110X-dgpu", "targets": ["gfx1100", "gfx1101"]',
                 '[{"family":"gfx1100"},{"family":"gfx1151"}]'):
        assert not said(near, "gfx_hw"), near


# --------------------------------------------------------------------------- nvtop, radeontop


def test_nvtops_device_headers_are_one_gpu_each(tmp_path: Path) -> None:
    # "Device %-2u" then "[%s]" then "PCIe GEN %u@%2ux" or "Integrated GPU" (Syllo/nvtop@3d4a953:src/interface.c)
    text = (" Device 0 [AMD Radeon RX 7900 XTX] PCIe GEN 4@16x RX: 0.000 KiB/s TX: 0.000 KiB/s\n"
            " Device 1 [AMD Radeon RX 7900 XTX] PCIe GEN 4@16x RX: 12.00 KiB/s TX: 3.000 KiB/s\n")
    assert [g.gfx for g in detect_paste(tmp_path, text).gpus] == ["gfx1100", "gfx1100"]
    assert said(" Device 1 [AMD Radeon Graphics] Integrated GPU RX: N/A TX: N/A", "gpu_index") == ["1"]
    for near in (" Device 0 [NVIDIA GeForce RTX 3090] PCIe GEN 4@16x RX: 0.000 KiB/s TX: 0.000 KiB/s",
                 "Device 0 [AMD Radeon RX 7900 XTX] was slow yesterday"):
        assert not said(near, "gpu_index"), near


def test_radeontops_header_names_the_chip(tmp_path: Path) -> None:
    # "radeontop %s, running on %s bus %02x, %u samples/sec" with family_str's ASIC name (clbr/radeontop@0f1d2ea:ui.c)
    facts = detect_paste(tmp_path, "                 radeontop v1.4, running on NAVY_FLOUNDER bus 03, 120 samples/sec\n")
    assert [g.gfx for g in facts.gpus] == ["gfx1031"]
    assert said("radeontop unknown, running on VEGA10 bus 0c, 120 samples/sec", "gpu_name") == ["VEGA10"]
    for near in ("radeontop v1.4, running on UNKNOWN_CHIP bus 03, 120 samples/sec",
                 "radeontop v1.4 is running on my SIENNA_CICHLID card"):
        assert not said(near, "gpu_name"), near


# --------------------------------------------------------------------------- GPUStack's gpustack-runtime detect


def test_gpustack_runtime_detects_table_rows_and_json_name_each_gpus_target(tmp_path: Path) -> None:
    # format_devices_table: "| AMD Driver Version: %s ... Runtime Version: %s |", then "| index | name | used / total |
    # util | temp | CC | OK |"; format_devices_json: "compute_capability" (gpustack/runtime@88026d6:.../cmds/detector.py)
    table = ("+----------------------------------------------------------------------------------------------+\n"
             "| AMD Driver Version: 6.12.12                                             Runtime Version: 7.1 |\n"
             "|----------------------------------------------------------------------------------------------|\n"
             "| GPU |                  Name                  |   Memory-Usage    | GPU-Util | Temp |   CC    | Status |\n"
             "|-----|----------------------------------------|-------------------|----------|------|---------|--------|\n"
             "| 0   | Navi 32 [Radeon RX 7700 XT / 7800 XT]  | 206MiB / 16368MiB | 19%      | 34C  | gfx1101 | OK     |\n"
             "| 1   | Navi 32 [Radeon RX 7700 XT / 7800 XT]  | 190MiB / 16368MiB | 0%       | 31C  | gfx1101 | OK     |\n")
    facts = detect_paste(tmp_path, table)
    assert [g.gfx_reported for g in facts.gpus] == ["gfx1101", "gfx1101"]
    assert facts.rocm.version == "7.1"
    assert said('    "compute_capability": "gfx942",', "gfx_rt") == ["gfx942"]
    for near, kind in (
        ("| NVIDIA Driver Version: 570.86.15                                    Runtime Version: 12.8 |", "rocm"),
        ("| 0   | NVIDIA GeForce RTX 4090 | 512MiB / 24564MiB | 3% | 40C | 8.9 | OK |", "gpu_index"),
        ('    "compute_capability": "8.9",', "gfx_rt"),
        ('  "targets": {"compute_capability": "gfx1101", "other": "gfx1100"},', "gfx_rt"),
    ):
        assert not said(near, kind), near
