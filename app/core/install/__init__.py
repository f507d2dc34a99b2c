"""This copy on this machine: start at login, menu entry, how it was installed, uninstall."""
