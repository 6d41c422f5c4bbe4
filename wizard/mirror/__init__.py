"""Mirrors: site copies of AMD's repositories and of the wheel indexes, and the local rehearsal mirror.

* :mod:`wizard.mirror.config`: the user-facing model (``--mirror ORIGIN=URL``, ``mirrors.toml``):
  which origin is served from where, which signing key a mirror may use. Pure; the planner uses it.
* the local mirror built at test time from the knowledge base (never downloaded), for the real-root
  rehearsal: :mod:`~wizard.mirror.catalogue` (what is served, from the KB), :mod:`~wizard.mirror.debs`
  and :mod:`~wizard.mirror.apt_repo` (packages and a signed apt repository), :mod:`~wizard.mirror.wheels`
  and :mod:`~wizard.mirror.simple_index` (wheels and PEP 503/691 indexes), :mod:`~wizard.mirror.build`
  (the whole tree), :mod:`~wizard.mirror.server` (HTTP on 127.0.0.1), :mod:`~wizard.mirror.tools` (what
  building it needs on the host).

Importing this package imports nothing else, so the planner's use of the config stays cheap.
"""
