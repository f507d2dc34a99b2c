"""Commands that ask a program already running outside the command's container (a terminal's or an
editor's server, systemd, LaunchServices, a daemon) to start a program or type into a shell: what
it starts is not the command's child, so Cowork Terminal can neither see, pause nor stop it, and
the protected set's read-only binds do not hold it (red team, 2026-12-05: each ran unasked). Issue
21: each is held in plain words; what only looks, lists or opens a folder keeps its tier."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.classifier import Danger, Tier, classify, names_protected
from tests.handoff_checks import held_outside

PROJECT = "/home/ana/project"
DOCUMENTS = "/home/ana/Documents"

HANDOFFS = [
    # Terminals and multiplexers whose server runs elsewhere
    "zellij run -- make",
    "zellij run -f -n build -- npm test",
    "zellij action write-chars 'make test'",
    "zellij action write 109 97 107 101 10",
    "zellij action new-pane -- make",
    "zellij -s work action write-chars ls",
    "zellij edit notes.txt",
    "wezterm cli spawn -- make",
    "wezterm cli --prefer-mux spawn make",
    "wezterm cli split-pane --right -- make",
    "wezterm cli send-text 'make test'",
    "wezterm cli send-text --no-paste < cmds.txt",
    "wezterm start -- make",
    "wezterm -e make",  # a running GUI is asked, unless --always-new-process
    "kitty @ launch make",
    "kitty @ --to unix:/tmp/kitty launch --type=tab make",
    "kitty @ send-text 'make\\r'",
    "kitty @ send-key ctrl+c",
    "kitty @ run make",
    "kitty @ action new_window",
    "kitty --single-instance make",
    "kitty +kitten @ launch make",
    "kitten @ launch make",
    "kitten @ send-text ls",
    "alacritty msg create-window -e make",
    "alacritty msg --socket /tmp/a.sock create-window",
    "footclient make",
    "footclient",
    "urxvtc -e make",
    "gnome-terminal -- make",
    "byobu send-keys -t x 'make' Enter",
    "byobu new-window make",
    "byobu -X stuff 'make^M'",
    "byobu-tmux send-keys make Enter",
    "tmate send-keys -t x make Enter",
    "tmate new-session -d make",
    "dtach -p /tmp/s <<< make",
    "dtach -a /tmp/s",
    "dtach -A /tmp/s bash",
    "abduco -a work",
    "abduco -A work bash",
    # Editors' servers
    "emacsclient -e '(message \"hi\")'",
    "emacsclient --eval '(kill-emacs)'",
    "emacsclient -s work -e '(x)'",
    "emacsclient -ne '(x)'",
    "emacsclient -n --eval='(x)'",
    "emacsclient -nw -e '(x)'",  # -nw is one option (getopt_long_only), -e the next
    "emacsclient -eval '(x)'",
    "nvim --server /tmp/s --remote-send ':!make<CR>'",
    "nvim --server /tmp/s --remote-expr 'system(\"make\")'",
    "nvim --server /tmp/s --remote-ui",
    "vim --servername X --remote-send ':!x<CR>'",
    "gvim --servername X --remote-expr 'execute(\"!x\")'",
    "vim --servername X --remote '+!make' notes.txt",
    "vim --remote-silent '+w! /home/ana/.bashrc' notes.txt",
    "nvr -c make",
    "nvr --remote-send ':wq<CR>'",
    "nvr --remote-expr 'getcwd()'",
    # systemd, the system's or the user's
    "systemctl start foo",
    "systemctl --user restart foo",
    "systemctl reload nginx",
    "systemctl try-restart foo",
    "systemctl reload-or-restart foo",
    "systemctl enable --now foo",
    "systemctl --user enable foo",
    "systemctl link /home/ana/foo.service",
    "systemctl edit foo",
    "systemctl --user set-environment LD_PRELOAD=/tmp/x.so",
    "systemctl --user import-environment",
    "systemctl daemon-reload",
    "systemctl daemon-reexec",
    "systemctl set-default graphical.target",
    "loginctl enable-linger",
    "loginctl enable-linger ana",
    "dbus-update-activation-environment --all",
    "dbus-update-activation-environment --systemd PATH",
    # What LaunchServices or the desktop starts
    "open -a Terminal x.sh",
    "open x.command",
    "open x.terminal",
    "open x.app",
    "open x.app/",
    "open -b com.apple.Terminal",
    "open -n -a Calculator",
    "open file.xyz",
    "open ssh://localhost",
    "open file:///tmp/x.command",
    "open -u file:///tmp/x.command",
    "open -e notes.txt",
    "open . --args -x",
    "open $TARGET",
    "shortcuts run Foo",
    "brew services start redis",
    "brew services run redis",
    "brew services restart redis",
    "xdg-open x.desktop",
    "xdg-open file.xyz",
    "gio open x.sh",
    "gtk-launch firefox",
    "kioclient exec x.desktop",
    "kioclient5 exec ./run.sh",
    "exo-open --launch TerminalEmulator make",
    "exo-open x.desktop",
    # Daemons that start programs
    "pm2 start app.js",
    "pm2 start npm -- run dev",
    "pm2 restart all",
    "pm2 reload app",
    "pm2 startOrRestart ecosystem.config.js",
    "pm2 resurrect",
    "pm2 startup",
    "watchman -- trigger /home/ana/project build '*.c' -- make",
    "watchman trigger /home/ana/project build '*.c' -- make",
    'watchman -j <<< \'["trigger", "/x", {"name": "t", "command": ["make"]}]\'',
    "watchman -j < trigger.json",
    "jupyter run --existing kernel-1.json x.py",
    "jupyter console --existing",
    "jupyter console --existing=kernel-1.json",
    "jupyter qtconsole --existing",
    "incrontab table.txt",
    "incrontab -e",
    "incrontab - <<< '/tmp IN_CREATE make'",
    "supervisorctl start web",
    "supervisorctl restart all",
    "supervisorctl update",
    "supervisorctl -c /etc/supervisord.conf start web",
    "supervisorctl fg web",
]


@pytest.mark.parametrize("command", HANDOFFS)
def test_asking_a_program_outside_to_start_something_is_held_as_outside_the_watch(command: str) -> None:
    held_outside(command, PROJECT)


# Each was moderate before (a program no rule knew, or one that changes services) and stays so.
KEPT_MODERATE = [
    "zellij list-sessions",
    "zellij ls",
    "zellij kill-session work",
    "zellij action dump-screen /tmp/screen.txt",
    "zellij action focus-next-pane",
    "wezterm cli list",
    "wezterm cli get-text",
    "wezterm ls-fonts",
    "wezterm start --always-new-process -- make",
    "kitty @ ls",
    "kitten @ ls",
    "kitty @ get-text",
    "kitty make",
    "kitten icat x.png",
    "alacritty -e make",
    "byobu ls",
    "byobu -ls",
    "byobu attach -t work",
    "tmate ls",
    "dtach -n /tmp/s make",
    "abduco",
    "abduco -n work make",
    "abduco -ar work",  # attached read-only: nothing typed there
    "emacsclient notes.txt",
    "emacsclient -c notes.txt",
    "emacsclient -nw notes.txt",
    "nvim --server /tmp/s --remote notes.txt",
    "vim --servername X --remote-tab notes.txt",
    "vim --serverlist",
    "vim --remote-silent +12 notes.txt",
    "nvr notes.txt",
    "systemctl stop foo",
    "systemctl disable foo",
    "systemctl mask foo",
    "loginctl disable-linger",
    "open -R x.app",
    "open -R x.txt",
    "open .",
    "open src/",
    "open https://example.com",
    "open -g https://example.com",
    "open -u https://example.com",
    "open ~/Documents/",
    "open",
    "shortcuts list",
    "brew services list",
    "brew services stop redis",
    "xdg-open https://example.com",
    "xdg-open .",
    "gio open https://example.com",
    "gio info notes.txt",
    "kioclient5 exec https://example.com",
    "kioclient ls /tmp",
    "exo-open https://example.com",
    "pm2 list",
    "pm2 logs",
    "pm2 stop all",
    "watchman watch-list",
    "watchman trigger-list /home/ana/project",
    "jupyter run x.py",
    "jupyter kernelspec list",
    "incrontab -l",
    "supervisorctl status",
    "supervisorctl stop web",
    "supervisorctl tail web",
]


@pytest.mark.parametrize("command", KEPT_MODERATE)
def test_looking_listing_or_opening_a_folder_or_a_web_page_keeps_its_tier(command: str) -> None:
    assert classify(command, cwd=PROJECT).tier is Tier.MODERATE


@pytest.mark.parametrize(
    "command", ["systemctl status foo", "systemctl list-units", "systemctl show foo", "systemctl cat foo",
                "systemctl is-active foo", "brew list"]
)  # fmt: skip
def test_reading_services_stays_safe(command: str) -> None:
    assert classify(command, cwd=PROJECT).tier is Tier.SAFE


@pytest.mark.parametrize(
    "command",
    [
        f"zellij run -- rm -rf {DOCUMENTS}",
        f"zellij action write-chars 'rm -rf {DOCUMENTS}'",
        f"zellij action new-pane -c -- rm -rf {DOCUMENTS}",
        f"wezterm cli spawn --cwd /tmp -- rm -rf {DOCUMENTS}",
        f"wezterm cli send-text 'rm -rf {DOCUMENTS}'",
        f"kitty @ launch --title x rm -rf {DOCUMENTS}",
        f"kitty @ send-text 'rm -rf {DOCUMENTS}\\n'",
        f"kitten @ run rm -rf {DOCUMENTS}",
        f"alacritty msg create-window --working-directory /tmp -e rm -rf {DOCUMENTS}",
        f"footclient -D /tmp rm -rf {DOCUMENTS}",
        f"urxvtc -e rm -rf {DOCUMENTS}",
        f"gnome-terminal -- rm -rf {DOCUMENTS}",
        f"gnome-terminal --command 'rm -rf {DOCUMENTS}'",
        f"byobu send-keys 'rm -rf {DOCUMENTS}' Enter",
        f"tmate new -d 'rm -rf {DOCUMENTS}'",
        f"dtach -p /tmp/s <<< 'rm -rf {DOCUMENTS}'",
        f"emacsclient -e '(delete-directory \"{DOCUMENTS}\" t)'",
        f"emacsclient -n -e '(message \"x\")' '(delete-directory \"{DOCUMENTS}\" t)'",
        f"nvim --server /tmp/s --remote-send '<Esc>:!rm -rf {DOCUMENTS}<CR>'",
        f"nvim --server /tmp/s --remote-expr 'system(\"rm -rf {DOCUMENTS}\")'",
        f"nvr -c '!rm -rf {DOCUMENTS}'",
        f"vim --servername X --remote '+!rm -rf {DOCUMENTS}' notes.txt",
        f"pm2 start 'rm -rf {DOCUMENTS}'",
        f"pm2 start bash -- -c 'rm -rf {DOCUMENTS}'",
        f"watchman -- trigger /home/ana/project t '*.c' -- rm -rf {DOCUMENTS}",
        f"incrontab - <<< '/tmp IN_CREATE rm -rf {DOCUMENTS}'",
    ],
)
def test_what_the_program_outside_is_given_to_run_is_still_judged(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.danger is Danger.LOSES_FILES, result
    assert any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), result


@pytest.mark.parametrize("command", [f"dtach -c /tmp/s rm -rf {DOCUMENTS}", f"abduco -n work rm -rf {DOCUMENTS}"])
def test_a_session_started_as_the_commands_own_child_is_judged_not_handed_off(command: str) -> None:
    result = classify(command, cwd=PROJECT)
    assert result.danger is Danger.LOSES_FILES
    assert not any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), result


def desktop_file(folder: Path, exec_line: str, *more: str) -> Path:
    path = folder / "x.desktop"
    path.write_text("\n".join(["[Desktop Entry]", "Type=Application", "Name=X", f"Exec={exec_line}", *more]) + "\n")
    return path


@pytest.mark.parametrize("launcher", ["gio launch", "dex"])
def test_a_desktop_entry_launched_is_held_and_its_exec_line_is_judged(launcher: str, tmp_path: Path) -> None:
    """Red team: `gio launch x.desktop` ran its Exec= line unjudged. The program it names may also
    be one instance of an application already running outside, which does the work: held."""
    desktop_file(tmp_path, f"sh -c 'rm -rf {DOCUMENTS}' %f")
    result = classify(f"{launcher} x.desktop", cwd=str(tmp_path))
    assert result.danger is Danger.LOSES_FILES, result
    assert any(f.danger is Danger.OUTSIDE_WATCH for f in result.findings), result
    assert str(tmp_path / "x.desktop") in result.scripts

    desktop_file(tmp_path, "make %U")
    result = classify(f"{launcher} x.desktop", cwd=str(tmp_path))
    assert result.danger is Danger.OUTSIDE_WATCH, result


def test_a_desktop_entry_that_cannot_be_read_is_held(tmp_path: Path) -> None:
    result = classify("gio launch missing.desktop", cwd=str(tmp_path))
    assert result.tier is Tier.DESTRUCTIVE
    assert any("cannot be read" in reason for reason in result.reasons), result


def test_a_folder_open_names_that_is_an_application_bundle_is_held(tmp_path: Path) -> None:
    """`open .` inside `Foo.app` starts the application, as `open Foo.app` does."""
    bundle = tmp_path / "Foo.app"
    bundle.mkdir()
    assert classify("open .", cwd=str(bundle)).danger is Danger.OUTSIDE_WATCH
    assert classify("open .", cwd=str(tmp_path)).tier is Tier.MODERATE


@pytest.mark.parametrize(
    "command", ["zellij action dump-screen ~/.b?shrc", "kitty @ ls ~/.bash$X", "emacsclient ~/.b?shrc",
                "nvr ~/.b?shrc", "open -R ~/.b?shrc", "pm2 logs ~/.b?shrc", "xdg-open ~/.b?shrc"]
)  # fmt: skip
def test_a_program_given_a_rule_still_counts_as_writing_what_its_words_name(command: str) -> None:
    """A program no rule knew may write any file its words name: where no container keeps the
    protected set read-only, naming one of its members by a pattern still asks (running.py)."""
    assert names_protected(command, [str(Path.home() / ".bashrc")], cwd=PROJECT)
