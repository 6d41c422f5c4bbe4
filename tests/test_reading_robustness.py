"""Reading any text: the paste splitter and the mentions reader never raise, and no fact is a guess.

A guess is a value the text does not hold: every gfx the wizard reports must be written in the text,
or follow from a PCI id, marketing name or codename written there (through the knowledge base), or
from a gfx version ("10.3.0", "gfx_target_version 90010"); every ROCm, torch and kernel version and
every override value must be written there. The texts are real recorded pastes, shuffled, truncated
and mixed, and free text made of the words these readers look for.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import pytest

from wizard.parsers.mentions import PRODUCT, read_mentions
from wizard.parsers.paste import split_paste
from wizard.probes import detect

pytestmark = pytest.mark.unit

MACHINES = Path(__file__).parent / "fixtures" / "machines"
METADATA = {"SOURCE.md", "expected.json", "README.md"}


@lru_cache(maxsize=1)
def _corpus_lines() -> tuple[str, ...]:
    out: list[str] = []
    for d in sorted(p for p in MACHINES.iterdir() if p.is_dir()):
        for f in sorted(d.iterdir()):
            if f.is_file() and f.name not in METADATA:
                out.extend(f.read_text(errors="replace").splitlines())
    return tuple(out)


@lru_cache(maxsize=1)
def _pastes() -> tuple[str, ...]:
    return tuple(p.read_text(errors="replace") for p in sorted(MACHINES.glob("*/paste.txt")))


WORDS = ["gfx1030", "gfx90a:sramecc+:xnack-", "Navi 31", "Radeon RX 7900 XT", "Vega 10 XL/XT", "Device 73bf",
         "HSA_OVERRIDE_GFX_VERSION=10.3.0", "export", "ROCm", "6.2.0", "rocm-6.1.3", "/opt/rocm-6.0.0/lib",
         "torch==2.4.1+rocm6.1", "$ rocminfo", "```", "## ", "Agent 1", "Name:", "amdgpu 0000:03:00.0:",
         "Unable to open /dev/kfd read-write: Permission denied", "ROCk module is loaded", "[AMD/ATI]", "1002:744c",
         "Linux-6.8.0-55-generic", "microsoft-standard-WSL2", "Number of HIP devices: 2", "| GPU |", "\n", " ", ":",
         "=", "\t", "\r", "\x1b[31m", "é", "—", "...", "0x", "rev ff", "amdgpu-pro", "user@box:~$", "# ", "> ",
         "<details>", "</details>", "alice · commented · 2024-01-02", "[turn 3 by bob]", "Python platform:"]

texts = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(WORDS), max_size=60).map("".join),
    st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join),
)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_splitter_and_mentions_never_raise(text: str) -> None:
    paste = split_paste.__wrapped__(text)  # type: ignore[attr-defined]
    n = len(text.splitlines())
    for seg in paste.segments:
        assert seg.start >= 1 and seg.start + len(seg.lines) - 1 <= max(n, 1)
    read_mentions.__wrapped__(text)  # type: ignore[attr-defined]


def _mixed(draw: st.DrawFn) -> str:
    """Real pasted lines: one paste truncated, shuffled, or lines of many recorded machines mixed."""
    how = draw(st.sampled_from(["truncate", "shuffle", "mix"]))
    if how == "mix":
        lines = _corpus_lines()
        picked = draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=80))
        return "\n".join(lines[i] for i in picked)
    text = draw(st.sampled_from(_pastes()))
    lines = list(text.splitlines())
    if how == "truncate":
        a = draw(st.integers(0, len(lines)))
        b = draw(st.integers(a, len(lines)))
        return "\n".join(lines[a:b])
    rnd = draw(st.randoms(use_true_random=False))
    rnd.shuffle(lines)
    return "\n".join(lines[: draw(st.integers(0, len(lines)))])


mixed_pastes = st.composite(_mixed)()


@lru_cache(maxsize=1)
def _kb_rows() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(device id, gfx, name/codename keys) of every KB GPU with a gfx."""
    from wizard.kb import load_kb
    from wizard.kb.names import codename_keys, name_keys, split_alternatives

    rows = []
    for g in load_kb().gpus():
        if not g.gfx:
            continue
        keys = [k for alt in split_alternatives(g.name) for k in name_keys(alt)]
        keys += codename_keys(g.codename or "")
        # an Instinct series named without its variant letter ("MI355") stands for its lettered rows (KB.gpus_by_name)
        keys += [m.group(1) for k in keys if (m := re.fullmatch(r"(mi\d{3})[a-z]+", k))]
        rows.append((g.pci_id.split(":")[1].lower(), g.gfx, tuple(keys)))
    return tuple(rows)


def _gfx_written(text: str) -> set[str]:
    """Every gfx the text states or names, however it is written."""
    low = text.lower()
    found = set(re.findall(r"gfx[0-9a-f]{3,4}", low))
    for a, b, c in re.findall(r"\b(\d{1,2})\.(\d{1,2})\.(\d{1,2})\b", text):
        found.add(f"gfx{int(a)}{int(b):x}{int(c):x}")
    for n in re.findall(r"\b(\d{5,6})\b", text):  # KFD's packed gfx_target_version
        v = int(n)
        found.add(f"gfx{v // 10000}{v // 100 % 100:x}{v % 100:x}")
    words = set(re.findall(r"[0-9a-f]{4}", low))
    flat = re.sub(r"[^a-z0-9+]", "", low)
    for dev, gfx, keys in _kb_rows():
        if dev in words or any(k in flat for k in keys):
            found.add(gfx)
    for cpu, gfx in _apu_keys():  # a processor named where the GPU is asked stands for its iGPU
        if cpu in flat:
            found.add(gfx)
    from wizard.kb import load_kb

    for m in re.finditer(r"\b(?:rx|radeon)\s*\d{4}\b", low):  # a model number for its variants ("RX 6750": XT, GRE)
        found |= {g.gfx for g in load_kb().gpus_by_name(m.group(0)) if g.gfx}
    return found


@lru_cache(maxsize=1)
def _apu_keys() -> tuple[tuple[str, str], ...]:
    from wizard.kb import load_kb

    kb = load_kb()
    rows = [(key, a) for key, a in kb._apus.items()]
    # a name without its tier digit ("Ryzen 7900") stands for the one processor of that model (KB.apu_for_cpu)
    rows += [(key, found[0]) for key, found in kb._apus_without_tier.items() if len(found) == 1]
    # Strix Halo's processors as people write them without "Ryzen" and the plus ("AMD AI Max 395": mentions._AI_MAX)
    rows += [(re.sub(r"^ryzen|\+", "", key), a) for key, a in kb._apus.items() if key.startswith("ryzenaimax")]
    return tuple((key, g.gfx) for key, a in rows if (g := kb.gpu_by_pci(a.pci_id)) is not None and g.gfx)


def _flat(s: str) -> str:
    return re.sub(r"[^a-z0-9.+]", "", s.lower())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mixed_pastes)
# a processor written without its tier digit, with a second GPU in rocm-smi: its iGPU (gfx1036) is read
@example("### CPU\n\nAMD Ryzen 7900\n\n### GPU\n\nAMD Radeon Pro W7900\n\n$ rocm-smi\n"
         "GPU[0]          : get_power_cap, Unexpected data received\nERROR: GPU[1]   : sclk clock is unsupported")
# a Strix Halo processor written without "Ryzen" in a thread's title: its iGPU (gfx1151) is read
@example("gpustack/gpustack · issue #4116 · closed · Python\nlabels: amd, runtime\n# AMD AI Max 395 GPU device not detected")
def test_no_fact_is_a_guess(text: str) -> None:
    facts = detect(None, paste=("paste.txt", text))
    assert not facts.errors, facts.errors
    written = _gfx_written(text)
    for g in facts.gpus:
        for value in (g.gfx, g.gfx_reported):
            if value:
                assert value in written, f"{value} is not in the text"
        for ev in g.sources:
            if ev.source == "paste.txt" and ev.line:
                assert ev.line <= len(text.splitlines())
    flat = _flat(text)
    if facts.rocm.version:
        major, minor = facts.rocm.version.split(".")[:2]
        assert re.search(rf"{major}\.{minor}|{major}0{int(minor)}0\d|{major}{int(minor):02d}\d\d", text), facts.rocm.version
    for env in facts.python_envs:
        if env.torch:
            assert _flat(env.torch.split("+")[0]) in flat, env.torch
    if facts.os.kernel:
        assert _flat(facts.os.kernel) in flat, facts.os.kernel
    for s in facts.env:
        stated = _flat(s.value) in flat
        m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", s.value)
        if m and not stated:  # "set HSA_OVERRIDE_GFX_VERSION to gfx1030" states 10.3.0
            stated = f"gfx{int(m[1])}{int(m[2]):x}{int(m[3]):x}" in flat
        assert stated, (s.name, s.value)


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_text_without_any_gpu_word_names_no_gpu(text: str) -> None:
    # free text holding no digits and no product or codename names no GPU, no ROCm, no torch (a codename has no
    # digit: "Raphael" is the Ryzen 7000's gfx1036 iGPU, "Radeon VII" a gfx906 card)
    text = re.sub(r"\d", "", text)
    assume(not PRODUCT.search(text))
    facts = detect(None, paste=("paste.txt", text))
    assert not facts.errors
    assert all(g.gfx is None for g in facts.gpus)
    assert facts.rocm.version is None
    assert all(e.torch is None for e in facts.python_envs)
