#!/usr/bin/env python3
"""Makes an N-layer graph from bench/export_llama8b.py's 2-layer export by
repeating its last decoder layer: the nodes from the layer's input (the
residual stream layer 0 leaves) to its output, with that layer's weights
given fresh names and fresh places at the end of the external data file.
Everything else (embedding, rotary tables, masks, shape constants, layer
0, the final norm and the head) is the export's. For measuring compile and
pack at the size of a real model when the real export is not at hand; the
graph computes what an N-layer export computes, up to initializer names.

usage: grow_llama_layers.py IN/model.onnx OUT/model.onnx --layers N

Only the graph is written (OUT/model.onnx, referencing OUT's data file by
the same name); scripts/fill_external_data.py then writes the weights.
With --layers 2 the output is the input graph. A decoder step with its KV
cache as tensors (bench/export_llama8b_decoder.py) grows its cache too: the
last layer's graph inputs and outputs that name it (past_key_values.1.key,
present.1.value, ...) get a copy per new layer (past_key_values.<k>.key,
...), appended in layer order."""
import argparse
import os
import re

import onnx
from onnx import TensorProto

p = argparse.ArgumentParser()
p.add_argument("src")
p.add_argument("dst")
p.add_argument("--layers", type=int, required=True)
a = p.parse_args()

model = onnx.load(a.src, load_external_data=False)
g = model.graph
nodes = list(g.node)
inits = {t.name: t for t in g.initializer}


def produced_by(name):
    return next(i for i, n in enumerate(nodes) if name in n.output)



# The last layer: from its input RMSNorm's Cast of the residual stream to
# the residual Add after its MLP; recognised by its norm weight's name.
# (Names may carry a wrapper's prefix: the decoder step of
# export_llama8b_decoder.py names them model.model.layers.<i>....)
layer_of = {t: int(m.group(1)) for t in inits
            for m in [re.search(r"(?:^|\.)layers\.(\d+)\.", t)] if m}
last = max(layer_of.values())
norm_in = next(t for t in inits if t.endswith(f"layers.{last}.input_layernorm.weight"))
first_mul = next(i for i, n in enumerate(nodes) if norm_in in n.input)
start = first_mul
while nodes[start].op_type != "Cast" or nodes[start - 1].op_type != "Add":
    start -= 1                     # back to the Cast of the residual stream
layer_input = nodes[start].input[0]
head_norm = next(i for i, n in enumerate(nodes)
                 if any(x.endswith("model.norm.weight") for x in n.input))
cast = head_norm
while nodes[cast].op_type != "Cast" or nodes[cast - 1].op_type != "Add":
    cast -= 1                      # the final norm's Cast of the stream
layer_output = nodes[cast].input[0]
end = produced_by(layer_output)    # the residual Add that ends the layer
body = nodes[start:end + 1]
produced = {o for n in body for o in n.output}
own = sorted({i for n in body for i in n.input
              if i in inits and inits[i].data_location == TensorProto.EXTERNAL
              and not any(i in m.input for m in nodes[:start] + nodes[end + 1:])})


def external(t):
    return {e.key: e.value for e in t.external_data}


data_file = external(inits[own[0]])["location"]
end_offset = max(int(external(t)["offset"]) + int(external(t)["length"])
                 for t in inits.values()
                 if t.data_location == TensorProto.EXTERNAL)

graph_inputs = {v.name: v for v in g.input}
graph_outputs = {v.name: v for v in g.output}
tag = f".{last}."
layer_inputs = sorted({i for n in body for i in n.input
                       if i in graph_inputs and tag in i},
                      key=[v.name for v in g.input].index)
layer_outputs = [v.name for v in g.output if v.name in produced and tag in v.name]

new_nodes = nodes[:end + 1]
new_inits = list(g.initializer)
previous = layer_output
for k in range(last + 1, a.layers):
    rename = {o: f"{o}__layer{k}" for o in produced}
    for name in layer_inputs + layer_outputs:
        rename[name] = name.replace(tag, f".{k}.")
        v = onnx.ValueInfoProto()
        v.CopyFrom((graph_inputs if name in graph_inputs else graph_outputs)[name])
        v.name = rename[name]
        (g.input if name in graph_inputs else g.output).append(v)
    rename[layer_input] = previous
    for name in own:
        src = inits[name]
        fresh = (name.replace(f"layers.{last}.", f"layers.{k}.")
                 if f"layers.{last}." in name else f"{name}__layer{k}")
        t = TensorProto()
        t.CopyFrom(src)
        t.name = fresh
        length = int(external(src)["length"])
        end_offset = (end_offset + 4095) // 4096 * 4096
        del t.external_data[:]
        for key, value in (("location", data_file), ("offset", str(end_offset)),
                           ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = key, value
        end_offset += length
        new_inits.append(t)
        rename[name] = fresh
    for n in body:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        c.name = f"{n.name}__layer{k}" if n.name else ""
        c.input[:] = [rename.get(i, i) for i in n.input]
        c.output[:] = [rename[o] for o in n.output]
        new_nodes.append(c)
    previous = rename[layer_output]
for n in nodes[end + 1:]:
    c = onnx.NodeProto()
    c.CopyFrom(n)
    c.input[:] = [previous if i == layer_output else i for i in n.input]
    new_nodes.append(c)

del g.node[:]
g.node.extend(new_nodes)
del g.initializer[:]
g.initializer.extend(new_inits)
# Intermediate value_info of the repeated layer would be stale: drop it.
del g.value_info[:]
os.makedirs(os.path.dirname(os.path.abspath(a.dst)), exist_ok=True)
onnx.save(model, a.dst)
print(f"{a.dst}: {a.layers} layers, {len(new_nodes)} nodes, "
      f"{len(new_inits)} initializers, data file {data_file} "
      f"{end_offset / 1e9:.2f} GB")
