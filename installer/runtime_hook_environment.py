"""Our runtime hook, listed first in the spec so it runs before PyInstaller's own: it remembers the
environment the process was started with, before the GTK, GLib and Tk hooks change it for the
bundle. The app keeps those changes away from the commands it runs (app/core/execution/bundle_runtime.py)."""

import os

from app.core.execution import bundle_runtime

bundle_runtime.remember_launch_environment(os.environ)
