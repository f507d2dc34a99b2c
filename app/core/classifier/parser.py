"""The tree-sitter-bash parser, loaded on first use (importing this module does not import tree_sitter)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser

_local = threading.local()


def _parser() -> Parser:
    """One parser per thread (a tree-sitter Parser is not safe to share); the import waits until needed."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser
