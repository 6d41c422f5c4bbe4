"""A known issue's fix, applied and confirmed to work in a thread's text: the actions each fix stands for, found.

The knowledge base holds each known issue's fix as data (`fix.env`, `fix.commands`, and the same in its branches).
This module derives from that data what applying the fix looks like in text, and finds where the machine's text shows
it applied and working:

- an env setting ``NAME=VALUE`` reads as ``NAME=VALUE`` in any form that sets it (``export NAME=VALUE``,
  ``NAME=VALUE cmd``, ``Environment="NAME=VALUE"`` in a systemd unit, ``-e NAME=VALUE``) or "set NAME to VALUE";
  ``unset NAME`` as ``unset NAME`` or "removed NAME";
- a command that changes the system (a group membership, a package installed or removed, a file written, the
  linker cache or the initramfs rebuilt, a container started) reads as its head (``usermod``, ``apt install``,
  ``pip install``) with its distinctive arguments on the same line (``render`` or ``video`` of ``render,video``;
  each package of an install); a command without arguments, with none after it. Commands that only look
  (``rocminfo``, ``ls -l /dev/kfd``, ``id``, ``python -c ...``, ``dkms status``) are no fix and never an action;
- a plan reads as what it does (`wizard.fix_plans`): torch installed from its wheel index, its image run, its driver
  or Core SDK packages installed, its release moved to; at the place of a command of an issue's own fix it yields.

Worked: the reporter's own post shows the action and says it worked in the same stretch of words ("setting X fixed
it", "after `sudo usermod -aG render $USER` rocminfo works now", "I fixed this by running the following commands:"),
nothing between them saying it did not ("still", "didn't", "but", "no luck"), the action not asked about, tried
on condition or proposed ("did you try X?", "if X works"); or another person's post proposes it and the reporter's
next post confirms ("that worked, thanks!") without naming another fix. An action several actions read at one place
is one hit (`Hit`); which issue it states is for the diagnosis to decide by the machine's facts.
"""

from __future__ import annotations

import bisect
import re
import shlex

from wizard import lazy_re
from wizard.fix_plans import plan_does
from wizard.kb import KernelArgs, KnowledgeBase, KnownIssue, MoveTo
from wizard.model import GFX_TARGET, Evidence, EvidenceText
from wizard.parsers.writers import Words, joined_words
from wizard.record import record, replace

_F = re.IGNORECASE


@record
class FixAction:
    """What applying one part of a known issue's fix looks like in text."""

    issue: str  # the known issue's id
    label: str  # "HSA_OVERRIDE_GFX_VERSION=10.3.0", "usermod render|video"
    pattern: lazy_re.Pattern
    in_branch: bool  # from a fix branch (advice for some machines only), not the fix every machine gets
    changes: tuple[str, ...]  # predicates of wizard/diagnose.py whose facts the action itself changes
    env_names: tuple[str, ...] = ()  # the variables it sets or unsets (env_matches / env_not on them change too)
    plan: str | None = None  # the plan it is part of (`wizard.fix_plans`); None: the fix's own env or command
    when: tuple[tuple[str, object], ...] = ()  # its fix branch's conditions: the machines it is that issue's fix on
    needle: str | None = None  # lower-case words the text holds wherever the pattern matches (a package's name)
    generic: bool = False  # it fixes failures no known issue describes (a newer kernel): alone it decides no issue


@record
class Hit:
    """Actions read at one place of the machine's text, and the line that says they worked."""

    actions: tuple[FixAction, ...]
    action: Evidence  # the line that shows the action
    confirmed: Evidence  # the line that says it worked
    proposed: bool = False  # the action is another person's proposal, which the reporter's later post confirms


# --------------------------------------------------------------------------- what a fix changes
# The predicates whose facts an applied fix changes: in a thread, the facts read may be those after the fix.
_OVERRIDE_READERS = ("override_set", "override_empty", "override_on_native", "override_on_supported",
                     "override_family_mismatch", "override_spoofs_gpu", "wheel_lacks_gfx", "wheel_carries_gfx")
_VISIBILITY_READERS = ("visible_devices_hide_all", "igpu_and_dgpu", "gpus_differ")
_ENV_READERS: dict[str, tuple[str, ...]] = {
    "HSA_OVERRIDE_GFX_VERSION": _OVERRIDE_READERS,
    "HIP_VISIBLE_DEVICES": _VISIBILITY_READERS, "ROCR_VISIBLE_DEVICES": _VISIBILITY_READERS,
    "CUDA_VISIBLE_DEVICES": _VISIBILITY_READERS,
}
_GROUPS = ("in_render_group", "not_in_render_group", "groups_pending", "kfd_inaccessible")
_PYTHON = ("torch_build", "torch_version", "wheel_lacks_gfx", "wheel_carries_gfx", "numpy_major", "triton_missing",
           "pypi_placeholder", "therock_missing_device", "therock_family_lacks_gpu", "system_torch_shadows")
_PACKAGES = ("distro_rocm_packages", "rocm_stream_in", "rocm_version", "dkms_not_for_running_kernel")
_DRIVER = ("rocm_version", "rocm_stream_in", "mixed_rocm_repos", "distro_rocm_packages", "kfd_present",
           "kfd_inaccessible", "dkms_not_for_running_kernel", "amdgpu_pro")

# Commands that change the system, by head: (what follows the head before its arguments, the predicates changed,
# each argument is an action of its own (an install's packages) rather than all of them one).
_CHANGING: dict[str, tuple[str | None, tuple[str, ...], bool]] = {
    "usermod": (None, _GROUPS, False), "gpasswd": (None, _GROUPS, False), "adduser": (None, _GROUPS, False),
    "apt": ("install|purge|remove", _PACKAGES, True), "apt-get": ("install|purge|remove", _PACKAGES, True),
    "dnf": ("install|remove", _PACKAGES, True), "yum": ("install|remove", _PACKAGES, True),
    "zypper": ("install|in|remove|rm", _PACKAGES, True),
    "pip": ("install|uninstall", _PYTHON, True), "pip3": ("install|uninstall", _PYTHON, True),
    "amdgpu-install": (None, _DRIVER, False), "amdgpu-uninstall": (None, _DRIVER, False),
    "dkms": ("autoinstall|install", _DRIVER, False), "update-initramfs": (None, (), False),
    "ldconfig": (None, (), False), "tee": (None, (), False), "crb": (None, (), False),
    "docker": ("run", ("kfd_present", *_GROUPS), False), "podman": ("run", ("kfd_present", *_GROUPS), False),
}
_PACKAGE_MANAGERS = r"(?:apt-get|apt|dnf|yum|zypper)"  # one package installed reads the same with any of them
# a package installed or removed, said in words: "installed libtinfo5", "after uninstalling the xformers package"
_SAID_INSTALLED = (r"\b(?:re-?)?install(?:ed|ing)\s+(?:the\s+)?(?:packages?\s+)?[`'\"]?"
                   r"|\b(?:updat|upgrad)(?:ed|ing)\s+(?:the\s+)?(?:packages?\s+)?[`'\"]?")
_SAID_REMOVED = r"\b(?:uninstall(?:ed|ing)|remov(?:ed|ing)|purg(?:ed|ing))\s+(?:the\s+)?(?:packages?\s+)?[`'\"]?"
_QUERY_FLAGS = {"ldconfig": ("-p", "--print-cache")}  # flags that make a changing head only look


# --------------------------------------------------------------------------- deriving actions from the fix data


def _value_rx(value: str) -> str:
    """A value as text shows it: shell expansions ($PATH, ${X}, $(uname -r)) stand for any word."""
    parts = re.split(r"\$\([^)]*\)|\$\{[^}]*\}|\$\w+", value)
    return r"\S*".join(re.escape(p) for p in parts)


def _env_action(issue: str, name: str, value: str, in_branch: bool) -> FixAction:
    v = _value_rx(value)
    n = re.escape(name)
    # NAME=VALUE, NAME = "VALUE", os.environ["NAME"] = "VALUE", "NAME: VALUE", "NAME VALUE"
    rx = (rf"(?<![\w$]){n}[\"'`\]]{{0,2}}(?:\s?[=:]\s?|[ \t])[\"'`]?{v}(?![\w.])"
          rf"|\bset(?:ting)?\s+(?:the\s+)?(?:env(?:ironment)?\s+)?(?:var(?:iable)?\s+)?[`'\"]?{n}[`'\"]?\s+(?:to|as)\s+"
          rf"[`'\"]?{v}(?![\w.])")
    return FixAction(issue, f"{name}={value}", lazy_re.compile(rx, _F), in_branch, _ENV_READERS.get(name, ()),
                     (name,))


def _unset_action(issue: str, name: str, in_branch: bool) -> FixAction:
    n = re.escape(name)
    rx = (rf"\bunset\b[^\n]{{0,80}}?\b{n}\b"
          rf"|\b(?:unset(?:ting)?|remov(?:e|ed|ing)|delet(?:e|ed|ing)|drop(?:ped|ping)?)\s+(?:(?:the|any|my|your|that|this)\s+)?"
          rf"[`'\"]?{n}\b")
    return FixAction(issue, f"unset {name}", lazy_re.compile(rx, _F), in_branch, _ENV_READERS.get(name, ()), (name,))


def _words(command: str) -> list[list[str]]:
    """Each simple command of a line (split at pipes, ;, &&, ||), as words, without sudo and NAME=VALUE prefixes."""
    out: list[list[str]] = []
    command = re.sub(r"\$\([^)]*\)", "$X", command)  # $(uname -r): one word whatever it prints
    for part in re.split(r"\|\|?|;|&&", command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and (words[0] == "sudo" or re.fullmatch(r"[A-Za-z_]\w*=\S*", words[0])):
            words = words[1:]
            while words and words[0].startswith("-"):  # sudo's own flags
                words = words[1:]
        if words:
            out.append(words)
    return out


def _argument_rx(word: str) -> str | None:
    """How one distinctive argument reads in text, or None for one that says nothing (a short flag, a variable,
    an ellipsis): a comma list is any of its items; a --flag=value's value list is its first item."""
    if word in ("...", "…") or (word.startswith("-") and not word.startswith("--")):
        return None
    if word.startswith("--") and "=" in word:
        flag, value = word.split("=", 1)
        first = _value_rx(value.split(",", 1)[0])
        return rf"{re.escape(flag)}[= ]{first}" if first else re.escape(flag)
    if word.startswith("$"):
        return None
    if "," in word and not word.startswith("--") and "[" not in word:
        items = [_value_rx(w) for w in word.split(",") if w]
        return r"\b(?:" + "|".join(items) + r")\b" if items else None
    literal = _value_rx(word)
    if "$" in word and len(word.split("$", 1)[0]) < 4:
        return None
    return literal


def _head_rx(head: str, sub: str | None) -> str:
    name = _PACKAGE_MANAGERS if head in ("apt", "apt-get", "dnf", "yum", "zypper") else (
        r"pip3?" if head in ("pip", "pip3") else re.escape(head))
    rx = rf"(?<![\w/.-]){name}(?![\w-])"
    return rx + (rf"[^\n]{{0,40}}?\b(?:{sub})\b" if sub else "")


# A build that names the GPU targets it carries code for (llama.cpp's -DGPU_TARGETS=gfx1030, CMake's AMDGPU_TARGETS or
# CMAKE_HIP_ARCHITECTURES, make's GPU_TARGETS=..., hipcc's --offload-arch=...): whichever target the text names, one
# action, "built for a target"; "switched it to AMDGPU_TARGETS", "rebuilt it for gfx1030" read the same
TARGET_VARS = r"(?:AMDGPU_TARGETS|GPU_TARGETS|CMAKE_HIP_ARCHITECTURES)"
_TARGET_IN_COMMAND = lazy_re.compile(rf"(?<![\w-])(?:-D)?{TARGET_VARS}=|--offload-arch=")
_GFX_NAMED = rf"{GFX_TARGET}(?![\w-])"
_BUILT_FOR_TARGET = lazy_re.compile(
    rf"(?<![\w-])(?:-D[ \t]?)?{TARGET_VARS}[ \t]?[=:][ \t]?[\"'`]?{_GFX_NAMED}"
    rf"|(?<![\w-])--offload-arch[= ]{_GFX_NAMED}"
    rf"|\b(?:switch(?:ed|ing)?|chang(?:ed|ing))\s+(?:it\s+)?to\s+[`'\"]?(?:-D)?{TARGET_VARS}\b"
    rf"|\b(?:(?:re-?)?(?:built|compiled)|re-?build(?:ing)?|re-?compil(?:e|ing))\s+(?:it\s+)?(?:for|with)\s+(?:the\s+)?(?:target\s+)?"
    rf"{_GFX_NAMED}", _F)


def _command_actions(issue: str, command: str, in_branch: bool) -> list[FixAction]:
    out: list[FixAction] = []
    if _TARGET_IN_COMMAND.search(command):  # a rebuild for a target: every fix that asks for one shares it
        out.append(FixAction(issue, "build for a GPU target", _BUILT_FOR_TARGET, in_branch, ("built_from_source",)))
    for words in _words(command):
        head = words[0].rsplit("/", 1)[-1]
        if head in ("python", "python3") and words[1:3] == ["-m", "pip"]:
            head, words = "pip", ["pip", *words[3:]]
        if head == "unset":
            out += [_unset_action(issue, n, in_branch) for n in words[1:] if re.fullmatch(r"[A-Za-z_]\w*", n)]
            continue
        if head == "export":
            for w in words[1:]:
                if "=" in w:
                    name, value = w.split("=", 1)
                    out.append(_env_action(issue, name, value, in_branch))
            continue
        if head not in _CHANGING:
            continue  # a command that only looks (rocminfo, ls, id, grep, python -c ...) is no fix
        sub, changes, each = _CHANGING[head]
        args = words[1:]
        verb = ""
        if sub:
            rest = [i for i, w in enumerate(args) if w in sub.split("|")]
            if not rest:
                continue  # apt update, pip list, dkms status: no change the fix stands for
            verb, args = args[rest[0]], args[rest[0] + 1:]
        if any(a in _QUERY_FLAGS.get(head, ()) for a in args):
            continue
        if each:  # each package: a --flag's value is not one (pip's --index-url URL)
            args = [a for i, a in enumerate(args) if not a.startswith("-")
                    and not (i and args[i - 1].startswith("--") and "=" not in args[i - 1])]
        rxs = [(a, rx) for a in args if (rx := _argument_rx(a)) is not None]
        base = _head_rx(head, re.escape(verb) if verb else None)
        if each:
            said = _SAID_INSTALLED if verb in ("install", "in") else _SAID_REMOVED
            out += [FixAction(issue, f"{head} {verb} {a}",
                              lazy_re.compile(rf"(?:{base}[^\n]{{0,200}}?|{said}){rx}(?![\w.-])", _F),
                              in_branch, changes, needle=a.lower() if rx == re.escape(a) else None) for a, rx in rxs]
            continue
        if not args:  # the command alone: no flag after it (`ldconfig -p` only prints the cache)
            pattern = base + r"(?![ \t]+-)"
        else:
            pattern = base + "".join(rf"(?=[^\n]{{0,200}}?{rx})" for _a, rx in rxs)
        label = " ".join([head, *([verb] if verb else []), *(a for a, _rx in rxs)])
        out.append(FixAction(issue, label, lazy_re.compile(pattern, _F), in_branch, changes))
    return out


_RELEASE_CHANGES = ("rocm_version", "rocm_stream_in", "mixed_rocm_repos", "distro_rocm_packages", "torch_version",
                    "torch_build", "wheel_lacks_gfx", "wheel_carries_gfx", "kfd_present", "kfd_inaccessible")
_CONTAINER = ("kfd_present", *_GROUPS, *_PYTHON, "rocm_version", "rocm_stream_in")  # inside it, all is the image's
_SDK = (*_PACKAGES, "mixed_rocm_repos")
# words that install or move to what follows them on the line ("pip install", "reinstalled torch from", "switched to")
_INSTALLED = (r"\b(?:pip3?\s+install|(?:re-?)?install(?:ed|ing|s)?|switch(?:ed|ing)?\s+(?:over\s+)?to"
              r"|mov(?:ed|ing)\s+to|went\s+(?:back\s+)?(?:to|with))\b")
_NAME_END = r"(?![\w-]|\.\d)"  # "rocm6.2" is not the start of "rocm6.2.4", nor of "rocm6.2-dev"; "rocm6.2." ends it


def _alternatives(words: tuple[str, ...] | list[str]) -> str:
    """One regex alternation of literal words, longest first."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) + ")"


def _release_action(issue: str, plan: str, line: str, in_branch: bool) -> FixAction:
    """Moving to one release line reads as "upgraded to ROCm 7.2.1", "rolled back to 6.2"."""
    major, minor = line.split(".", 1)
    rx = (r"\b(?:(?:upgrad|downgrad|updat)(?:e|ed|ing)|mov(?:e|ed|ing)|switch(?:ed|ing)?|went|going"
          r"|roll(?:ed|ing)?\s+back|revert(?:ed|ing)?)\s+(?:back\s+)?(?:rocm\s+)?to\s+(?:rocm\s*)?v?"
          rf"{major}\.{minor}(?:\.\d+)?(?![\d.]*\d)")
    return FixAction(issue, f"plan {plan}", lazy_re.compile(rx, _F), in_branch, _RELEASE_CHANGES, plan=plan)


def _plan_actions(issue: str, plan: str, in_branch: bool, kb: KnowledgeBase | None) -> list[FixAction]:
    """What applying a plan looks like in text, from what the plan does (`wizard.fix_plans`): the torch of its wheel
    index installed (``pip install ... --index-url https://download.pytorch.org/whl/rocm6.2``, "reinstalled torch
    from the rocm6.2 index", ``torch-2.5.1+rocm6.2``), its container image run (``docker run ... rocm/pytorch:...``,
    "switched to the rocm/pytorch image"), its driver or Core SDK packages installed (``apt install amdgpu-dkms``),
    its release moved to. Each is on one line: the install word, then what it installs."""
    does = plan_does(plan, kb)
    if does is None:
        return []
    if does.release is not None:
        return [_release_action(issue, plan, does.release, in_branch)]
    out: list[FixAction] = []
    if does.indexes:
        urls = _alternatives([u.split("://", 1)[-1].rstrip("/") for u in does.indexes])
        targets = [rf"(?:https?://)?{urls}/?{_NAME_END}"]
        if does.index_names:
            names = _alternatives(does.index_names)
            targets += [rf"(?<![\w.]){names}{_NAME_END}(?=/|\s+(?:pip\s+|wheel\s+)?(?:index|wheels?|builds?|repo)\b)",
                        rf"\+{names}{_NAME_END}"]
        rx = _INSTALLED + r"[^\n]{0,200}?(?:" + "|".join(targets) + ")"
        out.append(FixAction(issue, f"plan {plan}: torch from its index", lazy_re.compile(rx, _F), in_branch,
                             _PYTHON, plan=plan))
    if does.images:
        images = _alternatives(does.images) + r"(?![\w/-])"
        rx = (rf"(?<![\w/.-])(?:docker|podman)(?![\w-])[^\n]{{0,40}}?\brun\b[^\n]{{0,300}}?(?<![\w/.-]){images}"
              r"|\b(?:us(?:e|ed|ing)|ran|running|switch(?:ed|ing)?\s+(?:over\s+)?to|went\s+with|mov(?:ed|ing)\s+to)\s+"
              r"(?:the\s+|an?\s+|AMD'?s\s+)?(?:official\s+)?(?:docker\s+|podman\s+)?(?:image\s+|container\s+)?"
              rf"[`'\"]?{images}")
        out.append(FixAction(issue, f"plan {plan}: its image run", lazy_re.compile(rx, _F), in_branch, _CONTAINER,
                             plan=plan))
    for packages, what, changes in ((does.driver_packages, "the driver", _DRIVER),
                                    (does.sdk_packages, "the Core SDK", _SDK)):
        if not packages:
            continue
        names = "(?:" + "|".join(re.escape(p).replace(re.escape("{gfx}"), r"gfx\w+")
                                 for p in sorted(packages, key=len, reverse=True)) + ")"
        rx = _head_rx("apt", "install") + rf"[^\n]{{0,200}}?(?<![\w.-]){names}(?![\w.-])"
        out.append(FixAction(issue, f"plan {plan}: {what} installed", lazy_re.compile(rx, _F), in_branch, changes,
                             plan=plan))
    return out


def _kernel_arg_actions(issue: str, args: KernelArgs, in_branch: bool) -> list[FixAction]:
    """A kernel parameter added reads as the parameter itself (on a GRUB_CMDLINE_LINUX line, a grubby --args, in
    words: "booting with iommu=pt"), a module's one also as its modprobe.d line (``options amdgpu runpm=0``); one
    removed as a removal word before it ("removed nomodeset from the kernel command line")."""
    out: list[FixAction] = []
    for arg in args.add:
        rx = rf"(?<![\w.-]){re.escape(arg)}(?![\w.-])"
        module, dot, param = arg.partition(".")
        if dot:
            rx += rf"|\boptions[ \t]+{re.escape(module)}[ \t]+(?:\S+[ \t]+){{0,8}}?{re.escape(param)}(?![\w.-])"
        out.append(FixAction(issue, f"kernel parameter {arg}", lazy_re.compile(rx, _F), in_branch, ()))
    for arg in args.remove:
        rx = (r"\b(?:remov(?:e|ed|ing)|delet(?:e|ed|ing)|drop(?:ped|ping)?|took\s+out|taking\s+out)\s+(?:the\s+)?"
              r"(?:kernel\s+(?:parameter|option|argument|arg)\s+|boot\s+(?:parameter|option)\s+)?[`'\"]?"
              rf"{re.escape(arg)}(?![\w.-])")
        out.append(FixAction(issue, f"kernel parameter {arg} removed", lazy_re.compile(rx, _F), in_branch, ()))
    return out


# a kernel or linux-firmware moved to a newer or an older one, in words ("upgraded the kernel", "booting the HWE kernel",
# "rolled back to the previous kernel", "updated linux-firmware"); "switched to kernel 6.6" says no direction and is
# neither; "updated the firmware" alone may be the board's, and is not linux-firmware; "the kernel driver", "its boot
# parameters", "kernel-firmware" (openSUSE's linux-firmware), "the kernel's own driver" are other things than the kernel
_KERNEL = (r"(?:linux\s+)?kernel\b(?![’']s\b)(?!\s*(?:-|\s)(?:headers?|modules?|param\w*|command|cmdline|boot|args?|arguments?|options?"
           r"|config\w*|drivers?|firmware|devel|source|log|panic|oops)\b)")
# the package's names: linux-firmware (Debian, Ubuntu, Fedora, Arch), kernel-firmware / kernel-firmware-amdgpu (openSUSE)
_FIRMWARE = r"(?:linux-firmware|kernel-firmware(?:-amdgpu)?)"
_MOVED_THING = {"kernel": _KERNEL, "linux-firmware": rf"(?:{_FIRMWARE}|amdgpu\s+firmware|firmware\s+package)\b"}
# (verbs that move it, those that move it "to" another, words that say which one) in each direction
_MOVE_WORDS = {
    "newer": (r"upgrad|updat", r"upgrad(?:e|ed|ing)", r"newer|newest|latest|updated|mainline|hwe|oem"),
    "older": (r"downgrad|revert", r"downgrad(?:e|ed|ing)|roll(?:ed|ing)?\s+back|revert(?:ed|ing)?|went\s+back",
              r"older|previous|lts"),
}


# "upgraded my VBIOS to the latest firmware package": what is moved "to" it is the board's firmware, no kernel or
# linux-firmware
_NOT_BOARD = r"(?!(?:v?bios|uefi|motherboard)\b)"


def _moved_rx(thing: str, direction: str) -> str:
    """'<verb>d the <thing>', '<verb>d ... to the (<which>) <thing>', 'installed / booted a <which> <thing>'; for
    linux-firmware also '<it> was updated'."""
    verbs, to_verbs, which = _MOVE_WORDS[direction]
    what = _MOVED_THING[thing]
    rx = (rf"\b(?:{verbs})(?:e|ed|es|ing)\s+(?:the\s+|my\s+|our\s+)?{what}"
          rf"|\b(?:{to_verbs})\s+(?:{_NOT_BOARD}\w+\s+){{0,2}}?to\s+(?:the\s+|a\s+|an\s+)?(?:(?:{which})\s+)?{what}"
          rf"|\b(?:install|boot|pull)(?:ed|ing)?\s+(?:a\s+|an\s+|the\s+)?(?:{which})\s+{what}")
    if thing == "linux-firmware" and direction == "newer":
        rx += rf"|\b{_FIRMWARE}\s+(?:was\s+|got\s+)?(?:updated|upgraded)\b"
    return rx


_MOVE_PATTERNS = {(thing, d): lazy_re.compile(_moved_rx(thing, d), _F) for thing in _MOVED_THING for d in _MOVE_WORDS}
# what a kernel moved changes: the facts read of the one running before
_KERNEL_READERS = ("kernel_version", "kernel_newer_than_release", "dkms_not_for_running_kernel", "kernel_gc_ip_in")


def _move_actions(issue: str, move: MoveTo, in_branch: bool) -> list[FixAction]:
    out = []
    for what, direction in (("kernel", move.kernel), ("linux-firmware", move.firmware)):
        if direction:
            article = "an" if direction == "older" else "a"
            out.append(FixAction(issue, f"{what} moved to {article} {direction} one", _MOVE_PATTERNS[(what, direction)],
                                 in_branch, _KERNEL_READERS if what == "kernel" else (), generic=True))
    return out


def fix_actions(issue: KnownIssue, kb: KnowledgeBase | None = None) -> tuple[FixAction, ...]:
    """What applying the issue's fix (and each of its branches) looks like in text (``kb``: the knowledge base whose
    tables a plan's index, image and packages are read from)."""
    out: list[FixAction] = []
    parts = [(issue.fix.env, issue.fix.commands, issue.fix.plan, issue.fix.kernel_args, issue.fix.move_to, False, ())] + [
        (b.env, b.commands, b.plan, b.kernel_args, b.move_to, True, b.when) for b in issue.fix.branches]
    for env, commands, plan, kernel_args, move, in_branch, when in parts:
        mine = [_env_action(issue.id, name, value, in_branch) for name, value in env.items() if value]
        mine += _kernel_arg_actions(issue.id, kernel_args, in_branch)
        mine += _move_actions(issue.id, move, in_branch)
        for c in commands:
            mine += _command_actions(issue.id, c, in_branch)
        mine += _plan_actions(issue.id, plan, in_branch, kb) if plan else []
        out += [replace(a, when=when) for a in mine]
    return tuple(out)


# --------------------------------------------------------------------------- finding a fix that worked

# "that worked", "fixed it", "works now", "now it runs", "thanks, works": said after the action
# "fixed it", "solved the issue", "resolved my problem"
_FIXED_IT = r"(?:fixed|solved|resolved)\s+(?:it|this|that|the\s+(?:issue|problem|error)|my\s+(?:issue|problem|error))"
_SUCCESS = lazy_re.compile(
    r"(?<!\bif )(?<!whether )(?<!n't )(?<!\bnot )(?<!\bno )\b(?:"
    r"(?:that|this|it|which|these|those)\s+(?:really\s+|finally\s+|actually\s+|also\s+|just\s+)?"
    r"(?:worked|works|did\s+(?:it|the\s+trick)|helped"
    rf"|{_FIXED_IT})"
    r"|(?:that|this|it|which|everything)\s+seem(?:s|ed)?\s+to\s+(?:have\s+)?"
    r"(?:work(?:ed)?(?!\s+(?:partly|partially|at\s+first|for\s+a\s+while|until|sometimes|occasionally|intermittently"
    r"|on\s+(?:the\s+)?cpu)\b|[^.!?\n]{0,40}?\bonly\b)|help(?:ed)?"
    r"|(?:fix(?:ed)?|(?:solv|resolv)(?:e|ed))\s+(?:it|this|that|the\s+(?:issue|problem|error)|my\s+(?:issue|problem|error)))"
    r"|(?:works|worked|working|runs|running)\s+(?:now|again|fine|perfectly|great|flawlessly)"
    r"|(?:now|finally)\s+(?:\S+\s+)?(?:works|runs|is\s+working)"
    r"|now\s+(?:i'?m|i\s+am|we\s+are|we'?re)\s+able\s+to\s+(?:run|use)"
    rf"|{_FIXED_IT}"
    r"|works\s+for\s+me|it\s+runs(?!\s+(?:out|into|slow|but)\b)|thanks?(?:\s+you)?\W{0,3}\s?(?:it\s+)?works)\b", _F)
# "fixed it by", "the fix was", "it works with", "I fixed this by running the following commands:": said before it
_SUCCESS_BEFORE = lazy_re.compile(
    r"(?<!n't )(?<!\bnot )\b(?:"
    rf"{_FIXED_IT}"
    r"\s+(?:by|with|after|using)"
    r"|(?:the\s+)?(?:fix|solution|workaround)\s+(?:for\s+me\s+)?(?:is|was)"
    r"|what\s+(?:worked|fixed\s+it)(?:\s+for\s+me)?\s+(?:is|was)"
    r"|(?:it|this|everything)\s+(?:works|worked|runs|ran)(?:\s+(?:fine|now|again|well))?\s+(?:after|with|once|by)"
    r")\b", _F)
# the reporter's answer to a proposal: the phrases above, and "yes, that was it"
_CONFIRM = lazy_re.compile(_SUCCESS.pattern + r"|(?<!n't )(?<!\bnot )\b(?:that|this)\s+was\s+it\b", _F)
# words that say it did not work, or not only: between the action and the success, or in the success's sentence
_FAILURE = lazy_re.compile(
    r"\bstill\b|n't\b|\bnot\b|\bno\s+luck\b|\bnothing\b|\bnone\b|\bbut\b|\bhowever\b|\bunfortunately\b"
    r"|\bsame\s+(?:error|issue|problem|result|thing)\b|\bfail(?:s|ed|ing|ure)?\b|\bno\s+(?:change|difference|effect)\b",
    _F)
# words before the action in its sentence that make it a question, a condition, advice or a negation
_NOT_APPLIED = lazy_re.compile(
    r"\b(?:if|whether|try|trying|did\s+you|have\s+you|could\s+you|can\s+you|should|would|might|maybe|perhaps"
    r"|suggest\w*|recommend\w*|without|not|never)\b|n't\b", _F)
# "Missing "iommu=pt" from kernel command line" (RCCL's warning), "X is missing from ...": what the machine lacks
_MISSING_BEFORE = lazy_re.compile(r"\bmissing\s+[`'\"]?$", _F)
_MISSING_FROM = lazy_re.compile(r"[`'\"]?\s+from\b", _F)
_IS_MISSING = lazy_re.compile(r"[`'\"]?\s+(?:is|was|are|were)\s+(?:still\s+)?missing\b", _F)
# "instead of X" sets X aside in its own clause only ("I used A instead of B, after switching it to B it works")
_NEGATED = lazy_re.compile(r"\binstead\s+of\b", _F)
_CLAUSE = lazy_re.compile(r"[,;:]\s|\s[-\u2013\u2014]\s")
# a confirmation that names what fixed it (then it is that, not the proposal, unless the proposal is named)
_ATTRIBUTION = lazy_re.compile(
    r"\b(?:(?:fixed|solved|resolved)\s+(?:it|this|that|the\s+\w+|my\s+\w+)\s+(?:by|with|after|using)"
    r"|(?:the\s+)?(?:fix|solution|workaround)\s+(?:is|was)|what\s+(?:worked|fixed\s+it)|ended\s+up|instead)\b", _F)
_TERMINATOR = lazy_re.compile(r"[.!?](?=\s|$)|\n\s*\n")
_WINDOW = 300  # characters from the action to the words that say it worked
_BEFORE_WINDOW = 250  # characters from "fixed it by" to the action


@record
class _Spot:
    start: int
    end: int
    actions: tuple[FixAction, ...]


def _bodies(texts: list[EvidenceText]) -> list[Words]:
    """The reporter's runs of consecutive posts (a post split at its "EDIT:" goes on), and each other person's post,
    each in one text in line order (`joined_words`); overlapping texts (the same lines read twice) count once."""
    return sorted(joined_words(texts, reporter_runs=True), key=lambda b: (b.source, b.post, b.first_line))


# a line that is the booted kernel's command line (/proc/cmdline with GRUB's BOOT_IMAGE= or systemd-boot's initrd=, the
# kernel's own "Command line:" in dmesg or the journal): the machine's state, not a parameter said to be added
_BOOTED_CMDLINE = lazy_re.compile(r"BOOT_IMAGE=|(?<![\w-])initrd=\S|^\s*\[\s*\d+\.\d+\]\s+(?:Kernel\s+)?command\s+line:"
                                  r"|\bkernel:\s+(?:Kernel\s+)?command\s+line:", _F | re.M)
_CMDLINE_BACK = 2000  # characters a line is read back for it (a kernel command line is at most a few thousand)


def _spots(body: str, actions: tuple[FixAction, ...]) -> list[_Spot]:
    """Where the actions read in the text: the actions matching at one place are one spot (none on a line of the
    booted kernel's command line)."""
    at: dict[int, list[tuple[int, FixAction]]] = {}
    found: dict[lazy_re.Pattern, list[tuple[int, int]]] = {}  # the issues sharing a plan share its pattern: read once
    low = body.lower()
    booted: dict[int, bool] = {}  # where a match starts: on a line of the booted kernel's command line
    for a in actions:
        if a.needle is not None and a.needle not in low:
            continue  # its package is not named: the pattern cannot match (and is not run)
        if a.pattern not in found:
            found[a.pattern] = [(m.start(), m.end()) for m in a.pattern.finditer(body)]
        for start, end in found[a.pattern]:
            if start not in booted:
                back = max(0, start - _CMDLINE_BACK)
                line = max(body.rfind("\n", back, start) + 1, back)
                booted[start] = _BOOTED_CMDLINE.search(body, line, start) is not None
            if not booted[start]:
                at.setdefault(start, []).append((end, a))
    # a plan read at the place of a command or setting of an issue's own fix data yields to it: that is the more
    # distinctive (``pip install torch==2.4.1 --index-url .../rocm6.1`` is that issue's command, not any pip plan's)
    return [_Spot(start, max(e for e, _a in hits), tuple(a for _e, a in hits if a.plan is None)
                  or tuple(a for _e, a in hits)) for start, hits in sorted(at.items())]


_SENTENCE = 300  # characters a sentence is read back or on (a longer line is not one sentence of prose)


def _sentence_start(text: str, pos: int) -> int:
    lo = max(0, pos - _SENTENCE)
    start = max(text.rfind("\n", lo, pos), max((m.end() - 1 for m in _TERMINATOR.finditer(text, lo, pos)), default=-1))
    return start + 1 if start >= 0 else lo


def _sentence_rest(text: str, pos: int) -> tuple[str, str]:
    """The rest of the sentence from pos (to its end or the line's) and the character that ends it."""
    end_line = text.find("\n", pos, pos + _SENTENCE)
    end_line = min(len(text), pos + _SENTENCE) if end_line == -1 else end_line
    m = _TERMINATOR.search(text, pos, end_line)
    return (text[pos: m.start()], m.group(0)[:1]) if m else (text[pos:end_line], "")


# "X was already set", "I already boot with X": there before the failure, not the fix applied now
_ALREADY_AFTER = lazy_re.compile(r"[`'\"]?\s+(?:is|was|are|were|has\s+been|had\s+been)\s+already\b", _F)
_ALREADY_BEFORE = lazy_re.compile(r"\balready\s+(?:had|have|has|boot\w*|use[sd]?|using|run\w*|set)\b", _F)


def _said_missing(text: str, spot: _Spot) -> bool:
    """The text says the machine lacks it ("Missing "iommu=pt" from kernel command line", "X is missing from ...")."""
    before = text[max(0, spot.start - 20): spot.start]
    after = text[spot.end: spot.end + 30]
    return bool(_MISSING_BEFORE.search(before) and _MISSING_FROM.match(after) or _IS_MISSING.match(after))


def _applied(text: str, spot: _Spot) -> bool:
    """The action is stated as done: not asked about, not on a condition, not advice, not negated, not said missing,
    not said to be there already."""
    before = text[_sentence_start(text, spot.start): spot.start]
    clause = before[max((m.end() for m in _CLAUSE.finditer(before)), default=0):]
    rest, ends = _sentence_rest(text, spot.end)
    return not _NOT_APPLIED.search(before) and not _NEGATED.search(clause) and ends != "?" \
        and not _said_missing(text, spot) and not _ALREADY_BEFORE.search(clause) \
        and not _ALREADY_AFTER.match(text, spot.end, spot.end + 40)


def _said_worked(text: str, start: int, end: int) -> bool:
    """The words from start to end say nothing against it, nor does the sentence the success ends in."""
    rest, ends = _sentence_rest(text, end)
    return not _FAILURE.search(text, start, end) and not _FAILURE.search(rest) and ends != "?"


def _own_hits(body: Words, actions: tuple[FixAction, ...]) -> list[Hit]:
    text = body.text
    spots = [s for s in _spots(text, actions) if _applied(text, s)]
    claims: dict[int, list[_Spot]] = {}
    for s in spots:
        m = _SUCCESS.search(text, s.end, s.end + _WINDOW)
        if m is not None and _said_worked(text, s.end, m.start()) and _said_worked(text, m.start(), m.end()):
            claims.setdefault(m.start(), []).append(s)
    starts = [s.start for s in spots]
    flat = text.replace("\n", " ") if spots else text  # a line break does not end "I fixed it by running:"
    for m in _SUCCESS_BEFORE.finditer(text) if spots else ():
        first = bisect.bisect_left(starts, m.end())
        after = [s for s in spots[first: bisect.bisect_right(starts, m.end() + _BEFORE_WINDOW)]
                 if not _TERMINATOR.search(flat, m.end(), s.start)]
        if after and not _FAILURE.search(text, m.end(), after[0].start):
            rest, _ends = _sentence_rest(text, after[0].end)
            if not _FAILURE.search(rest):
                claims.setdefault(m.start(), []).extend(after)
    out: list[Hit] = []
    for pos, claimed in sorted(claims.items()):
        # two actions before one "it works": which worked is not known (the same action said twice is one)
        if len({s.start for s in claimed}) == 1 or len({frozenset(a.label for a in s.actions) for s in claimed}) == 1:
            out.append(Hit(claimed[0].actions, body.evidence(claimed[0].start), body.evidence(pos)))
    return out


# the words just before an action that negate it ("you are not building with X", "without X", "don't set X")
_NEGATED_JUST_BEFORE = lazy_re.compile(r"(?:\bnot|n't|\bnever|\bwithout)(?:\s+\w+){0,2}\s+[`'\"]?$", _F)


def _proposals(body: Words, actions: tuple[FixAction, ...]) -> list[_Spot]:
    """Actions another person's post proposes (a question proposes too), not ones it says failed for them nor ones
    it negates ("you are not building with X")."""
    text = body.text
    return [s for s in _spots(text, actions) if not _FAILURE.search(_sentence_rest(text, s.end)[0])
            and not _NEGATED_JUST_BEFORE.search(text, max(_sentence_start(text, s.start), s.start - 60), s.start)
            and not _said_missing(text, s)]


def _confirmation(body: Words, proposal: _Spot, actions: tuple[FixAction, ...]) -> int | None:
    """Where the reporter's post confirms the proposal, or None: it says it worked, and names no other fix."""
    text = body.text
    named = _spots(text, actions)
    same = {a.label for a in proposal.actions}
    if any(not same & {a.label for a in s.actions} for s in named):
        return None  # it names another fix
    if _ATTRIBUTION.search(text) and not named:
        return None  # "fixed it by ..." something the proposal is not
    for m in _CONFIRM.finditer(text):
        start = _sentence_start(text, m.start())
        if _said_worked(text, start, m.end()) and not _NOT_APPLIED.search(text, start, m.start()) \
                and not _NEGATED.search(text, start, m.start()):
            return m.start()
    return None


def worked_fixes(texts: list[EvidenceText], actions: tuple[FixAction, ...]) -> list[Hit]:
    """Every place the machine's texts show one of the actions applied and working: in the reporter's own words,
    or proposed by another person and confirmed by the reporter's next post."""
    bodies = _bodies([t for t in texts if t.text])
    hits: list[Hit] = []
    for b in bodies:
        if b.own:
            hits += _own_hits(b, actions)
    for b in bodies:
        if b.own:
            continue
        proposed = _proposals(b, actions)
        later = [x for x in bodies if x.source == b.source and x.post > b.post]
        if len({s.start for s in proposed}) != 1 or not later or not later[0].own:
            continue  # no one action proposed, or the next post is not the reporter's
        at = _confirmation(later[0], proposed[0], actions)
        if at is not None:
            hits.append(Hit(proposed[0].actions, b.evidence(proposed[0].start), later[0].evidence(at), True))
    return hits
