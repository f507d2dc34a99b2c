"""The channel between the tray (the user's authority) and everything else: servers, the CLI.

What tightens control may come from anywhere; what loosens it takes effect only from a click in
the tray's own UI. Servers bound to a tray take pause, Stop, decisions, approval mode and tools
only from their connection to it, never from a file a command could write.
"""
