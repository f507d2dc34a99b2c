"""The wine lane's own setup rules (pure, run with the ordinary tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import wine_env


def test_without_the_shared_wine_files_the_lane_fails_and_says_where_to_put_them(tmp_path: Path) -> None:
    with pytest.raises(wine_env.WineSetupError) as caught:
        wine_env.shared_dir({wine_env.SHARED_ENV: str(tmp_path)})
    message = str(caught.value)
    assert "bcryptprimitives-shim.c" in message and "busybox-w32.exe" in message
    assert str(tmp_path) in message and wine_env.SHARED_ENV in message


def test_the_shared_folder_is_found_beside_the_clone_unless_overridden(tmp_path: Path) -> None:
    for name in (wine_env.SHIM_SOURCE, wine_env.BUSYBOX):
        (tmp_path / name).write_bytes(b"x")
    assert wine_env.shared_dir({wine_env.SHARED_ENV: str(tmp_path)}) == tmp_path
    default = wine_env.ROOT.parent / "shared" / "wine"
    if default.is_dir():
        assert wine_env.shared_dir({}) == default


def test_the_cache_key_changes_with_every_pin_and_the_cache_lives_outside_the_repo(tmp_path: Path) -> None:
    for name in (wine_env.SHIM_SOURCE, wine_env.BUSYBOX):
        (tmp_path / name).write_bytes(b"one")
    first = wine_env.cache_key(tmp_path, "wine-8.0")
    assert wine_env.cache_key(tmp_path, "wine-9.0") != first
    (tmp_path / wine_env.BUSYBOX).write_bytes(b"two")
    assert wine_env.cache_key(tmp_path, "wine-8.0") != first
    root = wine_env.cache_root({"HOME": str(tmp_path)})
    assert wine_env.ROOT not in root.parents
    assert wine_env.cache_root({wine_env.CACHE_ENV: "/x/y"}) == Path("/x/y")


def test_unix_paths_get_their_windows_names_inside_and_outside_the_prefix(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    assert wine_env.windows_path(prefix / "drive_c" / "python" / "python.exe", prefix) == "C:\\python\\python.exe"
    assert wine_env.windows_path(Path("/work/repo/tests"), prefix) == "Z:\\work\\repo\\tests"
