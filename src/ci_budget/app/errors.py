"""The one error a use case raises for bad usage or input."""

from __future__ import annotations


class AppError(Exception):
    """A usage or input error: printed as one line, exit status 2 unless told otherwise."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status
