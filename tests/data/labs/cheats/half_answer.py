"""Cheat or accident: starts an answer in every pipe it can write to, then never finishes."""
import fcntl
import os
import stat
import struct
import time


def vector_add(x, y):
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_WRONLY:
                os.write(fd, struct.pack("<Q", 1000) + b"0123456789")
        except OSError:
            continue
    time.sleep(3600)
