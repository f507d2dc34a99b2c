"""Every command the classifier knows, and the rule that judges it: one table, read top to bottom.

To teach the classifier a command, write its rule (a function `rule(ctx, name, args, stdin, bulk,
depth)` in the module of its family, see `rule.Analysis` for what it may use) and add one line
here. A name in no table is "not known to be read-only" (moderate). Whole families come
from the lists in `tables` (shells, package managers, disk tools, read-only programs...), after the
names below, so a name's own rule always wins over its family's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import (
    archives,
    automation,
    code_options,
    files,
    git,
    handoff,
    indirect,
    itself,
    machine,
    packages,
    readers,
    services,
    shells,
    windows,
    wrappers,
)
from .code_options import VIM_NAMES
from .rule import Analysis, Rule
from .stdin import _Stdin
from .tables import (
    _DISK_ERASE,
    _INLINE_CODE_FLAGS,
    _JS_PACKAGE_MANAGERS,
    _PACKAGE_MANAGERS,
    _PERL,
    _POWER,
    _PRIVILEGE,
    _PYTHON,
    _SAFE,
    _SELF_PROGRAM,
    _SHELLS,
)
from .words import _Word


def safe(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """Only reads (tables._SAFE): nothing to say."""


# name -> rule, by family. Aliases of one program share its rule.
RULES: dict[str, Rule] = {
    # Wrappers: run another command after some options (wrappers.py)
    **dict.fromkeys(
        [
            "nohup",
            "builtin",
            "setsid",
            "unbuffer",
            "chronic",
            "nocache",
            "torsocks",
            "coproc",
            "proxychains",
            "proxychains4",
            "fakeroot",
        ],
        wrappers.cmd_nohup,
    ),  # fmt: skip
    "exec": wrappers.cmd_exec,
    "command": wrappers.cmd_command,
    "time": wrappers.cmd_time,
    "nice": wrappers.cmd_nice,
    "ionice": wrappers.cmd_ionice,
    "timeout": wrappers.cmd_timeout,
    "taskset": wrappers.cmd_taskset,
    "chrt": wrappers.cmd_taskset,
    "stdbuf": wrappers.cmd_stdbuf,
    "caffeinate": wrappers.cmd_caffeinate,
    "env": wrappers.cmd_env,
    "xargs": wrappers.cmd_xargs,
    "parallel": wrappers.cmd_parallel,
    "watch": wrappers.cmd_watch,
    "flock": wrappers.cmd_flock,
    **dict.fromkeys(wrappers.RUNNERS, wrappers.cmd_runner),
    "busybox": wrappers.cmd_busybox,
    "toybox": wrappers.cmd_busybox,
    "chroot": wrappers.cmd_chroot,
    "ssh": wrappers.cmd_ssh,
    # ssh's kin, held when they reach this same machine (wrappers.py, issue 21)
    "autossh": wrappers.cmd_autossh,
    "scp": wrappers.cmd_scp,
    "sshfs": wrappers.cmd_scp,
    "sftp": wrappers.cmd_sftp,
    "mosh": wrappers.cmd_mosh,
    **dict.fromkeys(wrappers.PSSH_NAMES, wrappers.cmd_pssh),
    "ansible": wrappers.cmd_ansible,
    "ansible-playbook": wrappers.cmd_ansible,
    "curl": wrappers.cmd_curl,  # its --unix-socket (with nc -U and socat's UNIX-CONNECT)
    "slogin": wrappers.cmd_ssh,
    "dbclient": wrappers.cmd_ssh,  # dropbear's
    "sshpass": wrappers.cmd_sshpass,
    **dict.fromkeys(
        ["ssh-copy-id", "lftp", "unison", "pdsh", "clush", "fab", "hg", "svn", "bzr", "brz", "darcs"],
        wrappers.cmd_ssh_client,
    ),
    "npx": wrappers.cmd_npx,
    "bunx": wrappers.cmd_npx,
    "pnpx": wrappers.cmd_npx,
    "uvx": wrappers.cmd_npx,
    "nc": wrappers.cmd_nc,
    "ncat": wrappers.cmd_nc,
    "netcat": wrappers.cmd_nc,
    "socat": wrappers.cmd_socat,
    "script": wrappers.cmd_script,
    # Code in strings and the shell's own state (shells.py)
    "eval": shells.cmd_eval,
    "source": shells.cmd_source,
    ".": shells.cmd_source,
    "trap": shells.cmd_trap,
    "alias": shells.cmd_alias,
    "shopt": shells.cmd_shopt,
    "set": shells.cmd_set,
    "hash": shells.cmd_hash,
    "mapfile": shells.cmd_mapfile,
    "readarray": shells.cmd_mapfile,
    **dict.fromkeys(["export", "declare", "typeset", "local", "readonly"], shells.cmd_declare),  # `builtin export`
    "cd": shells.cmd_cd,
    "pushd": shells.cmd_cd,
    "popd": shells.cmd_cd,
    # Removing, moving, re-permissioning files (files.py)
    "rm": files.cmd_rm,
    "rmdir": files.cmd_rmdir,
    "unlink": files.cmd_rmdir,
    "truncate": files.cmd_truncate,
    "shred": files.cmd_shred,
    "wipe": files.cmd_shred,
    "srm": files.cmd_shred,
    "rimraf": files.cmd_rimraf,
    "del-cli": files.cmd_rimraf,
    "find": files.cmd_find,
    "fd": files.cmd_fd,
    "cmake": files.cmd_cmake,
    "ed": files.cmd_ed,
    **dict.fromkeys(VIM_NAMES, files.cmd_vim),
    **dict.fromkeys(["make", "gmake"], files.cmd_make),
    "systemd-tmpfiles": files.cmd_systemd_tmpfiles,
    "run-parts": files.cmd_run_parts,
    "ctest": files.cmd_ctest,
    "java": files.cmd_java,
    "jshell": indirect.cmd_jshell,
    "fdfind": files.cmd_fd,
    "mv": files.cmd_mv,
    "rsync": files.cmd_rsync,
    "chmod": files.cmd_chmod,
    "chown": files.cmd_chmod,
    "chgrp": files.cmd_chmod,
    # Archivers, sync and backup tools with ways to delete (archives.py)
    "tar": archives.cmd_tar,
    "bsdtar": archives.cmd_tar,
    "gtar": archives.cmd_tar,
    "zip": archives.cmd_zip,
    **dict.fromkeys(["7z", "7za", "7zr", "7zz"], archives.cmd_7z),
    "unzip": archives.cmd_unzip,
    "cpio": archives.cmd_cpio,
    "rclone": archives.cmd_rclone,
    **dict.fromkeys(
        ["gsutil", "s3cmd", "borg", "restic", "rdiff-backup", "duplicity", "azcopy", "mc"], archives.cmd_remote_tool
    ),
    **dict.fromkeys(["borg", "restic", "rdiff-backup", "duplicity"], wrappers.over_ssh(archives.cmd_remote_tool)),
    "aws": archives.cmd_aws,
    # Processes, power, disks, scheduled jobs (machine.py)
    "kill": machine.cmd_kill,
    "stty": machine.cmd_stty,
    "tput": machine.cmd_tput,
    "killall": machine.cmd_killall,
    "killall5": machine.cmd_killall,
    "pkill": machine.cmd_pkill,
    "systemctl": machine.cmd_systemctl,
    "loginctl": machine.cmd_loginctl,
    "init": machine.cmd_init,
    "telinit": machine.cmd_init,
    "dd": machine.cmd_dd,
    "ddrescue": machine.cmd_dd,
    "dcfldd": machine.cmd_dd,
    "dc3dd": machine.cmd_dd,
    "diskutil": machine.cmd_diskutil,
    "zpool": machine.cmd_zpool,
    "zfs": machine.cmd_zpool,
    # Asking another service to start a program later or elsewhere (handoff.py)
    "systemd-run": handoff.cmd_systemd_run,
    "busctl": handoff.cmd_busctl,
    "dbus-monitor": handoff.cmd_dbus_monitor,
    "gdbus": handoff.cmd_gdbus,
    "dbus-send": handoff.cmd_dbus_send,
    "qdbus": handoff.cmd_dbus_send,
    "crontab": handoff.cmd_crontab,
    "gpg-connect-agent": handoff.cmd_gpg_connect_agent,
    "gpgconf": handoff.cmd_gpgconf,
    "at": handoff.cmd_at,
    "batch": handoff.cmd_at,
    "atq": handoff.cmd_at,
    "atrm": handoff.cmd_at,
    "launchctl": handoff.cmd_launchctl,
    "schtasks": handoff.cmd_schtasks,
    "dbus-update-activation-environment": handoff.cmd_hands_off,
    "brew": handoff.cmd_brew,  # a package manager, and its `services start`
    "shortcuts": handoff.cmd_shortcuts,
    "pm2": handoff.cmd_pm2,
    "watchman": handoff.cmd_watchman,
    **dict.fromkeys(["jupyter", "jupyter-run", "jupyter-console", "jupyter-qtconsole"], handoff.cmd_jupyter),
    "incrontab": handoff.cmd_incrontab,
    "supervisorctl": handoff.cmd_supervisorctl,
    "emacsclient": code_options.cmd_emacsclient,
    # ... and the desktop's openers (machine.py)
    "open": machine.cmd_open,
    **dict.fromkeys(
        ["xdg-open", "gio", "exo-open", "kde-open", "kde-open5", "kioclient", "kioclient5", "kioclient6", "kfmclient"],
        machine.cmd_opener,
    ),
    "gtk-launch": machine.cmd_desktop_launcher,
    **dict.fromkeys(["dconf", "gsettings"], machine.cmd_dconf),  # the desktop's settings
    # ... and what a container asks to run a command outside every container (machine.py)
    **dict.fromkeys(["flatpak-spawn", "host-spawn", "distrobox-host-exec"], machine.cmd_host_spawn),
    "dex": machine.cmd_desktop_launcher,
    # Acting inside other programs: synthetic input, debuggers and tracers (automation.py)
    **dict.fromkeys(["xdotool", "ydotool", "wtype", "xte", "cliclick", "xdo", "dotool"], automation.cmd_input),
    "osascript": automation.cmd_osascript,
    **dict.fromkeys(["tmux", "screen", "byobu", "byobu-tmux", "byobu-screen", "tmate"], automation.cmd_multiplexer),
    # ... and terminals whose server, running elsewhere, starts programs or types for them
    "zellij": automation.cmd_zellij,
    "wezterm": automation.cmd_wezterm,
    "kitty": automation.cmd_kitty,
    "kitten": automation.cmd_kitty,
    "alacritty": automation.cmd_alacritty,
    **dict.fromkeys(
        ["footclient", "urxvtc", "urxvtcd", "gnome-terminal", "xfce4-terminal", "tilix", "terminator", "mate-terminal"],
        automation.cmd_terminal_client,
    ),
    "dtach": automation.cmd_dtach,
    "abduco": automation.cmd_abduco,
    "gdb": automation.cmd_gdb,
    "lldb": automation.cmd_lldb,
    "strace": automation.cmd_tracer,
    "ltrace": automation.cmd_tracer,
    "perf": automation.cmd_perf,
    **dict.fromkeys(
        ["gdbserver", "gcore", "pyrasite", "frida", "reptyr", "dtruss", "dtrace"], automation.cmd_attach_always
    ),
    "py-spy": automation.cmd_py_spy,
    # git and its subcommands (git.py, which has its own table of subcommands)
    "git": git.cmd_git,
    # Package managers with rules of their own (packages.py); the rest are families below
    "dpkg": packages.cmd_dpkg,
    "pacman": packages.cmd_pacman,
    "yay": packages.cmd_pacman,
    "paru": packages.cmd_pacman,
    "nix-env": packages.cmd_nix_env,
    "nix": packages.cmd_nix,
    "uv": packages.cmd_uv,
    "claude": packages.cmd_claude,
    # Containers, clusters, clouds, databases (services.py)
    "docker": services.cmd_docker,
    "podman": services.cmd_docker,
    "docker-compose": services.cmd_docker,  # Compose v1, a program of its own
    "nerdctl": services.cmd_docker,  # containerd's docker CLI: the same options
    "podman-compose": services.cmd_docker,  # as docker-compose
    "podman-remote": services.cmd_docker,  # podman's client of a remote or a machine's service
    "finch": services.cmd_docker,  # AWS's nerdctl in a VM
    # Machines and system containers a daemon or a VM runs outside the container (services.py)
    "lxc": services.cmd_lxc,
    "incus": services.cmd_lxc,
    "virsh": services.cmd_virsh,
    **dict.fromkeys(["virt-install", "virt-clone", "virt-xml"], services.cmd_virt_install),
    "ctr": services.cmd_ctr,
    "crictl": services.cmd_crictl,
    **dict.fromkeys(services.VM_TOOLS, services.cmd_vm_tool),
    **dict.fromkeys(services.VM_SHELLS, services.cmd_vm_shell),
    **dict.fromkeys(
        (
            "psql",
            "mysql",
            "mariadb",
            "sqlite3",
            "sqlcmd",
            "duckdb",
            "clickhouse-client",
            "redis-cli",
            "valkey-cli",
            "keydb-cli",
            "mongosh",
            "mongo",
            "cqlsh",
        ),
        services.cmd_database,
    ),
    "kubectl": services.cmd_kubectl,
    **dict.fromkeys(["microk8s", "microk8s.kubectl", "k3s"], services.cmd_local_cluster),
    "helm": services.cmd_helm,
    **dict.fromkeys(["orb", "orbctl"], services.cmd_orb),
    "terraform": services.cmd_terraform,
    "tofu": services.cmd_terraform,
    "gh": services.cmd_gh,
    "dropdb": services.cmd_dropdb,
    "dropuser": services.cmd_dropdb,
    # Mostly read-only programs that can write or run things when asked (readers.py)
    "sed": readers.cmd_sed,
    "awk": readers.cmd_awk,
    "gawk": readers.cmd_awk,
    "mawk": readers.cmd_awk,
    "nawk": readers.cmd_awk,
    "tee": readers.cmd_tee,
    "sort": readers.cmd_output_option,
    "file": readers.cmd_file,
    "expand": readers.cmd_expand,
    "tree": readers.cmd_output_option,
    "info": readers.cmd_output_option,
    "less": readers.cmd_output_option,
    "uniq": readers.cmd_output_operand,
    "xxd": readers.cmd_output_operand,
    "yq": readers.cmd_yq,
    "date": readers.cmd_date,
    "hostname": readers.cmd_hostname,
    "history": readers.cmd_history,
    "exit": readers.cmd_exit,
    "logout": readers.cmd_exit,
    # Windows programs: the registry, services that start programs, mirroring and wiping tools (windows.py)
    "reg": windows.cmd_reg,
    "regedit": windows.cmd_regedit,
    "regedt32": windows.cmd_regedit,
    "setx": windows.cmd_setx,
    "wmic": windows.cmd_wmic,
    "explorer": windows.cmd_explorer,
    "bitsadmin": windows.cmd_bitsadmin,
    **dict.fromkeys(["winrs", "psexec", "psexec64", "paexec"], windows.cmd_remote_shell),
    "robocopy": windows.cmd_robocopy,
    "sc": windows.cmd_sc,
    "msiexec": windows.cmd_msiexec,
    "wsl": windows.cmd_wsl,
    "wslg": windows.cmd_wsl,  # WSL's launcher of Linux GUI programs: the same words
    **dict.fromkeys(["debian", "kali", "opensuse-tumbleweed", "fedoraremix"], windows.cmd_wsl_launcher),
    "conhost": windows.cmd_conhost,
    "pcalua": windows.cmd_pcalua,
    "wt": windows.cmd_wt,
    "winrm": windows.cmd_winrm,
    "winrm.cmd": windows.cmd_winrm,
    "net": windows.cmd_net,
    "net1": windows.cmd_net,
    "start": windows.cmd_start,  # Git Bash's, which is cmd's
    "sdelete": files.cmd_shred,
    "sdelete64": files.cmd_shred,
    "fsutil": windows.cmd_fsutil,
    "vssadmin": windows.cmd_backup_tool,
    "wbadmin": windows.cmd_backup_tool,
    **dict.fromkeys(["cscript", "wscript", "mshta", "regsvr32", "rundll32"], windows.cmd_script_host),
    "certutil": windows.cmd_certutil,
    "forfiles": windows.cmd_forfiles,
    # Cowork Terminal itself (itself.py); any spelling of its name is matched in `rule_for`
    "cowork-terminal": itself.cmd_cowork_terminal,
}

# Whole families from `tables`, in the order they win over each other (a name's own rule above wins first).
_FAMILIES: tuple[tuple[Iterable[str], Rule], ...] = (
    (_INLINE_CODE_FLAGS, shells.cmd_interpreter),
    (_SHELLS, shells.cmd_shell),
    (_PRIVILEGE, wrappers.privileged),
    (_PACKAGE_MANAGERS, packages.cmd_package_manager),
    (_JS_PACKAGE_MANAGERS, packages.cmd_js_package_manager),
    (_DISK_ERASE, machine.cmd_disk_tool),
    (_POWER, machine.cmd_power),
    (_SAFE, safe),
)
for _names, _rule in _FAMILIES:
    for _name in _names:
        RULES.setdefault(_name, _rule)

# Names known by their shape: python3.12, perl5.36, pip3.11, mkfs.ext4, newfs_hfs.
PATTERNS: tuple[tuple[re.Pattern[str], Rule], ...] = (
    (_PYTHON, shells.cmd_interpreter),
    (_PERL, shells.cmd_interpreter),
    (re.compile(r"^pip[0-9.]*$"), packages.cmd_package_manager),
    (re.compile(r"^(mkfs|newfs)"), machine.cmd_mkfs),
    (re.compile(r"^ubuntu[0-9]*$"), windows.cmd_wsl_launcher),  # ubuntu.exe, ubuntu2204.exe: WSL's launchers
    (wrappers.LOADER, wrappers.cmd_loader),  # ld.so, ld-linux-x86-64.so.2: runs the program it is given
)


def rule_for(name: str) -> Rule | None:
    """The rule that judges the command `name` (unquoted, folder and .exe removed, lower case); None
    for a program no rule knows: the analyzer says it is "not known to be read-only" (moderate)."""
    rule = RULES.get(name)
    if rule is not None:
        return rule
    if re.sub(r"\W", "_", name) == _SELF_PROGRAM:  # cowork_terminal, cowork.terminal...
        return itself.cmd_cowork_terminal
    for pattern, matched in PATTERNS:
        if pattern.match(name):
            return matched
    return None
