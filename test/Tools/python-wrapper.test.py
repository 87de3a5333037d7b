import os
import sys

import numpy as np

tmp, src = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(src, "runtime", "python"), os.path.join(src, "scripts")]
import fp8rt  # noqa: E402
from onnx_tensor import read_tensor  # noqa: E402

m = fp8rt.Model(os.path.join(tmp, "gpt2.so"))
print("device", m.device)
print("inputs", m.inputs)
print("outputs", m.outputs)
ids = read_tensor(os.path.join(src, "models/gpt2_tiny_dynamo/test_data_set_0/input_0.pb"))[1]
(logits,) = m(ids)
ref = read_tensor(os.path.join(tmp, "ref", "output_0.pb"))[1]
print("same as fp8-run:", np.array_equal(logits, ref))
named = m.run_named(input_ids=ids)
print("named:", list(named), np.array_equal(named["logits"], ref))
for label, args in (("shape", (ids[:, :16],)), ("dtype", (ids.astype(np.float32),)),
                    ("count", ())):
    try:
        m.run(*args)
    except fp8rt.Error as e:
        print(f"{label} error:", e)

d = fp8rt.Model(os.path.join(tmp, "delayed.so"))
print("state tensors", d.num_state_tensors)
d(ids)
d.save_state(os.path.join(tmp, "s.bin"))
(a,) = d(ids)
d.load_state(os.path.join(tmp, "s.bin"))
(b,) = d(ids)
print("state round trip exact:", np.array_equal(a, b))
blob = bytearray(open(os.path.join(tmp, "s.bin"), "rb").read())
blob[20] ^= 0xFF
open(os.path.join(tmp, "bad.bin"), "wb").write(blob)
try:
    d.load_state(os.path.join(tmp, "bad.bin"))
except fp8rt.Error as e:
    print("corrupt state:", e)
try:
    fp8rt.Model(os.path.join(tmp, "nothing.so"))
except fp8rt.Error as e:
    print("not a model:", e)
