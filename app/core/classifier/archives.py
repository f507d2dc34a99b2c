"""Archivers, sync and backup tools: not deleters by name, but each has a way to delete (issue 23).

`tar --remove-files`, `zip -m`, `7z a -sdel` delete the files they pack; `7z d`, `zip -d`, `tar
--delete` delete from an archive; `rclone sync` and `rsync --delete` delete what the source lacks;
backup tools forget snapshots. Those are held as deletions; packing and copying stay moderate.
"""

from __future__ import annotations

from app.core.i18n import N_

from .code_options import _TAR_VALUES, option_values, tar_new_style
from .danger import Danger
from .findings import D, M, _snip
from .options import _long_flags, _operands, _short_flags, expanded, long_option, options_from
from .rule import Analysis
from .stdin import _Stdin
from .tables import _names
from .words import _Word, _word_end

PACKED_WORDS = N_("Deletes the files it puts into the archive")
FROM_ARCHIVE_WORDS = N_("Deletes files from inside an archive")
REMOTE_WORDS = N_("Deletes files or backups stored elsewhere")


def deletes(ctx: Analysis, reason: str, plain: str, **values: str) -> None:
    ctx.add(D, reason, plain, danger=Danger.LOSES_FILES, **values)


def _short_clusters(args: list[_Word]) -> set[str]:
    """Letters of short options (`-rm` is -r and -m); tar's first word may be letters without a dash."""
    letters: set[str] = set()
    for a in args:
        v = a.value or ""
        if v.startswith("-") and not v.startswith("--"):
            letters.update(v[1:])
    return letters


def unpacks_into(ctx: Analysis, folders: list[_Word]) -> None:
    """An archive unpacked into each of `folders` (the command's own folder when none): files only
    the archive names land there, at any depth, and count as written (a second red team, 2026-12-05:
    `tar xf x.tar && bash x.sh` judged the x.sh on disk, which the archive replaced first; `tar -C
    ~/.ssh -xf x.tar` wrote authorized_keys unasked). Not for a project's recipes, as a clone's are
    not (`tar xzf pkg.tgz && cd pkg && make`: see scripts.runs_project_files)."""
    places: list[_Word | None] = [*folders] or [None]
    for folder in places:
        where = (ctx.cwd or "*") if folder is None else (ctx.path_pattern(folder) or "*")
        source = "." if folder is None else folder.source
        pattern = ctx.note_written(_Word(None, source, where.rstrip("/") + "/*", True), writes=True)
        if pattern is not None:
            ctx.report.unpacked.add(pattern)


def cmd_tar(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    given = tar_new_style(args)
    extract = {long_option(a.value or "", ("extract", "get")) for a in given if (a.value or "").startswith("--")}
    if "x" in _short_flags(given) or {"extract", "get"} & extract:
        unpacks_into(ctx, [w for _option, w in option_values(given, ["-C", "--directory"], _TAR_VALUES)])
    longs = _long_flags(args)
    if "--remove-files" in longs:
        deletes(ctx, "{name} --remove-files: deletes the files it packs", PACKED_WORDS, name=name)
    if {"--recursive-unlink", "--unlink-first"} & longs or "U" in _short_clusters(args):
        deletes(ctx, "{name} --recursive-unlink: deletes folders before extracting", N_(
            "Deletes existing files and folders before unpacking over them"), name=name)  # fmt: skip
    if "--delete" in longs:
        deletes(ctx, "{name} --delete: deletes files from an archive", FROM_ARCHIVE_WORDS, name=name)
    if any(a.value is None for a in args[:1]):
        options_from(ctx, name, args[0].source)
    ctx.add(M, "{name}: packs or unpacks files", name=name)


def cmd_zip(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    letters = _short_clusters(args)
    longs = _long_flags(args)
    if "m" in letters or "--move" in longs:
        deletes(ctx, "{name} -m: deletes the files it packs", PACKED_WORDS, name=name)
    if "d" in letters or {"--delete", "--filesync"} & longs or "FS" in {(a.value or "")[1:] for a in args}:
        deletes(ctx, "{name} -d: deletes files from an archive", FROM_ARCHIVE_WORDS, name=name)
    ctx.add(M, "{name}: packs files", name=name)


def cmd_7z(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """7z's first operand is its command letter: a(dd), d(elete), u(pdate), x/e(xtract), l(ist)..."""
    ops = _operands(args)
    command = (ops[0].value or "?") if ops else ""
    if command.casefold() == "d":
        deletes(ctx, "{name} d: deletes files from an archive", FROM_ARCHIVE_WORDS, name=name)
    if any((a.value or "").casefold() == "-sdel" for a in args):
        deletes(ctx, "{name} -sdel: deletes the files it packs", PACKED_WORDS, name=name)
    if any(a.value is None for a in args):
        ctx.add(D, "cannot tell: {name} takes options from an expansion", name=name)
    if command.casefold() in ("x", "e"):
        folders = [a for a in args if a.pattern.startswith("-o") and a.pattern[2:]]  # `-oDIR`, its value attached
        unpacks_into(ctx, [_word_end(a, len(a.pattern) - 2) for a in folders])
    if command.casefold() not in ("l", "t", "i", "h", "b"):
        ctx.add(M, "{name}: packs or unpacks files", name=name)


def cmd_unzip(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """unzip unpacks into its own folder or `-d DIR`; -l, -v, -t, -p, -Z, -z only list, test or print."""
    if not {"l", "v", "t", "p", "Z", "z"} & _short_flags(args):
        unpacks_into(ctx, [w for _option, w in option_values(args, ["-d"], "dxI")])
        ctx.add(M, "{name}: packs or unpacks files", name=name)


def cmd_cpio(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """cpio -i (--extract) unpacks into its own folder (`-D DIR`, `--directory`)."""
    if "i" in _short_flags(args) or "--extract" in _long_flags(args):
        unpacks_into(ctx, [w for _option, w in option_values(args, ["-D", "--directory"], "DEFHIMORs")])
    ctx.add(M, "{name}: packs or unpacks files", name=name)


_RCLONE_DELETING = _names("sync bisync delete deletefile purge rmdir rmdirs cleanup dedupe move moveto")
_RCLONE_READING = _names(
    "ls lsd lsl lsf lsjson cat size about check cryptcheck md5sum sha1sum hashsum tree listremotes version "
    "config help authorize obscure"
)


def cmd_rclone(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    if expanded(ctx, next(iter(_operands(args)), None), name):
        return
    sub = next((a.value for a in _operands(args)), "") or ""
    if sub in _RCLONE_DELETING or any((a.value or "").startswith(("--delete", "--max-delete")) for a in args):
        deletes(ctx, "{name} {sub}: deletes files", REMOTE_WORDS, name=name, sub=_snip(sub))
    elif sub not in _RCLONE_READING:
        ctx.add(M, "{name} {sub}: copies files", name=name, sub=_snip(sub))


# Cloud storage and backup tools: (subcommands that delete, options that make a sync delete).
_REMOTE_TOOLS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "gsutil": (_names("rm rb"), _names("-d")),
    "s3cmd": (_names("del rm rb delete"), _names("--delete-removed --delete-after")),
    "borg": (_names("delete prune compact recreate"), frozenset()),
    "restic": (_names("forget prune"), frozenset()),
    "rdiff-backup": (frozenset(), _names("--remove-older-than")),
    "duplicity": (_names("remove-older-than remove-all-but-n-full remove-all-inc-of-but-n-full cleanup"), frozenset()),
    "azcopy": (_names("remove rm"), _names("--delete-destination=true --delete-destination")),
    "mc": (_names("rm rb"), _names("--remove")),
}


def cmd_remote_tool(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    subs, options = _REMOTE_TOOLS[name]
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    if sub in subs or any(v in options or v.split("=", 1)[0] in options for v in values):
        deletes(ctx, "{name} {sub}: deletes stored files or backups", REMOTE_WORDS, name=name, sub=_snip(sub))
    else:
        ctx.add(M, "{name}: copies or stores files", name=name)


def cmd_aws(ctx: Analysis, name: str, args: list[_Word], stdin: _Stdin | None, bulk: bool, depth: int) -> None:
    """`aws s3 rm|rb|mv`, `aws s3 sync --delete`, `aws s3api delete-*`: deletions in the cloud."""
    ops = [a.value or "" for a in _operands(args)]
    longs = _long_flags(args)
    if ops[:1] == ["s3"] and (ops[1:2] in (["rm"], ["rb"], ["mv"]) or (ops[1:2] == ["sync"] and "--delete" in longs)):
        deletes(ctx, "{name} s3 {sub}: deletes stored files", REMOTE_WORDS, name=name, sub=ops[1])
    elif len(ops) >= 2 and ops[1].startswith(("delete", "remove", "terminate")):
        deletes(ctx, "{name} {sub}: deletes cloud resources", REMOTE_WORDS, name=name, sub=_snip(" ".join(ops[:2])))
    else:
        ctx.add(M, "{name}: acts on cloud resources", name=name)
