"""The words the model and the user read when a command does not run or is stopped.

In one light module so that the windows can match on them without importing the server's machinery.
"""

PAUSED_MESSAGE = (
    "Host access is paused by the user in Cowork Terminal, so this command was not run. "
    "Ask the user to resume host access (tray icon or `cowork-terminal resume`), then try again."
)
NO_TRAY_MESSAGE = (
    "Cowork Terminal is not running on this computer, so host commands are refused: the user must "
    "be able to see and stop what runs. Ask the user to start the Cowork Terminal app, then try again."
)
PAUSE_STOP_REASON = "stopped because the user paused host access"
APP_GONE_STOP_REASON = (
    "stopped because the Cowork Terminal app stopped: nobody could watch it any more. Ask the user to start "
    "Cowork Terminal again, then run it again if it is still needed"
)
USER_STOP_REASON = "stopped by the user"
CANCEL_REASON = "cancelled by the client (call cancelled or client disconnected)"
SESSION_BUSY_MESSAGE = (
    "The shell session is still running an earlier command. Read its output with terminal_read_scrollback, "
    "answer a prompt with terminal_send_keys, or stop it with terminal_interrupt; or use execute_command."
)
DENIED_MESSAGE = "The user denied this command in Cowork Terminal, so it did not run. Do not retry it; ask the user."
HELD_MESSAGE = (
    "This command needs the user's approval in Cowork Terminal. What it does: {reasons}. "
    "The user is asked, and they have not answered yet. "
    "It is held as confirmation_id {confirmation_id} for {minutes} minutes. Tell the user it is waiting for "
    "them, then call terminal_confirm with that confirmation_id (it waits for their answer), or "
    "terminal_cancel to withdraw it."
)
NO_APPROVER_MESSAGE = (
    "This command needs the user's approval ({reasons}), but the Cowork Terminal app is not running, so "
    "nobody can approve it and it was not run. Ask the user to start Cowork Terminal, or to run it themselves."
)


def held_reason(plain: tuple[str, ...], reasons: tuple[str, ...]) -> str:
    """Why a command is held, in the words the user reads in the approval window and the model in
    HELD_MESSAGE: what it does in plain words, then the classifier's terse reasons for the log.
    "Deletes the folder /home/ana/project/build and everything in it (rm -r: recursive removal)"."""
    if not plain and not reasons:
        return "it needs the user's approval"
    said = "; ".join(plain) if plain else "; ".join(reasons)
    return f"{said} ({'; '.join(reasons)})" if plain and reasons else said
