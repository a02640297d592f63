"""The engine's errors: an invalid option (:class:`ConfigError`) and what a failed cycle reports.

The failure hook (``onObservationEnd`` / ``onReflectionEnd``) receives the exception object in
``error``, as the reference passes an ``Error``; the ``data-om-*-failed`` part carries its message
in ``error`` (a string, as documented) and its class name in ``errorType``.
"""

from __future__ import annotations


class ObserverError(RuntimeError):
    """The Observer could not produce usable observations."""


class DegenerateObserverOutputError(ObserverError):
    """The Observer's reply was a repetition loop on every attempt; nothing was committed."""


class EmptyObserverOutputError(ObserverError):
    """The Observer's reply held no observation text on every attempt; nothing was committed."""


def unusable_output_error(degenerate: bool, message: str) -> ObserverError:
    """The error for an Observer reply that could not be used: degenerate or empty."""
    return DegenerateObserverOutputError(message) if degenerate else EmptyObserverOutputError(message)


def error_fields(error: BaseException) -> dict[str, str]:
    """The ``error`` / ``errorType`` fields of a failed data part."""
    return {"error": str(error), "errorType": type(error).__name__}


class ConfigError(ValueError):
    """An invalid option. ``option`` is its camelCase path; the message starts with it."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.detail = message
        super().__init__(f"{option}: {message}")

    def __reduce__(self) -> tuple[object, ...]:  # keeps the error picklable across processes
        return (type(self), (self.option, self.detail))


class ObservationalMemoryError(RuntimeError):
    """A misuse of the engine (e.g. a missing thread id)."""
