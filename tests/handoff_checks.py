"""The check the hand-off tests share: a command held as starting a program outside Cowork
Terminal's watch."""

from __future__ import annotations

from app.core.classifier import Classification, Danger, Tier, classify


def held_outside(command: str, cwd: str | None, *, deciding: bool = False) -> Classification:
    """Held (destructive), with a finding that it starts a program outside the watch; `deciding`:
    that is the command's danger, what the person reads first. The result, for what a test adds."""
    result = classify(command, cwd=cwd)
    assert result.tier is Tier.DESTRUCTIVE, (command, result)
    if deciding:
        assert result.danger is Danger.OUTSIDE_WATCH, (command, result)
    else:
        assert any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), (command, result)
    return result
