"""Holes the last reviews found (2026-12-05): bash's keyword mode (`set -k`) makes NAME=value words
anywhere in a command its environment; a variable whose name is built when it runs may be PATH;
yarn runs the release a project's `.yarnrc.yml` names, `yarn --version` too; and after a `cd` only
bash can resolve, awk's `@include "x"` may read ./x from a folder not known here.

Each route is first run by the real bash (and yarn, gawk and npm where installed) in a temporary
folder, to show what it does, before the classifier is shown not to pass it as safe."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from app.core.classifier import Tier, classify


def marker_script(folder: Path, name: str, marker: Path) -> Path:
    """An executable shell script that leaves `marker` behind when it runs (or is sourced)."""
    script = folder / name
    script.write_text(f"#!/bin/sh\n{shutil.which('touch')} {marker}\n")  # found with any PATH
    script.chmod(0o755)
    return script


def runs_it(command: list[str], cwd: Path, marker: Path, env: dict[str, str] | None = None) -> bool:
    """Whether `command`, run in `cwd`, leaves the marker (removed after)."""
    subprocess.run(command, cwd=cwd, capture_output=True, check=False, timeout=60, env=env)
    made = marker.exists()
    marker.unlink(missing_ok=True)
    return made


def tier(command: str, cwd: Path) -> Tier:
    return classify(command, cwd=str(cwd)).tier


KEYWORD_MODE = "sets keyword: changes how later commands run"


def test_keyword_mode_makes_name_value_words_environment_and_they_are_judged_as_assignments(tmp_path: Path) -> None:
    """`set -k; bash -c true BASH_ENV=./evil.sh` sources evil.sh: it was safe. Keyword mode turned on
    in any way bash has, also after the words (a loop runs them again), judges them as the same
    assignment before the command is (`BASH_ENV=./evil.sh bash -c true`)."""
    marker = tmp_path / "pwned"
    marker_script(tmp_path, "evil.sh", marker)
    run = "bash -c true BASH_ENV=./evil.sh"
    keyword = [
        f"set -k; {run}",
        f"set -euk; {run}",
        f"set -o pipefail -k; {run}",
        f"set -o keyword; {run}",
        f"shopt -so keyword; {run}",
        f"shopt -s -o keyword; {run}",
        f'opt=-k; set "$opt"; {run}',
        f"for i in 1 2; do {run}; set -k; done",
        f"bash -k -c '{run}'",
        f"bash -o keyword -c '{run}'",
        f"env SHELLOPTS=keyword bash -c '{run}'",
        "set -k; f() { bash -c true; }; f BASH_ENV=./evil.sh",
    ]
    plain = [run, f"set +k; {run}", f"set -- -k; {run}", 'set -k; bash -c true B"ASH_ENV"=./evil.sh']
    for command in keyword:
        assert runs_it(["bash", "-c", command], tmp_path, marker), f"bash does run evil.sh: {command}"
        assert tier(command, tmp_path) is Tier.DESTRUCTIVE, command
    for command in plain:
        assert not runs_it(["bash", "-c", command], tmp_path, marker), command
        # the mode itself changes how later commands run (a session's: admission.lasts_in_session)
        assert tier(command, tmp_path) is (Tier.MODERATE if command.startswith("set -k") else Tier.SAFE), command
    result = classify("set -k; ls LD_LIBRARY_PATH=./x", cwd=str(tmp_path))
    alone = classify("LD_LIBRARY_PATH=./x ls", cwd=str(tmp_path)).reasons
    assert list(result.reasons) == [KEYWORD_MODE, *alone], result
    assert result.tier is Tier.MODERATE
    assert list(classify("set -k; ls NAME=value", cwd=str(tmp_path)).reasons) == [KEYWORD_MODE], (
        "a harmless one adds nothing"
    )


def test_a_variable_whose_name_is_built_when_it_runs_may_set_path(tmp_path: Path) -> None:
    """`v=PA; v+=TH; declare "$v=DIR"; ls` runs DIR/ls: it was safe (and mapfile's PS4 a `$(...)` under
    `set -x`: a PATH it sets is an array, which bash does not search). A name only known when it
    runs (declare, export, local, typeset, readonly, read, printf -v, mapfile, a nameref,
    `${!v:=...}`, a word bash splits) is judged as setting any variable: "cannot tell" where the
    value cannot be told either."""
    marker = tmp_path / "pwned"
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    marker_script(bin_folder, "ls", marker)
    found = {
        f'v=PA; v+=TH; declare "$v={bin_folder}"; ls': Tier.DESTRUCTIVE,
        f'v=PA; export "${{v}}TH={bin_folder}"; ls': Tier.DESTRUCTIVE,
        f'f() {{ local "$1={bin_folder}"; ls; }}; f PATH': Tier.DESTRUCTIVE,
        f'v=PATH; typeset "$v={bin_folder}"; ls': Tier.DESTRUCTIVE,
        f'v=PATH; readonly "$v={bin_folder}"; ls': Tier.DESTRUCTIVE,
        f'line=PATH={bin_folder}; export "$line"; ls': Tier.DESTRUCTIVE,
        f'v=PATH; builtin export "$v={bin_folder}"; ls': Tier.DESTRUCTIVE,
        f"builtin export PATH={bin_folder}; ls": Tier.MODERATE,  # the parser takes its words for plain ones
        f'v="x PATH={bin_folder}"; declare "a"=$v; ls': Tier.MODERATE,
        f'v=PA; read "${{v}}TH" <<< {bin_folder}; ls': Tier.DESTRUCTIVE,
        f"v=PS4; mapfile -t \"$v\" <<< '$(touch {marker})'; set -x; :": Tier.DESTRUCTIVE,  # PATH: an array
        f'v=PATH; printf -v "$v" %s {bin_folder}; ls': Tier.MODERATE,
        f'v=PATH; declare -n r="$v"; r={bin_folder}; ls': Tier.MODERATE,
        f"v=PATH; unset PATH; : ${{!v:={bin_folder}}}; ls": Tier.MODERATE,
    }
    for command, expected in found.items():
        assert runs_it(["bash", "-c", command], tmp_path, marker), f"bash does run bin/ls: {command}"
        assert tier(command, tmp_path) is expected, command
    said = classify('v=PATH; read "$v"', cwd=str(tmp_path)).reasons
    assert said == ('cannot tell what runs: "$v" may set any variable, to a value only known when it runs',), said
    assert tier('read -ra "$v" <<< x', tmp_path) is Tier.DESTRUCTIVE  # `-a NAME`
    safe = ('declare -p "$v"', "read -r line", "read -ra words", "printf -v out %s x", 'export NODE_ENV="$x"',
            "declare x=1", "command export NODE_ENV=production")  # fmt: skip
    for command in safe:
        assert tier(command, tmp_path) is Tier.SAFE, command


def test_yarn_runs_the_release_a_projects_yarnrc_names_even_for_its_version(tmp_path: Path) -> None:
    """yarnPath in a `.yarnrc.yml` of the folder or one above (`yarn-path` in classic yarn's
    `.yarnrc`, and Berry's `plugins`) makes every yarn command run a project file, `yarn --version`
    too (tried with yarn 1.22.22 and 4.18.1, and below where yarn is installed): read in every folder
    the command may be in, as git's and cargo's settings are. npm, asked the same of a project's
    `.npmrc` (`script-shell`, `node-options`), runs nothing for `--version` and `ls`: they stay safe."""
    marker = tmp_path / "pwned"
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "evil.cjs").write_text(f"require('fs').writeFileSync({str(marker)!r}, 'ran')\n")
    (project / ".yarnrc.yml").write_text("yarnPath: ./evil.cjs\n")
    clean = tmp_path / "clean"
    clean.mkdir()
    if shutil.which("yarn"):
        assert runs_it(["yarn", "--version"], project / "sub", marker), "yarn runs the release it names"
    commands = ("yarn --version", "yarn -v", "yarn --help", "yarn info react", "yarn why react", "yarn list")
    for command in commands:
        assert tier(command, clean) is Tier.SAFE, command
        result = classify(command, cwd=str(project / "sub"))
        assert result.tier is Tier.MODERATE, command
        assert result.reasons == ("yarn: the project's settings name a program it runs (.yarnrc.yml yarnPath)",)
    assert tier("cd ../project/sub && yarn --version", clean) is Tier.MODERATE
    assert "cannot tell which folder" in classify('cd "$X" && yarn --version', cwd=str(clean)).reasons[0]
    (project / ".yarnrc.yml").unlink()
    (project / ".yarnrc").write_text('yarn-path "./evil.cjs"\n')
    assert tier("yarn info react", project) is Tier.MODERATE
    (project / ".yarnrc").unlink()
    (project / ".yarnrc.yml").write_text("plugins:\n  - ./evil-plugin.cjs\n")
    assert tier("yarn --version", project / "sub") is Tier.MODERATE
    (project / ".yarnrc.yml").unlink()
    assert tier("yarn --version", project / "sub") is Tier.SAFE
    marker_script(project, "shell.sh", marker)
    (project / "package.json").write_text('{"name": "p", "version": "1.0.0"}\n')
    (project / ".npmrc").write_text(f"script-shell={project / 'shell.sh'}\nnode-options=--require ./evil.cjs\n")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "npm_config_cache": str(tmp_path / "npm-cache")}
    for command in ("npm --version", "npm ls"):
        if shutil.which("npm"):
            assert not runs_it(command.split(), project, marker, env), command
        assert tier(command, project) is Tier.SAFE, command


def test_an_awk_include_after_a_cd_only_bash_can_resolve_is_not_taken_for_awks_own(tmp_path: Path) -> None:
    """`cd "$X"; gawk '@include "x"; ...'` reads ./x.awk of a folder not known here (gawk looks in
    the current folder first): judged as `-i x` then is; one named in full is read."""
    marker = tmp_path / "pwned"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.awk").write_text(f'BEGIN {{ system("touch {marker}") }}\n')
    lost = f'X={elsewhere}; cd "$X"; gawk \'@include "x"; BEGIN {{ }}\''
    if shutil.which("gawk"):
        assert runs_it(["bash", "-c", lost], tmp_path, marker), "gawk reads ./x.awk"
    result = classify(lost, cwd=str(tmp_path))
    assert result.tier is Tier.MODERATE and result.reasons == ("gawk -f: runs an awk program file",), result
    named = f'cd "$X"; gawk \'@include "{elsewhere / "x.awk"}"; BEGIN {{ }}\''
    assert tier(named, tmp_path) is Tier.DESTRUCTIVE
    assert tier("gawk '@include \"join\"; BEGIN { }'", tmp_path) is Tier.SAFE  # awk's own, where the folder is known
    assert tier("cd sub; gawk '@include \"join\"; BEGIN { }'", tmp_path) is Tier.SAFE


def test_a_for_loop_over_path_is_judged_as_setting_it(tmp_path: Path) -> None:
    """A review, 2026-12-05: `for PATH in DIR; do ls; done` runs DIR/ls, and was safe."""
    marker = tmp_path / "ran"
    planted = tmp_path / "bin"
    planted.mkdir()
    (planted / "ls").write_text(f"#!/bin/sh\n: > {marker}\n")  # PATH is that folder alone: no touch
    (planted / "ls").chmod(0o755)
    command = f"for PATH in {planted}; do ls; done"
    assert runs_it(["bash", "-c", command], tmp_path, marker), "bash runs the planted ls"
    assert tier(command, tmp_path) is not Tier.SAFE
    assert "sets PATH: changes how later commands run" in classify(command, cwd=str(tmp_path)).reasons
    assert tier("for f in a b; do echo $f; done", tmp_path) is Tier.SAFE, "an everyday loop stays safe"
