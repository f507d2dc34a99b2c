# Finding the programs build_linux.sh needs; sourced by it (and by its test).
#
# A normal user's PATH on Debian has no /sbin or /usr/sbin, where ldconfig lives: look there too,
# and name every missing program with the package that brings it, all at once.

# find_tool NAME: prints the program's path (PATH first, then /usr/sbin and /sbin), or fails.
find_tool() {
    local name="$1" folder
    if command -v "$name" 2>/dev/null; then
        return 0
    fi
    for folder in /usr/sbin /sbin; do
        if [[ -x "$folder/$name" ]]; then
            printf '%s\n' "$folder/$name"
            return 0
        fi
    done
    return 1
}

# require_tools NAME=PACKAGE...: fails with one line per missing program and the package to install.
require_tools() {
    local pair name package missing=()
    for pair in "$@"; do
        name="${pair%%=*}"
        package="${pair#*=}"
        find_tool "$name" >/dev/null || missing+=("$name (apt-get install $package)")
    done
    if ((${#missing[@]})); then
        printf 'build_linux: error: missing %s\n' "${missing[@]}" >&2
        return 1
    fi
}
