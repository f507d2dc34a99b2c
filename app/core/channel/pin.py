"""What a held command runs, pinned when the user is asked, and the digest of what the user saw.

A server runs a held command only if the digest the tray pushes with the user's Allow matches its
own copy: the command, the folder's identity, the scripts' content and the environment's values.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from app.core.channel.values import BadValue, fields_of, text, whole

MAX_PIN_SCRIPTS = 64
MAX_ENV_SHOWN = 256


@dataclass(frozen=True)
class Pin:
    """What a held command runs, fixed when the user is asked: the real folder and its identity, the
    content of each script it runs by path, and its environment (every value in a digest; the values
    that change which program runs, shown to the user)."""

    folder: str  # the resolved folder, where the command starts
    folder_id: tuple[int, int]  # (st_dev, st_ino) when the user was asked
    scripts: tuple[tuple[str, str], ...] = ()  # (absolute path, sha256 or "absent")
    env_digest: str = ""
    env_shown: tuple[tuple[str, str], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "folder_id": list(self.folder_id),
            "scripts": [list(s) for s in self.scripts],
            "env_digest": self.env_digest,
            "env_shown": [list(e) for e in self.env_shown],
        }

    @classmethod
    def from_wire(cls, data: object) -> Pin:
        fields = fields_of(data, "pin")
        folder_id = fields.get("folder_id")
        if not isinstance(folder_id, list) or len(folder_id) != 2:
            raise BadValue("pin.folder_id must be [device, inode]")
        return cls(
            folder=text(fields.get("folder"), "pin.folder"),
            folder_id=(whole(folder_id[0], "device", 0, 2**64), whole(folder_id[1], "inode", 0, 2**64)),
            scripts=_pairs(fields.get("scripts"), "pin.scripts", MAX_PIN_SCRIPTS),
            env_digest=text(fields.get("env_digest", ""), "pin.env_digest"),
            env_shown=_pairs(fields.get("env_shown"), "pin.env_shown", MAX_ENV_SHOWN),
        )


def _pairs(value: object, name: str, limit: int) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > limit:
        raise BadValue(f"{name} must be a list of at most {limit} pairs")
    pairs = []
    for item in value:
        if not isinstance(item, list) or len(item) != 2:
            raise BadValue(f"{name} must hold [text, text] pairs")
        pairs.append((text(item[0], name), text(item[1], name)))
    return tuple(pairs)


def command_digest(
    command: str, cwd: str | None, env_keys: list[str], pin: Pin | None = None, hold_id: str | None = None
) -> str:
    """What the user saw and allowed; the server runs a held command only if its own copy matches.
    With a pin it covers the folder's identity, the scripts' content and the environment's values;
    with the hold's confirmation id, that hold alone (a review, 2026-12-05: an Allow kept for a command
    id answered a later hold of the same command that reused the id after the history was cleared)."""
    pinned = None if pin is None else pin.to_wire()
    material = json.dumps([command, cwd, sorted(env_keys), pinned, hold_id], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
