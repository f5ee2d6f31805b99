#!/usr/bin/env python3
"""Screenshots of `mcp-resolve lsp` in a real editor: Neovim, in a terminal,
its own LSP client attached — a `worst-case` diagnostic with its float, and a
hover on a variant.

Neovim runs in a pseudo-terminal (COLUMNS x ROWS) driven by
scripts/editor_screenshot.lua; the terminal's screen is kept by pyte (a
terminal emulator) and drawn cell by cell with Pillow in DejaVu Sans Mono,
with the xterm palette. Writes docs/editor-diagnostic.png and
docs/editor-hover.png.

Usage (pyte and Pillow from PyPI, e.g. in a venv under target/):
  editor_screenshot.py --bin target/release/mcp-resolve [--nvim nvim] [--out docs]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import signal
import struct
import tempfile
import time

import fcntl
import pyte
import termios
from PIL import Image, ImageDraw, ImageFont

COLUMNS, ROWS = 104, 30
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
BACKGROUND, FOREGROUND = (0x1d, 0x1f, 0x21), (0xd8, 0xd8, 0xd8)
# xterm's 16 colours, then its 6x6x6 cube and grey ramp.
BASE = [
    (0x00, 0x00, 0x00), (0xcd, 0x00, 0x00), (0x00, 0xcd, 0x00), (0xcd, 0xcd, 0x00),
    (0x00, 0x00, 0xee), (0xcd, 0x00, 0xcd), (0x00, 0xcd, 0xcd), (0xe5, 0xe5, 0xe5),
    (0x7f, 0x7f, 0x7f), (0xff, 0x00, 0x00), (0x00, 0xff, 0x00), (0xff, 0xff, 0x00),
    (0x5c, 0x5c, 0xff), (0xff, 0x00, 0xff), (0x00, 0xff, 0xff), (0xff, 0xff, 0xff),
]
NAMES = ["black", "red", "green", "brown", "blue", "magenta", "cyan", "white"]


def color(value, default):
    """pyte's colour (a name, `default`, or six hex digits) as RGB."""
    if value == "default":
        return default
    if value in NAMES:
        return BASE[NAMES.index(value)]
    # Bright colours (pyte 0.8 spells the backgrounds' `bfight…`).
    for prefix in ("bright", "bfight"):
        if value.startswith(prefix) and value[6:] in NAMES:
            return BASE[8 + NAMES.index(value[6:])]
    if len(value) == 6:
        return tuple(int(value[i:i + 2], 16) for i in (0, 2, 4))
    return default


def render(screen, path):
    font = ImageFont.truetype(FONT, 15)
    bold = ImageFont.truetype(FONT_BOLD, 15)
    left, top, right, bottom = font.getbbox("M")
    width = int(font.getlength("M"))
    height = 19
    image = Image.new("RGB", (COLUMNS * width + 16, ROWS * height + 16), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for y in range(ROWS):
        line = screen.buffer[y]
        for x in range(COLUMNS):
            cell = line[x]
            fg = color(cell.fg, FOREGROUND)
            bg = color(cell.bg, BACKGROUND)
            if cell.reverse:
                fg, bg = bg, fg
            px, py = 8 + x * width, 8 + y * height
            if bg != BACKGROUND:
                draw.rectangle([px, py, px + width - 1, py + height - 1], fill=bg)
            if cell.data.strip():
                draw.text((px, py + 1), cell.data, font=bold if cell.bold else font, fill=fg)
            if cell.underscore:
                draw.line([px, py + height - 2, px + width - 1, py + height - 2], fill=fg)
    image.save(path, optimize=True)
    print(f"wrote {path} ({image.width}x{image.height})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--nvim", default="nvim")
    parser.add_argument("--out", default="docs")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    scratch = tempfile.mkdtemp(prefix="mcp-resolve-shot-")
    pid = None
    try:
        rules = os.path.join(scratch, "file-server.yaml")
        shutil.copy(os.path.join(here, "..", "rules", "file-server.yaml"), rules)
        stage = os.path.join(scratch, "stage")
        env = dict(os.environ, TERM="xterm-256color", MCP_RESOLVE_BIN=os.path.abspath(args.bin),
                   RULES_FILE=rules, STAGE_FILE=stage, HOME=scratch)
        pid, fd = pty.fork()
        if pid == 0:
            os.execvpe(args.nvim, [args.nvim, "--clean", "-n", "-c",
                                   f"luafile {os.path.join(here, 'editor_screenshot.lua')}"], env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        screen = pyte.Screen(COLUMNS, ROWS)
        stream = pyte.ByteStream(screen)

        def pump(until, seconds):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    try:
                        stream.feed(os.read(fd, 65536))
                    except OSError:  # the terminal closed: nvim exited
                        return False
                if until():
                    return True
            return False

        def at_stage(name):
            def reached():
                try:
                    with open(stage) as f:
                        return f.read() == name
                except FileNotFoundError:
                    return False
            if not pump(reached, 60):
                raise SystemExit(f"nvim never reached stage {name}")
            pump(lambda: False, 0.5)  # let the screen settle

        at_stage("diagnostic")
        render(screen, os.path.join(args.out, "editor-diagnostic.png"))
        os.remove(stage)
        at_stage("hover")
        render(screen, os.path.join(args.out, "editor-hover.png"))
        os.write(fd, b"\x1b:qa!\r")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                pid = None  # exited, and reaped
                break
            pump(lambda: False, 0.1)
    finally:
        # Never leave the editor (and its language server) behind.
        if pid and os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
