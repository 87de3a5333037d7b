"""Writes (as ONNX text) the attention that torch's dynamo exporter gives a
transformers 5 Llama at a long sequence: the causal mask built in the graph
from position ids by transformers' packed-sequence check, as the real
Llama-3-8B export at 8192 tokens has it (bench/export_llama8b.py):

  cat      = [-1, positions...]                  int64 [B, S+1]
  seq_id   = CumSum(Cast(Not(Equal(cat[:, 1:] - cat[:, :-1], 1))), -1)
  same     = Equal(GatherND(seq_id, (b, i)), GatherND(seq_id, (b, j)))
  mask     = Where(And(And(True, j <= i), same), 0, lowest)     [B, 1, S, S]

then MatMul(q, k^T) * scale + mask -> Softmax -> Where(IsNaN) -> MatMul v in
FP16. Positions 0..S-1 make the mask causal; --restart P starts a second
sequence at token P of the last batch row (a block-diagonal mask, not
causal); --bad-index makes the last query's GatherND index out of range.

usage: packed_mask.py BATCH SEQ [--restart P] [--bad-index] > model.onnxtext
"""
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("batch", type=int)
ap.add_argument("seq", type=int)
ap.add_argument("--restart", type=int, default=None)
ap.add_argument("--bad-index", action="store_true",
                help="the last query's index tuple points past the sequence")
a = ap.parse_args()
B, S, H, D = a.batch, a.seq, 2, 8


def ints(values):
    return "{" + ", ".join(str(v) for v in values) + "}"


cat = []
for b in range(B):
    pos = list(range(S))
    if a.restart is not None and b == B - 1:
        pos = list(range(a.restart)) + list(range(S - a.restart))
    cat += [-1] + pos
idx_q = [x for b in range(B) for i in range(S) for x in (b, i)]
idx_k = idx_q
if a.bad_index:
    idx_q = idx_q[:-1] + [S]
ar = list(range(S))
inits = [
    f"int64[{B},{S + 1}] cat = {ints(cat)}",
    f"int64[{B},1,{S},1,2] idx_q = {ints(idx_q)}",
    f"int64[{B},1,1,{S},2] idx_k = {ints(idx_k)}",
    f"int64[1,1,1,{S}] kpos = {ints(ar)}",
    f"int64[1,1,{S},1] qpos = {ints(ar)}",
    "int64[1] one_ax = {1}", f"int64[1] end_all = {{{S + 1}}}",
    "int64[1] zero_ax = {0}", f"int64[1] end_s = {{{S}}}",
    "int64[1] last_ax = {-1}", "int64 one = {1}", "int64 minus_one = {-1}",
    "bool new_ones = {1}", "float zero_f = {0}", "float lowest_f = {-65504}",
    "float scale_f = {0.35355339}",
]
print('<ir_version: 10, opset_import: ["" : 18]>')
print(f"packed (float16[{B},{H},{S},{D}] q, float16[{B},{H},{S},{D}] k, "
      f"float16[{B},{H},{S},{D}] v) => (float16[{B},{H},{S},{D}] o) "
      f"<{', '.join(inits)}> {{")
# FP16 scalars as Casts of FP32 constants (ONNX 1.12's text parser reads
# no float16 literals); the importer folds them.
body = """
  zero = Cast <to = 10> (zero_f)
  lowest = Cast <to = 10> (lowest_f)
  scale = Cast <to = 10> (scale_f)
  slice_3 = Slice (cat, one_ax, end_all, last_ax, one_ax)
  slice_2 = Slice (cat, zero_ax, end_s, last_ax, one_ax)
  sub_1 = Sub (slice_3, slice_2)
  step_one = Equal (sub_1, one)
  ne = Not (step_one)
  starts = Cast <to = 7> (ne)
  seq_id = CumSum (starts, minus_one)
  id_q = GatherND <batch_dims = 0> (seq_id, idx_q)
  id_k = GatherND <batch_dims = 0> (seq_id, idx_k)
  le = LessOrEqual (kpos, qpos)
  and_0 = And (new_ones, le)
  same = Equal (id_q, id_k)
  and_1 = And (and_0, same)
  mask = Where (and_1, zero, lowest)
  k_t = Transpose <perm = [0, 1, 3, 2]> (k)
  s = MatMul (q, k_t)
  s_scaled = Mul (s, scale)
  a = Add (s_scaled, mask)
  p = Softmax <axis = -1> (a)
  nan = IsNaN (p)
  w = Where (nan, zero, p)
  o = MatMul (w, v)
}"""
print(body.strip("\n"))
