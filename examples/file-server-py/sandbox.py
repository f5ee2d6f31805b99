"""The file operations of the example, inside one directory.

Every path a client gives is checked lexically first (relative, no NUL
byte, never above the root: :func:`check_path`, which ``tools/resolve``
runs too), then on disk: its real location, through any symbolic link, of
the path or of its nearest existing parent, must be inside the root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

MAX_READ_BYTES = 1 << 20
"""The largest file ``read`` returns."""
MAX_LIST_ENTRIES = 1000
"""The most entries ``list`` returns."""


class Refused(Exception):
    """A refused operation: the message the model reads."""


def check_path(p: str) -> None:
    """Checks a client's path lexically: relative, no NUL byte, never above
    the sandbox root. Pure, so that ``tools/resolve`` can run it too."""
    if "\0" in p:
        raise Refused(f"{p!r}: contains a NUL byte")
    if p.startswith("/"):
        raise Refused(f"{p}: absolute paths are refused; paths are relative to the sandbox directory")
    depth = 0
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if depth == 0:
                raise Refused(f"{p}: refused: leads outside the sandbox directory")
            depth -= 1
        else:
            depth += 1


def _failed(p: str, error: OSError) -> Refused:
    if isinstance(error, FileNotFoundError):
        return Refused(f"{p}: no such file or directory")
    if isinstance(error, FileExistsError):
        return Refused(f"{p}: already exists (pass `overwrite: true` to replace it)")
    if isinstance(error, PermissionError):
        return Refused(f"{p}: refused: {error.strerror}")
    return Refused(f"{p}: {error.strerror or error}")


class Sandbox:
    """The directory the server works in."""

    def __init__(self, root: str) -> None:
        real = Path(root).resolve(strict=True)
        if not real.is_dir():
            raise NotADirectoryError(f"{root}: not a directory")
        self._root = real

    def _inside(self, real: Path) -> bool:
        return real == self._root or self._root in real.parents

    def _locate(self, p: str) -> Path:
        """The absolute location of ``p``, once its real location is inside
        the root."""
        check_path(p)
        full = Path(os.path.normpath(self._root / p))
        probe = full
        while True:
            if probe.exists():
                if not self._inside(probe.resolve()):
                    raise Refused(f"{p}: refused: leads outside the sandbox directory")
                return full
            if probe.is_symlink():
                raise Refused(f"{p}: refused: a symbolic link that leads nowhere")
            if probe == self._root:
                raise Refused(f"{p}: no such file or directory")
            probe = probe.parent

    def read(self, p: str) -> str:
        full = self._locate(p)
        try:
            with open(full, "rb") as f:
                data = f.read(MAX_READ_BYTES + 1)
        except OSError as e:
            raise _failed(p, e) from None
        if len(data) > MAX_READ_BYTES:
            raise Refused(f"{p}: larger than {MAX_READ_BYTES} bytes; not read")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{p}: not UTF-8 text") from None

    def append(self, p: str, content: str) -> None:
        full = self._locate(p)
        try:
            with open(full, "a", encoding="utf-8") as f:
                f.write(content)
        except OSError as e:
            raise _failed(p, e) from None

    def replace(self, p: str, content: str) -> None:
        full = self._locate(p)
        try:
            full.write_text(content, encoding="utf-8")
        except OSError as e:
            raise _failed(p, e) from None

    def delete(self, p: str) -> None:
        full = self._locate(p)
        try:
            full.unlink()
        except OSError as e:
            raise _failed(p, e) from None

    def copy(self, source: str, destination: str, overwrite: bool) -> int:
        """Copies ``source`` to ``destination`` (an existing destination only
        with ``overwrite``); the bytes copied."""
        src = self._locate(source)
        dst = self._locate(destination)
        try:
            if not src.is_file():
                raise Refused(f"{source}: not a regular file")
            size = src.stat().st_size
        except OSError as e:
            raise _failed(source, e) from None
        try:
            if not overwrite:
                # Created exclusively: an existing destination is left alone.
                with open(dst, "xb") as out, open(src, "rb") as f:
                    shutil.copyfileobj(f, out)
            else:
                shutil.copyfile(src, dst)
        except OSError as e:
            raise _failed(destination, e) from None
        return size

    def list(self, p: str) -> list[str]:
        """The entries of a directory, sorted, directories with a trailing ``/``."""
        full = self._locate(p)
        try:
            entries = list(os.scandir(full))
        except OSError as e:
            raise _failed(p, e) from None
        if len(entries) > MAX_LIST_ENTRIES:
            raise Refused(f"{p}: more than {MAX_LIST_ENTRIES} entries; not listed")
        return sorted(e.name + "/" if e.is_dir() else e.name for e in entries)
