"""The one exception type the app raises on purpose; the CLI turns it into a message and an exit code."""


class CoworkError(Exception):
    """A failure the user (or the model) can understand and act on; its text is the whole message."""

    exit_code = 1


class UsageError(CoworkError):
    """Bad input from the caller: a bad argument, a missing file, an invalid config."""

    exit_code = 2
