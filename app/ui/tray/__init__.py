"""The tray icon: the app and its threads, the menu's actions, its windows, Claude watching, the pure menu model."""
