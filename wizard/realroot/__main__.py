"""``python -m wizard.realroot``: build, enter and check a real root by hand (host root only).

    python -m wizard.realroot base                       the cached Debian 12 tarball (built on first use)
    python -m wizard.realroot build DIR --profile NAME   DIR becomes a real root for NAME, with its own
                                                         rehearsal mirror in DIR/.realroot/mirror
    python -m wizard.realroot run DIR [--user] -- ARGV   run ARGV inside (the mirror is served meanwhile)
    python -m wizard.realroot check DIR                  dpkg/apt half-states and their repairs

Exit status: 0 ok, 1 failure (one line on stderr), 2 usage; ``run`` exits with the command's status.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Sequence

from wizard.mirror.config import MirrorConfigError
from wizard.realroot import base as rb
from wizard.realroot import repair
from wizard.realroot.base import RealRootError

MIRROR = ".realroot/mirror"


@contextlib.contextmanager
def _served(directory: Path, base_url: str | None = None) -> Iterator[str]:
    from wizard.mirror.server import MirrorServer

    port = int(base_url.rsplit(":", 1)[1]) if base_url else 0
    try:
        server = MirrorServer(directory / MIRROR, port=port, idle_timeout=24 * 3600)
    except OSError as exc:
        raise RealRootError(f"cannot serve the rehearsal mirror on port {port}: {exc.strerror or exc}") from None
    with server:
        yield server.base_url


def _build(args: argparse.Namespace) -> int:
    from wizard.kb import load_kb
    from wizard.mirror.build import build_mirror
    from wizard.realroot.machine import build_root, install_starting_stack
    from wizard.profiles import PROFILES, find_profile

    directory = Path(args.dir).absolute()
    started = time.monotonic()
    with _served(directory) as url:  # the port first: the mirror's packages name it
        root = build_root(directory, args.profile, url, install_stack=False)
        t = time.monotonic()
        build_mirror(directory / MIRROR, url)
        timings = {**root.timings, "build mirror": time.monotonic() - t}
        if not args.no_stack:
            install_starting_stack(root, find_profile(args.profile) or PROFILES[args.profile], load_kb(), timings)
    times = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    print(f"{directory}: real root for {args.profile} in {time.monotonic() - started:.1f} s ({times})")
    return 0


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from wizard.realroot.machine import open_root

    root = open_root(Path(args.dir))
    cmd = root.argv(argv, as_user=args.user)
    if (root.path / MIRROR).is_dir():
        with _served(root.path, root.mirror_url):
            return subprocess.call(cmd)
    return subprocess.call(cmd)


def _check(args: argparse.Namespace) -> int:
    from wizard.realroot.machine import open_root

    root = open_root(Path(args.dir))
    findings = repair.survey(root.path, lambda a: root.run(a))
    for f in findings:
        print(f"{f.state.value}: {f.message}")
        for e in f.evidence:
            print(f"  {e}")
        print(f"  repair ({f.repair.kind.value}): {f.repair.message}")
    if not findings:
        print("no half-states: dpkg and apt are consistent")
    return 1 if findings else 0


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in args_in:
        i = args_in.index("--")
        args_in, command = args_in[:i], args_in[i + 1:]
    p = argparse.ArgumentParser(prog="python -m wizard.realroot", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("base", help="the cached Debian 12 tarball")
    b = sub.add_parser("build", help="make DIR a real root for a profile")
    b.add_argument("dir")
    b.add_argument("--profile", required=True)
    b.add_argument("--no-stack", action="store_true", help="lay the profile only; install nothing")
    r = sub.add_parser("run", help="run a command inside: run DIR [--user] -- ARGV")
    r.add_argument("dir")
    r.add_argument("--user", action="store_true", help="as the profile's user (default: root)")
    c = sub.add_parser("check", help="dpkg/apt half-states and their repairs")
    c.add_argument("dir")
    args = p.parse_args(args_in)
    try:
        if args.cmd == "base":
            tar = rb.ensure_base()
            print(f"{tar.path}" + (f" (built in {tar.seconds:.1f} s)" if tar.built else " (cached)"))
            return 0
        if args.cmd == "build":
            return _build(args)
        if args.cmd == "run":
            if not command:
                p.error("run needs a command after --")
            return _run(args, command)
        return _check(args)
    except (RealRootError, MirrorConfigError, OSError) as exc:
        print(f"rocm-wizard realroot: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
