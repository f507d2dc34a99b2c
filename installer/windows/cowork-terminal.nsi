; Windows installer for Cowork Terminal (NSIS 3, Unicode).
;
; A per-user install: no administrator rights, no UAC prompt. It copies the PyInstaller one-folder
; build to %LOCALAPPDATA%\Programs\Cowork Terminal, adds a Start menu shortcut, optionally starts
; the app at sign-in (HKCU Run), registers an uninstaller in "Installed apps", and offers to start
; the app at the end. The uninstaller first runs the app's own `cowork-terminal.exe uninstall --yes`
; (our entry out of Claude's configs, start at login off, the app stopped), so Claude is not left
; starting a program that is gone.
;
; Build (on Windows, or on Linux with Debian's `nsis` package):
;   makensis -DVERSION=0.1.0 -DPAYLOAD=<dist\cowork-terminal> -DOUTFILE=<setup.exe> cowork-terminal.nsi
; makensis works from this script's folder, so the defaults below are relative to it (PAYLOAD: the
; PyInstaller output installer/out/dist/cowork-terminal); pass absolute paths to override them.

; 64-bit stubs, like the app itself (PyInstaller builds a 64-bit executable); also what lets the
; installer run under 64-bit-only Wine in the wine lane (tests/test_wine.py).
Target amd64-unicode
ManifestDPIAware true
!ifndef COMPRESSOR
  !define COMPRESSOR "/SOLID lzma"  ; the smallest download; tests pass -DCOMPRESSOR=zlib for speed
!endif
SetCompressor ${COMPRESSOR}
; Per-user: HKCU and %LOCALAPPDATA% only. "user" also keeps Windows' installer-detection heuristic
; (which would ask for elevation because the file name contains "setup") from kicking in.
RequestExecutionLevel user

!ifndef VERSION
  !define VERSION "0.0.0"
!endif
!ifndef PAYLOAD
  !define PAYLOAD "../out/dist/cowork-terminal"
!endif
!ifndef OUTFILE
  !define OUTFILE "../out/CoworkTerminal-${VERSION}-setup.exe"
!endif
!ifndef ICON
  !define ICON "../../assets/generated/cowork-terminal.ico"
!endif

!define APP_NAME "Cowork Terminal"
!define APP_EXE "cowork-terminal.exe"
!define PUBLISHER "Cowork Terminal developers"
; Identifies this app in HKCU\...\Uninstall; never change it, or upgrades leave a second entry.
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\CoworkTerminal"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
; The value the tray's "Start at login" reads and writes (app/core/install/autostart.py RUN_VALUE).
!define RUN_VALUE "Cowork Terminal"
!define GIT_URL "https://git-scm.com/download/win"
; The app's own override for the bash it uses (app/core/execution/bash_resolver.py BASH_PATH_ENV).
!define BASH_ENV "COWORK_TERMINAL_BASH"

Name "${APP_NAME}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP_NAME}"
; An upgrade goes where the previous version went, even if the user picked another folder.
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${APP_NAME} ${VERSION}"

!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "x64.nsh"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_COMPONENTSPAGE_NODESC

!define MUI_WELCOMEPAGE_TEXT "$(T_WELCOME)"
!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!define MUI_FINISHPAGE_TEXT "$(T_FINISHED)"
!define MUI_FINISHPAGE_RUN "$INSTDIR\${APP_EXE}"
!define MUI_FINISHPAGE_RUN_TEXT "$(T_START_NOW)"
!insertmacro MUI_PAGE_FINISH

!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

; The installer speaks the user's Windows display language when it is one of these (NSIS picks it
; at start), else English. The texts below are the English originals; their translations come from
; app/locale/<lang>/LC_MESSAGES/installer.po through translations.nsh (generated: see that file).
!insertmacro MUI_LANGUAGE "English"
!insertmacro MUI_LANGUAGE "Spanish"
!insertmacro MUI_LANGUAGE "German"
!insertmacro MUI_LANGUAGE "Russian"

LangString T_WELCOME ${LANG_ENGLISH} "This will install ${APP_NAME} ${VERSION} for your account only (no administrator rights needed).$\r$\n$\r$\n${APP_NAME} lets Claude run commands on this computer while you stay in charge: it lives in the notification area, shows what runs, and pauses access with one click.$\r$\n$\r$\nClick Next to continue."
LangString T_FINISHED ${LANG_ENGLISH} "${APP_NAME} is installed.$\r$\n$\r$\nIn its icon's menu in the notification area, choose $\"Connect to Claude$\", then restart Claude."
LangString T_START_NOW ${LANG_ENGLISH} "Start ${APP_NAME} now"
LangString T_AUTOSTART ${LANG_ENGLISH} "Start ${APP_NAME} when I sign in"
LangString T_NO_GIT ${LANG_ENGLISH} "${APP_NAME} runs commands with Git Bash, which comes with Git for Windows, and Git for Windows was not found on this computer.$\r$\n$\r$\nInstall it from ${GIT_URL} (the default options are fine), before or after this setup.$\r$\n$\r$\nOpen the download page now?"
LangString T_NEEDS_64BIT ${LANG_ENGLISH} "${APP_NAME} needs 64-bit Windows."
LangString T_DISCONNECTING ${LANG_ENGLISH} "Removing ${APP_NAME} from Claude's settings..."
!include "translations.nsh"

; --- Git for Windows ---------------------------------------------------------------------------

; Sets $R0 to "$R0 or path", i.e. keeps the first bash.exe found.
!macro TRY_BASH path
  ${If} $R0 == ""
  ${AndIf} ${FileExists} "${path}"
    StrCpy $R0 "${path}"
  ${EndIf}
!macroend

; Sets $R0 to the first bash.exe found where the app looks (app/core/execution/bash_resolver.py: the user's
; override, then machine-wide 64-bit, 32-bit and per-user Git for Windows, bin\ then usr\bin\),
; or to "".
!macro FIND_GIT_BASH
  StrCpy $R0 ""
  ReadEnvStr $R1 "${BASH_ENV}"
  ${If} $R1 != ""
    !insertmacro TRY_BASH "$R1"
  ${EndIf}
  !insertmacro TRY_BASH "$PROGRAMFILES64\Git\bin\bash.exe"
  !insertmacro TRY_BASH "$PROGRAMFILES64\Git\usr\bin\bash.exe"
  !insertmacro TRY_BASH "$PROGRAMFILES32\Git\bin\bash.exe"
  !insertmacro TRY_BASH "$PROGRAMFILES32\Git\usr\bin\bash.exe"
  !insertmacro TRY_BASH "$LOCALAPPDATA\Programs\Git\bin\bash.exe"
  !insertmacro TRY_BASH "$LOCALAPPDATA\Programs\Git\usr\bin\bash.exe"
!macroend

Function CheckGitForWindows
  !insertmacro FIND_GIT_BASH
  ${If} $R0 == ""
    ; Informational, not a blocker: Git can be installed before or after this app, and the tray
    ; says the same thing until it is.
    MessageBox MB_YESNO|MB_ICONINFORMATION "$(T_NO_GIT)" /SD IDNO IDNO git_done
    ExecShell "open" "${GIT_URL}"
    git_done:
  ${EndIf}
FunctionEnd

; --- install -----------------------------------------------------------------------------------

Function .onInit
  ; PyInstaller builds a 64-bit executable on the 64-bit runner; on 32-bit Windows it cannot start.
  ${IfNot} ${RunningX64}
    MessageBox MB_OK|MB_ICONSTOP "$(T_NEEDS_64BIT)" /SD IDOK
    Abort
  ${EndIf}
  SetShellVarContext current
  Call CheckGitForWindows
FunctionEnd

!macro STOP_RUNNING_APP
  ; A running tray (or a `serve` Claude started) holds its files open, so they could be neither
  ; replaced nor deleted. Ask the tray to quit (it waits up to 10 s for it); then end whatever is
  ; left, such as servers Claude started: Claude starts its server again on the next use.
  ${If} ${FileExists} "$INSTDIR\${APP_EXE}"
    nsExec::Exec '"$INSTDIR\${APP_EXE}" tray --quit'
    Pop $0
  ${EndIf}
  nsExec::Exec 'taskkill /F /T /IM "${APP_EXE}"'
  Pop $0
  Sleep 500
!macroend

Section "${APP_NAME}" SecApp
  SectionIn RO
  SetShellVarContext current
  !insertmacro STOP_RUNNING_APP

  ; Replace the whole library folder: files a previous version had but this one does not would
  ; otherwise be picked up by the new executable.
  RMDir /r "$INSTDIR\_internal"
  SetOutPath "$INSTDIR"
  File /r "${PAYLOAD}/*.*"

  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateShortCut "$SMPROGRAMS\${APP_NAME}.lnk" "$INSTDIR\${APP_EXE}" "" "$INSTDIR\${APP_EXE}" 0

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${APP_EXE}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section "$(T_AUTOSTART)" SecAutostart
  ; Exactly what the tray's "Start at login" switch writes (app/core/install/autostart.py:
  ; windows_command_line of launch_command), so the menu shows it ticked: the exe in quotes (the
  ; path may hold spaces), then `tray`. On by default: Claude's commands are refused while the
  ; tray is not running.
  WriteRegStr HKCU "${RUN_KEY}" "${RUN_VALUE}" '"$INSTDIR\${APP_EXE}" tray'
SectionEnd

Section "-Installed size"
  ; Hidden section, last: records the size for "Installed apps" once every file is in place.
  SectionGetSize ${SecApp} $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0
SectionEnd

; --- uninstall ---------------------------------------------------------------------------------

Function un.onInit
  SetShellVarContext current
FunctionEnd

Section "Uninstall"
  ; First, while the executable still exists: the app's own `uninstall` (the same code as
  ; `cowork-terminal uninstall` and the tray's "Uninstall..."): our entry leaves every Claude config
  ; and Claude Code, Start at login goes off, the tray and this install's servers stop. The user's
  ; data stays. Its output goes to the log shown on the uninstall page; a failure there must not
  ; stop the uninstall.
  DetailPrint "$(T_DISCONNECTING)"
  nsExec::ExecToLog '"$INSTDIR\${APP_EXE}" uninstall --yes'
  Pop $0
  !insertmacro STOP_RUNNING_APP

  DeleteRegValue HKCU "${RUN_KEY}" "${RUN_VALUE}"
  Delete "$SMPROGRAMS\${APP_NAME}.lnk"

  ; Only what we installed: $INSTDIR may have been set to a folder that holds other things.
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\${APP_EXE}"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"

  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  ; The journal and logs in %USERPROFILE%\.cowork-terminal are the user's history: kept (a
  ; reinstall picks them up; `cowork-terminal uninstall --data` deletes them).
SectionEnd
