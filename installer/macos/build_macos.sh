#!/usr/bin/env bash
# Builds "Cowork Terminal.app" and a drag-to-Applications .dmg on macOS, into installer/out/.
#
# Usage: installer/macos/build_macos.sh        (on a Mac; PyInstaller cannot cross-build)
# Needs: the app and PyInstaller installed in $PYTHON (pip install -e '.[build]'), Xcode's
# command-line tools (codesign, hdiutil ships with macOS).
#
# Unsigned by default: the .app gets PyInstaller's ad-hoc signature, which runs on the machine that
# built it; on another Mac, Gatekeeper blocks it until the user right-clicks > Open. To ship, sign
# and notarize (needs a Mac and an Apple Developer account):
#   CODESIGN_IDENTITY="Developer ID Application: Name (TEAMID)"  signs every binary and the .app
#       with the hardened runtime and a secure timestamp (done by PyInstaller, see the spec), and
#       the .dmg here. List your identities with: security find-identity -v -p codesigning
#   NOTARY_PROFILE=name  submits the .dmg to Apple's notary service and staples the ticket. Create
#       the profile once with:
#       xcrun notarytool store-credentials name --apple-id you@example.com --team-id TEAMID
#       (it asks for an app-specific password from appleid.apple.com and keeps it in the keychain).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/installer/out"
PYTHON="${PYTHON:-python3}"
APP_NAME="Cowork Terminal"
EXE_NAME=cowork-terminal

log() { printf '%s\n' "build_macos: $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$(uname -s)" == Darwin ]] || die "run this on macOS (PyInstaller builds for the system it runs on)"
"$PYTHON" -c 'import PyInstaller' 2>/dev/null ||
    die "PyInstaller is not installed for $PYTHON (pip install -e '.[build]')"
if [[ -n "${NOTARY_PROFILE:-}" && -z "${CODESIGN_IDENTITY:-}" ]]; then
    die "notarization needs a signed build: set CODESIGN_IDENTITY too"
fi

VERSION="$("$PYTHON" -c 'import app; print(app.__version__)')"
ARCH="$(uname -m)"  # the bundle is for this Mac's architecture only (arm64 on Apple silicon)
APP="$OUT/dist/$APP_NAME.app"
DMG="$OUT/CoworkTerminal-$VERSION-macos-$ARCH.dmg"

log "PyInstaller bundle of $APP_NAME $VERSION ($ARCH)"
# The spec reads CODESIGN_IDENTITY / ENTITLEMENTS_FILE from the environment.
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$OUT/dist" --workpath "$OUT/build" "$ROOT/installer/$EXE_NAME.spec"

# The checks a broken bundle fails: it starts, it is a menu-bar-only app, its signature holds.
"$APP/Contents/MacOS/$EXE_NAME" --version >/dev/null || die "the frozen executable does not start"
[[ "$(/usr/libexec/PlistBuddy -c 'Print :LSUIElement' "$APP/Contents/Info.plist")" == true ]] ||
    die "LSUIElement is not set: the app would show a Dock icon"
codesign --verify --deep --strict "$APP" || die "the .app's signature does not verify"

log "disk image"
STAGE="$OUT/dmg-root"
rm -rf "$STAGE" "$DMG"
mkdir -p "$STAGE"
# ditto keeps the bundle's symlinks, extended attributes and signature intact (cp -R may not).
ditto "$APP" "$STAGE/$APP_NAME.app"
ln -s /Applications "$STAGE/Applications"  # the usual drag-to-install target
hdiutil create -volname "$APP_NAME" -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$DMG" >/dev/null
rm -rf "$STAGE"

if [[ -n "${CODESIGN_IDENTITY:-}" ]]; then
    log "signing the disk image"
    codesign --sign "$CODESIGN_IDENTITY" --timestamp "$DMG"
fi
if [[ -n "${NOTARY_PROFILE:-}" ]]; then
    log "notarizing (takes minutes)"
    # --wait: returns when Apple has decided; on "Invalid", `xcrun notarytool log <id>` says why.
    xcrun notarytool submit "$DMG" --keychain-profile "$NOTARY_PROFILE" --wait
    # The ticket goes into the .dmg, so Gatekeeper can check it offline.
    xcrun stapler staple "$DMG"
    xcrun stapler validate "$DMG"
    spctl --assess --type open --context context:primary-signature --verbose "$DMG"
fi

log "done: $DMG"
