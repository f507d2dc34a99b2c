"""`python -m app` is the same as the `cowork-terminal` command."""

from app.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
