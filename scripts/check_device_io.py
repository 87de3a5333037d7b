#!/usr/bin/env python3
"""Device-resident I/O of CUDA model libraries (ABI 2), on a GPU machine
with torch: scripts/gpu-check's device-io suite. One PASS/FAIL line per
check.

    check_device_io.py BIN_DIR MODEL_DIR [--kv KV_DIR]

MODEL_DIR: a gpu-bundle model folder (block.so, delayed.so, data/) of a
model with run-time index checks (GPT-2). Checks: torch CUDA tensors in and
out give the bits of the numpy (host) path with no host<->device copy but
the checks' 16-byte status; out= buffers (torch, and host numpy mixed in);
DLPack-only arrays; an unaligned device input is staged and still right; a
stream's queued work is waited for (inputs written after a 50 ms sleep on a
side stream); CUDA graphs captured per address set (5 sets > the 4 kept);
delayed scaling's state moves as in host runs; and the refusals: host
memory as device memory, pinned host memory, a tensor past its allocation,
an output overlapping an input, a stream of another context -- each a
clear error after which the model still runs right.

--kv KV_DIR (gpu-bundle kv/, with model/ and e4m3/kv0.so, kv1.so): two
decode steps whose FP8 KV cache stays on the device (step 0's presents
are step 1's pasts as device tensors): the same bits as the host chain, and
no byte of the cache crosses to the host.
"""
# fp8-opt-deps: device-only (torch)
import argparse
import ctypes
import glob
import os
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("model_dir")
    ap.add_argument("--kv", default=None)
    args = ap.parse_args()
    sys.path.insert(0, args.bin_dir)
    # Plain runs unless a check asks for CUDA graphs (on by default).
    os.environ["FP8RT_CUDA_GRAPH"] = "0"
    import fp8rt
    from onnx_tensor import read_tensor
    import torch

    results = []

    def report(ok, name, detail):
        results.append(ok)
        print("PASS" if ok else "FAIL", f"device-io-{name}", detail)

    def expect_error(name, fn, needle, again):
        try:
            fn()
            report(False, name, "accepted")
            return
        except fp8rt.Error as e:
            msg = str(e)
        # The model stays usable after a refused run (one good run checks it).
        usable = again()
        report(needle in msg and usable, name,
               f"refused: {msg}" + ("" if usable else " (and the next run is wrong)"))

    cuda = torch.device("cuda")
    model_dir = args.model_dir
    inputs = sorted(glob.glob(os.path.join(model_dir, "data", "input_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    host_in = [read_tensor(p)[1] for p in inputs]
    m = fp8rt.Model(os.path.join(model_dir, "block.so"))
    ref = m(*host_in)
    host_copies = m.last_run_copies()

    def same(outs, want=None):
        want = ref if want is None else want
        return all(np.array_equal(np.asarray(o.cpu() if hasattr(o, "cpu") else o), w)
                   for o, w in zip(outs, want))

    dev_in = [torch.from_numpy(a).to(cuda) for a in host_in]
    torch.cuda.synchronize()
    outs = m(*dev_in)
    copies = m.last_run_copies()
    report(same(outs) and all(o.is_cuda for o in outs), "torch",
           f"{len(outs)} torch CUDA outputs, same bits as numpy I/O: {same(outs)}")
    ok = (copies["host_to_device"] == 0 and copies["device_to_device"] == 0
          and copies["device_to_host"] <= 16)
    report(ok, "no-copies", f"copies with device I/O {copies}; with numpy I/O {host_copies}")

    bufs = [torch.empty_like(o) for o in outs]
    got = m(*dev_in, out=bufs)
    report(same(got) and all(g is b for g, b in zip(got, bufs)), "out",
           "out= torch buffers written in place")
    host_out = [np.empty_like(r) for r in ref]
    got = m(*dev_in, out=host_out)
    report(same(host_out), "mixed", f"device inputs, numpy outputs: copies {m.last_run_copies()}")

    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    got = m(*[DLPackOnly(t) for t in dev_in], out=[DLPackOnly(b) for b in bufs])
    report(same(bufs), "dlpack", "DLPack-only device arrays in and out")

    # An input 8 bytes past a 16-byte boundary: staged device to device.
    unaligned = []
    for t in dev_in:
        flat = torch.empty(t.numel() + 16, dtype=t.dtype, device=cuda)
        off = next(k for k in range(1, 16) if (flat.data_ptr() + k * t.element_size()) % 16)
        view = flat[off:off + t.numel()].view(t.shape)
        view.copy_(t)
        unaligned.append(view)
    outs = m(*unaligned)
    c = m.last_run_copies()
    report(same(outs) and c["device_to_device"] == sum(t.numel() * t.element_size() for t in dev_in),
           "unaligned", f"unaligned device input staged: copies {c}")

    # Stream ordering: the inputs are written on a side stream after a long
    # sleep; the run is told that stream and must wait for the writes.
    side = torch.cuda.Stream()
    zeros = [torch.zeros_like(t) for t in dev_in]
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~50-100 ms of GPU cycles
        for z, t in zip(zeros, dev_in):
            z.copy_(t)
    outs = m(*zeros, stream=side)
    report(same(outs), "stream", "inputs written on a side stream after a sleep: "
           f"{'waited for' if same(outs) else 'NOT waited for'}")

    # CUDA graphs: one per address set, replaying with new data each time.
    os.environ["FP8RT_CUDA_GRAPH"] = "1"
    g = fp8rt.Model(os.path.join(model_dir, "block.so"))
    rng = np.random.default_rng(0)
    sets, ok = [], True
    vocab = 64  # GPT-2 tiny's vocabulary is larger; ids below it are valid
    for k in range(5):
        data = [rng.integers(0, vocab, a.shape).astype(a.dtype) for a in host_in]
        sets.append((data, [torch.from_numpy(d).to(cuda) for d in data],
                     [torch.empty_like(o) for o in outs]))
    for rnd in range(3):
        for data, din, dout in sets:
            want = m(*data)
            g(*din, out=dout)
            ok = ok and same(dout, want)
    report(ok, "graphs", "5 address sets x 3 rounds with FP8RT_CUDA_GRAPH=1 "
           "(4 graphs kept): every output = the host path's")
    g.close()

    # Graphs are the default: with FP8RT_CUDA_GRAPH unset, the second run of
    # an address set is captured and the third replays it, timed like a
    # plain run (fp8rt_cuda_last_run_ms).
    del os.environ["FP8RT_CUDA_GRAPH"]
    lib = os.path.join(model_dir, "block.so")
    rt = ctypes.CDLL(lib)
    rt.fp8rt_cuda_live_graphs.restype = ctypes.c_int32
    rt.fp8rt_cuda_last_run_ms.restype = ctypes.c_float
    before = rt.fp8rt_cuda_live_graphs()
    d = fp8rt.Model(lib)
    data, din, dout = sets[0]
    want = m(*data)
    ok = True
    for _ in range(3):
        d(*din, out=dout)
        ok = ok and same(dout, want)
    live = rt.fp8rt_cuda_live_graphs() - before
    replay_ms = rt.fp8rt_cuda_last_run_ms()
    d.close()
    report(ok and live == 1 and replay_ms > 0, "graphs-default",
           f"FP8RT_CUDA_GRAPH unset: {live} graph captured in 3 runs (want 1), "
           f"the replay timed {replay_ms:.4f} ms, outputs = the host path's")
    os.environ["FP8RT_CUDA_GRAPH"] = "0"

    # Delayed scaling's state through device I/O: from the same saved
    # state, three device runs give the bits of three host runs.
    delayed = os.path.join(model_dir, "delayed.so")
    if os.path.exists(delayed):
        d = fp8rt.Model(delayed)
        start = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"device-io-{os.getpid()}.state")
        d.save_state(start)
        host_runs = [d(*host_in) for _ in range(3)]
        d.load_state(start)
        dev_runs = [d(*dev_in) for _ in range(3)]
        os.unlink(start)
        ok = all(same(x, h) for x, h in zip(dev_runs, host_runs))
        report(ok, "delayed-state", f"3 delayed-scaling runs through device I/O = 3 host runs "
               f"from the same state: {ok}")

    # Refusals.
    def again():
        return same(m(*dev_in))

    class FakeDevice:
        def __init__(self, ptr, shape, typestr):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                             "data": (ptr, False), "version": 3,
                                             "strides": None, "stream": None}

    arr = host_in[0]
    keep_out = [torch.empty_like(o) for o in outs]
    expect_error("host-pointer", lambda: m(FakeDevice(arr.ctypes.data, arr.shape, arr.dtype.str),
                                           *dev_in[1:], out=keep_out),
                 "input 0 ('input_ids') is given as device memory: it is not CUDA memory", again)
    pinned = torch.from_numpy(arr).pin_memory()
    expect_error("pinned", lambda: m(FakeDevice(pinned.data_ptr(), arr.shape, arr.dtype.str),
                                     *dev_in[1:], out=keep_out),
                 "is pinned host memory", again)
    cu = ctypes.CDLL("libcuda.so.1")
    ptr = ctypes.c_uint64()
    short = arr.nbytes - 8
    if cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(short)) == 0:
        expect_error("too-small", lambda: m(FakeDevice(ptr.value, arr.shape, arr.dtype.str),
                                            *dev_in[1:], out=keep_out),
                     "allocation ends", again)
        cu.cuMemFree_v2(ptr)
    else:
        report(False, "too-small", "cuMemAlloc failed")
    big = torch.empty(max(o.numel() * o.element_size() for o in outs) + 4096,
                      dtype=torch.uint8, device=cuda)
    over_in = [big[:t.numel() * t.element_size()].view(t.dtype).view(t.shape) for t in dev_in[:1]]
    over_in[0].copy_(dev_in[0])
    over_out = [big[:o.numel() * o.element_size()].view(o.dtype).view(o.shape) for o in outs]
    expect_error("overlap", lambda: m(*over_in, *dev_in[1:], out=over_out),
                 "overlaps input 0", again)
    # A stream of another context (a second context of the same device).
    ctx, prev, stream = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    cu.cuCtxGetCurrent(ctypes.byref(prev))
    if (cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0 and
            cu.cuStreamCreate(ctypes.byref(stream), 1) == 0):
        cu.cuCtxSetCurrent(prev)
        expect_error("foreign-stream", lambda: m(*dev_in, stream=stream.value),
                     "belongs to another CUDA context", again)
        cu.cuStreamDestroy_v2(stream)
        cu.cuCtxDestroy_v2(ctx)
    else:
        cu.cuCtxSetCurrent(prev)
        report(False, "foreign-stream", "could not make a second context")
    cu.cuCtxSetCurrent(prev)

    if args.kv:
        kv_chain(args.kv, fp8rt, read_tensor, torch, report)

    print(f"device-io: {sum(results)} of {len(results)} passed")
    return 0 if all(results) else 1


def kv_chain(kv_dir, fp8rt, read_tensor, torch, report):
    """Two decode steps (kv0.so: past P, kv1.so: past P + 1) with the FP8
    cache on the device between them."""
    cuda = torch.device("cuda")

    def load(k):
        folder = os.path.join(kv_dir, "model", f"test_data_set_{k}")
        files = sorted(glob.glob(os.path.join(folder, "input_*.pb")),
                       key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
        return [read_tensor(p) for p in files]

    lib = os.path.join(kv_dir, "e4m3")
    s0, s1 = fp8rt.Model(os.path.join(lib, "kv0.so")), fp8rt.Model(os.path.join(lib, "kv1.so"))
    in0, in1 = load(0), load(1)
    rng = np.random.default_rng(1)

    def feeds(model, tensors):
        out = []
        for info, (name, arr, _) in zip(model.inputs, tensors):
            if info.dtype in (17, 19):  # an FP8 cache input: random finite codes
                out.append(rng.integers(0, 0x7e, info.shape).astype(np.uint8))
            else:
                out.append(arr.astype(info.numpy_dtype))
        return out

    f0, f1 = feeds(s0, in0), feeds(s1, in1)
    present = {o.name: k for k, o in enumerate(s0.outputs) if o.name.startswith("present")}

    def past_index(name):
        for p in ("past_key_values", "past"):
            cand = name.replace("present", p, 1)
            for k, i in enumerate(s1.inputs):
                if i.name == cand:
                    return k
        raise SystemExit(f"no cache input for {name}")

    # Host chain.
    h0 = s0(*f0)
    h_feed = list(f1)
    for name, k in present.items():
        h_feed[past_index(name)] = h0[k]
    h1 = s1(*h_feed)
    # Device chain: step 0's outputs stay on the device and feed step 1.
    d0 = s0(*[torch.from_numpy(a).to(cuda) for a in f0])
    d_feed = [torch.from_numpy(a).to(cuda) if info.dtype not in (17, 19) else None
              for a, info in zip(f1, s1.inputs)]
    cache_bytes = 0
    for name, k in present.items():
        d_feed[past_index(name)] = d0[k]
        cache_bytes += d0[k].numel()
    d1 = s1(*d_feed)
    c = s1.last_run_copies()
    same = all(np.array_equal(d.cpu().numpy(), h) for d, h in zip(d1, h1))
    report(same, "kv-chain", f"2 decode steps, FP8 cache on the device "
           f"({cache_bytes} bytes in, {len(present)} tensors): same bits as the host chain: {same}")
    report(c["host_to_device"] == 0 and c["device_to_host"] <= 16, "kv-no-copies",
           f"step 1's copies: {c}")
    # Host time per step, numpy I/O vs device I/O (median of 50).
    def per_step(fn):
        ts = []
        for _ in range(50):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return 1e6 * float(np.median(ts))
    bufs = [torch.empty_like(d) for d in d1]
    t_host = per_step(lambda: s1(*h_feed))
    t_dev = per_step(lambda: s1(*d_feed, out=bufs))
    os.environ["FP8RT_CUDA_GRAPH"] = "1"
    g1 = fp8rt.Model(os.path.join(lib, "kv1.so"))
    os.environ["FP8RT_CUDA_GRAPH"] = "0"
    t_graph = per_step(lambda: g1(*d_feed, out=bufs))
    t_graph_host = per_step(lambda: g1(*h_feed))
    print(f"INFO device-io-kv-step wall time per decode step (kv1.so, median of 50): "
          f"numpy I/O {t_host:.0f} us, device I/O {t_dev:.0f} us; with CUDA graphs: "
          f"numpy I/O {t_graph_host:.0f} us, device I/O {t_graph:.0f} us")


if __name__ == "__main__":
    sys.exit(main())
