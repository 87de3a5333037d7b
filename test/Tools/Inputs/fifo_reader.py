"""Runs a command while this process holds FIFO open for reading (so the
command finds a reader), then copies what was written into it to OUT:
fifo_reader.py FIFO OUT COMMAND... (exits with the command's status)."""
import os
import subprocess
import sys

fifo, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # does not wait for a writer
status = subprocess.run(cmd).returncode
data = b""
while True:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        break
    if not chunk:
        break
    data += chunk
with open(out, "wb") as f:
    f.write(data)
sys.exit(status)
