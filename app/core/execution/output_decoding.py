"""Bytes a command printed, as text: UTF-8 first, then (on Windows) the console's code pages.

Windows programs that are not UTF-8 aware write in the console's code page (cp437 or cp850 for
`dir` and `ipconfig`, cp1252 for programs using the ANSI API, GBK on a Chinese system); decoding
them as UTF-8 turns every accented letter into U+FFFD. Git Bash's own tools write UTF-8, and one
command may mix both, so each line is judged on its own. Splitting at b"\\n" is safe: no byte of
a multi-byte character is 0x0A in UTF-8 or in the ASCII-compatible code pages Windows consoles use.
"""

from __future__ import annotations

import codecs
import functools
import sys
from collections.abc import Callable, Sequence

UTF8 = "utf-8"


def code_pages_for(platform: str, oem_code_page: int | None, ansi_code_page: int | None) -> tuple[str, ...]:
    """The code pages to try after UTF-8, in order (OEM, then ANSI): none outside Windows, none
    that Python does not know, none twice, never UTF-8 (65001) itself."""
    if platform != "win32":
        return ()
    pages: list[str] = []
    for number in (oem_code_page, ansi_code_page):
        if not number or number == 65001:
            continue
        name = f"cp{number}"
        try:
            codecs.lookup(name)
        except LookupError:
            continue
        if name not in pages:
            pages.append(name)
    return tuple(pages)


@functools.cache
def console_code_pages() -> tuple[str, ...]:
    """This machine's code pages to try after UTF-8 (only Windows has any)."""
    if sys.platform != "win32":
        return ()
    import ctypes  # Windows only: the system's OEM and ANSI code pages

    kernel32 = ctypes.windll.kernel32
    return code_pages_for(sys.platform, kernel32.GetOEMCP(), kernel32.GetACP())


def decode_output(data: bytes, code_pages: Sequence[str] = ()) -> str:
    """Text of `data`: valid UTF-8 stays UTF-8; with code pages, each line that is not valid UTF-8
    is decoded with the first code page that reads it whole; what none reads gets U+FFFD."""
    try:
        return data.decode(UTF8)
    except UnicodeDecodeError:
        if not code_pages:
            return data.decode(UTF8, errors="replace")
    return "".join(_decode_line(line, code_pages) for line in data.splitlines(keepends=True))


def _decode_line(line: bytes, code_pages: Sequence[str]) -> str:
    try:
        return line.decode(UTF8)
    except UnicodeDecodeError:
        pass
    for page in code_pages:
        try:
            return line.decode(page)
        except UnicodeDecodeError:
            continue
    return line.decode(UTF8, errors="replace")


def complete_utf8_prefix(data: bytes) -> int:
    """How many bytes of `data` end on a character boundary: a UTF-8 character cut at the end of
    a chunk (at most 3 bytes of it) is left for the next one."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:  # ASCII: everything up to here is whole
            return len(data)
        if byte >= 0xC0:  # a lead byte: is its character complete?
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= needed else len(data) - back
    return len(data)


def is_utf8_continuation(byte: int) -> bool:
    """A UTF-8 continuation byte: the inside of a character, never its start."""
    return byte & 0xC0 == 0x80


def skip_utf8_continuation(data: bytes | bytearray) -> int:
    """How many bytes at the start of `data` are the rest of a character cut before it (at most 3)."""
    skip = 0
    while skip < min(3, len(data)) and is_utf8_continuation(data[skip]):
        skip += 1
    return skip


class StreamDecoder:
    """Decodes a stream chunk by chunk (the shell session's): a character cut at a chunk's end
    waits for the next chunk; each piece is decoded by `decode_output`'s rules."""

    def __init__(self, code_pages: Sequence[str] = ()) -> None:
        self.code_pages = tuple(code_pages)
        self._pending = b""

    def decode(self, chunk: bytes, final: bool = False) -> str:
        data = self._pending + chunk
        whole = len(data) if final else complete_utf8_prefix(data)
        self._pending = data[whole:]
        return decode_output(data[:whole], self.code_pages)


# -- output as the model reads it: JSON text -----------------------------------------------------------

# What the model reads is a JSON text (server/tools.py `reply`), where a control character is a
# six-character escape (\u001b) and a quote, a backslash, a tab or a line end are two characters.
# So each C0 control other than tab and line ends is shown as its Unicode control picture (ESC as
# U+241B, NUL as U+2400): one character that says as much to the model as the escape, so that a
# budget spent on colour codes or NUL bytes still shows six times as much; quotes, backslashes,
# tabs and line ends stay exact, and output is fitted counting each of them at two characters.
CONTROL_PICTURES = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\t\n\r"}
JSON_PAIRS = ('"', "\\", "\t", "\n", "\r")  # what JSON writes as two characters, once controls are pictures
JSON_PAIR_BYTES = tuple(pair.encode() for pair in JSON_PAIRS)


def visible_controls(text: str) -> str:
    """`text` with each C0 control but tab and line ends as its control picture (see above)."""
    return text.translate(CONTROL_PICTURES)


def json_length(text: str, start: int = 0, end: int | None = None) -> int:
    """The characters `text[start:end]` takes in the model's JSON text, its controls as pictures."""
    stop = len(text) if end is None else end
    return stop - start + sum(text.count(pair, start, stop) for pair in JSON_PAIRS)


def json_length_of_bytes(data: bytes, start: int, end: int) -> int:
    """At most the characters `data[start:end]` takes in the model's JSON text once decoded, its
    controls as pictures: a character is never more bytes than characters, a pair byte is two."""
    return end - start + sum(data.count(pair, start, end) for pair in JSON_PAIR_BYTES)


def json_prefix(text: str, room: int) -> int:
    """How many characters of the start of `text` fit in `room` characters of JSON text."""
    return json_end(0, len(text), room, lambda end: json_length(text, 0, end))


def json_suffix(text: str, room: int) -> int:
    """Where the end of `text` that fits in `room` characters of JSON text starts."""
    return json_start(len(text), room, lambda start: json_length(text, start))


def json_start(end: int, room: int, length: Callable[[int], int], floor: int = 0) -> int:
    """The smallest start from `floor` on whose part up to `end` is at most `room` long by `length`."""
    low, high = max(floor, end - max(room, 0)), end
    while low < high:
        middle = (low + high) // 2
        if length(middle) <= room:
            high = middle
        else:
            low = middle + 1
    return low


def json_end(start: int, stop: int, room: int, length: Callable[[int], int]) -> int:
    """The largest end up to `stop` whose part from `start` is at most `room` long by `length`."""
    low, high = start, min(stop, start + max(room, 0))
    while low < high:
        middle = (low + high + 1) // 2
        if length(middle) <= room:
            low = middle
        else:
            high = middle - 1
    return low
