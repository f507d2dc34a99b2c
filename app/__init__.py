"""Cowork Terminal: a host terminal for AI agents, with the person at the keyboard in charge."""

# The one place the version is written: pyproject.toml reads it from here. A constant, because
# importlib.metadata costs tens of milliseconds at every `serve` start.
__version__ = "0.1.0"
