"""The one error type an import raises for a problem the user can fix."""


class DatasetFileError(Exception):
    """A one-line, user-facing reason why a file cannot be imported (shown verbatim)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
