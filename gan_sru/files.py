"""Atomic file writes: the one way this project writes a file that must never be seen half-written."""
import os
import zipfile


def temporary_name(path):
    """The temporary file beside `path` (same folder, so the rename is atomic): NAME.PID.tmp."""
    return f"{path}.{os.getpid()}.tmp"


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path, write_fn, make_dirs=False):
    """Write `path` through `write_fn(binary_file)` into a temporary file beside it, flush and fsync it,
    then rename it over `path` and fsync the folder. On any failure the temporary file is removed and
    `path` is untouched (still the previous complete version, if there was one). Returns `path`."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if make_dirs:
        os.makedirs(folder, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            write_fn(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(folder)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return path


def atomic_write_text(path, text, make_dirs=False):
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")), make_dirs=make_dirs)


def write_npz(f, arrays):
    """np.savez's format (stored .npy members, zip64, no pickle) into the binary file `f`, but the zip is closed
    even when a write fails (np.savez leaves it to the garbage collector, which then prints an ignored
    exception). arrays: {name: array}."""
    import numpy as np

    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for key, value in arrays.items():
            with z.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
