"""The words the model and the user read when a command does not run or is stopped.

In one light module so that the windows can match on them without importing the server's machinery.
The reasons a journal row keeps (`*_REASON`) are English; the log window and the CLI say them in
the user's language from what they are (`app.core.journal.reasons`), so each is named here once.
"""

PAUSED_MESSAGE = (
    "Host access is paused by the user in Cowork Terminal, so this command was not run. "
    "Ask the user to untick Pause host access in the Cowork Terminal icon's menu (or to run "
    "`cowork-terminal resume`), then try again."
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
# Why a command was not run: its row vanished from the activity log (a journal deleted under it).
ROW_LOST = "its record is missing from the activity log and could not be written again"
# What the model should do after a stop it did not ask for (said after the reason, not recorded).
STOP_NEXT_STEPS = {
    USER_STOP_REASON: "Do not run it again unless the user asks; ask them how to go on.",
    PAUSE_STOP_REASON: (
        "Commands are refused until the user resumes host access: tell the user, and run it again only "
        "after they resume, checking first what it already did."
    ),
}
MODEL_STOP_REASON = "stopped by the agent (command_stop)"
CANCEL_REASON = "cancelled by the client (call cancelled or client disconnected)"
SESSION_BUSY_MESSAGE = (
    "The shell session is still running an earlier command. Read its output with terminal_read_scrollback, "
    "answer a prompt with terminal_send_keys, or stop it with terminal_interrupt; or use execute_command."
)
# Why a row ended as it did (the journal's `reason`); {name} is a value filled in when it is written.
HOLD_EXPIRED_REASON = "the hold expired before it was confirmed"
WITHDRAWN_REASON = "withdrawn by the model before the user answered"
# "Before it ran", not "before the user answered": a Stop may come after the Allow (a review, 2026-12-05)
WITHDRAWN_MESSAGE = "The command was withdrawn with command_stop before it ran; it did not run."
HOLD_ENDED_MESSAGE = "The held command was withdrawn (terminal_cancel or command_stop) before it ran; it did not run."
# Two calls waiting for one hold would each run it at the user's one Allow (2026-12-05: a model that
# read the hold's id from the journal called terminal_confirm beside the job, and the command ran twice).
ALREADY_WAITING_MESSAGE = (
    "Another call is already waiting for the user's answer to this held command (its job, or an earlier "
    "terminal_confirm); that call runs it once, if allowed, and returns the result. Do not confirm it again: "
    "follow a job with command_wait."
)
# A model in a loop of `background: true` (a red team started 180 jobs; the tray then ran out of open files)
TOO_MANY_JOBS_MESSAGE = (
    "{count} commands this server started are still running or waiting, the most it runs at once. It did not "
    "run. Wait for one to end (command_wait) or stop one you no longer need (command_stop; command_list shows "
    "them), then run this command again."
)
CANCELLED_HOLD_MESSAGE = "The call was cancelled before the command ran, so it was withdrawn; it did not run."
APP_GONE_HOLD_REASON = "the Cowork Terminal app stopped before the user answered"
PAUSED_HOLD_REASON = "host access was paused before the user answered"
PAUSE_ENDED_HOLD_MESSAGE = (
    "Host access was paused after this command was held, so it was not run, even if the user had allowed it: "
    "a pause ends every held command. Run it again to ask the user anew."
)
DENIED_BY_REASON = "denied by {who}"
OTHER_COMMAND_REASON = "the approval was for another command"
# What a held command runs changed between the prompt and the start (core/commands/pins/).
FOLDER_GONE_REASON = "the folder {folder} could no longer be opened after the user was asked"
FOLDER_REPLACED_REASON = "the folder {folder} was replaced by another folder after the user was asked"
SCRIPT_CHANGED_REASON = "the script {script} changed after the user was asked"
ENV_CHANGED_REASON = "the environment changed after the user was asked"
# The tray refuses a sixth command of one server waiting for the user, and records it so.
HOLDS_FULL_REASON = "{count} commands from this server already wait for the user"
HOLDS_FULL_MESSAGE = (
    "Not run: {reason}. Wait for one of them to be answered (command_wait) or withdraw one you no longer "
    "need (command_stop), then run this command again."
)
# The user tightened a setting (approval, protection) while the command was judged under the old one.
SETTINGS_CHANGED_MESSAGE = (
    "The user changed Cowork Terminal's settings while this command was being checked, so it was not run. "
    "Send it again: it will be checked under the new settings."
)
SESSION_BUSY_REASON = "the session was busy"
SESSION_MOVED_REASON = "the session is now in {here}, not where the command was checked"
SERVER_STOPPED_REASON = "the server stopped while it ran"
SESSION_ENDED_REASON = "the shell session ended"
KEYS_NOT_READ_REASON = "the program did not read"
SERVER_EXITED_REASON = "the server exited while it ran or waited"
SERVER_CRASHED_REASON = "the server running it stopped unexpectedly"
DATA_MOVED_REASON = "the app moved its data folder while this ran"
TIMED_OUT_REASON = "timed out"
KILLED_BY_REASON = "killed by {signal}"
BASH_NOT_STARTED_REASON = "bash could not be started ({bash}): {error}"
# After what a held command does, when it would change the OS container's protected set (issue 21).
PROTECTED_WRITE_PLAIN = "Changes a file Cowork Terminal protects; if you allow it, it runs without that protection"
# Right after it: which ones it may then change ({names}: "~/.bashrc, ~/.claude"), all it names.
MAKES_WRITABLE_PLAIN = "Once allowed, it can change {names}"
# After what a held command does, where no container keeps the protected set read-only (Windows, no
# bwrap): it names one of its members, and only a person may let it change one.
PROTECTED_UNGUARDED_PLAIN = "Changes a file Cowork Terminal guards: its own, Claude's settings or start-up files"
# After what a held command does, when the model's `env` sets a variable that picks programs or
# settings (PATH, HOME, XDG_*, GIT_*: pins.SHOWN_ENV): a planted `ls` earlier on PATH ran unasked.
ENV_CHOSEN_PLAIN = "Runs with environment settings the agent chose, which decide which programs it runs"
# After what a held session command does, when it changes what the shell does with later commands,
# which are judged alone: where it finds programs, code it runs by itself (a trap, a function).
SESSION_STATE_PLAIN = (
    "Changes how the shell session runs later commands (where it finds programs, or code it runs by itself)"
)
# After what a held command does, when it runs a program that gains privileges (sudo): none works inside.
PRIVILEGED_PLAIN = (
    "Needs administrator rights, which do not work inside Cowork Terminal's protection; "
    "if you allow it, it runs without that protection"
)
# For the model, after a command a person let out of the container, when PATH found one of its programs
# only in a folder commands can change (running.let_out_environment): that copy was not used.
LET_OUT_PATH_NOTE = (
    "This command ran outside Cowork Terminal's protection, as the user allowed, so it looked for programs "
    "only in folders the agent's commands cannot change; {programs} is not in those, only in {folders}, "
    "where any command could have put it, so it was not run. If it is the program you meant, call "
    "execute_command again naming it by its full path, so that the user sees which program runs."
)
# Where a protected file stopped a command and the user chose never to be asked: Allow cannot come.
NEVER_ASKED_PROTECTED = (
    "Approvals are off in Cowork Terminal (the user chose Never ask), so no command can be allowed to change "
    "it: ask the user to make this change themselves, or to turn approvals back on in Cowork Terminal's menu "
    "(Ask before running) and then call execute_command again with the path written out plainly."
)
# Where no container guards the protected set and the command names a member of it, in Never ask mode:
# a container would have made the write fail; here it is not run.
NEVER_ASKED_UNGUARDED = (
    "Not run: this command changes a file Cowork Terminal guards (its own files, Claude's settings or "
    f"start-up files), and nothing else protects them on this computer. {NEVER_ASKED_PROTECTED}"
)
# A command that asked for a message bus (D-Bus), which is hidden inside the container (container.hidden_args).
BUS_HIDDEN_NOTE = (
    "No message bus (D-Bus) is reachable inside Cowork Terminal's container: through the system bus any "
    "program could ask the system to power off, mount disks or change the network without the user's "
    "click. Commands that need it (systemctl, nmcli, timedatectl, loginctl, busctl...) cannot work here; "
    "do not retry them another way. Tell the user what you wanted to run, so that they can run it in their "
    "own terminal."
)
UNPROTECTED_REASON = "ran without the container: {why}"  # container.py: bwrap missing or failing
# The {why} of UNPROTECTED_REASON for each container state (container.py's states), in English.
UNPROTECTED_WHY = {
    "on": "commands run in the bwrap container",
    "missing": "bwrap is not installed (apt install bubblewrap)",
    "userns": "the kernel refuses unprivileged user namespaces",
    "apparmor": "AppArmor restricts unprivileged user namespaces (Ubuntu); see the README",
    "failed": "bwrap failed",
    "unsupported": "no file protection on this OS",
    "off": "the user switched it off in the app",
    "privileged": "the user allowed a command that gains privileges (sudo, pkexec), which cannot work inside it",
    # macOS (container.SEATBELT): files only
    "seatbelt": "macOS's sandbox-exec keeps the protected files read-only; the command's processes are not contained",
    "seatbelt-failed": "sandbox-exec failed its check, so the protected files are not kept read-only",
}
# English for the model: a command refused because the container could not be checked in time.
CONTAINER_SLOW_MESSAGE = (
    "This command did not run: Cowork Terminal could not start its protective container in time (the "
    "computer is busy). Nothing ran. Try again in a moment; if it keeps happening, ask the user to look "
    "at what is loading the computer."
)
KEYS_HELD_REASON = (
    "These keys would need the user's approval ({reasons}); typed input "
    "cannot be held, so none were sent. Stop the waiting program with terminal_interrupt, then run the "
    "step as a command with terminal_run (the user is asked there), or ask the user to type it themselves."
)
# Who answered a held command (the journal's `decided_by`, and the {who} of DENIED_BY_REASON).
PROMPT_DECIDED_BY = "user (approval prompt)"
LOG_WINDOW_DECIDED_BY = "user (activity log)"
CONFIRMED_DECIDED_BY = "user (confirmed)"
REQUEST_DECIDED_BY = "a request (command line or a window)"
# A person's click: only such an Allow lets a command out of the container (never a rule's).
PERSON_DECIDERS = frozenset({PROMPT_DECIDED_BY, LOG_WINDOW_DECIDED_BY, CONFIRMED_DECIDED_BY})
UNKNOWN_DECIDER = "the user"
DENIED_MESSAGE = (
    "The user denied this command in Cowork Terminal, so it did not run. Do not run it or a variant of it "
    "again; ask the user what they want instead."
)
HELD_MESSAGE = (
    "This command needs the user's approval in Cowork Terminal. What it does: {reasons}. "
    "The user is asked, and they have not answered yet. "
    "It is held as confirmation_id {confirmation_id} until the user answers: they have {minutes} minutes from "
    "when it is shown to them. Tell the user it is waiting for "
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
    terse = [reason for reason in reasons if reason.casefold() not in said.casefold()]  # not twice
    return f"{said} ({'; '.join(terse)})" if plain and terse else said


# A call whose result does not fit one message between the tray and its server (channel.wire's
# MAX_FRAME_BYTES, said as {limit}): the model reads this instead, with what to ask for (TOO_BIG_ASK,
# by tool). Nothing is stopped by it.
CALL_RESULT_TOO_BIG = (
    "the result of this call was {size:,} bytes, more than Cowork Terminal can pass on ({limit} MiB), so it was "
    "not sent; nothing was stopped{job}. Ask for less: {ask}"
)
TOO_BIG_JOB = ": the command is job {job} ({status})"
TOO_BIG_ASK_OUTPUT = (
    "read its output in parts with command_output (jobId, offset and a `limit` of at most 100000), or ask the "
    "user to choose a smaller output budget in the Cowork Terminal menu."
)
TOO_BIG_ASK = {
    "execute_command": TOO_BIG_ASK_OUTPUT,
    "execute_read_only_command": TOO_BIG_ASK_OUTPUT,
    "command_wait": TOO_BIG_ASK_OUTPUT,
    "command_stop": TOO_BIG_ASK_OUTPUT,
    "command_output": "call command_output again with a smaller `limit` (or `tail`).",
    "command_list": "end some of your jobs or wait for them (command_stop, command_wait), then call it again.",
    "terminal_read_scrollback": "call terminal_read_scrollback again with fewer `lines`.",
    "terminal_run": "read what the session printed with terminal_read_scrollback and fewer `lines`.",
    "terminal_send_keys": "read what the session printed with terminal_read_scrollback and fewer `lines`.",
}
TOO_BIG_ASK_ANY = "call the tool again asking for less."

# A Stop asked for by another agent (its command_stop, through its own server), not by the person: who
# asked (a StopPush's `by`, the journal's stop_requested_by, a held command's decided_by), what the
# owner's row keeps, and what its model reads. Never said to be the user's (a red team, 2026-12-06).
AGENT_STOP_BY = "an agent (command_stop, or cowork-terminal stop run by a command)"
AGENT_STOP_REASON = (
    "stopped at the request of an agent (command_stop from another server, or `cowork-terminal stop` run by "
    "a command), not by the user"
)
STOP_NEXT_STEPS[AGENT_STOP_REASON] = (
    "Check what it already did, then run it again if it is still needed; if your commands keep being stopped "
    "this way, tell the user."
)
AGENT_WITHDREW_REASON = (
    "withdrawn at the request of an agent (command_stop from another server, or `cowork-terminal stop` run by "
    "a command) before the user answered"
)
AGENT_WITHDREW_MESSAGE = (
    "An agent withdrew this held command (with command_stop from another server, or `cowork-terminal stop` run "
    "by a command) before the user answered, so it did not run; the user did not deny it. Run it again if it is "
    "still needed (the user is asked anew); if this keeps happening, tell the user."
)
