"""Drives state-files.test through runtime/python/fp8rt.py."""
import os
import stat
import sys

import numpy as np

tmp, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "scripts"))
sys.path.insert(0, os.path.join(src, "runtime", "python"))
import fp8rt  # noqa: E402
import onnx_tensor  # noqa: E402

ids = onnx_tensor.read_tensor(os.path.join(
    src, "models/gpt2_tiny_dynamo/test_data_set_0/input_0.pb"))[1]
path = lambda name: os.path.join(tmp, name)
models = {k: fp8rt.Model(path(f"{k}.so")) for k in ("e4m3", "e5m2", "weights")}
for k, m in models.items():
    m.run(ids)
    m.save_state(path(f"{k}.state"))


def attempt(label, f):
    try:
        result = f()
        print(f"{label}: {result if result is not None else 'ok'}")
    except fp8rt.Error as e:
        print(f"{label}: {e}")


m = models["e4m3"]
attempt("e5m2 state into e4m3", lambda: m.load_state(path("e5m2.state")))
attempt("other weights' state into e4m3",
        lambda: m.load_state(path("weights.state")))
attempt("own state", lambda: m.load_state(path("e4m3.state")) or "loaded")

m.save_state("/dev/null")
print("save to /dev/null: ok, still a character device:",
      stat.S_ISCHR(os.stat("/dev/null").st_mode))

os.symlink("e4m3.copy", path("link.state"))
open(path("e4m3.copy"), "wb").close()
m.save_state(path("link.state"))
print("save through a symbolic link: ok, link kept:",
      os.path.islink(path("link.state")) + 0 == 1,
      end="")
print(", target is the state:",
      open(path("e4m3.copy"), "rb").read() == open(path("e4m3.state"), "rb").read())

os.mkdir(path("dir"))
attempt("save to a directory", lambda: m.save_state(path("dir")))
os.mkfifo(path("fifo"))
attempt("save to a FIFO nobody reads", lambda: m.save_state(path("fifo")))
# The read end is open before the save (non-blocking open, then blocking
# reads): no race with a reader thread. The state is far smaller than a
# pipe's buffer, so the writer never waits for the reads.
fd = os.open(path("fifo"), os.O_RDONLY | os.O_NONBLOCK)
os.set_blocking(fd, True)
m.save_state(path("fifo"))
received = b""
while chunk := os.read(fd, 65536):
    received += chunk
os.close(fd)
print(f"save to a FIFO with a reader: ok, read back {len(received)} bytes")

# The old code wrote <path>.tmpXXX literally: a file planted there (or a
# link to another file) was truncated.
open(path("victim"), "w").write("precious")
os.symlink("victim", path("planted.state.tmpXXX"))
m.save_state(path("planted.state"))
print("a planted .tmpXXX is left alone:", open(path("victim")).read() == "precious")

attempt("load a FIFO", lambda: m.load_state(path("fifo")))
attempt("load a directory", lambda: m.load_state(path("dir")))
attempt("load /dev/zero", lambda: m.load_state("/dev/zero"))
with open(path("huge.state"), "wb") as f:
    f.truncate(1 << 30)
attempt("load a huge file", lambda: m.load_state(path("huge.state")))
