"""Command tables: the names, subcommands and patterns the rules look up."""

from __future__ import annotations

import re


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"})
_PRIVILEGE = frozenset(
    {"sudo", "sudoedit", "su", "doas", "pkexec", "run0", "gksudo", "gksu", "kdesu", "kdesudo", "runas",
     "sudo-rs", "gsudo"}  # sudo-rs's own name; gsudo: Windows' sudo, elevated through UAC (red team, Windows)
)  # fmt: skip
_SAFE = _names(
    """
    ls dir vdir cat tac head tail less more most bat batcat grep egrep fgrep zgrep rg ag ack fd fdfind
    locate which whereis type file stat wc cut tr nl od hexdump xxd strings diff cmp comm md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum shasum b2sum cksum base32 base64 echo printf pwd cd pushd
    popd dirs true false : test [ [[ cal uname whoami id groups who w last uptime df du free vmstat
    iostat ps pgrep top htop btop lsof lsblk blkid findmnt printenv seq yes sleep wait jobs basename
    dirname realpath readlink tree jq yq column fold fmt paste join expand unexpand rev man info help
    apropos whatis tldr read set shopt unset unalias hash tput clear nproc arch locale getconf lscpu
    lsusb lspci sw_vers netstat ss zcat zless bzcat xzcat expr let bc cowsay fortune ping host dig
    nslookup whois traceroute tracepath mtr uniq sort sed awk gawk mawk nawk tee date hostname history
    kill env export local declare typeset readonly getopts shift return break continue caller
    logname tty stty pstree numfmt factor look units sum
    """
)  # tee/sort/uniq/sed/awk/date/hostname/history/kill/env are refined by their handlers
_DISK_ERASE = _names(
    """
    fdisk sfdisk cfdisk gdisk sgdisk cgdisk parted gparted wipefs diskpart blkdiscard kpartx mkswap
    mke2fs mkdosfs mkntfs mkexfatfs mformat format cryptsetup mdadm pvcreate pvremove vgcreate vgremove
    lvremove lvreduce sg_format zerofree
    """
)
_DISK_LISTING = {"fdisk": {"-l", "--list"}, "sfdisk": {"-l", "--list", "-d", "--dump"},
                 "parted": {"-l", "--list"}, "gdisk": {"-l"}, "sgdisk": {"-p", "--print"}}  # fmt: skip
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "kexec"})
_SYSTEMCTL_POWER = frozenset(
    {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep",
     "suspend-then-hibernate", "rescue", "emergency", "soft-reboot", "isolate"}
)  # fmt: skip
_SYSTEMCTL_SAFE = frozenset(
    {"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
     "list-dependencies", "list-jobs", "is-active", "is-enabled", "is-failed", "is-system-running", "help"}
)  # fmt: skip

# name: (subcommands that remove packages, subcommands that only read)
_PACKAGE_MANAGERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    name: (frozenset(remove.split()), frozenset(read.split()))
    for names, remove, read in [
        ("apt apt-get aptitude", "remove purge autoremove autopurge",
         "list search show policy depends rdepends changelog showsrc madison help why"),
        ("dnf yum microdnf tdnf", "remove erase autoremove",
         "list info search provides repolist check-update repoquery help"),
        ("zypper", "remove rm", "search se info if list-updates lu"),
        ("apk", "del", "info search list"),
        ("brew", "uninstall remove rm autoremove", "list ls info search doctor config outdated deps uses "
         "leaves home --version"),
        ("port", "uninstall", "list info search installed"),
        ("snap", "remove", "list info find"),
        ("flatpak", "uninstall remove", "list info search"),
        ("pip pip3 pip2", "uninstall", "list show freeze check search index inspect debug help"),
        ("pipx", "uninstall uninstall-all", "list environment"),
        ("conda mamba micromamba", "remove uninstall", "list info search"),
        ("gem", "uninstall", "list search info env which"),
        ("cargo", "uninstall", "search tree metadata"),
        ("choco", "uninstall", "list search info"),
        ("winget", "uninstall remove", "list search show"),
        ("scoop", "uninstall", "list search info status"),
    ]
    for name in names.split()
}  # fmt: skip
_JS_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_JS_REMOVE = frozenset({"uninstall", "remove", "rm", "r", "un", "unlink"})
_JS_READ = frozenset({"ls", "list", "ll", "la", "view", "info", "show", "outdated", "search", "explain",
                      "why", "help", "root", "prefix", "doctor", "fund", "audit"})  # fmt: skip

_GIT_READ = _names(
    """
    status log diff show blame grep ls-files ls-tree ls-remote rev-parse describe shortlog cat-file
    show-ref for-each-ref rev-list name-rev merge-base count-objects fsck verify-commit verify-tag
    check-ignore check-attr whatchanged help version diff-tree diff-files diff-index var cherry
    range-diff annotate show-branch
    """
)
_GIT_KNOWN = _GIT_READ | _names(
    """
    add commit push pull fetch merge rebase checkout switch restore reset clean branch tag stash remote
    config rm mv clone init cherry-pick revert am apply bisect notes archive bundle format-patch
    submodule worktree gc prune reflog filter-branch filter-repo replace update-ref update-index
    sparse-checkout lfs maintenance repack pack-refs mergetool difftool citool gui request-pull
    send-email credential hash-object read-tree write-tree commit-tree symbolic-ref
    """
)
# `git -c` keys whose value git runs as a command.
_GIT_EXEC_CONFIG = re.compile(
    r"^(alias\.|core\.(sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)|"
    r".*\.(command|cmd|textconv|clean|smudge|process|helper|program|tool|path)$|sequence\.editor|credential|"
    # Third red team, 2026-12-04: each ran `rm -rf` from `git -c KEY=...` while judged safe or moderate.
    r"diff\.external|.*\.(uploadpack|receivepack|driver|vcs|update|difffilter)$|pager\.|"
    r"uploadpack\.packobjectshook|protocol\.(?:ext\.)?allow$)",
    re.I,
)
_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                    "--config-env", "--attr-source", "--exec-path"})  # fmt: skip

_INLINE_CODE_FLAGS: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "expect": frozenset({"-c"}),
    "tclsh": frozenset(),  # Tcl: a script file, or code typed into it (`tclsh <<< 'file delete -force DIR'`)
    "wish": frozenset(),
    "pwsh": frozenset({"-c", "-command"}),
    "powershell": frozenset({"-c", "-command"}),
    "cmd": frozenset({"/c", "/k", "//c", "//k"}),
}
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*w?$")
_PERL = re.compile(r"^perl[0-9.]*$")


def is_interpreter(name: str) -> bool:
    """A shell or a language's interpreter: given code, its "cannot tell" stands."""
    return name in _SHELLS or name in _INLINE_CODE_FLAGS or bool(_PYTHON.match(name) or _PERL.match(name))


# Cowork Terminal itself: its program (any spelling `re.sub(r"\W", "_", ...)` turns into cowork_terminal),
# its Python package run as a module, and inline Python that imports the package.
_SELF_PROGRAM = "cowork_terminal"
_SELF_MODULE = re.compile(r"^app(\.|$)")
_CODE_IMPORTS_SELF = re.compile(
    r"\bfrom[ \t]+app\b(?![-\w])|\bimport[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*app\b(?![-\w])|"
    r"\b(?:__import__|import_module|run_module|find_spec|import_)\s*\(\s*[rRuU]?([\"'])app(?:\.[\w.]*)?\1"
)
# Inline code in another language cannot be read here; these markers say it deletes or runs things.
_CODE_DELETES = re.compile(
    r"rmtree|os\.(remove|unlink|rmdir|removedirs)|\.(unlink|rmdir|rmtree)\s*\(|\brimraf\b|\brmSync\b|"
    r"\brm_rf?\b|remove_dir_all|unlinkSync|rmdirSync|FileUtils\.rm|File\.delete|Remove-Item|\brd\s+/s|"
    r"\brmdir\s+/s|\bdel\s+/[sfq]|Format-Volume|Clear-Disk|Stop-Computer|Restart-Computer|\bunlink\b|"
    r"\bshutdown\b|\breboot\b|\bshut\s+down\b|\brestart\b|\berase\b|"
    r"\.rm\s*\(|\brm\s*\(|promises\.rm\b|Deno\.remove|remove_tree|FileUtils\.remove|\brmdir\s*\(|remove_file|"
    r"Files\.delete|Directory\.Delete|\.truncate\s*\(|os\.truncate|"
    r"\(\s*delete-(?:directory|file)\b|"  # Emacs Lisp's
    r"\bfile\s*\(\s*REMOVE|deleteIfExists|FileUtils\.deleteDirectory|\.delete\s*\(\s*\)|"  # CMake's, Java's
    r"(?:^|[;\[{\n])[^\S\n]*file\s+delete\b|"  # Tcl's, at the start of a command (a comment may say "file delete")
    r"(?:Directory|File)\]?::Delete|Clear-Content|Clear-RecycleBin|Clear-Item\b",  # PowerShell's (red team, Windows)
    re.I,
)
# PowerShell's short names for Remove-Item (`rm -r -fo DIR`, `ri`, `rd`, `del`...) at the start of a command.
_POWERSHELL_DELETES = re.compile(r"(?:^|[;|&({}\n]|\bdo\b)[^\S\n]*(?:rm|ri|rd|rmdir|del|erase|rp|clc|cli)\s", re.I)
# Code that changes what other programs read as they start: the registry, a variable stored for
# every later program (`[Environment]::SetEnvironmentVariable(..., 'User')`), `reg add`, `setx`.
_CODE_SETTINGS = re.compile(
    # An item verb and a registry drive anywhere in the code: `cd HKCU:\...; Set-ItemProperty Run x calc`
    r"^(?=[\s\S]*(?:\bHK(?:CU|LM|CR|U|CC):|Registry::))"
    r"(?=[\s\S]*(?:\b(?:New|Set|Remove|Rename|Move|Copy|Clear)-Item(?:Property)?\b"
    r"|(?:^|[;|&({}\n])[^\S\n]*(?:sp|si|ni|rp|rni|mi|cpi)\s))|"
    r"SetEnvironmentVariable\s*\([^)]*(?:User|Machine)|\bsetx\b|"
    r"\breg(?:\.exe)?\s+(?:add|delete|import|restore|load|unload|copy)\b|"
    r"\.(?:CreateSubKey|DeleteSubKey\w*|DeleteValue)\s*\(|\bRegistry\]?::SetValue|"
    r"\bwinreg\.(?:SetValue\w*|CreateKey\w*|DeleteKey\w*|DeleteValue)",
    re.I,
)
# Code that has another process start a program, outside the job (Windows) or container the command
# runs in (red team, Windows): WMI's Win32_Process, the task scheduler, a service started (`Start-Service`,
# `net start`, `sc start`), any COM object (Explorer's Shell.Application, ShellWindows and ShellBrowserWindow,
# MMC20.Application start programs; which COM server runs in a process of its own cannot be told here),
# PowerShell remoting and WinRM (`Invoke-Command -ComputerName localhost`), elevation through UAC (`-Verb
# RunAs`, gsudo). Part of _CODE_RUNS: such code is held as starting other programs. It runs over every
# script read (250 KB): no unbounded repeat may cross what starts another try (a newline, `;`), or
# it is quadratic (a review, 2026-12-05: `\bNew-Object\b[^\n;|]*` took 38 s, `\n\s*` on blank lines more).
_HANDS_OFF_CODE = (
    r"Win32_Process|Invoke-(?:Cim|Wmi)Method|\[wmiclass\]|(?:Register|Set|Start)-ScheduledTask\b|\bschtasks\b|"
    r"New-Service|\bwmic\b|(?:Start|Restart|Resume|Set)-Service\b|ServiceController|"
    r"\bnet1?(?:\.exe)?\s+(?:start|continue)\b|\bsc(?:\.exe)?\s+(?:create|config|start|failure)\b|"
    r"-ComObject\b|\bNew-Object\b[^\n;|]{0,200}\s-C|GetTypeFrom(?:CLSID|ProgID)|GetActiveObject|BindToMoniker|"
    r"\bwin32com\b|\bcomtypes\b|Invoke-Command|Enter-PSSession|New-PSSession|Invoke-WSManAction|\bwinr[ms]\b|"
    r"\bp[as]exec(?:64)?\b|\brunas\b|\bgsudo\b|"
    r"(?:^|[;|&({}\n=])[^\S\n]*(?:icm|etsn|nsn|sasv)\s+(?:-[A-Za-z]|[\w\"'$.\\/@{])|"  # their short names
    # WSL's Linux system, a running Windows Terminal: a command of PowerShell's (`wsl rm -rf /mnt/c/x`)
    r"(?:^|[;|&({}\n])[^\S\n]*(?:&[^\S\n]*)?(?-i:wsl|wt)(?:\.exe)?(?:\s*(?:$|[;|&)}\n])|\s+(?:-[A-Za-z]|[\w\"'$.\\/@{~]))|"
    # A container daemon's socket, or a D-Bus bus, spoken to directly (`s.connect('/var/run/docker.sock')`,
    # `docker.from_env()`, `dbus.SessionBus()`): the daemon or a bus's service starts what it is asked to.
    r"docker\.sock|podman\.sock|containerd\.sock|system_bus_socket|/run/dbus/|socketPath|UNIXSocket|"
    r"IO::Socket::UNIX|docker\.from_env|DockerClient|dbus\.(?:Session|System)Bus|Gio\.bus_get|pydbus|dbus_next|"
    r"jeepney|AF_UNIX|[AP]F_LOCAL|PF_UNIX|"
    # The family by its number (`socket.socket(1)`: AF_UNIX is 1 everywhere; a red team, 2026-12-06)
    r"\bsocket\s*\(\s*(?:family\s*=\s*)?1\s*[,)]"
)
_CODE_HANDS_OFF = re.compile(_HANDS_OFF_CODE, re.I)
_CODE_RUNS = re.compile(
    r"os\.(system|exec\w*|spawn\w*|popen)|subprocess|child_process|\bexecSync\b|\bspawnSync\b|"
    r"\bsystem\s*\(|\bexec\s*\(|\beval\s*\(|Runtime\.getRuntime|Start-Process|Invoke-Expression|\biex\b|"
    r"do shell script|\bpty\.spawn|commands\.getoutput|%x\{|\bqx\b|\bopen3\b|"
    r"(?:^|[;\[{\n])[^\S\n]*(?:exec|spawn)\s|"  # Tcl and expect (`spawn rm -rf DIR`), Ruby's and Perl's `exec "..."`
    r"\bpopen\s*\(|\bpassthru\s*\(|\bshell_exec\s*\(|\bproc_open\s*\(|%x[(\[{]|"  # Ruby's, PHP's (red team)
    r"\bopen\s*\(\s*\w+\s*,\s*['\"]\s*\||\bopen\s*\(\s*\w+\s*,\s*['\"]-?\|['\"]|"  # Perl's `open(F, "|rm ...")`
    r"\bimport[ \t]+[\w \t,]{0,200}?\b(?:system|popen|spawn\w*|exec\w*)\b|"  # `from os import system as s`
    r"['\"]\s*(?:-\||\|-)\s*['\"]|\b(?:system|exec)[ \t]+['\"$@]"  # Perl's open mode "-|", `system "r"."m"`
    r"|\(\s*(?:async-)?(?:shell-command|call-process|start-process|make-process|process-file)"  # Emacs Lisp's
    r"|\bexecute_process\s*\(|\bProcessBuilder\b"  # CMake's, Java's
    # PowerShell's and .NET's other ways (red team, Windows): `saps`, Invoke-Item (`ii`), a shell object. Not
    # its `start`: cmd's `start` is the same word, and cmdline.py reads what that one starts.
    r"|Invoke-Item\b|Process\]::Start\b|\bProcess\.Start\s*\(|ProcessStartInfo|ShellExecute|WScript\.Shell|\bstartfile\b"
    r"|(?:^|[;|&({}\n])[^\S\n]*(?:saps|(?-i:ii))\s+(?!(?:and|or|if|in|is|not|for|else)\b)(?:-[A-Za-z]|[\w\"'$.\\/@{])"
    rf"|{_HANDS_OFF_CODE}",
    re.I,
)
# Programs that fetch from the network: what they print, piped into a shell, is a downloaded program.
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "lwp-request", "get", "iwr", "irm",
                          "invoke-webrequest", "invoke-restmethod", "aria2c", "wget2"})  # fmt: skip
_DOWNLOADS = re.compile(r"\b(?:curl|wget2?|fetch|https?|xh|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b", re.I)

# Inline code that drives other programs: synthetic input libraries and process attaching.
_CODE_CONTROLS = re.compile(
    r"pyautogui|pynput|\bXlib\b|\bXTest\b|xdotool|ydotool|SendInput|keybd_event|mouse_event|System Events|"
    r"\bptrace\b|process_vm_writev|/proc/[^/\s]+/mem\b",
    re.I,
)

# Inline code that calls what it names only when it runs (getattr(os, "re" + "move")): cannot tell.
_CODE_HIDES = re.compile(
    r"\bgetattr\s*\(|\bimportlib\b|__builtins__|\bcompile\s*\(|\bglobals\s*\(\s*\)\s*\[|__dict__|"
    r"\[\s*['\"][^'\"]*['\"]\s*\+",  # `require('fs')['r'+'mSync']`: a name put together (red team)
    re.I,
)
# PowerShell's call (`&`) and dot-source (`.`) operators given a name made when the code runs: `& ('ws'+'l')`,
# `.("$x")`, `& ([char]119+[char]115+[char]108)`, `& $cmd` (what runs cannot be told).
_POWERSHELL_COMPUTED = re.compile(r"(?:^|[;|&({}\n=])[^\S\n]*[&.][^\S\n]*(?:[($]|\"[^\"\n]{0,200}?\$)")
# cmd run from PowerShell code (`cmd /c wsl ls`, `cmd.exe /s /c "..."`): the rest of the line, read as cmd code.
_POWERSHELL_CMD = re.compile(
    r"(?:^|[;|&({}\n])[^\S\n]*(?:&[^\S\n]*)?[\"']?cmd(?:\.exe)?[\"']?\s+"
    r"(?:/[a-z](?::\w{1,8})?\s+){0,6}/[ck]\b[ \t]*([^\n]*)",
    re.I,
)

# sed's `e` runs a shell command, `w` writes a file: as a command (after an address) or an s/// flag.
_SED_ONE = r"(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/])*/I?M?)"  # GNU's first~step too
# Blanks only within a line: sed ends a command at a newline (`1\np` is an error), and `\s*` there made
# the search cubic on a file of blank lines (1,600 took 10 s, a review, 2026-12-05).
_SED_ADDRESS = rf"(?:^|[;\n{{}}])[^\S\n]*{_SED_ONE}?(?:[^\S\n]*,[^\S\n]*(?:{_SED_ONE}|[+~]\d+))?[^\S\n]*!?[^\S\n]*"
# A backslash only as an escape: `(?!\1).` also took it alone, and `s/\/\/...` backtracked for seconds
_SED_SUBST = r"s([^\w\s\\])(?:\\.|(?!\1)[^\\])*\1(?:\\.|(?!\1)[^\\])*\1[gpiImM0-9ew]*"
_SED_EXEC = re.compile(rf"{_SED_ADDRESS}e(?:\s|;|$)|{_SED_SUBST}(?<=e)", re.S)
# GNU sed takes the file after `w` with or without blanks, to the end of the line (a red team:
# `sed -n 'w/home/ann/.bashrc' x` was judged read-only). The `w` command is looked for with the
# s/// and y/// texts blanked (`s/{{WIDTH}}/100/` writes nothing: a review); group 2 or 3 is the file.
_SED_TEXTS = re.compile(rf"{_SED_SUBST}|y([^\w\s\\])(?:\\.|(?!\2).)*\2(?:\\.|(?!\2).)*\2", re.S)
_SED_WRITE = re.compile(rf"{_SED_SUBST}(?<=w)\s*([^\s][^\n]*)", re.S)
_SED_WRITE_COMMAND = re.compile(rf"{_SED_ADDRESS}[wW]\s*([^\s][^\n]*)", re.S)

_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:[shv]d[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(?:n\d+)?(?:p\d+)?|r?disk\d+(?:s\d+)*|"
    r"mmcblk\d+(?:p\d+)?|md\d+|dm-\d+|mapper/.+|loop\d+|sr\d+|fd\d+|mem|kmem|port|disk/.+|root|"
    r"zd\d+|rbd\d+|vg[^/]*/.+)$|^(?:\\\\|//)\.[\\/]physicaldrive\d+$",
    re.I,
)
# Devices written without changing anything: not a terminal (/dev/tty, /dev/pts/N, /dev/console: red
# team, 2026-12-05, a read-only command wrote to another terminal, whose OSC 52 sets the clipboard).
_HARMLESS_DEVICES = re.compile(r"^/dev/(null|zero|stdout|stderr|stdin|fd/\d+|full|random|urandom)$")
# Names of an open descriptor: bash (and tee, cp...) open the file it is open on anew, for writing too
# (`echo x <~/.bashrc >>/dev/stdin` appends to ~/.bashrc: a red team, 2026-12-06). The number, `*`
# where an expansion picks it, or none: `/proc/$pid/fd/N`, another process's perhaps.
_DESCRIPTOR_FILE = re.compile(
    r"^/(?:dev/fd/(\d+|\*)|dev/(stdin|stdout|stderr)|proc/(?:self|thread-self)/fd/(\d+|\*)|proc/\*/fd/(?:\d+|\*))/?$"
)
_WRITERS = frozenset({"cp", "mv", "tee", "install", "rsync", "scp"})  # commands that write to an operand
# Commands that may write (or replace) a file named among their words: a script the same command line
# runs must not be one of them (its content would not be what was read). Unknown programs count too.
_MAY_WRITE = _WRITERS | frozenset(
    {"ln", "sed", "dd", "curl", "wget", "truncate", "patch", "unzip", "tar", "git", "awk", "gawk",
     "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma", "7z", "zip", "rclone",
     "scp", "touch",
     "robocopy", "certutil", "reg", "regedit", "bitsadmin", "fsutil", "wsl", "wmic", "forfiles"}
)  # fmt: skip
# Variables whose value a program runs as shell code (`GIT_EDITOR='rm -rf ~/x; true' git commit` ran
# rm, judged moderate: 2026-12-04): the value is judged as code, as `git -c core.pager=...` is.
_CODE_VARIABLES = frozenset(
    {"GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND",
     "PROMPT_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "LESS",
     # the shell npm runs scripts with, and the Yarn release it runs instead of itself
     "npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", "YARN_YARN_PATH",
     "GIT_TEST_FSMONITOR"}  # git runs it as core.fsmonitor where that is unset (red team, 2026-12-04)
)  # fmt: skip
# Variables that name a script run later: as bash reads it ("shell": BASH_ENV, and ENV for an
# interactive sh), or as a program (GIT_SSH, the askpass helpers: by its `#!` line). SHELL: the shell
# flock -c, script, tmux, screen, parallel, vim's `:!` and ssh's ProxyCommand run (a red team, 2026-12-05:
# `SHELL=./x.sh flock lk -c true` ran x.sh, judged moderate).
_SCRIPT_VARIABLES = {"BASH_ENV": "shell", "ENV": "shell", "GIT_SSH": "exec", "GIT_ASKPASS": "exec",
                     "SSH_ASKPASS": "exec", "SHELL": "exec"}  # fmt: skip


def code_prefix(variable: str, value: str | None) -> str | None:
    """What starts the value of one of _CODE_VARIABLES and is not code: less's `|`, `||` or `-`
    before its LESSOPEN and LESSCLOSE commands (`LESSOPEN='|lesspipe %s'`), LESS's options up to a
    `+!` or `+|` that runs the rest (`LESS='-R +!CMD'`). None: the value holds no code (`LESS=-R`)."""
    if value is None or variable not in ("LESSOPEN", "LESSCLOSE", "LESS"):
        return ""
    if variable == "LESS":
        command = re.match(r"(?s).*?(?:^|\s)\+[^!|\s]*[!|]", value)
        return None if command is None else command[0]
    return re.match(r"\s*\|{0,2}-?", value)[0]  # type: ignore[index]  # always matches


# git's configuration given in the environment (`GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=...
# git status` ran the value; red team, 2026-12-04): which program git runs cannot be told.
_GIT_CONFIG_VARIABLES = re.compile(
    r"GIT_CONFIG_(?:PARAMETERS|COUNT|KEY_\d+|VALUE_\d+|GLOBAL|SYSTEM)|GIT_CONFIG|GIT_ALLOW_PROTOCOL"
)  # GIT_ALLOW_PROTOCOL=ext lets `ext::sh -c ...` run


def sets_git_config(variable: str, value: str | None) -> bool:
    """Whether setting `variable` to `value` gives git a configuration the command line does not
    show: any of git's configuration variables, but to nothing (`GIT_CONFIG_GLOBAL=/dev/null`)."""
    if variable == "GIT_ALLOW_PROTOCOL":  # `https:ssh` is everyday; `ext` runs its address as a command
        return value is None or "ext" in value
    return bool(_GIT_CONFIG_VARIABLES.fullmatch(variable)) and value not in ("/dev/null", "")


def is_code_variable(name: str) -> bool:
    """A variable whose value a program runs, or reads as a script or settings that can run one."""
    return (
        name in _CODE_VARIABLES
        or name in _SCRIPT_VARIABLES
        or (special_variable(name) and name != "IFS")
        or name in _PROMPTS
        or name.startswith("BASH_FUNC_")
        or name in _VIM_INIT_VARIABLES
        or name in _SETTINGS_FILES
        or name == "TAR_OPTIONS"
    )


_VIM_INIT_VARIABLES = frozenset({"VIMINIT", "EXINIT", "GVIMINIT"})  # Ex commands vim runs as it starts
# Variables naming a file of settings that can run commands (psql's, less's, python's start-up file)
_SETTINGS_FILES = frozenset(
    {"PSQLRC", "MYSQL_HOME", "LESSKEYIN", "LESSKEY", "LESSKEYIN_SYSTEM", "LESSKEY_CONTENT", "PYTHONSTARTUP",
     # an OpenSSL configuration loads a provider's library (red team, 2026-12-04: under `curl --version`);
     # GTK, GIO and Qt load the modules these name
     "OPENSSL_CONF", "OPENSSL_CONF_INCLUDE", "OPENSSL_MODULES", "OPENSSL_ENGINES", "GTK_MODULES", "GTK_PATH",
     "GIO_EXTRA_MODULES", "GIO_MODULE_DIR", "QT_PLUGIN_PATH", "QT_QPA_PLATFORM_PLUGIN_PATH", "GST_PLUGIN_PATH",
     "GST_PLUGIN_PATH_1_0", "GST_PLUGIN_SYSTEM_PATH", "GST_PLUGIN_SYSTEM_PATH_1_0"}
)  # fmt: skip


_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4"})
# bash's command and alias tables: `BASH_CMDS[ls]=/bin/rm` makes `ls` run rm, however the entry is set
# (`read 'BASH_CMDS[ls]'`, `declare -n r=BASH_CMDS; r[ls]=...`: a red team, 2026-12-05)
COMMAND_TABLES = frozenset({"BASH_CMDS", "BASH_ALIASES"})
# What the read-only tool sets for every command (execution/read_only.ENVIRONMENT): a command that sets
# or takes one away is not read-only (`GIT_OPTIONAL_LOCKS=1 git status` rewrote .git/index).
TOOL_VARIABLES = frozenset({"GIT_OPTIONAL_LOCKS"})
# Variables whose libraries the dynamic loader loads into each program it starts (LD_LIBRARY_PATH only
# says where to look for the ones a program asks for: one of _SPECIAL_VARIABLES, moderate); and glibc's
# folder of character set converters, whose modules iconv_open loads (a red team, 2026-12-05)
_LOADS_LIBRARIES = frozenset({"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "GCONV_PATH"})
_SUBSCRIPT_CODE = re.compile(r"\[[^\]]*(?:\$\(|`)")  # a subscript holding a command substitution
_SPECIAL_VARIABLES = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
     "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "BASH_FUNC", "PYTHONSTARTUP", "NODE_OPTIONS", "GIT_SSH",
     "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "PERL5OPT", "RUBYOPT"}
) | TOOL_VARIABLES  # fmt: skip
# Where git, cargo, rustup and yarn find their settings or the program they run (`HOME=/x git status` reads
# /x/.gitconfig, `RUSTUP_TOOLCHAIN=/x cargo --version` runs /x/bin/cargo), and where `cd NAME` leads:
# then the project settings read where the command runs (project_settings) are not the ones used. git's
# work tree and index decide which submodules it runs git in (`GIT_WORK_TREE=../wt git status` ran the
# monitor of ../wt/vendor/.git's repository: a review, 2026-12-05). GNUPGHOME: the gpg-agent.conf whose
# programs the agent starts (red team, 2026-12-05). commands/pins.PICKS_FOLDERS holds the same git places
# and GNUPGHOME for a request's environment.
GIT_PLACES = (
    "COMMON_DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE|CEILING_DIRECTORIES"
)
_MOVES_SETTINGS = re.compile(
    rf"HOME|CDPATH|XDG_CONFIG_HOME|GIT_(?:{GIT_PLACES})|CARGO|CARGO_(?:HOME|BUILD_\w+|TARGET_\w+|HOST_\w+|REGISTR\w+"
    r"|CREDENTIAL\w*)|RUSTUP_\w+|RUSTC\w*|RUSTDOC\w*|YARN_RC_FILENAME|GNUPGHOME"
)


def special_variable(name: str) -> bool:
    """A variable whose value changes how the commands after it run (PATH, IFS, HOME...)."""
    return name in _SPECIAL_VARIABLES or bool(_MOVES_SETTINGS.fullmatch(name))
