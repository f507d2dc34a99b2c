"""What the classifier found, as a person reads it in their language, while the model keeps English.

The person's words are built from what each finding is (its template and values), so these tests
run the whole corpus of tests/data/command_tiers.tsv in every language.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core import i18n
from app.core.classifier import Tier, classify
from app.core.classifier.findings import Words
from app.core.messages import held_reason
from app.core.policy.plain_words import held_reason_for_person, lines_for_person
from tests.test_classifier import PROTECTED, ROWS

PROJECT = "/home/ana/project"


@pytest.fixture
def speaking() -> Iterator[None]:
    yield
    i18n.use_language("en")


def said(command: str, language: str, cwd: str | None = PROJECT) -> tuple[str, ...]:
    i18n.use_language(language)
    return lines_for_person(classify(command, cwd=cwd, protected_paths=PROTECTED))


def test_in_english_the_person_reads_exactly_the_plain_words_the_model_reads_for_every_corpus_command(
    speaking: None,
) -> None:
    for command, _tier, _why in ROWS:
        for cwd in (None, PROJECT):
            verdict = classify(command, cwd=cwd, protected_paths=PROTECTED)
            i18n.use_language("en")
            assert lines_for_person(verdict) == verdict.plain, command


@pytest.mark.parametrize("language", ["es", "de", "ru"])
def test_no_destructive_corpus_command_is_explained_in_english_to_a_spanish_german_or_russian_user(
    speaking: None, language: str
) -> None:
    # Classified in English first, then read in the language once: loading a catalog costs ~25 ms.
    i18n.use_language("en")
    verdicts = [
        (command, classify(command, cwd=PROJECT, protected_paths=PROTECTED))
        for command, tier, _why in ROWS
        if tier is Tier.DESTRUCTIVE
    ]
    i18n.use_language(language)
    for command, verdict in verdicts:
        shown = lines_for_person(verdict)
        assert shown and not set(verdict.plain) & set(shown), (command, shown)


def test_a_german_and_a_russian_user_read_which_folder_is_deleted_and_the_model_still_reads_english(
    speaking: None,
) -> None:
    assert said("rm -rf build", "de") == ("Löscht den Ordner /home/ana/project/build und alles darin",)
    assert said("rm -rf build", "ru") == ("Удаляет папку /home/ana/project/build и всё её содержимое",)
    assert said("git push --force origin main", "de") == ("Schreibt den Verlauf von origin/main neu",)
    assert said("sudo reboot", "ru")[0] == "Выполняется от имени администратора"
    assert said('eval "$x"', "de") == (
        "Cowork Terminal kann nicht erkennen, was dieser Befehl tun würde "
        "(eval führt Text aus, der erst beim Ausführen zusammengesetzt wird)",
    )
    assert said("pkill -f x", "ru") == ("Завершает сразу много процессов",)
    # The same verdict, as the model reads it, whatever the user's language.
    verdict = classify("rm -rf build", cwd=PROJECT)
    assert verdict.plain == ("Deletes the folder /home/ana/project/build and everything in it",)
    assert held_reason(verdict.plain, verdict.reasons) == (
        "Deletes the folder /home/ana/project/build and everything in it (rm -r: recursive removal)"
    )
    again = classify("echo x > ~/.cowork-terminal/pause", cwd=PROJECT)
    assert held_reason(again.plain, again.reasons) == "Writes to ~/.cowork-terminal/pause", "a reason is said once"


def test_a_person_reads_plain_words_where_the_models_reason_is_jargon(speaking: None) -> None:
    """The model keeps its terse reason, exact; the person reads what it means, without git's,
    bash's or the system's words for it."""
    cases = {
        'eval "$x"': (
            "cannot tell what runs: eval of an expansion",
            "Cowork Terminal cannot tell what this command would do "
            "(eval runs text that is only put together when it runs)",
        ),
        "$cmd foo": (
            "cannot tell what runs: the command name comes from $cmd",
            "Cowork Terminal cannot tell what this command would do "
            "(the program to run is only known when it runs ($cmd))",
        ),
        "bash -c": (
            "cannot tell what runs: bash -c without a command",
            "Cowork Terminal cannot tell what this command would do (bash would read its commands from somewhere else)",
        ),
        "my-own-tool --go": (
            "my-own-tool: not known to be read-only",
            "Runs my-own-tool, a program Cowork Terminal doesn't know: it may change things",
        ),
        "gh repo delete x": (
            "gh repo delete: deletes it on GitHub",
            "Deletes something on GitHub (repo)",
        ),
        "git reset --hard": (
            "git reset --hard: discards uncommitted changes",
            "Throws away changes not yet saved in git",
        ),
        "git clean -fd": ("git clean -f: deletes untracked files", "Deletes new files git has not been told to keep"),
        "mkfs.ext4 /dev/sdb1": (
            "mkfs.ext4: creates a filesystem, erasing the device",
            "Formats a disk, erasing everything on it",
        ),
        "chroot /mnt ls": (
            "chroot: runs as root in another root folder",
            "Runs as administrator inside another system folder",
        ),
    }
    for command, (reason, plain) in cases.items():
        verdict = classify(command, cwd=PROJECT)
        assert reason in verdict.reasons, command
        assert plain in verdict.plain, command
        assert plain in lines_for_person(verdict), command
    assert classify("gh api -X DELETE /repos/a/b", cwd=PROJECT).plain == (
        "Deletes something on GitHub (for example a repository or release)",
    )
    assert said("python3 -c 'import shutil; shutil.rmtree(\"x\")'", "en") == (
        "Runs python3 code that can delete files or shut down the computer",
    )
    assert said("git reset --hard", "de") == ("Verwirft Änderungen, die noch nicht in git gespeichert sind",)
    assert said("init 6", "es") == ("Apaga o reinicia el ordenador, o cambia cómo funciona",)


def test_german_says_encoded_not_encrypted_and_that_gh_changes_something(speaking: None) -> None:
    assert said("gh pr create", "de") == ("Ändert etwas auf GitHub",)
    assert said("powershell -EncodedCommand ZQBjAGgAbwA=", "de") == (
        "Cowork Terminal kann nicht erkennen, was dieser Befehl tun würde (powershell mit kodiertem Code)",
    )


def test_a_value_is_never_translated_only_the_words_around_it(speaking: None) -> None:
    """A folder named like an English text stays the folder's name."""
    assert said("rm -rf 'Deletes folders and everything in them'", "de") == (
        "Löscht den Ordner /home/ana/project/Deletes folders and everything in them und alles darin",
    )


def test_words_travel_to_a_window_as_json_and_anything_else_is_refused() -> None:
    verdict = classify('bash -c "$x"', cwd=PROJECT)
    for words in verdict.words:
        assert Words.from_json(words.to_json()) == words
    assert Words.from_json(["{a}", {"a": 3}]) is None
    assert Words.from_json("Deletes everything") is None


def test_why_a_command_was_held_is_said_again_in_german_only_when_the_stored_words_are_todays(
    speaking: None,
) -> None:
    verdict = classify("rm -rf build", cwd=PROJECT)
    stored = held_reason(verdict.plain, verdict.reasons)
    i18n.use_language("de")
    assert held_reason_for_person(stored, "rm -rf build", PROJECT, ()) == (
        "Löscht den Ordner /home/ana/project/build und alles darin"
    )
    # An older version's words, or a row for another folder: not ours to re-say.
    assert held_reason_for_person("Deletes build (rm -r)", "rm -rf build", PROJECT, ()) is None
    assert held_reason_for_person(stored, "rm -rf build", "/elsewhere", ()) is None


@pytest.mark.parametrize(
    ("language", "placeholder"),
    [
        ("de", "(die Wörter, die xargs liest)"),
        ("es", "(las palabras que lee xargs)"),
        ("ru", "(слова, которые читает xargs)"),
    ],
)
def test_what_xargs_reads_is_said_in_the_persons_language_and_in_english_to_the_model(
    speaking: None, language: str, placeholder: str
) -> None:
    """A word the command line does not hold (what xargs reads from its input) is named by the classifier;
    the UX audit (2026-12-06) found it in English inside the German approval window."""
    lines = said("find . -name '*.o' | xargs rm -rf", language)
    assert any(placeholder in line for line in lines), lines
    assert not any("the words xargs reads" in line for line in lines), lines
    assert "(the words xargs reads)" in " ".join(classify("find . -name '*.o' | xargs rm -rf").reasons)
