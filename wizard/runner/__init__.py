"""Runs resolved plans: journal, lock, privileges, streaming shell, reboot and resume.

``shell`` is the only module of the project that imports ``sh``. Nothing here imports a UI:
progress leaves the engine as plain event records (``wizard.runner.events``) through a callback.
"""
