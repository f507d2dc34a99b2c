; The installer's texts in each language, generated from app/locale/*/LC_MESSAGES/installer.po
; by `python tests/i18n_catalogs.py update`: edit the catalogs, not this file.
