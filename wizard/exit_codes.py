"""Exit codes of every rocm-wizard command (documented in README.md)."""

OK = 0  # success; for verify: every check that ran passed
FAILURE = 1  # a step, a check or the command failed
USAGE = 2  # bad usage, unknown plan, malformed plan file, unreadable input
REBOOT_PENDING = 3  # the run stopped for a reboot; `rocm-wizard resume` continues it
LOCKED = 4  # another rocm-wizard run holds the lock
REFUSED = 5  # the plan is refused for this machine (each reason on stderr)
