"""The tray icon: the pystray app, its per-OS rules and the pure menu model."""
