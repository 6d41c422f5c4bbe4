"""Ansible connection to a rocm-wizard rehearsal machine (``rocm-wizard --sandbox DIR --profile NAME``).

Real Ansible running its real modules, with the sandbox as the remote host: every command Ansible
sends (its ``/bin/sh -c`` lines, the module runs, ``become`` through sudo) runs under the sandbox's
own ``sh`` stand-in with the sandbox's environment (PATH holds only its stand-in programs; paths
under /etc, /opt, /var, /home, /proc ... are the sandbox's), and files go to and come from inside
the sandbox's root. The modules run with the interpreter the inventory names
(``ansible_python_interpreter``: the controller's Python that has the wizard, the one the stand-ins
use), entered through a launcher inside the sandbox (``.sandbox/ansible/python``), since the sandbox's shell
refuses a path outside it. A program named by absolute path (a venv's ``bin/python``) is the sandbox's: each command runs
in a private mount namespace (``unshare --mount``, so host root is needed) with the sandbox's /home
and /opt bound over the host's; nothing propagates back and the namespace ends with the command. A command naming a program of the host by absolute path (``/sbin/shutdown``) is refused, so
nothing outside the sandbox runs; ``ansible.builtin.reboot`` therefore needs ``reboot_command``
(the exported playbooks take it from ``rocm_wizard_reboot_command``, which wizard.fleet sets to the
sandbox's reboot stand-in).

Only what runs as a command acts on the sandbox: a module that edits files itself (lineinfile,
copy, file) would act on the host's paths, so the exported playbooks run nothing but
``ansible.builtin.command`` and ``ansible.builtin.reboot`` on a host (their copies of results are
delegated to the controller). Needs host root (``unshare --mount``); used by the fleet tests.
"""

from __future__ import annotations

DOCUMENTATION = """
    name: rocm_wizard_sandbox
    short_description: run tasks inside a rocm-wizard sandbox machine
    description:
        - Runs every command of a task through the sandbox's stand-in shell, with its environment, and
          copies files into and out of its root.
    author: rocm-wizard
    options:
        sandbox_root:
            description: the sandbox's root directory (rocm-wizard --sandbox DIR)
            type: str
            required: true
            vars:
                - name: rocm_wizard_sandbox_root
        verify_python:
            description: a CPU torch interpreter that plays the venv's torch for the verify suite
            type: str
            default: ''
            vars:
                - name: rocm_wizard_verify_python
        python_interpreter:
            description: the controller's Python that runs the modules (entered through a launcher inside the
                sandbox, since the sandbox's shell refuses a path outside it)
            type: str
            default: ''
            vars:
                - name: ansible_python_interpreter
    extends_documentation_fragment:
        - connection_pipelining
"""

import json
import os
import re
import shlex
import shutil

from ansible.errors import AnsibleError
from ansible.plugins.connection.local import Connection as LocalConnection

HOST_PROGRAM = re.compile(r"(?<![\w./-])/(?:usr/)?(?:local/)?s?bin/([\w.+-]+)")
ALLOWED_HOST_PROGRAMS = {"sh"}
BOUND = ("home", "opt")


class Connection(LocalConnection):
    transport = "rocm_wizard_sandbox"
    has_pipelining = True

    def _root(self) -> str:
        root = self.get_option("sandbox_root")
        if not root or not os.path.isfile(os.path.join(root, ".sandbox", "machine.json")):
            raise AnsibleError(f"rocm_wizard_sandbox: {root!r} is not a rocm-wizard sandbox")
        return os.path.abspath(root)

    def _environ(self, root: str) -> dict[str, str]:
        with open(os.path.join(root, ".sandbox", "machine.json"), encoding="utf-8") as fh:
            cfg = json.load(fh)
        user = cfg.get("user", "user")
        env = {"PATH": os.path.join(root, ".sandbox", "bin"), "HOME": f"/home/{user}", "USER": user,
               "LOGNAME": user, "LANG": "C.UTF-8", "ROCM_WIZARD_SANDBOX_ROOT": root}
        env.update(cfg.get("environment", {}))
        verify = self.get_option("verify_python")
        if verify:
            env["ROCM_WIZARD_SANDBOX_VERIFY_PYTHON"] = verify
        return env

    def inside(self, path: str) -> str:
        root = self._root()
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return path
        return os.path.join(root, path.lstrip("/"))

    def _launcher(self, root: str) -> tuple[str, str] | None:
        """(the interpreter, a launcher of it inside the sandbox): Ansible names its module interpreter by
        its host path, which the sandbox's shell refuses; the launcher is a path inside the sandbox."""
        interp = self.get_option("python_interpreter")
        if not interp or not os.path.isabs(interp) or interp.startswith(root.rstrip("/") + "/"):
            return None
        launcher = os.path.join(root, ".sandbox", "ansible", "python")
        body = f"#!/bin/sh\nexec {shlex.quote(interp)} \"$@\"\n"
        try:
            with open(launcher, encoding="utf-8") as fh:
                same = fh.read() == body
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(launcher), exist_ok=True)
            with open(launcher, "w", encoding="utf-8") as fh:
                fh.write(body)
            os.chmod(launcher, 0o755)
        return interp, launcher

    def exec_command(self, cmd, in_data=None, sudoable=True):  # type: ignore[no-untyped-def]
        text = cmd if isinstance(cmd, str) else " ".join(cmd)
        launch = self._launcher(self._root())
        if launch is not None:
            text = re.sub(r"(?<![\w./-])" + re.escape(launch[0]) + r"(?![\w./-])", launch[1], text)
        host = sorted({m.group(0) for m in HOST_PROGRAM.finditer(text) if m.group(1) not in ALLOWED_HOST_PROGRAMS})
        if host:
            raise AnsibleError(f"rocm_wizard_sandbox: refused to run the host's {', '.join(host)} "
                               "(nothing outside the sandbox runs)")
        root = self._root()
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in self._environ(root).items())
        inner = f"exec env -i {env} {shlex.quote(os.path.join(root, '.sandbox', 'bin', 'sh'))} -c {shlex.quote(text)}"
        # a program named by absolute path (a venv's python) is the sandbox's: its /home and /opt are bound
        # over the host's in a private mount namespace that ends with the command
        binds = "".join(f"mount --bind {shlex.quote(os.path.join(root, d))} /{d} && "
                        for d in BOUND if os.path.isdir(os.path.join(root, d)))
        wrapped = f"exec unshare --mount --propagation private /bin/sh -c {shlex.quote(binds + inner)}"
        return super().exec_command(wrapped, in_data=in_data, sudoable=sudoable)

    def put_file(self, in_path, out_path):  # type: ignore[no-untyped-def]
        target = self.inside(out_path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        super().put_file(in_path, target)

    def fetch_file(self, in_path, out_path):  # type: ignore[no-untyped-def]
        source = self.inside(in_path)
        if not os.path.isfile(source):
            raise AnsibleError(f"rocm_wizard_sandbox: {in_path} does not exist on the sandbox machine")
        shutil.copyfile(source, out_path)
