"""Import, library lookup, version, and the error classes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import attnc
from attnc import _library

PYTHON_DIR = Path(__file__).resolve().parent.parent


@pytest.fixture
def fresh_lookup(monkeypatch):
    """Lets a test change where the library is looked for; the next test
    looks it up again as usual."""
    _library.reset_for_tests()
    yield monkeypatch
    monkeypatch.undo()
    _library.reset_for_tests()


def _run_python(code, **env):
    environment = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), **env)
    return subprocess.run([sys.executable, "-c", code], env=environment,
                          capture_output=True, text=True, timeout=60)


def test_import_needs_no_library(tmp_path):
    missing = tmp_path / "nowhere" / "libattnc.so"
    result = _run_python(
        "import attnc\n"
        "print('imported', attnc.__version__)\n"
        "try:\n"
        "    attnc.library_path()\n"
        "except attnc.LibraryNotFoundError as error:\n"
        "    print('error:', error)\n",
        ATTNC_LIBRARY=str(missing))
    assert result.returncode == 0, result.stderr
    assert "imported 0.1.0" in result.stdout
    assert "error: library_not_found: $ATTNC_LIBRARY is set to" in result.stdout
    assert str(missing) in result.stdout


def test_candidate_order(fresh_lookup):
    fresh_lookup.delenv("ATTNC_LIBRARY", raising=False)
    package_copy, build_tree = _library.candidate_paths()
    assert package_copy == PYTHON_DIR / "attnc" / "_lib" / "libattnc.so"
    assert build_tree == PYTHON_DIR.parent / "build" / "lib" / "libattnc.so"
    fresh_lookup.setenv("ATTNC_LIBRARY", "/some/where/libattnc.so")
    assert _library.candidate_paths() == [Path("/some/where/libattnc.so")]


def test_nothing_found_lists_every_path(fresh_lookup, tmp_path):
    fresh_lookup.delenv("ATTNC_LIBRARY", raising=False)
    fresh_lookup.setattr(_library, "_PACKAGE_DIR", tmp_path / "pkg")
    fresh_lookup.setattr(_library, "_REPO_DIR", tmp_path / "repo")
    with pytest.raises(attnc.LibraryNotFoundError) as info:
        attnc.library_path()
    message = str(info.value)
    assert str(tmp_path / "pkg" / "_lib" / "libattnc.so") in message
    assert str(tmp_path / "repo" / "build" / "lib" / "libattnc.so") in message
    assert "ATTNC_LIBRARY" in message
    assert info.value.status == "library_not_found"
    assert isinstance(info.value, OSError)


def test_unloadable_file_is_a_clear_error(fresh_lookup, tmp_path):
    bogus = tmp_path / "libattnc.so"
    bogus.write_bytes(b"not an ELF file")
    fresh_lookup.setenv("ATTNC_LIBRARY", str(bogus))
    with pytest.raises(attnc.LibraryNotFoundError, match="cannot load"):
        attnc.Context()


def test_package_copy_comes_before_the_build_tree(fresh_lookup, tmp_path):
    # Absolute: a relative ATTNC_LIBRARY would make the symlink dangle.
    real = Path(attnc.library_path()).resolve()
    fresh_lookup.delenv("ATTNC_LIBRARY", raising=False)
    package = tmp_path / "pkg"
    (package / "_lib").mkdir(parents=True)
    (package / "_lib" / "libattnc.so").symlink_to(real)
    repo_lib = tmp_path / "repo" / "build" / "lib"
    repo_lib.mkdir(parents=True)
    (repo_lib / "libattnc.so").write_bytes(b"broken")
    fresh_lookup.setattr(_library, "_PACKAGE_DIR", package)
    fresh_lookup.setattr(_library, "_REPO_DIR", tmp_path / "repo")
    _library.reset_for_tests()
    assert attnc.library_path() == str(package / "_lib" / "libattnc.so")


def test_build_tree_is_the_fallback(fresh_lookup, tmp_path):
    # Absolute: a relative ATTNC_LIBRARY would make the symlink dangle.
    real = Path(attnc.library_path()).resolve()
    fresh_lookup.delenv("ATTNC_LIBRARY", raising=False)
    repo_lib = tmp_path / "repo" / "build" / "lib"
    repo_lib.mkdir(parents=True)
    (repo_lib / "libattnc.so").symlink_to(real)
    fresh_lookup.setattr(_library, "_PACKAGE_DIR", tmp_path / "pkg")
    fresh_lookup.setattr(_library, "_REPO_DIR", tmp_path / "repo")
    _library.reset_for_tests()
    assert attnc.library_path() == str(repo_lib / "libattnc.so")


def test_version():
    version = attnc.version()
    assert version and version[0].isdigit(), version


def test_error_classes():
    assert issubclass(attnc.ConfigError, attnc.InvalidArgumentError)
    assert issubclass(attnc.ArgumentError, attnc.InvalidArgumentError)
    assert issubclass(attnc.InvalidArgumentError, ValueError)
    assert issubclass(attnc.NotFoundError, LookupError)
    for cls in (attnc.ConfigError, attnc.CompileError, attnc.CudaError,
                attnc.NoDriverError, attnc.BundleIOError, attnc.CorruptError,
                attnc.NotFoundError, attnc.InternalError, attnc.ArgumentError,
                attnc.LibraryNotFoundError):
        assert issubclass(cls, attnc.AttncError)
    error = attnc.ArgumentError("k_cache", "must be C-contiguous")
    assert error.argument == "k_cache" and error.status == "invalid_argument"
    assert str(error) == "invalid_argument: k_cache: must be C-contiguous"


def test_status_codes_map_to_classes():
    lib = _library.library()
    names = {code: lib.attnc_status_name(code).decode() for code in range(1, 9)}
    assert names == {1: "invalid_argument", 2: "compile_error", 3: "cuda_error",
                     4: "no_driver", 5: "io_error", 6: "corrupt", 7: "not_found",
                     8: "internal"}
    for code, name in names.items():
        error = lib.error_for(code)
        assert error.status == name and error.code == code
        assert type(error).status == name
