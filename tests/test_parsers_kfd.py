from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.kfd import gfx_from_target_version, parse_kfd_properties

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "kfd"


@pytest.mark.parametrize(
    ("value", "gfx"),
    [
        (110000, "gfx1100"),
        (90010, "gfx90a"),
        (90402, "gfx942"),
        (100300, "gfx1030"),
        (110501, "gfx1151"),
        (120001, "gfx1201"),
        (90006, "gfx906"),
        (90012, "gfx90c"),
        (0, None),
        (-1, None),
        (110099, None),  # stepping 99 does not fit a hex digit
        (None, None),
    ],
)
def test_gfx_from_target_version(value: int | None, gfx: str | None) -> None:
    assert gfx_from_target_version(value) == gfx


def test_real_gfx1100_node() -> None:
    topo = parse_kfd_properties((DATA / "gfx1100_node.txt").read_text())
    assert len(topo.nodes) == 1
    node = topo.nodes[0]
    assert node.gfx == "gfx1100"
    assert node.pci_id == "1002:744c"
    assert node.bdf == "0000:86:00.0"  # location_id 34304 = 0x8600
    assert node.is_gpu and node.simd_count == 192
    assert node.drm_render_minor is None  # the recording's template slot is not a number
    assert node.unique_id == 11673270660693242239
    assert node.local_mem_size == 0


def test_grep_with_prompt_names_the_node() -> None:
    topo = parse_kfd_properties((DATA / "mi300x_grep.txt").read_text())
    assert [(n.node, n.gfx) for n in topo.nodes] == [(4, "gfx942")]


def test_indented_excerpt_with_path_line() -> None:
    topo = parse_kfd_properties((DATA / "mi350x_node5_excerpt.txt").read_text())
    (node,) = topo.nodes
    assert node.node == 5 and node.device_id == "75a0" and node.simd_count == 1024
    assert node.pci_id is None  # no vendor_id line in the excerpt


CPU = "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\nvendor_id 0\n"
GPU1 = "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\nlocation_id 768\ndomain 0\ndrm_render_minor 128\n"
GPU2 = "cpu_cores_count 0\nsimd_count 24\ngfx_target_version 110003\nvendor_id 4098\ndevice_id 5567\nlocation_id 50688\ndomain 0\ndrm_render_minor 129\n"


def test_concatenated_nodes_split_on_key_restart() -> None:
    topo = parse_kfd_properties(CPU + GPU1 + GPU2)
    assert [n.is_gpu for n in topo.nodes] == [False, True, True]
    assert [g.gfx for g in topo.gpus] == ["gfx1100", "gfx1103"]
    assert [g.bdf for g in topo.gpus] == ["0000:03:00.0", "0000:c6:00.0"]
    assert [g.render_node for g in topo.gpus] == ["renderD128", "renderD129"]
    assert topo.nodes[0].node is None and topo.nodes[1].ordinal == 1


def test_head_headers_and_blank_lines() -> None:
    text = (
        "==> /sys/class/kfd/kfd/topology/nodes/0/properties <==\n" + CPU + "\n"
        "==> /sys/class/kfd/kfd/topology/nodes/1/properties <==\n" + GPU1
    )
    topo = parse_kfd_properties(text)
    assert [(n.node, n.gfx) for n in topo.nodes] == [(0, None), (1, "gfx1100")]


def test_grep_h_prefix() -> None:
    text = (
        "/sys/class/kfd/kfd/topology/nodes/1/properties:gfx_target_version 110000\n"
        "/sys/class/kfd/kfd/topology/nodes/2/properties:gfx_target_version 90010\n"
    )
    topo = parse_kfd_properties(text)
    assert [(n.node, n.gfx) for n in topo.nodes] == [(1, "gfx1100"), (2, "gfx90a")]


def test_prompts_and_fences_between_files() -> None:
    text = (
        "```\nuser@box:~$ cat /sys/class/kfd/kfd/topology/nodes/1/properties\n"
        + GPU1
        + "user@box:~$ cat /sys/class/kfd/kfd/topology/nodes/2/properties\n"
        + GPU2
        + "```\n"
    )
    topo = parse_kfd_properties(text)
    assert [(n.node, n.gfx) for n in topo.nodes] == [(1, "gfx1100"), (2, "gfx1103")]


def test_location_without_domain_keeps_short_form_only() -> None:
    (node,) = parse_kfd_properties("simd_count 4\nlocation_id 768\n").nodes
    assert node.bdf is None and node.bus_devfn == "03:00.0"


def test_single_value_and_garbage() -> None:
    assert parse_kfd_properties("gfx_target_version 110501").nodes[0].gfx == "gfx1151"
    assert parse_kfd_properties("hello world\nsimd_count x\n").nodes == ()
