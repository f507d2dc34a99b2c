"""The container's decisions as pure functions, with each platform's values (issue 21)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from app.core.execution import container, seatbelt
from app.core.execution.container import Container, ProtectedSet
from app.core.execution.executor import spawn_options

HOME = "/home/ann"
# Protected where present, guarded where missing, never made (clutter, and a bind each container pays).
RARE_FOLDERS = (
    "/home/ann/.config/fish",
    "/home/ann/.config/nushell",
    "/home/ann/.config/xonsh",
    "/home/ann/.config/elvish",
    "/home/ann/.config/oils",
    "/home/ann/.config/ion",
    "/home/ann/.local/share/nushell",
    "/home/ann/.local/share/fish",
    "/home/ann/.local/share/plasma",
    "/home/ann/.local/share/kwin",
    "/home/ann/.config/pipewire",  # context.exec: a program PipeWire starts
    "/home/ann/.config/wireplumber",
    "/home/ann/.local/share/wireplumber",
    "/home/ann/.config/environment.d",
    "/home/ann/.config/user-tmpfiles.d",  # systemd-tmpfiles' lines, run as the user manager starts
    "/home/ann/.local/share/user-tmpfiles.d",
    "/home/ann/.config/autostart-scripts",  # Plasma 5's scripts at login
    "/home/ann/.local/share/systemd",  # user units and drop-ins there too (systemd.unit(5))
    "/home/ann/.fonts.conf.d",
    "/home/ann/.bashrc.d",
    "/home/ann/.local/share/bash-completion",  # completions/<program>, loaded at the first Tab after it
)


def linux_set(environ: dict[str, str] | None = None) -> ProtectedSet:
    return container.protected_set(
        "linux",
        environ or {},
        HOME,
        ["/home/ann/.local/share/cowork-terminal"],
        ["/home/ann/src/cowork/app", "/home/ann/src/cowork/.venv"],
        "/home/ann/.local/lib",
    )


def test_the_linux_set_holds_data_program_hooks_claude_autostart_bus_and_shell_files() -> None:
    protected = linux_set()
    for folder in (
        "/home/ann/.local/share/cowork-terminal",
        "/home/ann/src/cowork/app",
        "/home/ann/src/cowork/.venv",
        "/home/ann/.local/lib",
        "/home/ann/.claude",
        "/home/ann/.config/autostart",
        "/home/ann/.config/systemd",
        "/home/ann/.local/share/dbus-1",
    ):
        assert folder in protected.folders
    assert "/home/ann/.claude.json" in protected.files and "/home/ann/.bashrc" in protected.files
    assert "/home/ann/.local/share/applications/cowork-terminal.desktop" in protected.files, "our launcher"
    assert "/home/ann/.claude.json" not in protected.folders, "a lone file is bound as a file"
    assert "/home/ann/.xprofile" in protected.files and "/home/ann/.xsessionrc" in protected.files, "X's start-up"
    assert "/home/ann/.Xdefaults" in protected.files and "/home/ann/.Xresources" in protected.files, "Tk reads them"
    assert protected.if_present == (
        "/home/ann/.config/Claude",
        "/home/ann/.fonts",
        "/home/ann/.fontconfig",
        "/home/ann/.config/xsettingsd",  # X settings can name a GTK module, as gtk-3.0's settings do
        "/home/ann/.config/xfce4/xfconf",
        "/home/ann/.local/share/flatpak/exports",  # in XDG_DATA_DIRS: dbus-1 services, systemd units
        *RARE_FOLDERS,
        "/home/ann/.config/zsh",
    ), "never created: Claude's means it is here, the others would be clutter"
    assert not set(protected.if_present) & set(protected.folders)
    assert "/home/ann/.local/share/applications/cowork/terminal.desktop" in protected.files, "the same desktop id"
    zdotdir = container.protected_set("linux", {"ZDOTDIR": "/home/ann/zsh"}, HOME, [], [], None)
    assert zdotdir.if_present[-2:] == ("/home/ann/.config/zsh", "/home/ann/zsh"), "zsh's start-up files"
    for above in (HOME, HOME + "/.", HOME + "/../ann", "/home", "/"):  # the home folder, however spelt, or above
        assert container.protected_set("linux", {"ZDOTDIR": above}, HOME, [], [], None).if_present[-1].endswith("/zsh")
    followed = linux_set().follow_links
    assert "/home/ann/.config/zsh" in followed and "/home/ann/.config/Claude" in followed, "links in them too"
    assert "/home/ann/.local/lib" not in followed and "/home/ann/src/cowork/.venv" not in followed
    assert "/home/ann/.local/share/fonts" in protected.folders, "a font can draw the prompt's words as others"
    for folder in ("gtk-3.0", "dconf", "plasma-workspace", "fontconfig"):  # gtk-modules: loaded by the tray's menu
        assert f"/home/ann/.config/{folder}" in protected.folders
    assert "/home/ann/.local/share/glib-2.0" in protected.folders
    assert "/home/ann/.bash_aliases" in protected.files and "/home/ann/.fonts.conf" in protected.files
    for name in (".bash_completion", ".zlogout", ".inputrc", ".xinputrc", ".i18n", ".config/bash_completion",
                 ".config/locale.conf"):  # fmt: skip
        assert f"/home/ann/{name}" in protected.files, name
    assert "/home/ann/.cache/fontconfig" in protected.folders, "a forged cache names another font file"
    assert "/home/ann/.Xdefaults-vm" in container.protected_set("linux", {}, HOME, [], [], None, "vm").files


def test_the_linux_set_follows_xdg_folders_and_ignores_relative_ones() -> None:
    moved = linux_set({"XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "relative", "XDG_CACHE_HOME": "/cache"})
    assert "/cfg/autostart" in moved.folders and "/cache/fontconfig" in moved.folders
    assert moved.if_present[:6] == ("/cfg/Claude", "/home/ann/.fonts", "/home/ann/.fontconfig", "/cfg/xsettingsd",
                                    "/cfg/xfce4/xfconf", "/home/ann/.local/share/flatpak/exports")  # fmt: skip
    assert moved.if_present[-1] == "/cfg/zsh" and "/cfg/fish" in moved.if_present
    assert "/home/ann/.local/share/fish" in moved.if_present, "a relative XDG_DATA_HOME is not followed"
    assert "/cfg/gtk-3.0" in moved.folders
    assert "/home/ann/.local/share/dbus-1" in moved.folders
    assert "/data/applications/cowork-terminal.desktop" in linux_set({"XDG_DATA_HOME": "/data"}).files


def test_claude_codes_folder_is_protected_where_claude_config_dir_moved_it() -> None:
    """Its settings' hooks run commands outside the container when Claude Code next runs."""
    assert "/work/claude-alt" in linux_set({"CLAUDE_CONFIG_DIR": "/work/claude-alt"}).folders
    assert "/home/ann/.claude" in linux_set({"CLAUDE_CONFIG_DIR": "/work/claude-alt"}).folders, "still"
    assert linux_set({"CLAUDE_CONFIG_DIR": "claude-alt"}).folders == linux_set().folders, "relative: ignored"
    windows = container.protected_set("win32", {"CLAUDE_CONFIG_DIR": r"D:\claude"}, r"C:\Users\ann", [], [], None)
    assert r"D:\claude" in windows.folders


def test_macos_protects_claude_support_folder_and_launch_agents() -> None:
    protected = container.protected_set("darwin", {}, "/Users/ann", ["/Users/ann/Library/x"], [], None)
    assert protected.if_present == ("/Users/ann/Library/Application Support/Claude",)
    assert "/Users/ann/Library/LaunchAgents" in protected.folders
    assert "/Users/ann/.zshrc" in protected.files


def test_windows_protects_both_claude_configs_the_msix_one_too_and_the_startup_folder() -> None:
    environ = {"APPDATA": r"C:\Users\ann\AppData\Roaming", "LOCALAPPDATA": r"C:\Users\ann\AppData\Local"}
    protected = container.protected_set("win32", environ, r"C:\Users\ann", [], [], None)
    assert protected.if_present[:2] == (
        r"C:\Users\ann\AppData\Roaming\Claude",
        r"C:\Users\ann\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude",
    )
    assert r"C:\Users\ann\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup" in protected.folders
    assert protected.files[0] == r"C:\Users\ann\.claude.json"


def test_windows_protects_git_bashs_start_up_files_and_powershells_profiles_but_not_a_venv_it_runs() -> None:
    """A red team wrote ~/.bashrc and a PowerShell profile unasked on Windows (2026-12-04): Git Bash
    reads the one at every start, PowerShell the other."""
    protected = container.protected_set("win32", {}, r"C:\Users\ann", [], [r"C:\p\app", r"C:\p\.venv"], None)
    assert r"C:\Users\ann\.bashrc" in protected.files and r"C:\Users\ann\.bash_profile" in protected.files
    assert r"C:\Users\ann\Documents\PowerShell" in protected.if_present
    assert r"C:\Users\ann\Documents\WindowsPowerShell" in protected.if_present
    assert container.hold_members(protected).count(r"C:\p\.venv") == 0, "commands run its Python"


def test_a_venv_is_program_files_but_the_system_python_is_not() -> None:
    assert container.program_folders("/v/app", "/v/.venv", "/usr", "/home/ann") == ["/v/app", "/v/.venv"]
    assert container.program_folders("/usr/lib/python3/app", "/usr", "/usr", "/home/ann") == ["/usr/lib/python3/app"]


def test_a_python_that_lives_in_the_home_folder_is_the_programs_own_files_too() -> None:
    pyenv = "/home/ann/.pyenv/versions/3.11.7"  # or uv's ~/.local/share/uv/python/..., conda's ~/miniconda3
    assert container.program_folders("/v/app", "/v/.venv", pyenv, "/home/ann") == ["/v/app", "/v/.venv", pyenv]
    installed_there = f"{pyenv}/lib/python3.11/site-packages/app"  # pip install into that Python itself
    assert container.program_folders(installed_there, pyenv, pyenv, "/home/ann/") == [installed_there, pyenv]
    assert container.program_folders("/v/app", "/v/.venv", "/home/annie/py", "/home/ann") == ["/v/app", "/v/.venv"]


def test_every_ancestor_a_command_could_rename_is_bound_onto_itself_before_the_read_only_binds() -> None:
    protected = ProtectedSet(("/home/ann/.config/Claude", "/home/ann/.claude"), ("/home/ann/.claude.json",))
    writable = {"/home/ann", "/home/ann/.config"}  # the user may rename what sits in these
    args = container.mount_args(protected, lambda path: path.rsplit("/", 1)[0] in writable)
    triples = [tuple(args[i : i + 3]) for i in range(0, len(args), 3)]
    assert ("--bind", "/home/ann/.config", "/home/ann/.config") in triples
    assert ("--ro-bind", "/home/ann/.config/Claude", "/home/ann/.config/Claude") in triples
    assert triples.index(("--bind", "/home/ann/.config", "/home/ann/.config")) < triples.index(
        ("--ro-bind", "/home/ann/.config/Claude", "/home/ann/.config/Claude")
    )
    assert ("--bind", "/home", "/home") not in triples, "/ is not writable: /home cannot be renamed"
    # a lone file: bound where it exists when a container starts (start_files.py guards it where not)
    assert ("--ro-bind-try", "/home/ann/.claude.json", "/home/ann/.claude.json") in triples


def test_a_member_inside_another_protected_folder_and_the_folders_between_get_no_bind_of_their_own() -> None:
    """A package installed in a venv: binding its ancestors inside the venv writable would open
    `site-packages` (a `.pth` there runs in every start of our Python)."""
    venv, package = "/home/ann/.venvs/ct", "/home/ann/.venvs/ct/lib/python3.11/site-packages/app"
    protected = ProtectedSet((venv, package, "/home/ann/.local/share/ct", "/home/ann/.local/share/ct/outputs"))
    args = container.mount_args(protected, lambda _path: True)
    bound = [args[i + 1] for i in range(0, len(args), 3)]
    ancestors = ["/home", "/home/ann", "/home/ann/.local", "/home/ann/.venvs", "/home/ann/.local/share"]
    assert sorted(bound) == sorted([*ancestors, venv, "/home/ann/.local/share/ct"])
    assert not any(path.startswith(venv + "/") for path in bound)
    assert container.bound_members(protected) == {venv, "/home/ann/.local/share/ct"}


def test_the_bus_systemd_and_x11_sockets_are_hidden_where_they_exist() -> None:
    present = {"/run/user/1000", "/run/user/1000/bus", "/tmp/.X11-unix"}
    args = container.hidden_args({"XDG_RUNTIME_DIR": "/run/user/1000"}, present.__contains__)
    assert args == ["--ro-bind", "/dev/null", "/run/user/1000/bus", "--tmpfs", "/tmp/.X11-unix"]
    assert container.hidden_args({}, lambda _path: False) == []


def test_a_session_bus_wherever_its_address_puts_it_and_the_accessibility_bus_are_hidden() -> None:
    """dbus-launch and sessions without systemd put the bus in /tmp; at-spi's launcher starts a bus of
    its own in the runtime folder. Any bus starts the services it knows, with the environment a
    client gave it (`UpdateActivationEnvironment LD_PRELOAD=...`): code outside (a red-team route)."""
    address = "unix:path=/tmp/dbus-Ab%2dc,guid=9f;unix:abstract=/tmp/dbus-Zz,guid=9f;tcp:host=localhost,port=1"
    assert container.bus_socket_paths(address) == ["/tmp/dbus-Ab-c"]
    assert container.bus_socket_paths("") == [] and container.bus_socket_paths("unix:path=relative") == []
    present = {"/tmp/dbus-Ab-c", "/run/user/1000", "/run/user/1000/bus", "/run/user/1000/at-spi"}
    environ = {"XDG_RUNTIME_DIR": "/run/user/1000", "DBUS_SESSION_BUS_ADDRESS": address}
    assert container.hidden_args(environ, present.__contains__) == [
        "--ro-bind", "/dev/null", "/run/user/1000/bus",
        "--ro-bind", "/dev/null", "/tmp/dbus-Ab-c",
        "--tmpfs", "/run/user/1000/at-spi",
    ]  # fmt: skip
    # The sound servers load modules that make pipes at any path a client names.
    sound = {"/run/user/1000", "/run/user/1000/pipewire-0", "/run/user/1000/pipewire-0-manager", "/run/user/1000/pulse"}
    assert container.hidden_args({"XDG_RUNTIME_DIR": "/run/user/1000"}, sound.__contains__) == [
        "--ro-bind", "/dev/null", "/run/user/1000/pipewire-0",
        "--ro-bind", "/dev/null", "/run/user/1000/pipewire-0-manager",
        "--tmpfs", "/run/user/1000/pulse",
    ]  # fmt: skip
    usual = {"XDG_RUNTIME_DIR": "/run/user/1000", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"}
    assert container.hidden_args(usual, present.__contains__).count("/run/user/1000/bus") == 1, "hidden once"


def test_the_runtime_folder_is_found_without_its_variable_and_dbus_and_wayland_are_hidden_there() -> None:
    """Red team, 2026-12-04: a headless server started without XDG_RUNTIME_DIR (as MCP clients start
    them) left /run/user/<uid>/bus in reach, and a service file planted in dbus-daemon's own folder
    there was started outside when the tray opened a folder; a Wayland compositor may let any
    client type into other windows."""
    runtime = "/run/user/1000"
    present = {runtime, f"{runtime}/bus", f"{runtime}/dbus-1", f"{runtime}/wayland-0", f"{runtime}/wayland-9"}
    expected = [
        "--ro-bind", "/dev/null", f"{runtime}/bus",
        "--ro-bind", "/dev/null", f"{runtime}/wayland-0",
        "--tmpfs", f"{runtime}/dbus-1",
    ]  # fmt: skip
    assert container.hidden_args({}, present.__contains__, 1000) == expected
    named = container.hidden_args({"WAYLAND_DISPLAY": "wayland-9"}, present.__contains__, 1000)
    assert named[3:6] == ["--ro-bind", "/dev/null", f"{runtime}/wayland-9"], named
    assert container.hidden_args({}, present.__contains__, 1001) == [], "another user's folder is not theirs"


def test_a_container_started_by_root_keeps_only_the_capabilities_a_package_install_needs() -> None:
    """As root, bwrap keeps every capability: a command unmounted a read-only bind and wrote
    ~/.bashrc (red team, 2026-12-04). Anyone else's commands have none to drop."""
    assert container.capability_args(1000) == []
    args = container.capability_args(0)
    assert args[:2] == ["--cap-drop", "ALL"]
    kept = set(args[3::2])
    assert {"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SETUID"} <= kept
    assert not {"CAP_SYS_ADMIN", "CAP_DAC_READ_SEARCH", "CAP_SYS_MODULE", "CAP_SYS_PTRACE", "CAP_MKNOD"} & kept
    root_line = container.bwrap_argv("bwrap", [], [], ["true"])
    assert ("--cap-drop" in root_line) is (os.geteuid() == 0)
    read_only = set(container.capability_args(0, read_only=True)[3::2])
    assert read_only == kept - {"CAP_AUDIT_WRITE"}, "no record written into the host's audit log"


def test_the_bwrap_line_has_its_own_pid_namespace_dies_with_its_parent_and_starts_our_init() -> None:
    argv = container.bwrap_argv("bwrap", ["--ro-bind", "/p", "/p"], [], ["bash", "-c", "ls"], status_fd=7)
    for flag in ("--unshare-pid", "--die-with-parent", "--as-pid-1", "--new-session"):
        assert flag in argv
    scoping = container.bwrap_argv("bwrap", [], [], ["ls"], status_fd=7, init=["/usr/bin/perl", "-e", "..."])
    assert "--new-session" not in scoping, "the Perl init makes the command's group itself (landlock.py)"
    assert argv[argv.index("--proc") + 1] == "/proc"
    assert argv[argv.index("--") + 1 :][:4] == ["/bin/bash", "--norc", "--noprofile", "-c"]
    assert argv[-6:-3] == ["cowork-init", "7", str(container.lifeline())], "the status fd, then the lifeline"
    assert argv[-3:] == ["bash", "-c", "ls"]
    assert argv.index("--ro-bind") > argv.index("--dev-bind"), "binds after the whole filesystem"


def test_a_failed_probe_is_told_apart_by_bwraps_own_words() -> None:
    debian = "bwrap: No permissions to create new namespace, likely because the kernel does not allow"
    assert container.classify_failure(None, "") == container.MISSING
    assert container.classify_failure(1, debian) == container.USERNS
    assert container.classify_failure(1, "bwrap: Creating new namespace failed: nesting depth") == container.USERNS
    assert container.classify_failure(1, "bwrap: setting up uid map: Permission denied") == container.APPARMOR
    assert container.classify_failure(1, "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted") == (
        container.APPARMOR
    )
    assert container.classify_failure(1, "bwrap: something else") == container.FAILED


def test_the_person_reads_what_hard_linked_program_files_mean_without_cache_jargon() -> None:
    from app.core import i18n

    assert container.linked_message() == (
        "Cowork Terminal was installed in a way that lets commands change its own files. "
        "Reinstall it: see the README (Hard links)."
    )
    try:
        i18n.use_language("es")
        assert container.linked_message().startswith("Cowork Terminal se instaló de una forma")
        assert "Reinstálalo" in container.linked_message()
    finally:
        i18n.use_language("en")


def test_the_person_is_told_how_to_fix_each_weaker_mode_and_nothing_when_protected() -> None:
    assert container.person_message(container.ON) is None
    assert "apt install bubblewrap" in (container.person_message(container.MISSING) or "")
    assert "AppArmor" in (container.person_message(container.APPARMOR) or "")
    assert container.person_message(container.USERNS)
    assert "apt install bubblewrap" in container.log_message(container.MISSING)
    assert container.log_message(container.FAILED, "bwrap: boom\n") == "bwrap failed: bwrap: boom"


def test_without_a_container_the_command_runs_as_given() -> None:
    assert Container(container.MISSING).wrap(["bash", "-c", "ls"], 5) == ["bash", "-c", "ls"]
    on = Container(container.ON, "bwrap", ("--ro-bind", "/p", "/p"))
    assert "/p" in on.wrap(["true"], 5) and "/p" not in on.wrap(["true"], 5, read_only_binds=False)
    assert "--unshare-pid" in on.wrap(["true"], 5, read_only_binds=False), "the namespace stays"


def test_a_command_naming_a_protected_member_in_any_home_spelling_is_recognised() -> None:
    members = ["/home/ann/.bashrc", "/data/cowork"]
    for command in ("echo x >> ~/.bashrc", "sed -i s/a/b/ $HOME/.bashrc", "cat ${HOME}/.bashrc", "rm /data/cowork/j"):
        assert container.members_to_lift(command, members, HOME), command
    assert not container.members_to_lift("ls ~/projects", members, HOME)


def test_the_model_is_told_why_a_write_failed_only_for_a_read_only_failure() -> None:
    stderr = "bash: /home/ann/.bashrc: Read-only file system\n"
    hint = container.protected_hint(stderr, 1, ["/home/ann/.bashrc"]) or ""
    assert hint.startswith("/home/ann/.bashrc is protected by Cowork Terminal") and "execute_command" in hint
    assert container.protected_hint("No such file or directory", 1, []) is None
    assert container.protected_hint(stderr, 0, []) is None


def test_on_macos_the_model_is_told_only_of_a_refusal_that_names_a_protected_path() -> None:
    zshrc = ["/Users/ann/.zshrc"]
    refused = "bash: /Users/ann/.zshrc: Operation not permitted\n"
    told = container.protected_hint(refused, 1, zshrc, seatbelt=True) or ""
    assert told.startswith("/Users/ann/.zshrc is protected"), told
    assert container.protected_hint("chmod: /etc/shadow: Operation not permitted", 1, zshrc, seatbelt=True) is None
    assert container.protected_hint("bash: /Users/ann/.zshrc: Read-only file system", 1, zshrc, seatbelt=True) is None
    assert container.protected_hint(refused, 1, zshrc) is None, "Linux's container refuses in other words"


def test_the_macos_profile_denies_writes_by_parameter_and_renames_of_ancestors() -> None:
    text, params = seatbelt.profile(
        ["/Users/ann/Library/Application Support/Claude"], ["/Users/ann/.claude.json"], "/Users/ann"
    )
    assert text.startswith("(version 1)\n(allow default)\n")
    assert '(deny file-write* (subpath (param "P0")) (literal (param "F0")))' in text
    assert '(deny file-write-unlink (literal (param "A0")) (literal (param "A1")))' in text
    assert params == [
        "-DP0=/Users/ann/Library/Application Support/Claude",
        "-DF0=/Users/ann/.claude.json",
        "-DA0=/Users/ann/Library",
        "-DA1=/Users/ann/Library/Application Support",
    ]
    assert "Users" not in text, "paths never enter the profile text"


def test_sandbox_exec_runs_the_command_after_the_profile() -> None:
    argv = seatbelt.argv(["/p"], [], "/Users/ann", ["/bin/bash", "-c", "ls"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-3:] == ["/bin/bash", "-c", "ls"]


def test_sandbox_check_is_asked_about_the_pid_and_only_one_means_sandboxed() -> None:
    asked = []

    def check(pid: int, operation: bytes | None, kind: int) -> int:
        asked.append((pid, operation, kind))
        return 1 if pid == 7 else 0

    assert seatbelt.is_sandboxed(7, check) and not seatbelt.is_sandboxed(8, check)
    assert asked == [(7, None, 0), (8, None, 0)]


def test_windows_commands_start_suspended_only_when_asked() -> None:
    assert not spawn_options("win32")["creationflags"] & 0x4
    assert spawn_options("win32", suspended=True)["creationflags"] & 0x4
    assert spawn_options("linux", suspended=True) == {"start_new_session": True}


def test_a_peer_in_another_pid_namespace_a_command_job_or_a_sandbox_is_from_a_container() -> None:
    from app.core.channel.peer import OwnFacts, PeerFacts, from_container, tray_refusal

    python = "/usr/bin/python3"
    own = OwnFacts(1000, python, False, "/d", "pid:[4026531836]")
    argv = (python, "-m", "app", "tray")
    outside = PeerFacts(1, 1000, python, argv, pid_namespace="pid:[4026531836]")
    inside = PeerFacts(2, 1000, python, argv, pid_namespace="pid:[4026532178]")
    gone = PeerFacts(3, 1000, python, argv, pid_namespace=None)
    assert not from_container(outside, own)
    assert from_container(inside, own) and from_container(gone, own), "unknown fails closed"
    assert from_container(PeerFacts(4, "S-1", None, in_command_job=True), OwnFacts("S-1", "x", True, "/d"))
    assert from_container(PeerFacts(5, 501, None, sandboxed=True), OwnFacts(501, "x", True, "/d"))
    assert not from_container(PeerFacts(6, "S-1", None), OwnFacts("S-1", "x", True, "/d")), "no namespaces there"
    assert tray_refusal(outside, own, "/d") is None
    assert "inside a command's container" in (tray_refusal(inside, own, "/d") or "")


def test_a_peer_is_placed_by_its_pid_namespace_depth_even_when_its_link_cannot_be_read(tmp_path: Path) -> None:
    """A window that is not dumpable hides /proc/<pid>/ns/pid from a tray without root's powers,
    but not /proc/<pid>/status: it is ours, not a container's (found when the two branches met)."""
    from app.core.channel.peer import OwnFacts, from_container, linux_process_facts

    def process(pid: int, nspid: str, link: str | None) -> None:
        folder = tmp_path / str(pid)
        (folder / "ns").mkdir(parents=True)
        (folder / "status").write_text(f"Name:\tpython3\nNSpid:\t{nspid}\nUid:\t1000\n")
        if link is not None:
            (folder / "ns" / "pid").symlink_to(link)

    process(10, "10", None)  # a window of ours, not dumpable: its link is hidden
    process(11, "11\t2", "pid:[4026532178]")  # a command in its container
    process(12, "12\t3", None)  # a detached job of a command, link hidden as well
    process(13, "13", "pid:[4026531836]")  # an ordinary program of the user's
    own = OwnFacts(1000, "/usr/bin/python3", False, "/d", "pid:[4026531836]", 1)
    facts = {pid: linux_process_facts(pid, 1000, proc=tmp_path) for pid in (10, 11, 12, 13)}
    assert [from_container(facts[pid], own) for pid in (10, 11, 12, 13)] == [False, True, True, False]
    assert facts[11].pid_depth == 2 and facts[10].pid_namespace is None
    (tmp_path / "14").mkdir()
    (tmp_path / "14" / "status").write_text("Name:\tpython3\nUid:\t1000\n")  # no NSpid (Linux < 4.1)
    assert linux_process_facts(14, 1000, proc=tmp_path).pid_depth is None
    assert linux_process_facts(15, 1000, proc=tmp_path).pid_depth is None, "gone: no status to read"


def test_switching_the_container_off_is_a_loosening_and_on_a_tightening() -> None:
    from app.core.authority.state import DEFAULTS, ControlState, loosened, strictest, with_changes
    from app.core.policy.direction import LOOSEN, TIGHTEN, classify_request

    off = with_changes(DEFAULTS, container=False)
    assert DEFAULTS.container and not off.container
    assert loosened(DEFAULTS, off) == ["container"] and loosened(off, DEFAULTS) == []
    assert classify_request("settings", {"changes": {"container": False}}, DEFAULTS) == LOOSEN
    assert classify_request("settings", {"changes": {"container": True}}, off) == TIGHTEN
    assert ControlState.from_wire({"container": "no"}).container, "a malformed value reads as on"
    assert strictest(off, DEFAULTS).container


def test_the_menu_offers_the_container_as_a_checkbox_under_ask_before_running() -> None:
    from app.ui.tray import menu
    from app.ui.tray.tray_state import TrayState

    for on in (True, False):
        entry = menu.find_entry(menu.build_menu(TrayState(container=on), now=0), "container")
        assert entry is not None and entry.action == menu.TOGGLE_CONTAINER and entry.checked is on
    approval = menu.find_entry(menu.build_menu(TrayState(), now=0), "approval")
    assert approval is not None and approval.submenu is not None and approval.submenu[-1].key == "container"


def test_the_person_reads_why_a_protected_write_waits_in_their_language() -> None:
    from app.core import i18n
    from app.core.classifier import classify
    from app.core.messages import MAKES_WRITABLE_PLAIN, PRIVILEGED_PLAIN, PROTECTED_WRITE_PLAIN, held_reason
    from app.core.policy.plain_words import held_reason_for_person

    command = "echo x >> ~/.bashrc"
    verdict = classify(command, cwd="/tmp")
    stored = held_reason((*verdict.plain, PROTECTED_WRITE_PLAIN), verdict.reasons)
    try:
        i18n.use_language("de")
        said = held_reason_for_person(stored, command, "/tmp", ()) or ""
    finally:
        i18n.use_language("en")
    assert said.endswith("wenn Sie es erlauben, läuft es ohne diesen Schutz") and said.startswith("Schreibt"), said
    command = "sudo tee -a ~/.bashrc"
    verdict = classify(command, cwd="/tmp")
    stored = held_reason((*verdict.plain, PROTECTED_WRITE_PLAIN, PRIVILEGED_PLAIN), verdict.reasons)
    try:
        i18n.use_language("de")
        said = held_reason_for_person(stored, command, "/tmp", ()) or ""
    finally:
        i18n.use_language("en")
    assert "Ändert eine Datei" in said and "Braucht Administratorrechte" in said, said
    # Which protected files it may change once allowed: named in the window, in their language too.
    names = MAKES_WRITABLE_PLAIN.format(names="~/.bashrc, ~/.claude.json")
    stored = held_reason((*verdict.plain, PROTECTED_WRITE_PLAIN, names, PRIVILEGED_PLAIN), verdict.reasons)
    try:
        i18n.use_language("de")
        said = held_reason_for_person(stored, command, "/tmp", ()) or ""
    finally:
        i18n.use_language("en")
    assert "Einmal erlaubt, kann er ~/.bashrc, ~/.claude.json ändern; Braucht Administratorrechte" in said, said


def test_a_command_gains_privileges_where_it_runs_such_a_program_not_where_it_only_names_one() -> None:
    from app.core.classifier import classify

    for command in ("sudo apt install x", "ls && sudo -n true", "echo x | sudo tee /etc/y", "pkexec id", "(su -c id)",
                    "bash -c 'doas id'", "env sudo ls"):  # fmt: skip
        assert classify(command, cwd="/tmp").gains_privileges, command
    # Red team, 2026-12-04: the word alone, anywhere in an allowed command, ran all of it outside.
    for command in ("sudoku", "echo sudo-less", "pseudo", "ls /snapshots", "git log --grep=su", ": su",
                    "rm -rf build; grep -rn snap docs", "echo sudo"):  # fmt: skip
        assert not classify(command, cwd="/tmp").gains_privileges, command


def test_a_missing_claude_desktop_folder_is_not_created_to_protect_it_and_an_existing_one_is_protected(
    tmp_path: Path,
) -> None:
    missing, present = tmp_path / "gone" / "Claude", tmp_path / "here" / "Claude"
    present.mkdir(parents=True)
    made = container.prepare(ProtectedSet((str(tmp_path / "data"),), (), (str(missing), str(present))))
    assert not missing.exists() and (tmp_path / "data").is_dir()
    assert made.folders == (str(tmp_path / "data"), str(present))


def test_what_links_in_a_configuration_folder_point_to_is_protected_too_where_a_command_could_change_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GNU stow: `~/.config/autostart/x.desktop` -> `~/dotfiles/x.desktop`. The folder's bind covers
    the link; what it points to is protected as a member of its own."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    code, autostart, claude = home / "code" / "dotfiles", home / ".config" / "autostart", home / ".claude"
    for folder in (autostart, claude, code / "fish"):
        folder.mkdir(parents=True)
    (home / "dotfiles").symlink_to(code)  # the stow folder is itself a link: guarded on the way
    dotfiles = home / "dotfiles"
    (code / "x.desktop").write_text("[Desktop Entry]\n")
    (autostart / "x.desktop").symlink_to(dotfiles / "x.desktop")
    (autostart / "fish").symlink_to(dotfiles / "fish")
    (autostart / "soon.desktop").symlink_to(dotfiles / "not-yet.desktop")  # a command could make it
    (autostart / "later.desktop").symlink_to(home / "gone" / "deeper" / "y.desktop")  # its folder too
    (autostart / "inner").symlink_to(claude)  # already protected
    (autostart / "home").symlink_to(home)  # would make the whole home read-only
    (autostart / "config").symlink_to(home / ".config")  # holds protected folders
    (autostart / "masked.service").symlink_to("/dev/null")  # `systemctl --user mask`: never bound
    (autostart / "scratch").symlink_to(tmp_path)  # outside the home folder
    members = ProtectedSet((str(autostart), str(claude)), follow_links=(str(autostart),))
    made = container.prepare(members)
    assert made.files == (str(code / "x.desktop"),) and str(code / "fish") in made.folders
    assert set(made.absent) == {str(code / "not-yet.desktop"), str(home / "gone")}, "the first missing folder"
    assert str(home) not in made.folders and str(home / ".config") not in made.folders
    assert made.folders == (str(autostart), str(claude), str(code / "fish")), "nothing else: not /dev/null, /tmp"
    assert (str(dotfiles), str(code)) in made.links, "`rm ~/dotfiles && mkdir ~/dotfiles` is undone"
    allowed = [str(code / "fish"), str(home / "gone"), str(code / "not-yet.desktop"), str(code / "x.desktop")]
    assert container.linked_from(made, [str(autostart)]) == allowed, "what an Allow of the folder opens too"
    assert container.linked_from(made, [str(claude)]) == []
    unfollowed = container.prepare(ProtectedSet((str(autostart),)))
    assert unfollowed.files == () and unfollowed.folders == (str(autostart),), "only where the set says"


def test_links_near_the_top_of_a_folder_are_found_before_its_deep_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.claude/hooks/guard.sh` -> `~/dotfiles/guard.sh` beside thousands of files in `projects/`."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    claude, dotfiles = home / ".claude", home / "dotfiles"
    (claude / "projects" / "a").mkdir(parents=True)
    (claude / "zz-hooks").mkdir()
    dotfiles.mkdir()
    for number in range(50):
        (claude / "projects" / "a" / f"{number}.jsonl").write_text("{}\n")
    (dotfiles / "guard.sh").write_text("exit 0\n")
    (claude / "zz-hooks" / "guard.sh").symlink_to(dotfiles / "guard.sh")
    found = container.link_targets([str(claude)], [str(claude)], str(home), limit=10)
    assert found.files == [str(dotfiles / "guard.sh")] and found.pairs == [
        (str(claude / "zz-hooks" / "guard.sh"), str(dotfiles / "guard.sh"))
    ]
    assert container.link_targets([str(claude)], [str(claude)], str(home), limit=2).files == [], "looked at 2"


def test_a_command_allowed_to_change_named_members_leaves_the_others_read_only() -> None:
    members = ["/home/ann/.bashrc", "/home/ann/.claude", "/d/data"]
    assert container.named_members("sed -i s/a/b/ ~/.bashrc && ls /d", members, HOME) == ["/home/ann/.bashrc"]
    # Whole names only: a longer name that starts with a member's is another file.
    assert container.named_members("cp ~/.claude.json /tmp/b", members, HOME) == []
    assert container.named_members("ls ~/.bashrc.d; cat $HOME/.claude-old/x", members, HOME) == []
    assert container.named_members("echo x >~/.claude/settings.json", members, HOME) == ["/home/ann/.claude"]
    assert container.named_members('rm "$HOME/.bashrc"', members, HOME) == ["/home/ann/.bashrc"]
    assert container.named_members("ls ~/.claude*", members, HOME) == ["/home/ann/.claude"]
    assert container.named_members("rm -r /d/data", members, HOME) == ["/d/data"]
    protected = ProtectedSet(("/home/ann/.claude", "/d/data"), ("/home/ann/.bashrc",))
    on = Container(container.ON, "bwrap", tuple(container.mount_args(protected, lambda _p: False)), (), "", protected)
    lifted = on.without(["/home/ann/.bashrc"]).wrap(["true"], 5)
    assert "/home/ann/.bashrc" not in lifted and "/home/ann/.claude" in lifted and "/d/data" in lifted


@pytest.mark.parametrize(
    ("value", "protected"),
    [
        ("/work/claude-alt/", "/work/claude-alt"),  # a trailing slash would lose a symlink's guard
        ("/home/ann/.claude-work", "/home/ann/.claude-work"),
        ("/home/ann", None),  # the whole home read-only: not what the user meant
        ("/home/ann/", None),
        ("/home", None),
        ("/", None),
        ("", None),
    ],
)
def test_claude_config_dir_is_normalised_and_never_the_home_folder_or_above(value: str, protected: str | None) -> None:
    assert container.claude_config_dir("linux", {"CLAUDE_CONFIG_DIR": value}, "/home/ann") == protected
    assert container.claude_config_dir("win32", {"CLAUDE_CONFIG_DIR": "C:\\Users\\ann"}, "C:\\Users\\ann") is None


def test_the_kernels_settings_are_read_only_and_every_session_bus_in_tmp_is_hidden(tmp_path: Path) -> None:
    """Controls red team, 2026-12-04: as root, a command set kernel.core_pattern (the kernel ran its
    program outside at the next crash); a `dbus-launch` bus in /tmp that the environment did not
    name was reached, and its activation environment ran a library outside."""
    argv = container.bwrap_argv("bwrap", [], [], ["true"])
    at = argv.index("/proc")
    assert argv[at + 1 : at + 4] == ["--ro-bind", "/proc/sys", "/proc/sys"] and "/sys" in argv
    bus = tmp_path / "dbus-AbCd1234"
    with socket.socket(socket.AF_UNIX) as listening, socket.socket(socket.AF_UNIX) as dead:
        listening.bind(str(bus))
        listening.listen()
        (tmp_path / "dbus-notes.txt").write_text("not a socket")
        # A socket nothing listens on cannot be reached: not hidden, so a command that makes thousands
        # of them does not take every container past bwrap's limit on arguments (a red team, 2026-12-06).
        dead.bind(str(tmp_path / "dbus-Dead0000"))
        assert container.tmp_buses(str(tmp_path)) == [str(bus)]
    args = container.hidden_args({}, lambda path: path == str(bus), None, [str(bus)])
    assert args == ["--ro-bind", "/dev/null", str(bus)]


def test_the_listening_sockets_are_read_from_the_kernels_table(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    table.write_text(
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 27712 /tmp/dbus-Live1234\n"
        "0000000000000000: 00000002 00000000 00000000 0001 01 27713 /tmp/dbus-Bound000\n"
        # a line a command's own socket name made (names are printed byte for byte, newlines too)
        "0000000000000000: 00000002 00000000 00000000 0001 01 27717 @x\n"
        "A B C notHex E F G H\n"
        "0000000000000000: 00000003 00000000 00000000 0001 03 27714\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 27715 @/tmp/.X11-unix/X0\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 27716 /run/user/1000/with space\n"
    )
    assert container.listening_sockets(str(table)) == {
        "/tmp/dbus-Live1234", "@/tmp/.X11-unix/X0", "/run/user/1000/with space"
    }  # fmt: skip
    assert container.listening_sockets(str(tmp_path / "none")) is None, "not read: not taken as none"
    bus = tmp_path / "dbus-Any"
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(bus))
        assert container.tmp_buses(str(tmp_path), lambda: None) == [str(bus)], "then every bus is hidden"


def test_a_bus_made_in_the_tick_of_the_last_listing_is_still_found(tmp_path: Path) -> None:
    """/tmp is listed again only when its change time moved (`bus_names`): a bus made right after a
    listing, within the same tick of the file system's coarse clock, must not be missed."""
    assert container.tmp_buses(str(tmp_path)) == []
    bus = tmp_path / "dbus-Late0000"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(bus))
        listening.listen()
        os.utime(tmp_path, ns=(time.time_ns(), container._bus_names_seen[str(tmp_path)][0][2]))  # the same tick
        assert container.tmp_buses(str(tmp_path)) == [str(bus)]


def test_a_settled_folder_is_not_listed_again_until_it_changes(tmp_path: Path) -> None:
    """What makes each container's start cheaper: a folder whose change time is settled and the same as
    at the last listing keeps that listing; any entry made or removed since moves the time."""
    long_ago = time.time_ns() - 10 * container.CHANGE_SETTLED_NS
    os.utime(tmp_path, ns=(long_ago, long_ago))
    assert container.bus_names(str(tmp_path)) == []
    (tmp_path / "dbus-Planted").write_text("")
    os.utime(tmp_path, ns=(long_ago, long_ago))  # as if nothing had changed: the listing is kept
    assert container.bus_names(str(tmp_path)) == []
    (tmp_path / "dbus-Another").write_text("")  # a real change moves the time
    assert container.bus_names(str(tmp_path)) == ["dbus-Another", "dbus-Planted"]
    assert container.bus_names(str(tmp_path / "gone")) == []


def test_the_walk_for_a_jobs_output_pipes_is_bounded(tmp_path: Path) -> None:
    """A job leaving 100 processes of 19,000 open files each held the loop 21 s in output_held (a red
    team, 2026-12-06): past OUTPUT_HELD_FDS_LOOKED_AT descriptors it counts as held, as a job's output
    always did, without reading them all."""
    proc = tmp_path / "proc"

    def process(pid: int, kids: list[int], fds: dict[str, str]) -> None:
        (proc / str(pid) / "task" / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "task" / str(pid) / "children").write_text(" ".join(map(str, kids)))
        (proc / str(pid) / "fd").mkdir()
        for fd, target in fds.items():
            (proc / str(pid) / "fd" / fd).symlink_to(target)

    process(10, [11], {"1": "pipe:[5]", "2": "pipe:[5]"})  # bwrap
    process(11, [12], {})  # the container's init
    process(12, [], {str(n): "/dev/null" for n in range(20)})  # a job that does not hold the output
    assert container.output_held(10, str(proc)) is False
    process(13, [], {str(n): "/dev/null" for n in range(container.OUTPUT_HELD_FDS_LOOKED_AT)})
    (proc / "11" / "task" / "11" / "children").write_text("12 13")
    assert container.output_held(10, str(proc)) is True, "too many to look at: held"


WINDOWS_FOLDERS = {
    "APPDATA": r"C:\Users\ann\AppData\Roaming",
    "LOCALAPPDATA": r"C:\Users\ann\AppData\Local",
    "USERPROFILE": r"C:\Users\ann",
}


@pytest.mark.parametrize("platform", ["linux", "win32"])
def test_where_no_container_guards_a_write_through_a_glob_or_expansion_is_read_where_it_lands(
    platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A red team, 2026-12-04 (each ran unasked, five of them for real): a copy into a folder above
    a member, an option's value, `find`'s matches, a brace expression, a variable that holds the home
    folder, a relative path after `cd -`, Windows' folder variables. And a glob that only reads a
    member (`du -sh ~/* > du.txt`) is not asked for: it matched the member and held everyday commands."""
    from app.core.classifier import names_protected

    if platform == "win32":
        home = "C:/Users/ann"
        for name, value in WINDOWS_FOLDERS.items():
            monkeypatch.setenv(name, value)
        members = container.hold_members(
            container.protected_set("win32", WINDOWS_FOLDERS, r"C:\Users\ann", [], [], None)
        )
    else:
        home = "/home/ann"
        for name in WINDOWS_FOLDERS:
            monkeypatch.delenv(name, raising=False)
        members = container.hold_members(container.protected_set("linux", {}, home, [], [], None))
    monkeypatch.setenv("HOME", home)
    project = f"{home}/code/site"
    held = [
        "cp dotfiles/.bashrc ~",
        "cp -r dotfiles/. ~",
        "rsync -a dotfiles/ ~/",
        "tar -xf dots.tar -C ~",
        "unzip -o dots.zip -d ~",
        "git log -1 --format=%B --output=$HOME/.bashrc",
        "find ~ -maxdepth 1 -name .bashrc -exec cp evil.sh {} \\;",
        "echo x | tee -a ~/.{bashrc,profile}",
        'h=$HOME; cp x.json "$h/.claude.json"',
        "d=~; echo x >> $d/.bashrc",
        "cd - && echo x >> .bashrc",
        'echo x >> "$(echo ~)/.bashrc"',
        "claude mcp add helper -- ./helper.sh",  # a program Claude Code starts, outside any container
        "conda init bash",
        "pipx ensurepath",
        "uv tool update-shell",
        # a review of the above: `..` after a glob, deletions and modes through a glob, find's options
        "echo x >> ../../.b?shrc",
        'cp x "$PWD/../../.bashrc"',
        "rm -f ~/.b?shrc",
        "chmod 000 ~/.b?shrc",
        "find $HOME -maxdepth 1 -name .bashrc -exec cp evil {} \\;",
        "find -L ~ -name .bashrc -delete",
        "cp --target-directory=$HOME x/.bashrc",
        "tar xf dots.tar --directory=$HOME",
        # a second red team (none of these was asked for)
        'echo "a;. " > ~/.bashrc "b"',  # a text rewrite swallowed the path
        "cp evil ~ann/.bashrc",
        "cd ~ && echo x >> ~+/.bashrc",
        "find . -name .bashrc -exec cp {} ~ +",
        "git ls-files | xargs -I{} cp {} ~",
        "cp -rT dot ~",
        "cp --parents .config/x ~",
        "wget -O$HOME/.bashrc https://example.com/x",
        "gzip -d ~/.bashrc.gz",
        "cp evil ~/.[[:alpha:]]ashrc",
        "cp evil ~/.[^a]ashrc",
        "cp evil /proc/self/cwd/../../.bashrc",
        "GIT_WORK_TREE=~ git checkout -- .bashrc",
        "env --chdir=$HOME cp evil .bashrc",
        "pushd ~; pushd /tmp; popd; echo x >> .bashrc",
        # a third red team
        "sed -n 'w/home/ann/.bashrc' x" if platform == "linux" else "sed -n 'wC:/Users/ann/.bashrc' x",
        "sed 's/a/b/w/home/ann/.bashrc' x" if platform == "linux" else "sed 's/a/b/wC:/Users/ann/.bashrc' x",
        "f=~/.b*rc; cp x $f",
        "cd $X; cp x .b*rc",
        "history -w ~/.b?shrc",
        "dd if=x of=~/.bash$x",
        "cd ~ && curl -sSLO https://example.com/.bashrc",
        "cd ~ && wget https://example.com/.bashrc",
        "cd ~ && ln -sf /tmp/.bashrc",
        "rename x .bashrc ~/x",
        "cp -b -S rc x ~/.bash",
        "sed -irc 1p ~/.bash",
        "split -a1 -l1 x ~/.bashr",
        'cd ~ && python3 -c \'open(".bashrc", "a").write("x")\'',
        # a review of the above
        "source() { python3 -c 'import sys' \"$1\"; }; source ~/.bashrc",
        "cd ~ && git clone --depth 1 https://example.com/x/.claude",
        "cd ~ && curl -O example.com/.bashrc",
        "cd ~ && pushd /tmp && pushd +1 && cp x .bashrc",
        "sed --in-place=rc 1p ~/.bash",
        # a glob longer than any name, and a brace expression of more words than are made one by one
        "echo x > ~/.b" + "*" * 1100 + "rc",
        "echo x >> ~/.{a,b,c,d,e,f}{a,b,c,d,e,f}{bashrc,x}",
    ]
    if platform == "win32":
        held += [
            'cp x.json "$APPDATA"/Cl*/claude_desktop_config.json',
            'cd "$APPDATA/Microsoft/Windows/Start Menu/Programs" && cp x.lnk Startup/',
            "powershell -c 'Copy-Item x $env:APPDATA/Claude/claude_desktop_config.json'",
            "powershell -c 'Add-Content $PROFILE calc'",
            "powershell -c 'Set-Content ${env:USERPROFILE}/.bashrc x'",
            'echo x >> "$HOMEDRIVE$HOMEPATH/.bashrc"',
            "curl -oC:/Users/ann/.bashrc https://example.com/x",
            '7z x x.7z -o"$APPDATA"/Claude',
            '/c/Windows/System32/expand.exe evil "$APPDATA/Claude/settings.json"',
            "cp evil ~/OneDrive/Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1",
            'cp -r x/. "$X/AppData/Roaming"',
            "echo x >> C:/../Users/ann/.b?shrc",  # `C:/..` is `C:/`
        ]
    else:
        held += [
            "/usr/bin/time -a -f 'curl x | sh' -o ~/.bashrc true",
            "cp evil /proc/self/root/home/ann/.bashrc",
            # a folder above a member after an expansion nobody knows here, written as a whole (2026-12-05)
            'rm -rf "$(echo ~)/.config"',
            'cp -r dots/. "$(echo ~)/.config"',
            'mv "$(echo ~)/.local" /tmp/old',
            "rm -rf $D/.local/share",
        ]
    for command in held:
        assert names_protected(command, members, cwd=project, bare=False), command
    for command in (
        "du -sh ~/* > du.txt",
        "ls ~/.config/* > config.txt",
        "grep -rl token ~/.config/* > found.txt",
        "echo x > $OUT/app/notes.txt",
        "find . -name '*.pyc' -delete",
        "cd build && rm -rf app/x",
        "mkdir -p ~/.config/myapp",
        "cp -r ~/Downloads/x .",
        "claude mcp list",
        "conda install numpy",
        "cp notes.md ~/",  # lands as ~/notes.md: the home folder is not written as a whole
        "mv out.log ~",
        "chmod +x scripts/*.sh",
        "rm -rf build/*",
        "aws s3 cp x s3://b/ --profile $PROFILE",  # bash's variable, not PowerShell's profile
        "source ~/.bashrc && nvm use 18",  # only read
        ". ~/.profile; make",
        "gcc -o build/x x.c",
        "gzip -d logs/old.log.gz",
        "sed -n '/x/w out.txt' f",
        "cd $X; cp x *.*",
        "f=build; rm -rf $f",
        "curl -O https://example.com/file.tgz",
        "git clone https://github.com/x/y",
        "ln -s ../lib/x.so",
        "sed -i.bak s/a/b/ f.txt",
        "python3 -c 'open(\".bashrc\")'",  # in a project: its own file
        "pushd frontend && npm ci && popd && git add .claude/commands/x.md",
        "cp -b notes.md ~/",
        "ld -L$HOME x.o",
        "gzip -dc ~/.bashrc.gz > /dev/null",
        'cp x "$(echo ~)/.config"',  # lands as .config/x
        'cp evil "$(echo ~)/"',
        "rm -rf $D/build/.config",
        'cp x "$X/AppData/Roaming"',
        'rm -rf "$X/AppData/Local/Temp/x"',
    ):
        assert not names_protected(command, members, cwd=project, bare=False), command


def test_where_no_container_guards_a_project_folders_own_dot_claude_is_not_the_home_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A review, 2026-12-04: `git add .claude/commands/x.md` in a project was held on Windows as a
    change to Claude's settings; a name under home alone counts only in the home folder, and `.`
    as an argument (`tee -a . ~/.bashrc`) is not a `source`."""
    from app.core.classifier import names_protected

    monkeypatch.setenv("HOME", "C:/Users/ann")  # the home folder as Git Bash gives it
    members = container.hold_members(container.protected_set("win32", {}, r"C:\Users\ann", [], [], None))
    project = "C:/Users/ann/code/site"
    assert not names_protected("git add .claude/commands/review.md", members, cwd=project, bare=False)
    assert names_protected("git add .claude/commands/review.md", members, cwd="C:/Users/ann", bare=True), (
        "in the home folder it is home's"
    )
    for command in (
        "echo calc >> ~/.bashrc",
        'echo x >> "$HOME"/.bashrc',
        "echo x > /c/Users/ann/.claude.json",
        # read word by word (left open by the thirteenth sitting): a glob, a variable, `cd`, a parent moved
        "echo calc >> ~/.b?shrc",
        "f=rc; echo calc >> ~/.bash$f",
        "cd && echo calc >> .bashrc",
        "cd ../.. && cp x.json .claude.json",
        "cp x.json ~/AppData/Roaming/Cl*/claude_desktop_config.json",
        "mv ~/AppData/Roaming ~/old-roaming",
    ):
        assert names_protected(command, members, cwd=project, bare=False), command
    for command in ("cp -r build/* dist/", "echo x > ~/notes.txt", "rm -f *.o", "npm install"):
        assert not names_protected(command, members, cwd=project, bare=False), command
    assert container.members_to_lift("echo calc | tee -a . ~/.bashrc", ["/home/ann/.bashrc"], "/home/ann")
    assert not container.members_to_lift("cd x && . ~/.bashrc", ["/home/ann/.bashrc"], "/home/ann")


OTHER_SHELLS_FILES = (
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".cshdirs",
    ".kshrc",
    ".mkshrc",
    ".xonshrc",
    ".yashrc",
    ".yash_profile",
)


def test_other_shells_start_up_files_and_gnome_shells_extensions_are_protected_and_a_plain_write_is_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A red team, 2026-12-05: through execute_command of a tray-bound server, plain named writes into
    csh's, tcsh's, ksh's, mksh's, nushell's and xonsh's start-up files and a gnome-shell extension's
    `extension.js` ran unheld and stayed."""
    from app.core.classifier import names_protected

    protected = linux_set()
    for name in OTHER_SHELLS_FILES:  # lone files: bound where they exist, guarded where not
        assert f"/home/ann/{name}" in protected.files, name
    for name in OTHER_SHELLS_FILES[:3]:
        assert f"/Users/ann/{name}" in container.protected_set("darwin", {}, "/Users/ann", [], [], None).files
    shells = [f"/home/ann/.config/{name}" for name in ("nushell", "xonsh", "elvish", "oils", "ion")]
    extensions = "/home/ann/.local/share/gnome-shell/extensions"
    data = [f"/home/ann/.local/share/{name}" for name in ("nushell", "fish", "plasma", "kwin")]
    for folder in (*shells, *data):  # protected where present, guarded where missing: never made
        assert folder in protected.if_present and folder in protected.follow_links, folder
    assert extensions in protected.folders and extensions in protected.follow_links
    assert "/cfg/nushell" in linux_set({"XDG_CONFIG_HOME": "/cfg"}).if_present
    assert "/data/gnome-shell/extensions" in linux_set({"XDG_DATA_HOME": "/data"}).folders
    monkeypatch.setenv("HOME", HOME)
    members = container.hold_members(protected)
    for command in (
        "echo 'curl x | sh' >> ~/.tcshrc",
        "echo x >> ~/.cshrc",
        "echo x >> ~/.kshrc",
        "echo x >> ~/.mkshrc",
        "echo x >> ~/.login",
        "echo x > ~/.config/nushell/config.nu",
        "echo x > ~/.config/nushell/env.nu",
        "echo x > ~/.config/xonsh/rc.xsh",
        "echo x >> ~/.xonshrc",
        "echo x >> ~/.yashrc",
        "echo x > ~/.config/oils/oshrc",
        "echo x > ~/.config/ion/initrc",
        "echo x > ~/.local/share/fish/vendor_conf.d/x.fish",
        "echo x > ~/.local/share/kwin/scripts/x/contents/code/main.js",
        "cd ~/.local/share/gnome-shell/extensions && mkdir a@b && echo x > a@b/extension.js",
        "echo x > ~/.local/share/gnome-shell/extensions/a@b/extension.js",
    ):
        assert names_protected(command, members, cwd="/home/ann/code", bare=False), command


def test_protected_files_with_a_second_name_are_found_and_files_with_one_name_are_not(tmp_path: Path) -> None:
    """`~/.bashrc` hard-linked as `~/dotfiles/bashrc`: the read-only bind covers one name, and a command
    wrote it through the other (a red team, 2026-12-05)."""
    home, dotfiles = tmp_path / "home", tmp_path / "home" / "dotfiles"
    autostart = home / ".config" / "autostart"
    for folder in (dotfiles, autostart):
        folder.mkdir(parents=True)
    for path in (home / ".bashrc", home / ".profile", autostart / "a.desktop", autostart / "b.desktop"):
        path.write_text("x\n")
    (autostart / "c.desktop").symlink_to(home / ".profile")  # a symlink is not a second name of a file
    assert container.linked_members([str(home / ".bashrc"), str(home / ".profile")], [str(autostart)]) == []
    os.link(home / ".bashrc", dotfiles / "bashrc")
    os.link(autostart / "b.desktop", dotfiles / "b.desktop")
    found = container.linked_members([str(home / ".bashrc"), str(home / ".gone")], [str(autostart), str(home / "x")])
    assert found == [str(home / ".bashrc"), str(autostart / "b.desktop")]
    assert container.linked_members([], [str(autostart)], limit=1) == [], "only the first files are looked at"
    title, message = container.linked_member_notice(str(home / ".bashrc"))
    assert title == "A protected file has a second name"
    assert f"change {home / '.bashrc'} through another name" in message and "symbolic link" in message


def test_a_command_let_out_to_gain_privileges_runs_under_the_reaper_where_perl_and_prctls_number_are_known() -> None:
    from app.core.execution import reaper

    argv = ["/bin/bash", "-c", "sudo make install"]
    assert reaper.wrap(argv, "x86_64", "/usr/bin/perl") == ["/usr/bin/perl", "-e", reaper.SCRIPT, "157", *argv]
    assert reaper.wrap(argv, "aarch64", "/usr/bin/perl")[3] == "167"
    assert reaper.wrap(argv, "riscv64", "/usr/bin/perl") == argv, "a machine whose prctl is not known here"
    assert reaper.wrap(argv, "x86_64", None) == argv, "no Perl"


def test_lesss_settings_and_bash_completions_user_folder_are_protected_and_reading_them_is_not_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A red team, 2026-12-05: a command wrote `~/.lesskey` (its `#env` sets LESSOPEN, a program less
    runs outside) and `~/.local/share/bash-completion/completions/git` (sourced at the user's next Tab)."""
    from app.core.classifier import names_protected

    protected = linux_set()
    for name in (".lesskey", ".less", ".config/lesskey", ".config/less", ".lessfilter"):  # lesspipe runs the last
        assert f"/home/ann/{name}" in protected.files, name
    moved = linux_set({"XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data"})
    assert {"/cfg/lesskey", "/cfg/less", "/home/ann/.config/lesskey"} <= set(moved.files), "less looks in both"
    assert "/data/bash-completion" in moved.if_present and "/data/bash-completion" not in moved.folders
    monkeypatch.setenv("HOME", HOME)
    members = container.hold_members(protected)
    for command in (
        "printf '#env\\nLESSOPEN=|sh %s\\n' > ~/.lesskey",
        "echo x > ~/.config/lesskey",
        "mkdir -p ~/.local/share/bash-completion/completions && echo x > ~/.local/share/bash-completion/x/git",
    ):
        assert names_protected(command, members, cwd="/home/ann/code", bare=False), command
    for command in ("less README.md", "git log | less", "lesskey --version", "cat ~/.lesshst"):  # look-alikes
        assert not names_protected(command, members, cwd="/home/ann/code", bare=False), command


def test_what_a_link_points_to_outside_the_home_folder_is_protected_where_it_is_the_users_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`stow -d /data/dotfiles -t ~`: `~/.config/autostart/sync.desktop` -> `/data/dotfiles/...` (a red
    team, 2026-12-05, rewrote it). Not the system's files (fontconfig's `conf.d` links into /usr/share),
    nor /dev/null, nor a folder everyone shares (/tmp itself)."""
    home, data = tmp_path / "home", tmp_path / "data" / "dotfiles"
    autostart = home / ".config" / "autostart"
    for folder in (autostart, data / "fish"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (data / "sync.desktop").write_text("[Desktop Entry]\n")
    (autostart / "sync.desktop").symlink_to(data / "sync.desktop")
    (autostart / "fish").symlink_to(data / "fish")
    (autostart / "soon.desktop").symlink_to(data / "soon.desktop")  # a command could make it there
    (autostart / "conf.avail").symlink_to("/usr/share")
    (autostart / "hosts").symlink_to("/etc/hosts")
    (autostart / "masked.service").symlink_to("/dev/null")
    (autostart / "tmp").symlink_to("/tmp")
    (autostart / "in-tmp").symlink_to("/tmp/cowork-no-such-file-here")  # its folder is everyone's
    made = container.prepare(ProtectedSet((str(autostart),), follow_links=(str(autostart),)))
    assert made.files == (str(data / "sync.desktop"),)
    assert made.folders == (str(autostart), str(data / "fish")), "not /usr/share, /tmp"
    assert made.absent == (str(data / "soon.desktop"),)
    assert not container._users_place("/usr/share/fontconfig") and not container._users_place("/dev/null")
    assert not container._users_place("/tmp") and container._users_place(str(data / "sync.desktop"))


def test_what_hides_a_path_gone_since_is_left_out_of_the_bwrap_line() -> None:
    """bwrap makes the mount point of a bind or tmpfs where nothing is: an ended bus's socket became an
    empty file on the host, made by every later container (a red team, 2026-12-05)."""
    there = {"/run/user/1/bus", "/tmp/.X11-unix", "/home/ann/.local/share/cowork-terminal"}
    hidden = [
        *("--ro-bind", "/dev/null", "/run/user/1/bus"),
        *("--ro-bind", "/dev/null", "/tmp/dbus-gone"),
        *("--tmpfs", "/tmp/.X11-unix", "--tmpfs", "/run/user/1/at-spi"),
        *("--tmpfs", "/home/ann/.local/share/cowork-terminal", "--tmpfs", "/home/ann/.local/state/gone"),
        *("--ro-bind", "/home/ann/.local/share/cowork-terminal/tray.lock"),
        "/home/ann/.local/share/cowork-terminal/tray.lock",
        *("--remount-ro", "/home/ann/.local/share/cowork-terminal", "--remount-ro", "/home/ann/.local/state/gone"),
    ]
    assert container.still_there(hidden, there.__contains__) == [
        *("--ro-bind", "/dev/null", "/run/user/1/bus", "--tmpfs", "/tmp/.X11-unix"),
        *("--tmpfs", "/home/ann/.local/share/cowork-terminal"),
        *("--ro-bind", "/home/ann/.local/share/cowork-terminal/tray.lock"),
        "/home/ann/.local/share/cowork-terminal/tray.lock",
        *("--remount-ro", "/home/ann/.local/share/cowork-terminal"),
    ]
    assert container.still_there(hidden, lambda path: True) == hidden


def test_a_file_bound_under_a_tmpfs_whose_folder_is_gone_is_left_out_with_it() -> None:
    """A reviewer, 2026-12-06: the gone `--tmpfs TOP` was skipped, but a `--ro-bind FILE FILE` and a
    `--remount-ro` under TOP were kept, and bwrap could not start (no TOP to bind into)."""
    top = "/home/ann/.local/share/cowork-terminal"
    hidden = [
        *("--tmpfs", top, "--ro-bind", f"{top}/tray.lock", f"{top}/tray.lock"),
        *("--remount-ro", f"{top}/sub", "--remount-ro", top),
        *("--tmpfs", f"{top}-other", "--remount-ro", f"{top}-other"),  # a sibling whose name begins alike
    ]
    there = {f"{top}-other"}
    assert container.still_there(hidden, there.__contains__) == [
        *("--tmpfs", f"{top}-other", "--remount-ro", f"{top}-other")
    ]


def test_a_users_containers_limit_their_tasks_where_the_kernel_counts_them_alone_and_the_model_is_told() -> None:
    """RLIMIT_NPROC in the init (`ulimit -u`, counted per user namespace since Linux 5.14): a fork bomb
    stops at MAX_TASKS; root is exempt, an old kernel would count every process of the user."""
    assert container.MAX_TASKS >= 4096, "far above an everyday build's tasks"
    assert "ulimit -u 8192" in container.task_limit(1000, abi=6)
    assert container.task_limit(1000, abi=1) == ""
    assert container.task_limit(0, abi=6) == "", "root: exempt from RLIMIT_NPROC, and no cgroup is made"
    note = container.TASKS_LIMIT_NOTE.format(most=8192)
    # A one-shot command gets a container of its own: only in the session do earlier jobs count (a reviewer).
    assert "this command tried to run more than 8192 processes and threads at once" in note
    assert "in the shell session (terminal_run), background jobs left by earlier commands count too" in note
    assert "`make -j8`, not `make -j`" in note and "Wait for" not in note
    user = container.tasks_hint
    for said in (
        "bash: fork: retry: Resource temporarily unavailable",
        "bash: fork: Resource temporarily unavailable",
        "thread 'main' panicked: failed to spawn thread: Os { code: 11, kind: WouldBlock, message: "
        '"Resource temporarily unavailable" }: Resource temporarily unavailable (os error 11)',
        "Can't fork: Resource temporarily unavailable",
    ):
        if container.task_limit(1000):  # this kernel's: the note is given only where tasks are limited
            assert user(said, euid=1000) == container.TASKS_LIMIT_NOTE.format(most=8192), said
        assert user(said, euid=0) is None, "root's: not limited, so not said"
    for said in ("read: Resource temporarily unavailable", "rsync: connection unexpectedly closed", ""):
        assert user(said, euid=1000) is None, said
    assert container.bus_hint("bash: fork: retry: Resource temporarily unavailable", 1) is None, "not a bus"


PY_TRACEBACK = 'Traceback (most recent call last):\n  File "/w/build.py", line 9, in <module>\n'


@pytest.mark.parametrize(
    "said",
    [
        "bash: fork: retry: Resource temporarily unavailable",
        "zsh: fork failed: resource temporarily unavailable",
        "sh: 1: Cannot fork",
        "Can't fork: Resource temporarily unavailable at ./run.pl line 3.",
        PY_TRACEBACK + "    self.pid = _fork_exec(\n               ^^^^^^^^^^^\n"
        "BlockingIOError: [Errno 11] Resource temporarily unavailable",
        PY_TRACEBACK + "    pid = os.fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable",
        "RuntimeError: can't start new thread",
        "runtime: failed to create new OS thread (have 7 already; errno=11)",
        "fork/exec /usr/bin/git: resource temporarily unavailable",
        '[0.010s][warning][os,thread] Failed to start thread "Unknown thread" - pthread_create failed (EAGAIN)\n'
        "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory",
        "java.lang.OutOfMemoryError: unable to create new native thread",
        "thread 'main' panicked at library/std/src/thread/mod.rs: failed to spawn thread: Os { code: 11 }",
        "pthread_create failed: Resource temporarily unavailable",
    ],
)
def test_the_model_is_told_of_the_task_limit_when_a_process_or_thread_could_not_be_made(said: str) -> None:
    """Fork and thread creation refused (a reviewer, 2026-12-06: Python's, Go's, Java's and Rust's
    threads were missed)."""
    assert container.TASKS_REFUSED_SIGNS.search(said), said


@pytest.mark.parametrize(
    "said",
    [
        PY_TRACEBACK + "    data = sock.recv(4096)\nBlockingIOError: [Errno 11] Resource temporarily unavailable",
        "BlockingIOError: [Errno 11] Resource temporarily unavailable",
        "Error: Os { code: 11, kind: WouldBlock }: Resource temporarily unavailable (os error 11)",
        "read: Resource temporarily unavailable",
        "cat: -: Resource temporarily unavailable",
        "git: 'fork' is not a git command. See 'git --help'.",
    ],
)
def test_a_non_blocking_read_that_found_nothing_is_not_told_as_the_task_limit(said: str) -> None:
    """EAGAIN of any non-blocking read or write is not a task refused (a reviewer, 2026-12-06)."""
    assert not container.TASKS_REFUSED_SIGNS.search(said), said


def test_a_link_added_to_a_followed_folder_prepares_the_set_anew_and_a_file_saved_there_does_not(
    tmp_path: Path,
) -> None:
    """A link the user stows into a protected folder while the tray runs (an eighth red team,
    2026-12-05) counts from the next command; Claude saving its settings there by rename changes
    no link, and must not end the session's shell and the spare at each save."""
    folder = tmp_path / "autostart"
    folder.mkdir()
    (folder / "a.desktop").write_text("x")
    real = str(folder)
    protected = ProtectedSet(
        followed_links=((real, container._links_in(real)),),
        seen_changed_at={real: container._changed_at(real)},
    )
    assert not protected.folders_changed()
    time.sleep(0.01)
    (folder / "b.tmp").write_text("y")
    (folder / "b.tmp").rename(folder / "a.desktop")  # saved by rename: the folder's entries changed
    assert not protected.folders_changed(), "no link changed"
    (folder / "sync.desktop").symlink_to(tmp_path / "dotfiles" / "sync.desktop")
    assert protected.folders_changed(), "a link added"
