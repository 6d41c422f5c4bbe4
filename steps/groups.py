"""groups: the user in render and video, so /dev/kfd and /dev/dri/renderD* can be opened.

Logging out and back in is enough for a new group; no reboot.
"""

from __future__ import annotations

from wizard.model import Action, StepPlan

from ._common import NoParams, StepContext, StepKind, skipped

IN_GROUPS = 'for g in render video; do id -nG "$1" | tr " " "\\n" | grep -qx "$g" || exit 1; done'


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Add the user to the render and video groups")
    d = ctx.facts.driver
    user = ctx.user
    if d.in_render_group and d.in_video_group:
        return skipped("groups", title, f"{user or 'the user'} is already in render and video")
    if not user:
        return skipped("groups", title, "the user is unknown on this recorded machine",
                       ("add yourself to render and video: sudo usermod -a -G render,video $LOGNAME",))
    if user == "root":
        return skipped("groups", title, "running as root: groups do not apply")
    return StepPlan(
        kind="groups", title=title,
        actions=(Action(argv=("usermod", "-a", "-G", "render,video", user),
                        description=f"add {user} to render and video", root=True,
                        check=("sh", "-c", IN_GROUPS, "sh", user), changes=(f"groups:{user}",),
                        undo=None),),
        check=Action(("sh", "-c", IN_GROUPS, "sh", user), f"{user} is in render and video"),
        notes=("log out and back in (or run `newgrp render`) for the groups to apply; no reboot needed",))


KIND = StepKind(name="groups", summary="the user in render and video, so /dev/kfd and /dev/dri can be opened",
                params=NoParams, plan=plan)
