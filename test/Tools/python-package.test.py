"""Runs GPT-2 through the fp8rt of the venv running this (python-package.test):
prints where fp8rt was imported from, whether its version is fp8-run's and
whether its logits equal fp8-run's saved .npy output.

    python-package.test.py DIR   (DIR/gpt2.so, DIR/ref/logits.npy, DIR/version)
"""
import os
import sys

import numpy as np

import fp8rt
from fp8rt.tensors import read_tensor

tmp = sys.argv[1]
print("from", fp8rt.__file__)
print("version matches fp8-run --version:",
      f" {fp8rt.__version__}," in open(os.path.join(tmp, "version")).read())
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
_, ids, _ = read_tensor(os.path.join(src, "models/gpt2_tiny_dynamo/test_data_set_0/input_0.pb"))
(logits,) = fp8rt.Model(os.path.join(tmp, "gpt2.so"))(ids)
print("logits same as fp8-run:", np.array_equal(logits, np.load(os.path.join(tmp, "ref", "logits.npy"))))
