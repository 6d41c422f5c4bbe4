"""Real roots as fleet hosts: inventory hosts with ``rocm_wizard_realroot=DIR`` (a root built by ``rocm-wizard
--sandbox DIR --profile NAME --root debian12``), reached through ``ansible_connection=rocm_wizard_realroot`` (every
command entered into the root) or any other connection, such as plain SSH to an sshd running inside the root.

While a playbook runs, each such root has its rehearsal mirror served on 127.0.0.1 (the packages inside
name its port) and this wizard copied in (``python3 -m wizard`` in the root is the root's own python3
running it, found through a ``.pth`` file in Debian's dist-packages). Plans for a root are resolved with
its mirror configuration (the root reaches no upstream host), and what a root cannot provide (a GPU) is
passed to the playbook as ``rocm_wizard_unavailable`` (host -> requirement -> reason): the exported verify
step is then skipped on that host and reported as skipped, never passed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from wizard.fleet import FleetError
from wizard.mirror.config import MirrorConfig
from wizard.model import NEEDS_GPU

CONNECTION = "rocm_wizard_realroot"
ROOT_VAR = "rocm_wizard_realroot"
PTH = "usr/lib/python3/dist-packages/rocm-wizard.pth"


def hosts(inventory: str, limit: str | None, fleet_dir: Path) -> dict[str, Path]:
    """host -> its real root's directory, for the inventory's hosts that use the real-root connection."""
    from wizard.fleet.ansible_run import read_inventory

    if not Path(inventory).exists():
        return {}
    try:
        meta = read_inventory(inventory, limit, fleet_dir).get("_meta", {}).get("hostvars", {})
    except (FleetError, AttributeError):
        meta = {}
    if not isinstance(meta, dict):
        meta = {}
    out: dict[str, Path] = {}
    for host, hv in meta.items():
        if isinstance(hv, dict) and (hv.get("ansible_connection") == CONNECTION or ROOT_VAR in hv):
            root = hv.get(ROOT_VAR)
            if not isinstance(root, str) or not root:
                raise FleetError(f"{host}: ansible_connection={CONNECTION} needs {ROOT_VAR}=DIR (a real root)"
                                 if hv.get("ansible_connection") == CONNECTION else
                                 f"{host}: {ROOT_VAR} names no directory: it needs DIR, a real root")
            out[host] = Path(root).absolute()
    return out


@contextmanager
def serving(roots: dict[str, Path]) -> Iterator[None]:
    """Every root open (its mirror served) and carrying this wizard, for the block's duration."""
    from wizard.realroot.base import RealRootError
    from wizard.realroot.machine import install_wizard_source, open_root
    from wizard.realroot.rehearsal import is_real_root, opened

    served: dict[str, Path] = {}  # mirror URL -> the root whose mirror answers there
    with ExitStack() as stack:
        for host, d in roots.items():
            if not is_real_root(d):
                raise FleetError(f"{host}: {d} is not a real root (build it: rocm-wizard --sandbox {d} --profile NAME "
                                 "--root debian12 detect)")
            url = open_root(d).mirror_url
            if url in served:  # a copy of another root (cp -a): its mirror is that one's, served once
                if not same_mirror(served[url], d):
                    raise FleetError(f"{host}: {d} and {served[url]} name one mirror address ({url}) but hold different "
                                     "mirrors: build one of them again in a new directory")
            else:
                try:
                    stack.enter_context(opened(d, None))
                except RealRootError as exc:
                    raise FleetError(f"{host}: {exc}") from None
                served[url] = d
            source = install_wizard_source(d)
            (d / PTH).parent.mkdir(parents=True, exist_ok=True)
            (d / PTH).write_text(source + "\n")
        yield


def same_mirror(a: Path, b: Path) -> bool:
    """Two roots hold the same rehearsal mirror (one a copy of the other): its manifest and signing key alike."""
    from wizard.realroot.rehearsal import MIRROR

    try:
        return all((a / MIRROR / f).read_bytes() == (b / MIRROR / f).read_bytes()
                   for f in ("manifest.json", "keys/rehearsal.gpg"))
    except OSError:
        return False


def mirrors(roots: dict[str, Path]) -> dict[str, MirrorConfig]:
    """host -> the mirror configuration its plans are resolved with."""
    from wizard.realroot.machine import open_root
    from wizard.realroot.rehearsal import mirrors as root_mirrors

    return {host: root_mirrors(open_root(d)) for host, d in roots.items()}


def unavailable(roots: dict[str, Path]) -> dict[str, dict[str, str]]:
    """host -> requirement -> why the root cannot provide it (the playbook's ``rocm_wizard_unavailable``)."""
    from wizard.realroot.executor import RealRootExecutor

    out: dict[str, dict[str, str]] = {}
    for host, d in roots.items():
        why = RealRootExecutor(d).unavailable(NEEDS_GPU)
        if why:
            out[host] = {NEEDS_GPU: why}
    return out


__all__ = ["CONNECTION", "hosts", "mirrors", "same_mirror", "serving", "unavailable"]
