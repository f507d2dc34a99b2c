"""The frozen app's entry script: the `cowork-terminal` command, one executable for every role.

PyInstaller runs this file as `__main__`; the subcommand (`tray` by default, `serve`, `log-window`,
`connect`...) selects what the process does, exactly as with `python -m app`.
"""

import multiprocessing
import os
import sys


def _give_missing_streams_a_sink() -> None:
    """Point standard streams that do not exist at the null device.

    A windowed Windows build started from Explorer, the Start menu or the Run key has no standard
    handles, so PyInstaller (like pythonw) leaves sys.stdin/stdout/stderr as None, and library code
    that writes to them blindly (faulthandler, a stray print in a dependency) would crash the tray.
    When Claude starts `serve` it passes pipes, the streams exist, and this changes nothing.
    """
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115 - lives as long as the process


if __name__ == "__main__":
    # Nothing of ours uses multiprocessing today; this keeps a dependency that does from starting
    # a second copy of the app's main() in the child (it must be the first call in the frozen main).
    multiprocessing.freeze_support()
    _give_missing_streams_a_sink()

    from app.core.execution import bundle_runtime

    # Every runtime hook has run: note what they changed (never passed on to commands) and make
    # their temporary files vanish with this process, however it ends.
    bundle_runtime.settle()

    from app.cli.main import main

    sys.exit(main())
