"""Package managers: installs are moderate, removals destructive, queries safe."""

from __future__ import annotations

import json
import re

from . import pip_places
from .findings import D, M
from .options import _operands, _short_flags, _split_options, expanded
from .options import subcommand as after_options
from .rule import Analysis
from .stdin import _Stdin
from .tables import (
    _JS_READ,
    _JS_REMOVE,
    _PACKAGE_MANAGERS,
    _names,
)
from .words import _Word


def subcommand(ctx: Analysis, args: list[_Word], what: str) -> str | None:
    for a in args:
        if expanded(ctx, a, what):
            return None
        if a.value is not None and not a.value.startswith("-"):
            return a.value
    return ""


# Subcommands that run a program they are given (`conda run -n base CMD`, `npm exec -- CMD`, `yarn
# dlx CMD`): what they are given is judged by `Analysis.may_run`. A JS manager's `run` runs a script
# of package.json by name, and gives it the words after it (review, 2026-12-04).
_RUNS_GIVEN = frozenset({"run", "exec", "x", "dlx"})
_JS_RUNS_GIVEN = frozenset({"exec", "x", "dlx", "explore"})  # `npm explore PKG -- CMD` too


_WRITES_SHELL_FILES = {"conda": "init", "mamba": "init", "micromamba": "init", "pipx": "ensurepath"}


def package_manager(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    remove, read = _PACKAGE_MANAGERS[name]
    if name in ("conda", "mamba", "micromamba") and [a.value for a in _operands(args)][:2] == ["env", "remove"]:
        ctx.add(D, "{name} env remove: deletes an environment", name=name)
        return
    if name in ("pip", "pip2", "pip3"):  # `pip --python <venv>/bin/python install x`: not the subcommand
        sub, _rest = after_options(ctx, name, args, pip_places.GENERAL_VALUES)
    else:
        sub = subcommand(ctx, args, name)
    if sub is None:
        return
    if _WRITES_SHELL_FILES.get(name, "-") in [a.value for a in _operands(args)][:2]:
        # `conda init`, `mamba shell init`, `pipx ensurepath`: they write the shell's start-up files
        ctx.note_written(_Word(None, "~/.bashrc", f"{ctx.home}/.*", glob=True))
    if sub in remove:
        ctx.add(D, "{name} {sub}: removes packages", name=name, sub=sub)
        if name in ("pip", "pip2", "pip3") and sub == "uninstall":  # from our venv: changes what it runs
            pip_places.own_places(ctx, args, install=False)
    elif sub in read or (sub == "" and any(a.value in ("--version", "-V", "--help") for a in args)):
        if name == "cargo":  # `cargo metadata` runs a rustc-wrapper the project's settings name (a review)
            ctx.report.settings.append(("cargo", "", False))
        return
    else:
        ctx.add(M, "{name} {sub}: changes installed software", name=name, sub=sub)
        if sub in _RUNS_GIVEN:
            ctx.may_run(args, depth)
        if name in ("pip", "pip2", "pip3") and sub in ("install", "sync"):  # `uv pip sync` installs too
            pip_places.install_places(ctx, args)


def cmd_dpkg(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if any(expanded(ctx, a, name) for a in args[:1]):
        return
    values = {a.value for a in args}
    flags = _short_flags(args)
    if {"r", "P"} & flags or {"--remove", "--purge"} & values:
        ctx.add(D, "dpkg --remove: removes packages")
    elif not ({"l", "L", "s", "S", "c", "I"} & flags or any(
        (v or "").startswith(("--list", "--status", "--search", "--get-selections", "--contents", "--info",
                              "--print-architecture", "--version"))
        for v in values
    )):  # fmt: skip
        ctx.add(M, "dpkg: changes installed software")


def cmd_pacman(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if any(expanded(ctx, a, name) for a in args if a.value is None or a.value.startswith("-")):
        return
    first = next((a.value for a in args if a.value and a.value.startswith("-")), "") or ""
    if first.startswith("-R") or first == "--remove":
        ctx.add(D, "{name} -R: removes packages", name=name)
    elif first.startswith(("-Q", "--query")) or re.fullmatch(r"-S[silgp]+", first):
        return
    elif first or name != "pacman":
        ctx.add(M, "{name}: changes installed software", name=name)


def cmd_nix_env(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if any(expanded(ctx, a, name) for a in args[:1]):
        return
    values = {a.value for a in args}
    if {"-e", "--uninstall"} & values:
        ctx.add(D, "nix-env --uninstall: removes packages")
    elif not {"-q", "--query"} & values:
        ctx.add(M, "nix-env: changes installed software")


def cmd_nix(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    words = _operands(args)
    if any(expanded(ctx, a, name) for a in words[:2]):
        return
    ops = [a.value for a in words]
    if ops[:2] == ["profile", "remove"]:
        ctx.add(D, "nix profile remove: removes packages")
    else:
        ctx.add(M, "nix: builds or changes software")
    command = next((i for i, a in enumerate(args) if a.value in ("-c", "--command")), None)
    if ops[:1] in (["develop"], ["shell"]) and command is not None:  # `nix develop -c CMD...` (red team)
        ctx.inner(args[command + 1 :], None, bulk, depth)


def cmd_uv(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    ops = _operands(args)
    if expanded(ctx, ops[0] if ops else None, name):
        return
    sub = ops[0].value if ops else None
    if sub == "pip":
        package_manager(ctx, "pip", args[args.index(ops[0]) + 1 :], depth)
    elif sub == "tool" and len(ops) > 1 and ops[1].value == "uninstall":
        ctx.add(D, "uv tool uninstall: removes packages")
    elif sub == "tool" and len(ops) > 1 and ops[1].value == "update-shell":  # writes the shell's start-up files
        ctx.add(M, "{name} {sub}: changes installed software", name=name, sub="tool update-shell")
        ctx.note_written(_Word(None, "~/.bashrc", f"{ctx.home}/.*", glob=True))
    elif sub == "run":
        ctx.add(M, "uv run: runs a program")
        values = _names(
            "--with --python -p --from --package --extra --group --directory --project "
            "--env-file --index --with-requirements"
        )
        after = args[args.index(ops[0]) + 1 :]
        _, i = _split_options(after, values)
        ctx.inner(after[i:], stdin, bulk, depth)
    elif sub not in (None, "version", "tree", "help"):
        ctx.add(M, "uv {sub}: changes the project or installed software", sub=sub)


def js_package_manager(ctx: Analysis, name: str, args: list[_Word], depth: int) -> None:
    values = [a.value for a in args]
    if name == "yarn":  # any yarn command runs the release a `yarnPath` names instead (project_settings)
        ctx.report.settings.append(("yarn", "", False))
    everywhere = any(v in ("-g", "--global", "--location=global") for v in values)
    sub = subcommand(ctx, args, name)
    if sub is None:
        return
    if sub == "global" and name == "yarn":
        ops = _operands(args)
        sub = ops[1].value if len(ops) > 1 else ""
        everywhere = True
    if sub in _JS_REMOVE and everywhere:
        ctx.add(D, "{name} {sub} -g: removes globally installed packages", name=name, sub=sub)
    elif sub in _JS_REMOVE:
        ctx.add(M, "{name} {sub}: removes a dependency from this project", name=name, sub=sub)
    elif sub in _JS_READ or (sub == "" and any(v in ("-v", "--version") for v in values)):
        return
    else:
        ctx.add(M, "{name} {sub}: changes or runs the project", name=name, sub=sub or "")
        if sub in _JS_RUNS_GIVEN:
            ctx.may_run(args, depth)
        # `npm pkg set scripts.x='rm -rf DIR'` (then `npm run x`), `npm set-script x CMD`: code (fifth red team)
        for a in args:
            script = re.match(r"scripts\.[^=]+=(.*)", a.literal or "", re.S)
            if sub == "pkg" and script is not None:  # with --json, a JSON string: `scripts.x='"rm -rf DIR"'`
                ctx.sub_script(_json_text(script[1]), f"{name} pkg set")
            whole = re.match(r"scripts=(.*)", a.literal or "", re.S)  # `--json scripts='{"x": "rm -rf DIR"}'`
            if sub == "pkg" and whole is not None:
                for code in _json_values(whole[1]):
                    ctx.sub_script(code, f"{name} pkg set")
        ops = _operands(args)
        if sub == "set-script" and len(ops) > 2:
            ctx.code_words(ops[2:3], f"{name} set-script")


def _json_text(value: str) -> str:
    """`"rm -rf DIR"` as JSON is the text rm -rf DIR; anything else, as given."""
    try:
        text = json.loads(value)
    except ValueError:
        return value
    return text if isinstance(text, str) else value


def _json_values(value: str) -> list[str]:
    """The strings of a JSON object or list (npm's scripts: npm 11 keeps `["CMD"]` as `{"0": "CMD"}`,
    which `npm run 0` runs), or the text as given when it is neither."""
    try:
        found = json.loads(value)
    except ValueError:
        return [value]
    items = found.values() if isinstance(found, dict) else found if isinstance(found, list) else None
    return [value] if items is None else [v for v in items if isinstance(v, str)]


def cmd_package_manager(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    """A system or language package manager of `tables._PACKAGE_MANAGERS` (pip3.12 is pip)."""
    package_manager(ctx, name if name in _PACKAGE_MANAGERS else "pip", args, depth)


def cmd_js_package_manager(
    ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int
) -> None:
    js_package_manager(ctx, name, args, depth)


# Claude Code's commands that change its user settings (~/.claude.json), which name the programs it
# starts as MCP servers, outside any container: where none guards that file, a person is asked
# (names_protected; a red team, 2026-12-04). Otherwise `claude` is a program no rule knows.
_CLAUDE_SETTINGS = {"mcp": frozenset({"add", "add-json", "add-from-claude-desktop", "remove"}),
                    "config": frozenset({"set", "add", "remove"})}  # fmt: skip


# `claude plugin ...` (or `plugins`): all but these write ~/.claude/plugins and the `enabledPlugins` of
# a settings file, and a plugin brings hooks and MCP servers Claude Code starts outside any container
# (red team 13, 2026-12-06: `claude plugin marketplace add`, `install`, `enable` were not held).
_CLAUDE_PLUGIN_READS = frozenset({"", "list", "validate", "details", "help"})
# Claude Code's options that take a value, which may come before its subcommand (`claude --settings
# x.json plugin install y`): their values are not the subcommand.
_CLAUDE_VALUES = frozenset({"--model", "--settings", "--mcp-config", "--add-dir", "--plugin-dir", "--permission-mode",
                            "--output-format", "--input-format", "--fallback-model", "--session-id", "--agent",
                            "--agents", "--append-system-prompt", "--system-prompt", "--setting-sources",
                            "--allowedTools", "--allowed-tools", "--disallowedTools",
                            "--disallowed-tools", "-d", "--debug", "-r", "--resume", "--max-turns",
                            "--permission-prompt-tool", "--json-schema", "--max-budget-usd", "--tools",
                            "--betas", "--debug-file", "--mcp-debug", "--append-system-prompt-file",
                            "--system-prompt-file"})  # fmt: skip
# ... whose value is optional (`-d`, `-r`) or may be several words (`--add-dir a b`): the subcommand
# is looked for among the first operands too (a review, 2026-12-06: `claude -d api plugin install x`).
_CLAUDE_SUBCOMMANDS = ("plugin", "plugins", "mcp")


def cmd_claude(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    operands = _operands(args, _CLAUDE_VALUES)
    if [a.value for a in operands[:1]] not in (["config"], *([sub] for sub in _CLAUDE_SUBCOMMANDS)):
        for given in (operands, _operands(args)):  # `claude -d plugin install x`: -d without its value
            start = next((k for k, a in enumerate(given[:3]) if a.value in _CLAUDE_SUBCOMMANDS), None)
            if start is not None:
                operands = given[start:]
                break
    words = [a.value for a in operands][:2]
    if len(words) == 2 and words[1] in _CLAUDE_SETTINGS.get(words[0] or "", ()):
        ctx.add(M, "writes to {source}", source="~/.claude.json")
        ctx.note_written(_Word(None, "~/.claude.json", f"{ctx.home}/.claude.json"))
    if words[:1] in (["plugin"], ["plugins"]):
        verbs = operands[1 : 3 if [a.value for a in operands[1:2]] == ["marketplace"] else 2]
        if any(expanded(ctx, a, "claude plugin") for a in verbs):
            return
        sub = " ".join(a.value or "" for a in verbs)
        if sub not in _CLAUDE_PLUGIN_READS and sub not in ("marketplace", "marketplace list"):
            ctx.add(M, "claude plugin {sub}: adds or changes a Claude Code plugin, which can run programs", sub=sub)
            for plugins in ("plugins", "settings.json"):
                ctx.note_written(_Word(None, f"~/.claude/{plugins}", f"{ctx.home}/.claude/{plugins}"))
    ctx.as_unknown_program(name, args, depth, noted=False)  # its words were never noted as written
