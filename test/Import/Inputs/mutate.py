"""Feeds seeded mutations of an ONNX model to fp8-translate; reports how many
imported, how many were refused (exit 1 with an 'error:' line), and how
many crashed (any other exit, a signal, or a refusal without a message).

    mutate.py FP8_TRANSLATE MODEL WORKDIR
"""
import os
import random
import subprocess
import sys

tool, model, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
src = open(model, "rb").read()
rng = random.Random(2026)
imported = refused = crashed = 0
for i in range(200):
    data = bytearray(src)
    if i % 4 == 0:
        data = data[:rng.randrange(len(data))]
    else:
        for _ in range(rng.randint(1, 8)):
            region = rng.choice([(0, 20000), (len(data) - 60000, len(data)), (0, len(data))])
            data[rng.randrange(*region)] = rng.randrange(256)
    path = os.path.join(work, "m.onnx")
    open(path, "wb").write(data)
    r = subprocess.run([tool, "--import-onnx", path, "-o", os.devnull],
                       capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        imported += 1
    elif r.returncode == 1 and "error:" in r.stderr:
        refused += 1
    else:
        crashed += 1
        keep = os.path.join(work, f"crash{i}.onnx")
        open(keep, "wb").write(data)
        print(f"crash: mutation {i} (exit {r.returncode}) kept as {keep}\n{r.stderr[-500:]}")
print(f"200 mutated models: {imported} imported, {refused} refused with a diagnostic, {crashed} crashed")
