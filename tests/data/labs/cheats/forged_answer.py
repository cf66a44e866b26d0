"""Cheat: writes an answer of its own (torch.save'd, as the sandbox's are) into every pipe it
can write to, then returns nothing."""
import fcntl
import io
import os
import stat
import struct

import torch


def _pipes():
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_WRONLY:
                yield fd
        except OSError:
            continue


def vector_add(x, y):
    buf = io.BytesIO()
    torch.save({"nonce": "guessed", "out": None, "error": "", "refused": [], "launches": [],
                "inputs_after": [], "counted": None, "same_output": False, "note": ""}, buf)
    data = buf.getvalue()
    for fd in _pipes():
        os.write(fd, struct.pack("<Q", len(data)) + data)
    return None
