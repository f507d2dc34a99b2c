"""Every key of the journal's settings is named once, in app/core/settings.py, with its default.

Read from the source with `ast`: a key spelled as text anywhere else, or defined as a new
`*_SETTING = "..."` constant, is a second home for it (issue 20 found keys defined in 8 modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

from app.core import settings
from tests.python_source import parse_file

APP = Path(__file__).resolve().parent.parent / "app"
SETTINGS_FILE = APP / "core" / "settings.py"
SETTING_CALLS = ("get_setting", "set_setting", "_stored_setting", "_store_setting")


def _findings(path: Path) -> tuple[list[str], list[str]]:
    """(settings read or written by a literal key this module spells, `*_SETTING = "..."` constants)."""
    tree = parse_file(path)
    literal_keys, constants = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SETTING_CALLS:
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                literal_keys.append(f"{path.name}:{node.lineno} {node.args[0].value}")
        elif isinstance(node, ast.Assign) and isinstance(getattr(node.value, "value", None), str):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.endswith("_SETTING"):
                    constants.append(f"{path.name}:{node.lineno} {target.id} = {ast.literal_eval(node.value)!r}")
    return literal_keys, constants


def test_every_key_has_a_default_and_a_name() -> None:
    named = {value for name, value in vars(settings).items() if name.isupper() and isinstance(value, str)}
    assert set(settings.DEFAULTS) <= named
    assert settings.DEFAULTS[settings.APPROVAL_MODE] == "destructive"


def test_no_module_defines_a_settings_key_of_its_own() -> None:
    constants = [c for path in APP.rglob("*.py") if path != SETTINGS_FILE for c in _findings(path)[1]]
    assert constants == []


def test_a_key_spelled_as_text_is_one_that_settings_declares() -> None:
    spelled = [k for path in APP.rglob("*.py") for k in _findings(path)[0]]
    unknown = [k for k in spelled if k.rsplit(" ", 1)[1] not in settings.DEFAULTS]
    assert unknown == []


def test_the_reader_finds_a_key_defined_and_spelled_elsewhere(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text('NEW_SETTING = "new.key"\n\ndef f(journal):\n    return journal.get_setting("new.key")\n')
    assert _findings(module) == (["module.py:4 new.key"], ["module.py:1 NEW_SETTING = 'new.key'"])
