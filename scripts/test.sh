#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
#
#   scripts/test.sh                       the default suite (what the README's test command runs)
#   scripts/test.sh -x -q tests/test_x.py  any other arguments go to pytest
#   scripts/test.sh -p no:xdist            one process, in order (or -n 0)
#
# 1. The system programs the tests drive for real: a virtual screen and X tools for the tray and its
#    windows, bubblewrap (commands run in a container), desktop-file-validate (the autostart entry
#    and the launcher), Tk and venv for Python. Missing ones are installed with apt-get when this script may (root, or
#    sudo without a password); otherwise it names them and stops. COWORK_TERMINAL_SKIP_SYSTEM=1
#    skips this step (another system: install the equivalents yourself).
# 2. .venv with the app and its test extras (`pip install -e ".[test]"`), made if missing, and
#    installed again when pyproject.toml (or the version) changed.
# 3. pytest, with this script's arguments, in COWORK_TERMINAL_TEST_WORKERS processes (pytest-xdist,
#    default 4: most tests wait on real processes, windows and timeouts, so 4 workers keep 2 cores
#    busy; CONTRIBUTING.md has the figures). Not when the arguments choose themselves (-n, -p
#    no:xdist, --pdb) or ask for the slow or wine lanes, which build one frozen app or Wine prefix.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

# What each Debian package provides, as the check that finds it: "package:kind:what".
REQUIREMENTS=(
  "xvfb:command:Xvfb"
  "xauth:command:xauth"
  "x11-utils:command:xwininfo"
  "xdotool:command:xdotool"
  "fonts-dejavu-core:glob:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
  "desktop-file-utils:command:desktop-file-validate"
  "bubblewrap:command:bwrap"
  "python3-tk:python:tkinter"
  "python3-venv:python:ensurepip"
)

missing_packages() {
  local entry package kind what
  for entry in "${REQUIREMENTS[@]}"; do
    IFS=: read -r package kind what <<<"$entry"
    case "$kind" in
      command) command -v "$what" >/dev/null 2>&1 && continue ;;
      glob) compgen -G "$what" >/dev/null && continue ;;
      python) "$PYTHON" -c "import $what" >/dev/null 2>&1 && continue ;;
    esac
    echo "$package"
  done
}

install_system_packages() {
  local missing=("$@") run_as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      run_as_root=(sudo -n)
    else
      run_as_root=(none)
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1 || [ "${run_as_root[0]:-}" = none ]; then
    echo "The tests need these system packages (Debian/Ubuntu names): ${missing[*]}" >&2
    if command -v apt-get >/dev/null 2>&1; then
      echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
    else
      echo "Install their equivalents, then run this again with COWORK_TERMINAL_SKIP_SYSTEM=1." >&2
    fi
    exit 1
  fi
  echo "Installing system packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${run_as_root[@]}" apt-get update -qq
  "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "Cowork Terminal needs Python 3.10 or newer ($PYTHON is $("$PYTHON" -V 2>&1 || echo missing)); set PYTHON=..." >&2
  exit 1
fi

if [ "${COWORK_TERMINAL_SKIP_SYSTEM:-0}" != 1 ]; then
  mapfile -t missing < <(missing_packages)
  if [ "${#missing[@]}" -gt 0 ]; then
    install_system_packages "${missing[@]}"
  fi
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# pip takes some 5-12 s to find an up-to-date venv up to date: it runs again only when what it
# installs from changed (pyproject.toml, and app/__init__.py for the version), kept in .venv.
if ! cat pyproject.toml app/__init__.py | cmp -s - .venv/installed-from; then
  .venv/bin/pip install -q -e ".[test]"
  cat pyproject.toml app/__init__.py >.venv/installed-from
fi

# Whether the caller's pytest arguments leave the number of processes to this script.
wants_workers() {
  local previous="" arg lanes
  for arg in "$@"; do
    case "$arg" in
      -n | -n* | --numprocesses | --numprocesses=* | -pno:xdist | --pdb | --trace) return 1 ;;
    esac
    [ "$previous" = -p ] && [ "$arg" = no:xdist ] && return 1
    if [ "$previous" = -m ]; then
      lanes="${arg//not slow/}"
      lanes="${lanes//not wine/}"
      case "$lanes" in *slow* | *wine*) return 1 ;; esac
    fi
    previous="$arg"
  done
  return 0
}

if wants_workers "$@"; then
  # loadgroup: tests marked xdist_group share a worker (and an expensive module fixture).
  # A test past its timeout ends its whole worker (`thread`: its threads' stacks are printed first),
  # which xdist reports as that test's failure and replaces: SIGALRM's exception, the default, left
  # a module's shared event loop broken, and the next teardown then hung for good (2026-12-06).
  set -- -n "${COWORK_TERMINAL_TEST_WORKERS:-4}" --dist loadgroup --timeout-method=thread "$@"
fi
# Compiled modules are cached even where the environment turns that off: without the cache every
# worker rewrites and compiles each test module again (7 s of CPU to collect instead of 3.5 s, once
# per worker), and so does each app process a test starts for the modules it imports.
unset PYTHONDONTWRITEBYTECODE
exec .venv/bin/pytest "$@"
