"""Mirrors applied to a resolved plan: every URL that reaches the machine goes through the site's mirror.

One pass over the plan after it is resolved, so the preflight checks, the amdgpu-install download, the
pip ``--index-url``, the Docker image names, the verify step and the dry-run script all see the same
mirrored URLs and nothing is rewritten twice:

* every ``http(s)://`` URL in an action's argv, done-check and undo (and in the text of a file an action
  writes) is rewritten by origin (:meth:`MirrorConfig.rewrite_text`);
* ``rocm/pytorch:TAG`` images go through a registry mirror (:meth:`MirrorConfig.rewrite_image`);
* after an action that installs the amdgpu-install package (which writes AMD's apt source lines or yum
  repo files), an action rewrites those lines to the mirror: journalled like any action, guarded by its done-check, and
  undone by a rollback's restore of the repo lists;
* AMD's pinned key fingerprint stays pinned, unless the mirror for repo.radeon.com is given with a key
  fingerprint of its own (``--mirror-key``): then that key, and only that one, is trusted;
* the Core SDK's key (fetched from its URL, no fingerprint known for AMD's) from a mirror given with a key
  fingerprint: right after it is put into its keyring, an action stops the run unless the keyring holds
  exactly that key.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.mirror.config import MirrorConfig
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace

SOURCES_DIR = "/etc/apt/sources.list.d"
YUM_DIR = "/etc/yum.repos.d"
REPO_FILES = {SOURCES_DIR: (f"{SOURCES_DIR}/rocm.list", f"{SOURCES_DIR}/amdgpu.list"),
              YUM_DIR: (f"{YUM_DIR}/rocm.repo", f"{YUM_DIR}/amdgpu.repo")}
AMD_REPO = "repo.radeon.com"
_IMAGE = lazy_re.compile(r"\brocm/pytorch:[A-Za-z0-9_.-]+")
# python3 -c REWRITE MIRROR_JSON FILE...: rewrite AMD's URLs in apt source files to the mirror (idempotent);
# MIRROR_JSON pairs an origin host with its mirror URL
REWRITE = """\
import json, os, sys
pairs = [(scheme + "://" + host, url) for host, url in json.loads(sys.argv[1]) for scheme in ("https", "http")]
auth = os.environ.get("ROCM_WIZARD_APT_AUTH")  # the mirror's login for apt (wizard.mirror.credentials)
if auth:
    os.makedirs("/etc/apt/auth.conf.d", exist_ok=True)
    tmp = "/etc/apt/auth.conf.d/.rocm-wizard-mirrors.conf.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out, open(auth) as given:
        out.write(given.read())
    os.replace(tmp, "/etc/apt/auth.conf.d/rocm-wizard-mirrors.conf")
for path in sys.argv[2:]:
    try:
        text = open(path).read()
    except FileNotFoundError:
        continue
    new = text
    for old, mirrored in pairs:
        new = new.replace(old, mirrored)
    if new != text:
        tmp = path + ".rocm-wizard.tmp"
        open(tmp, "w").write(new)
        os.replace(tmp, path)
        print(f"{path}: now from the mirror")"""
# exit 0 when none of the files names an upstream origin any more
REWRITTEN = """\
import json, os, sys
pairs = [(scheme + "://" + host, url) for host, url in json.loads(sys.argv[1]) for scheme in ("https", "http")]
if os.environ.get("ROCM_WIZARD_APT_AUTH") and not os.path.exists("/etc/apt/auth.conf.d/rocm-wizard-mirrors.conf"):
    sys.exit(1)
for path in sys.argv[2:]:
    try:
        text = open(path).read()
    except FileNotFoundError:
        continue
    if any(old in text for old, _ in pairs):
        sys.exit(1)"""


# sh -c KEY_IS sh KEYRING FPR: exit 0 only when KEYRING holds one key and FPR is its fingerprint
KEY_IS = ('got=$(gpg --show-keys --with-colons "$1" 2>/dev/null | '
          'awk -F: \'$1=="pub"{p=1;next} p&&$1=="fpr"{print $10;p=0}\'); '
          'if [ "$got" = "$2" ]; then echo "key $2: as given for the mirror"; else '
          'echo "$1 holds key(s) ${got:-none}, not the mirror key $2 that was given" >&2; exit 1; fi')


def _key_pin(step: StepPlan, a: Action, mirrors: MirrorConfig) -> Action | None:
    """After the Core SDK key goes into its keyring: the check that it is the mirror key given, if one was."""
    from urllib.parse import urlsplit

    from wizard.steps.core_sdk_install import KEYRING

    if step.kind != "core_sdk_install" or a.argv[:3] != ("sh", "-c", KEYRING):
        return None
    origin = urlsplit(str(step.param("key_url"))).hostname
    m = next((x for x in mirrors.mirrors if x.origin == origin), None)
    if m is None or m.key_fingerprint is None:
        return None
    keyring = a.argv[-1]
    return Action(("sh", "-c", KEY_IS, "sh", keyring, m.key_fingerprint),
                  f"the key in {keyring} is the one given for {origin}'s mirror ({m.key_fingerprint})", root=True)


def _text(s: str, mirrors: MirrorConfig) -> str:
    return _IMAGE.sub(lambda mo: mirrors.rewrite_image(mo.group(0)), mirrors.rewrite_text(s))


def _argv(argv: tuple[str, ...] | None, mirrors: MirrorConfig, key: str | None, amd_key: str) -> tuple[str, ...] | None:
    if argv is None:
        return None
    out = []
    for a in argv:
        if key is not None and a == amd_key:
            out.append(key)
        else:
            out.append(_text(a, mirrors))
    return tuple(out)


def _source_rewrite(mirrors: MirrorConfig, files: tuple[str, ...]) -> Action | None:
    import json

    m = next((x for x in mirrors.mirrors if x.origin == AMD_REPO), None)
    if m is None:
        return None
    from wizard.mirror.credentials import APT_AUTH, from_url, public_url

    pairs = json.dumps([[AMD_REPO, public_url(m.url)]])
    login = from_url(m.url, m.source) is not None  # apt's login goes to APT_AUTH, never into a source line
    return Action(("python3", "-c", REWRITE, pairs, *files), "point AMD's apt source lines at the mirror",
                  root=True, check=("python3", "-c", REWRITTEN, pairs, *files),
                  changes=(*files, APT_AUTH) if login else files)


def apply(plan: ResolvedPlan, mirrors: MirrorConfig) -> ResolvedPlan:
    """``plan`` with every URL through ``mirrors``; the plan itself when no mirror is in force."""
    if not mirrors.mirrors:
        return plan
    from wizard.steps.rocm_install import ROCM_KEY_FINGERPRINT

    amd = next((x for x in mirrors.mirrors if x.origin == AMD_REPO), None)
    key = amd.key_fingerprint if amd is not None else None
    steps: list[StepPlan] = []
    for step in plan.steps:
        actions: list[Action] = []
        for a in step.actions:
            actions.append(replace(a, argv=_argv(a.argv, mirrors, key, ROCM_KEY_FINGERPRINT) or a.argv,
                                   check=_argv(a.check, mirrors, key, ROCM_KEY_FINGERPRINT),
                                   undo=_argv(a.undo, mirrors, key, ROCM_KEY_FINGERPRINT),
                                   description=_text(a.description, mirrors)))
            pin = _key_pin(step, a, mirrors)
            if pin is not None:
                actions.append(pin)
            for d, files in REPO_FILES.items():
                if d in a.changes:  # amdgpu-install's package just wrote AMD's repository lines
                    rewrite = _source_rewrite(mirrors, files)
                    if rewrite is not None:
                        actions.append(rewrite)
        check = step.check
        if check is not None:
            check = replace(check, argv=_argv(check.argv, mirrors, key, ROCM_KEY_FINGERPRINT) or check.argv,
                            description=_text(check.description, mirrors))
        steps.append(replace(step, actions=tuple(actions), title=_text(step.title, mirrors), check=check,
                             params=tuple((k, _text(v, mirrors) if isinstance(v, str) else v) for k, v in step.params),
                             notes=tuple(_text(n, mirrors) for n in step.notes)))
    target = tuple((k, _text(v, mirrors) if isinstance(v, str) else v) for k, v in plan.target)
    return replace(plan, steps=tuple(steps), target=(*target, (MIRRORS_KEY, _in_force(mirrors))))


MIRRORS_KEY = "mirrors"  # the plan's target entry that records the mirrors it was resolved with (no logins)
_INSECURE = " (insecure: plain http/file, no key, as mirrors.toml says)"
_KEY = lazy_re.compile(r" \(key ([0-9A-F]+)\)")


def _in_force(mirrors: MirrorConfig) -> str:
    from wizard.mirror.credentials import public_url

    return "; ".join(f"{m.origin} -> {public_url(m.url)}" + (f" (key {m.key_fingerprint})" if m.key_fingerprint else "")
                     + (_INSECURE if m.insecure else "") for m in mirrors.origins_in_force())


def plan_mirrors(plan: ResolvedPlan) -> MirrorConfig:
    """The mirrors ``plan`` was resolved with, read back from its own record (its ``mirrors`` target entry): what
    a rollback fetches through, so it reaches what the run reached, on a host whose own configuration names no
    mirror (a fleet host, whose plan the controller resolved). No mirror: an empty configuration."""
    from wizard.mirror.config import Mirror

    text = dict(plan.target).get(MIRRORS_KEY)
    if not isinstance(text, str) or not text:
        return MirrorConfig()
    out: list[Mirror] = []
    for entry in text.split("; "):
        origin, sep, rest = entry.partition(" -> ")
        url = rest.split(" (", 1)[0]
        if sep and origin and url:
            key = _KEY.search(rest)
            out.append(Mirror(origin, url, "the plan's record", key.group(1) if key else None,
                              insecure=_INSECURE in rest))
    return MirrorConfig(tuple(out))


def through(a: Action, mirrors: MirrorConfig) -> Action:
    """One action with every URL through ``mirrors`` (a rollback's undo actions, made after the plan was resolved)."""
    if not mirrors.mirrors:
        return a
    return replace(a, argv=tuple(_text(x, mirrors) for x in a.argv),
                   check=tuple(_text(x, mirrors) for x in a.check) if a.check is not None else None,
                   description=_text(a.description, mirrors))
