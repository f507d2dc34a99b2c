"""A server's brain: the command service, its authority (the tray or itself) and the tray link."""
