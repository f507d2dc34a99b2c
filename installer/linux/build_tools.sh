# Finding the programs build_linux.sh needs, and the packages of the libraries its bundle needs;
# sourced by it (and by its tests).
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

# Depends: PyInstaller carries Python and every library the app loads, except glibc and the few
# that must match the machine's graphics stack (libxcb, libGL, libwayland-*). So the package
# depends on exactly those: the owners of each needed library that is not in the bundle, and
# libc6 at least as new as the newest glibc symbol version the bundle uses. (dpkg-shlibdeps
# would also list every bundled library's system package: GTK, OpenSSL, ... for nothing.)
bundle_depends() {
    local bundle="$1" elf lib path pkg glibc ldconfig
    ldconfig="$(find_tool ldconfig)" || { printf 'build_linux: error: ldconfig not found\n' >&2; return 1; }
    local -a elfs
    local -A bundled=() wanted=()
    mapfile -t elfs < <(find "$bundle" -type f \( -name '*.so*' -o -perm -u+x \) \
        -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
    while IFS= read -r lib; do bundled["$lib"]=1; done < <(find "$bundle" \( -type f -o -type l \) -printf '%f\n')
    glibc="$(for elf in "${elfs[@]}"; do objdump -T "$elf" 2>/dev/null; done |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)"
    [[ -n "$glibc" ]] || return 1
    while IFS= read -r lib; do
        [[ -n "${bundled[$lib]:-}" || "$lib" == libc.so.6 || "$lib" == ld-linux* ]] && continue
        path="$("$ldconfig" -p | awk -v lib="$lib" '$1 == lib && /x86-64|AArch64|64bit/ {print $NF; exit}')"
        if [[ -z "$path" ]]; then
            printf 'build_linux: error: %s\n' "$lib is needed by the bundle but $ldconfig -p does not list it: install the package that has it" >&2
            return 1
        fi
        pkg="$(dpkg-query -S "*/$(basename "$(realpath "$path")")" 2>/dev/null | head -n 1 | cut -d: -f1)"
        if [[ -z "$pkg" ]]; then
            printf 'build_linux: error: no package owns %s (needed by the bundle)\n' "$path" >&2
            return 1
        fi
        [[ "$pkg" == libc6 ]] || wanted["$pkg"]=1
    done < <(for elf in "${elfs[@]}"; do readelf -d "$elf" 2>/dev/null; done |
        sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u)
    printf 'libc6 (>= %s)' "$glibc"
    for pkg in $(printf '%s\n' "${!wanted[@]}" | sort); do printf ', %s' "$pkg"; done
}
