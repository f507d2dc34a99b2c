"""The menu model (menu.py) turned into pystray items, rebuilt from the current state each time it is read."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from app.ui.tray import menu
from app.ui.tray.menu import MenuEntry


class PystrayMenu:
    """Builds pystray menus whose texts, checks and enabled flags are callables over `entries()`."""

    def __init__(
        self, pystray: ModuleType, entries: Callable[[], list[MenuEntry]], click: Callable[[str], None]
    ) -> None:
        self._pystray = pystray
        self._entries = entries
        self._click = click
        self._drawn: dict[str, bool] = {}  # each check as the backend last drew it (drawn_check)

    def menu(self) -> Any:
        """A pystray menu whose items are rebuilt from the current state whenever it is read."""
        return self._pystray.Menu(self._items)

    def _current(self, key: str, fallback: MenuEntry) -> MenuEntry:
        return menu.find_entry(self._entries(), key) or fallback

    def _items(self) -> list[Any]:
        return [self._item(entry) for entry in self._entries()]

    def _item(self, entry: MenuEntry) -> Any:
        pystray = self._pystray
        if entry.separator:
            return pystray.Menu.SEPARATOR
        key = entry.key

        # Callables, so an item shows the newest state even where a backend keeps built items.
        def text(_item: Any) -> str:
            return self._current(key, entry).text

        def enabled(_item: Any) -> bool:
            return self._current(key, entry).enabled

        def checked(_item: Any) -> bool:
            value = bool(self._current(key, entry).checked)
            self._drawn[key] = value
            return value

        def clicked(_icon: Any, _item: Any) -> None:
            self._click(key)

        action: Any = clicked
        if entry.submenu is not None:
            action = pystray.Menu(*[self._item(sub) for sub in entry.submenu])
        item = pystray.MenuItem(
            text,
            action,
            checked=checked if entry.checked is not None else None,
            default=entry.default,
            enabled=enabled,
        )
        item.cowork_key = key
        return item

    def drawn_check(self, key: str) -> bool | None:
        """The check of `key` as the backend last drew it (None: never drawn). A switch's click means
        what the person saw: a pause that landed while the menu was open must not turn their click on
        "Pause host access" into a resume (a review, 2026-12-05)."""
        return self._drawn.get(key)


def find_item(items: Any, key: str) -> Any:
    """The pystray item for `key` among `items` and their submenus, or None."""
    for item in items:
        if getattr(item, "cowork_key", None) == key:
            return item
        if item.submenu is not None:
            found = find_item(item.submenu.items, key)
            if found is not None:
                return found
    return None
