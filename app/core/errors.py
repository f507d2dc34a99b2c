"""The one exception type the app raises on purpose; the CLI turns it into a message and an exit code."""


class CoworkError(Exception):
    """A failure the user (or the model) can understand and act on; its text is the whole message."""

    exit_code = 1

    def for_person(self) -> str:
        """What a person reads, in their language. Most errors are raised with words already
        translated; those whose text the model reads too (English) say it again here."""
        return str(self)


class UsageError(CoworkError):
    """Bad input from the caller: a bad argument, a missing file, an invalid config."""

    exit_code = 2
