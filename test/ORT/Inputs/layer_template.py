"""extract-layer-random.test: a test-data template (input_N.pb: names,
types, shapes) for the tiny Llama's decoder layers cut out with
bench/layer/extract_layer.py, 8 positions."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
inputs = [("embedding", np.zeros((1, 8, 64), np.float32)),
          ("cos", np.zeros((1, 8, 16), np.float32)),
          ("sin", np.zeros((1, 8, 16), np.float32)),
          ("input_ids", np.zeros((1, 8), np.int64)),
          ("attention_mask", np.ones((1, 8), np.int64))]
for i, (name, value) in enumerate(inputs):
    with open(os.path.join(out, f"input_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
