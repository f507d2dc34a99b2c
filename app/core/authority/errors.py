"""The hub's one domain error: a request it answers with an error message (the peer's problem)."""

from __future__ import annotations


class RequestError(Exception):
    """A request the hub answers with an error message (the peer's problem, not the hub's)."""
