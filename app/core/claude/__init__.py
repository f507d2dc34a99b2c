"""Claude's apps: where each keeps its config, their names, our entry in their config files."""
