"""Cowork Terminal: a host terminal for AI agents, with the person at the keyboard in charge."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cowork-terminal")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
