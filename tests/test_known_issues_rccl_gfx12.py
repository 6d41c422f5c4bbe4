"""rccl-gfx12-ll-protocol-deadlock: a multi-GPU collective that hangs on RDNA4 (gfx1200/gfx1201) is RCCL's LL
protocol to check (ROCm/rocm-systems#5480: the maintainer traced vLLM TP=2 on two R9700 to it; NCCL_PROTO=Simple
resolved it), never on another GPU family and never on a run that did not hang."""

from __future__ import annotations

from typing import Any

import pytest
from test_known_issues_texts import _found

pytestmark = pytest.mark.unit

ID = "rccl-gfx12-ll-protocol-deadlock"
R9700 = {"gpus": [{"gfx": "gfx1201", "integrated": False}, {"gfx": "gfx1201", "integrated": False}]}
W7900 = {"gpus": [{"gfx": "gfx1100", "integrated": False}, {"gfx": "gfx1100", "integrated": False}]}


@pytest.mark.parametrize("text", [
    "RCCL deadlocks during multi-GPU inference (tensor parallelism = 2); both GPUs spin at 100% utilization.",
    "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\nThe server freezes at TP=2 during CUDA graph capture.",
    "With tensor parallel 2 it just hangs after 'Capturing CUDA graphs'.",
])
def test_a_collective_hang_on_gfx12_is_the_ll_protocol_to_check(text: str) -> None:
    found = _found(R9700, text)
    assert ID in found
    assert found[ID].to_check is not None  # several causes hang a collective: never stated as the cause
    assert dict(found[ID].fix_env) == {"NCCL_PROTO": "Simple"}


@pytest.mark.parametrize(("spec", "text"), [
    (W7900, "RCCL deadlocks during multi-GPU inference (tensor parallelism = 2)."),  # not gfx12
    (R9700, "Single-GPU RCCL init works fine; TP=2 serves 40 tokens/s."),  # nothing hung
    (R9700, "rccl-tests all_reduce_perf -g 2 finished: Avg bus bandwidth 21.3"),  # a run that worked
])
def test_near_misses_stay_silent(spec: dict[str, Any], text: str) -> None:
    assert ID not in _found(spec, text)
