"""docker: AMD's rocm/pytorch image matched to the GPU and driver, pulled, plus a launcher script.

Host checks first (/dev/kfd, /dev/dri, the amdgpu module), then ``docker pull`` of the tag the planner
chose from the knowledge base, then a launcher in the user's home that runs the image with the device
flags of AMD's docs, the render group's GID, any override/visibility the GPU needs, and the current
directory mounted at /workspace.
"""

from __future__ import annotations

from typing import Any, Sequence

from packaging.version import InvalidVersion, Version

from wizard import preflight
from wizard.model import Action, Facts, StepPlan
from wizard.record import record

from ._common import StepContext, StepKind, StepRefused, write_file

GIB = 1 << 30


@record
class Params:
    launcher: str = "auto"  # where the launcher script goes: "auto" (~/rocm-wizard-docker.sh), /path or ~/path

    def __post_init__(self) -> None:
        v = self.launcher
        if "\n" in v or not (v == "auto" or v.startswith("/") or v.startswith("~/")):
            raise ValueError(f"\"auto\", an absolute path or ~/path (got {v!r})")



def _v(text: str | None) -> Version:
    try:
        return Version(text or "0")
    except InvalidVersion:
        return Version("0")


def _major_minor(text: str | None) -> str:
    parts = (text or "").split(".")
    return ".".join(parts[:2])


def choose_image(kb: Any, gfx: tuple[str, ...]) -> Any:  # -> DockerImage | None
    """The newest existing image whose ROCm line has upstream wheels carrying every target."""
    best = None
    for im in kb.docker_images():
        if im.exists is not True or not im.rocm:
            continue
        line = _major_minor(im.rocm)
        rows = [w for w in kb.wheels() if w.rocm and _major_minor(w.rocm) == line and w.gfx is not None]
        if not rows or not all(any(g in w.gfx for w in rows) for g in gfx):
            continue
        key = (_v(im.rocm), _v(im.torch), _v(im.ubuntu), im.confidence == "high")
        if best is None or key > best[0]:
            best = (key, im)
    return None if best is None else best[1]


def engine(facts: Facts) -> str | None:
    if facts.docker.docker:
        return "docker"
    if facts.docker.podman:
        return "podman"
    return None


def launcher_path(ctx: StepContext) -> str | None:
    p = str(ctx.params.launcher)
    if p == "auto":
        return f"{ctx.home}/rocm-wizard-docker.sh" if ctx.home else None
    if p.startswith("~/"):
        return f"{ctx.home}/{p[2:]}" if ctx.home else None
    return p


def launcher_text(ctx: StepContext, tool: str) -> str:
    assert ctx.image is not None
    flags = " ".join(ctx.kb.docker_run_flags())
    extra = ""
    if ctx.override:
        extra += f" -e HSA_OVERRIDE_GFX_VERSION={ctx.override}"
    return (
        "#!/usr/bin/env bash\n"
        f"# written by rocm-wizard: {ctx.image.tag} with the device flags from the AMD docs,\n"
        "# the render group of the host, and the current directory at /workspace. Arguments go to the container.\n"
        "set -euo pipefail\n"
        "render_gid=$(getent group render | cut -d: -f3 || true)\n"
        "group_args=()\n"
        'if [ -n "$render_gid" ]; then group_args=(--group-add "$render_gid"); fi\n'
        f'exec {tool} run -it --rm {flags}{extra} "${{group_args[@]}}" -v "$PWD":/workspace -w /workspace '
        f'{ctx.image.tag} "$@"\n'
    )


def plan(ctx: StepContext) -> StepPlan:
    if ctx.image is None:
        raise StepRefused([])  # the planner has said why no image fits
    free = ctx.facts.disk_free_bytes
    if free is not None and free < preflight.DISK_IMAGE:
        raise StepRefused([f"not enough disk: {free // GIB} GiB free for the image, "
                           f"{preflight.DISK_IMAGE // GIB} GiB needed"])
    tool = engine(ctx.facts) or "docker"
    notes = [f"image: {ctx.image.tag} (ROCm {ctx.image.rocm}, torch {ctx.image.torch}, "
             f"Python {ctx.image.python}; {ctx.image.confidence} confidence)"]
    if engine(ctx.facts) is None:
        notes.append("Docker was not detected on this machine: the pull fails until Docker Engine is installed")
    if ctx.facts.driver.kind == "dkms":
        notes.append("the host's DKMS driver must be within two releases of the image's ROCm (AMD's KMD "
                     "compatibility window)")
    path = launcher_path(ctx)
    if path is None:
        raise StepRefused(["the user's home directory is unknown: give the docker step a launcher path"])
    sudo = tool == "docker" and not ctx.facts.driver.user == "root" and ctx.facts.docker.in_docker_group is False
    actions = [
        Action(argv=("test", "-e", "/dev/kfd"), description="host: /dev/kfd exists (amdgpu KFD)"),
        Action(argv=("test", "-d", "/dev/dri"), description="host: /dev/dri exists"),
        Action(argv=("test", "-d", "/sys/module/amdgpu"), description="host: the amdgpu driver is loaded"),
        Action(argv=(tool, "pull", ctx.image.tag), description=f"pull {ctx.image.tag}", root=sudo,
               check=(tool, "image", "inspect", ctx.image.tag), changes=(f"image:{ctx.image.tag}",),
               undo=(tool, "rmi", ctx.image.tag), timeout=7200),
        write_file(path, launcher_text(ctx, tool), f"launcher {path}", mode="755", as_user=True,
                   undo=("rm", "-f", "--", path)),
    ]
    if sudo:
        notes.append("the user is not in the docker group: the pull runs as root; the launcher needs "
                     "docker group membership or sudo")
    notes.append(f"start it with: {path}")
    return StepPlan(kind="docker", title=ctx.title(f"Pull {ctx.image.tag} and write the launcher"),
                    actions=tuple(actions), params=(("image", ctx.image.tag), ("launcher", path), ("tool", tool)),
                    notes=tuple(notes), check=Action((tool, "image", "inspect", ctx.image.tag),
                                                     f"the image {ctx.image.tag} is there", root=sudo))


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    return (preflight.disk_free("disk-image", "/var/lib", preflight.DISK_IMAGE, "the image"),
            preflight.has_command(str(step.param("tool"))))


KIND = StepKind(name="docker", summary="AMD's rocm/pytorch image, pulled, with a launcher for your workspace",
                target_needs=("image",), streams=("docker",),
                params=Params, plan=plan, preflight=checks)
