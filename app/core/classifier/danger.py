"""Classes of danger: what a destructive command would cost the user, and whether it can be undone.

Each destructive finding carries one; a classification's `danger` is the worst of its findings, so
that the approval window can say it in one plain sentence and style the worst class most strongly.
The texts are marked N_(): a window says them with `_(danger.title)` and `_(danger.sentence)`.
"""

from __future__ import annotations

import enum


def N_(text: str) -> str:
    """The marker Babel extracts, as app.core.i18n's N_ (importing that here would cost 20 ms at start)."""
    return text


class Danger(enum.IntEnum):
    """Worst last: comparing two classes says which the approval window shows."""

    CANNOT_TELL = 1
    SYSTEM = 2
    OUTSIDE_WATCH = 3
    CONTROLS_PROGRAMS = 4
    PERMISSIONS = 5
    SHARED_HISTORY = 6
    DOWNLOADED = 7
    LOSES_FILES = 8
    LOSES_EVERYTHING = 9  # the whole home folder, or every file on the computer
    ERASES_DISK = 10  # a whole disk or partition, written over or formatted

    @property
    def title(self) -> str:
        """A few words that name the class (English; translate with `_()` where shown)."""
        return _TITLES[self]

    @property
    def sentence(self) -> str:
        """What would be lost and whether it can be undone, in one plain sentence (English)."""
        return _SENTENCES[self]


_TITLES = {
    Danger.CANNOT_TELL: N_("Cannot be checked"),
    Danger.SYSTEM: N_("Changes your computer"),
    Danger.OUTSIDE_WATCH: N_("Runs outside Cowork Terminal's watch"),
    Danger.CONTROLS_PROGRAMS: N_("Takes control of other programs"),
    Danger.PERMISSIONS: N_("Changes who may use your files"),
    Danger.SHARED_HISTORY: N_("Rewrites shared history"),
    Danger.DOWNLOADED: N_("Runs a program downloaded from the internet"),
    Danger.LOSES_FILES: N_("Irreversible loss of your files"),
    Danger.LOSES_EVERYTHING: N_("Deletes everything you have"),
    Danger.ERASES_DISK: N_("Erases a whole disk"),
}
_SENTENCES = {
    Danger.CANNOT_TELL: N_("Cowork Terminal cannot tell what this command would do: allow it only if you know."),
    Danger.SYSTEM: N_("It changes your computer beyond this project, and that may be hard to undo."),
    Danger.OUTSIDE_WATCH: N_(
        "The program starts later or elsewhere, where Cowork Terminal cannot see, pause or stop it."
    ),
    Danger.CONTROLS_PROGRAMS: N_(
        "It can type, click or change memory in other programs as if it were you, Cowork Terminal included."
    ),
    Danger.PERMISSIONS: N_(
        "Other people or programs may gain or lose access to your files; undoing it means fixing each by hand."
    ),
    Danger.SHARED_HISTORY: N_("Commits others may rely on are replaced and can be lost for everyone."),
    Danger.DOWNLOADED: N_("Nobody has checked this program: it can do anything you can, and that cannot be undone."),
    Danger.LOSES_FILES: N_("What it deletes does not go to the Trash: this cannot be undone."),
    Danger.LOSES_EVERYTHING: N_(
        "All your documents, photos and settings would be deleted for good: this cannot be undone."
    ),
    Danger.ERASES_DISK: N_("Everything on that disk would be lost for good: this cannot be undone."),
}
