"""Drives examples/decode (decode.test): DIR SRC FP8_COMPILE."""
import json
import os
import subprocess
import sys

tmp, src, compiler = sys.argv[1:]
model_dir = os.path.join(src, "test", "models", "llama_decode_dynamo")
ref = json.load(open(os.path.join(model_dir, "greedy.json")))
prompts, want = ref["prompts"], ref["tokens"]
capacity, width = ref["fixed_capacity"]["capacity"], ref["fixed_capacity"]["width"]
script = os.path.join(src, "examples", "decode", "decode.py")
work = os.path.join(tmp, "libs")


def decode(batch_prompts, *flags, steps=32, check=True):
    cmd = [sys.executable, script, os.path.join(model_dir, "model.onnx"),
           "--steps", str(steps), "--capacity", str(capacity), "--width", str(width),
           "--work", work, "--fp8-compile", compiler, "--json", *flags]
    for p in batch_prompts:
        cmd += ["--prompt", ",".join(map(str, p))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not check:
        return r
    if r.returncode != 0:
        sys.exit(f"decode.py failed: {r.stderr}")
    return json.loads(r.stdout)


def prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


got = decode(prompts)
print(f"FP32 batch 8 (prompts of 1-12 tokens), 32 steps: "
      f"{sum(g == w for g, w in zip(got, want))} of 8 sequences = onnxruntime's greedy tokens")
got1 = decode(prompts[:1])
print(f"FP32 batch 1, 32 steps: {sum(g == w for g, w in zip(got1, want))} of 1 sequences "
      "= onnxruntime's greedy tokens")
libs = [os.path.join(work, f"{t}-b8-w{w}-c{capacity}-none-f32-cpu.so")
        for t, w in (("prefill", width), ("decode", 1))]
r = subprocess.run([os.path.join(tmp, "decode"), *libs, "32",
                    *(",".join(map(str, p)) for p in prompts)],
                   capture_output=True, text=True, check=True)
c_tokens = [list(map(int, line.split())) for line in r.stdout.splitlines()]
print(f"C example, FP32 batch 8: {sum(g == w for g, w in zip(c_tokens, want))} of 8 "
      "sequences = onnxruntime's greedy tokens")
for label, flags in (("FP8 KV cache e4m3", ["--kv-cache", "e4m3"]),
                     ("FP8 current + KV cache e4m3", ["--recipe", "current", "--kv-cache", "e4m3"])):
    got = decode(prompts, *flags)
    print(f"{label}: first tokens {sum(g[0] == w[0] for g, w in zip(got, want))} of 8 = "
          f"onnxruntime's; same prefix per sequence {[prefix(g, w) for g, w in zip(got, want)]} of 32")
# A decode library that updates the cache in place (--in-place: ABI 4's
# tied outputs, the slot as an input, no append after a step); FP8 cache
# too, whose tokens must equal the appending loop's with the same cache.
for label, batch_prompts, flags in (
        ("FP32 batch 8", prompts, []), ("FP32 batch 1", prompts[:1], []),
        ("FP8 current + KV cache e4m3 batch 8", prompts,
         ["--recipe", "current", "--kv-cache", "e4m3"])):
    got = decode(batch_prompts, "--in-place", *flags)
    appended = decode(batch_prompts, *flags)
    print(f"in-place cache, {label}: {sum(g == w for g, w in zip(got, want))} of "
          f"{len(batch_prompts)} sequences = onnxruntime's greedy tokens; "
          f"{sum(g == a for g, a in zip(got, appended))} = the appending loop's")
# One library with dynamic dimensions and a cache that grows (--dynamic).
for label, batch_prompts, flags in (
        ("FP32 batch 8", prompts, []), ("FP32 batch 1", prompts[:1], []),
        ("FP8 current batch 8", prompts, ["--recipe", "current"])):
    got = decode(batch_prompts, "--dynamic", *flags)
    same = sum(g == w for g, w in zip(got, want))
    print(f"dynamic library, growing cache, {label}: {same} of {len(batch_prompts)} "
          f"sequences = onnxruntime's greedy tokens; first tokens "
          f"{sum(g[0] == w[0] for g, w in zip(got, want))}; same prefix per sequence "
          f"{[prefix(g, w) for g, w in zip(got, want)]} of 32")
# The C loop over the same dynamic library, at batch 8 and 1.
dyn_lib = os.path.join(work, f"dynamic-b8-w{width}-c{capacity}-none-cpu.so")
for label, batch_prompts in (("FP32 batch 8", prompts), ("FP32 batch 1", prompts[:1])):
    r = subprocess.run([os.path.join(tmp, "decode_dynamic"), dyn_lib, "32",
                        *(",".join(map(str, p)) for p in batch_prompts)],
                       capture_output=True, text=True, check=True)
    c_tokens = [list(map(int, line.split())) for line in r.stdout.splitlines()]
    print(f"C example, dynamic library, {label}: "
          f"{sum(g == w for g, w in zip(c_tokens, want))} of {len(batch_prompts)} "
          "sequences = onnxruntime's greedy tokens")
for label, argv in (("too long", ["3", ",".join(map(str, range(13)))]),
                    ("too many steps", ["40", *(",".join(map(str, p)) for p in prompts)]),
                    ("batch beyond bounds", ["3", *(["1"] * 9)])):
    r = subprocess.run([os.path.join(tmp, "decode_dynamic"), dyn_lib, *argv],
                       capture_output=True, text=True)
    print(f"C dynamic {label}:", r.stderr.strip())
r = subprocess.run([os.path.join(tmp, "decode_dynamic"), libs[0], "3", "1"],
                   capture_output=True, text=True)
print("C dynamic static library:", r.stderr.strip())
print("dynamic too long:", decode([list(range(13))], "--dynamic", check=False).stderr.strip())
print("dynamic too many steps:",
      decode(prompts, "--dynamic", steps=40, check=False).stderr.strip())
cmds = subprocess.run([sys.executable, script, os.path.join(model_dir, "model.onnx"),
                       "--capacity", str(capacity), "--width", str(width), "--work", work,
                       "--fp8-compile", compiler, "--prompt", "1", "--print-commands"],
                      capture_output=True, text=True, check=True).stdout.splitlines()
print("print-commands:", cmds[0])
print("too long:", decode([list(range(13))], check=False).stderr.strip())
print("too many steps:", decode(prompts, steps=40, check=False).stderr.strip())
r = subprocess.run([os.path.join(tmp, "decode"), *libs, "32", "1,2"], capture_output=True, text=True)
print("C batch mismatch:", r.stderr.strip())
r = subprocess.run([os.path.join(tmp, "decode"), *libs, "40",
                    *(",".join(map(str, p)) for p in prompts)], capture_output=True, text=True)
print("C too many steps:", r.stderr.strip())
