"""The tray's brain: the hub that decides, holds and records, its settings state, the supervisor."""
