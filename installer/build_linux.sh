#!/usr/bin/env bash
# Builds the Linux release of Cowork Terminal into installer/out/:
#   dist/cowork-terminal/                           the one-folder PyInstaller bundle
#   cowork-terminal-VERSION-linux-ARCH.tar.gz       that folder with a README, icons and
#                                                   install-desktop-entry, for any distribution
#   cowork-terminal_VERSION_ARCH.deb                the bundle in /opt, launcher, icons
#
# Usage: installer/build_linux.sh
# Needs (Debian/Ubuntu): python3 with venv, dpkg-deb, binutils, and for PyGObject's build
#   apt-get install libgirepository1.0-dev libcairo2-dev pkg-config gir1.2-gtk-3.0 \
#       gir1.2-ayatanaappindicator3-0.1
# Environment: BASE_PYTHON (default python3) makes the build venv installer/out/venv;
# PYTHON=/path/to/python skips that venv and builds with an interpreter that already has the
# app, PyInstaller and (for a tray with a menu) PyGObject.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/installer/out"
APP=cowork-terminal
# Keep in step with the `build` extra in pyproject.toml.
PYINSTALLER_REQ="pyinstaller==6.22.3"
# pystray's AppIndicator and GTK backends need PyGObject: without it a Linux tray icon has no
# menu. 3.51+ needs girepository-2.0 (GLib 2.80), newer than Debian 12 and Ubuntu 22.04 have.
PYGOBJECT_REQ="PyGObject>=3.42,<3.51"
# The one icon size list for the hicolor theme: every size assets/make_icons.py writes.
ICON_SIZES=(16 22 24 32 48 64 128 256 512)

# Files in the .deb must not be group/world-writable whatever the caller's umask is.
umask 022

log() { printf '%s\n' "build_linux: $*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=linux/build_tools.sh
source "$ROOT/installer/linux/build_tools.sh"
# objdump and readelf read the bundle's ELF files, ldconfig and dpkg-query find their packages: the
# .deb's Depends. ldconfig is in /sbin, off a normal user's PATH: find_tool looks there too.
require_tools dpkg-deb=dpkg dpkg-query=dpkg objdump=binutils readelf=binutils ldconfig=libc-bin ||
    die "install what is missing above, then run this again"

if [[ -z "${PYTHON:-}" ]]; then
    # A venv of the build's own: the bundle gets exactly the app's dependencies plus PyGObject,
    # and the developer's venv keeps pystray's plain backend choice for its tests.
    pkg-config --exists gobject-introspection-1.0 cairo 2>/dev/null ||
        die "PyGObject cannot be built: apt-get install libgirepository1.0-dev libcairo2-dev pkg-config gir1.2-gtk-3.0 gir1.2-ayatanaappindicator3-0.1"
    VENV="$OUT/venv"
    [[ -x "$VENV/bin/python" ]] || "${BASE_PYTHON:-python3}" -m venv "$VENV"
    log "build venv $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$ROOT" "$PYINSTALLER_REQ" "$PYGOBJECT_REQ"
    PYTHON="$VENV/bin/python"
fi
"$PYTHON" -c 'import PyInstaller' 2>/dev/null || die "PyInstaller is not installed for $PYTHON"
"$PYTHON" -c 'import gi' 2>/dev/null ||
    log "warning: no PyGObject in $PYTHON: the tray icon of this bundle will have no menu"

VERSION="$("$PYTHON" -c 'import app; print(app.__version__)')"
# PEP 440 pre-releases (1.0.0rc1, 1.0.0.dev3) must sort before the release in dpkg, which is what
# the Debian '~' means.
DEB_VERSION="$(printf '%s' "$VERSION" | sed -E 's/\.?(dev|a|b|rc)([0-9]+)/~\1\2/')"
DEB_ARCH="$(dpkg --print-architecture)"
TAR_ARCH="$(uname -m)"
BUNDLE="$OUT/dist/$APP"

log "PyInstaller bundle of $APP $VERSION"
# --clean: a stale analysis cache once hid a module that had moved; the full build takes ~30 s.
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$OUT/dist" --workpath "$OUT/build" "$ROOT/installer/$APP.spec"
# A bundle that cannot even print its version is broken (missing module, bad bootloader).
"$BUNDLE/$APP" --version >/dev/null || die "the frozen executable does not start"

log "archive"
TARBALL="$OUT/$APP-$VERSION-linux-$TAR_ARCH.tar.gz"
# The bundle plus what a copy outside any package needs: a README, the icons in the hicolor layout
# the menu entry uses, and `install-desktop-entry` (which runs `cowork-terminal install-desktop-entry`).
TAR_STAGE="$OUT/tar-root"
rm -rf "$TAR_STAGE"
mkdir -p "$TAR_STAGE"
cp -al "$BUNDLE" "$TAR_STAGE/$APP"  # hard links: no second copy of 145 MB
install -m 0644 "$ROOT/installer/linux/tarball/README.txt" "$TAR_STAGE/$APP/README.txt"
install -m 0755 "$ROOT/installer/linux/tarball/install-desktop-entry" "$TAR_STAGE/$APP/install-desktop-entry"
for size in "${ICON_SIZES[@]}"; do
    icon="$ROOT/assets/generated/png/app-$size.png"
    [[ -f "$icon" ]] || die "missing $icon (python assets/make_icons.py)"
    install -D -m 0644 "$icon" "$TAR_STAGE/$APP/share/icons/hicolor/${size}x${size}/apps/$APP.png"
done
# Numeric root ownership: unpacking as root must not create files owned by the build user.
tar -C "$TAR_STAGE" --owner=0 --group=0 --numeric-owner -czf "$TARBALL" "$APP"

log ".deb"
STAGE="$OUT/deb-root"
rm -rf "$STAGE"
mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
    "$STAGE/usr/share/doc/$APP"
cp -a "$BUNDLE" "$STAGE/opt/$APP"
# Absolute: Debian policy wants symlinks between top-level directories absolute. The bootloader
# finds its _internal/ through /proc/self/exe, so starting it through the link works.
ln -s "/opt/$APP/$APP" "$STAGE/usr/bin/$APP"
install -m 0644 "$ROOT/installer/linux/$APP.desktop" "$STAGE/usr/share/applications/$APP.desktop"
for size in "${ICON_SIZES[@]}"; do
    icon="$ROOT/assets/generated/png/app-$size.png"
    [[ -f "$icon" ]] || die "missing $icon (python assets/make_icons.py)"
    install -D -m 0644 "$icon" "$STAGE/usr/share/icons/hicolor/${size}x${size}/apps/$APP.png"
done
cat >"$STAGE/usr/share/doc/$APP/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Cowork Terminal

Files: *
Copyright: Cowork Terminal developers
License: MIT
Comment: /opt/$APP/_internal holds the Python runtime and the libraries the app uses, each
 under its own license (Python: PSF-2.0; see each *.dist-info folder there).
EOF
chmod -R u+rwX,go+rX,go-w "$STAGE"

# Depends: the packages of the system libraries the bundle needs (bundle_depends, in build_tools.sh).
depends="$(bundle_depends "$STAGE/opt/$APP")" || die "could not work out the package dependencies"
log "Depends: $depends"

installed_kb="$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)"
cat >"$STAGE/DEBIAN/control" <<EOF
Package: $APP
Version: $DEB_VERSION
Architecture: $DEB_ARCH
Maintainer: Cowork Terminal developers <noreply@cowork-terminal.invalid>
Installed-Size: $installed_kb
Depends: $depends
Suggests: gnome-shell-extension-appindicator
Section: utils
Priority: optional
Description: let Claude run commands on this computer while you stay in charge
 A tray app and a local MCP server: Claude Desktop, Cowork and Claude Code run
 bash commands on this machine through it, and the tray shows what runs,
 pauses access with one click and writes Claude's config for you.
EOF
# The icon cache and the desktop database are refreshed by the dpkg file triggers of
# hicolor-icon-theme and desktop-file-utils. prerm stops the trays and servers that run this
# package's program (by its path); postrm tells each user what to remove in their own home.
install -m 0755 "$ROOT/installer/linux/deb/prerm" "$STAGE/DEBIAN/prerm"
install -m 0755 "$ROOT/installer/linux/deb/postrm" "$STAGE/DEBIAN/postrm"

command -v desktop-file-validate >/dev/null &&
    desktop-file-validate "$STAGE/usr/share/applications/$APP.desktop"

DEB="$OUT/${APP}_${DEB_VERSION}_${DEB_ARCH}.deb"
dpkg-deb --build --root-owner-group "$STAGE" "$DEB" >/dev/null

log "done:"
du -sh "$BUNDLE" "$TARBALL" "$DEB" >&2
