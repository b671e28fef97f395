"""What every command shares: exit codes and the one-line error."""

from __future__ import annotations

#: Bad usage or inputs: one line on stderr, nothing done.
EXIT_USAGE = 2
#: The crawl ran but its data could not all be written (what was committed before stays readable).
EXIT_DATASET = 3


class CliError(Exception):
    """One line for stderr; exit code 2."""


def fail(message: str) -> CliError:
    return CliError(" ".join(str(message).split()))
