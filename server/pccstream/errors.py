"""Errors that the CLI turns into one clear line and a non-zero exit."""


class UserError(Exception):
    """Bad input from a user: a flag, a file, a trace, a scenario.

    The message must name what is wrong and where (file and line when there is one).
    """


class ToolMissingError(UserError):
    """An external program the command needs (e.g. ffmpeg) is not installed."""


class RunError(Exception):
    """A run that started and failed (a browser, a server, a measurement), not bad input:
    the CLI prints the message and exits with status 1."""


class Interrupted(Exception):
    """SIGINT stopped a command; the message says what was finished and kept. Exit 130."""
