"""The decoder layer alone, cut out of the layer benchmark's 1-layer export
with ONNX's own extractor (onnx.utils.Extractor), so that fp8-opt is timed
on what the peer (../shared/peers/h200_layer.py) times: the layer, given
the hidden states and the rotary cos/sin, without the embedding, the final
norm and the head (HF Llama computes cos/sin once per forward, outside its
layers; so does the peer).

usage: extract_layer.py MODEL.onnx OUT.onnx

OUT.onnx goes next to MODEL.onnx: its weights stay references into the
model's external data file (nothing is copied). The cut is found from the
graph's structure, not from node names:
  input  hidden: the output of the Gather on the embedding table (the
         graph input's only Gather);
  inputs cos/sin: the outputs of the Casts (or the Cos/Sin themselves)
         after the graph's one Cos and one Sin;
  output: the tensor the final norm reads: the input of the Cast (or Pow)
         in front of the last ReduceMean;
  and the graph inputs the layer still reads (a dynamic export's ids, for
  the causal mask's length; an attention mask), after those three.
Prints the three input names and the output name."""
# fp8-opt-deps: onnx
import os
import sys

import onnx
import onnx.utils


def fail(msg):
    sys.exit(f"extract_layer.py: {msg}")


def cut_points(graph):
    producer = {o: n for n in graph.node for o in n.output}
    readers = {}
    for n in graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    graph_inputs = {i.name for i in graph.input}

    gathers = [n for n in graph.node if n.op_type == "Gather"
               and any(i in graph_inputs for i in n.input)]
    if len(gathers) != 1:
        fail(f"expected one Gather of a graph input (the embedding), found {len(gathers)}")
    hidden = gathers[0].output[0]

    def trig(op):
        ns = [n for n in graph.node if n.op_type == op]
        if len(ns) != 1:
            fail(f"expected one {op} (the rotary table), found {len(ns)}")
        out = ns[0].output[0]
        casts = [r for r in readers.get(out, []) if r.op_type == "Cast"]
        return casts[0].output[0] if len(casts) == 1 else out

    means = [n for n in graph.node if n.op_type == "ReduceMean"]
    if len(means) < 2:
        fail("expected the layer's norms and the final norm (ReduceMean)")
    x = producer.get(means[-1].input[0])  # Pow(x, 2)
    while x is not None and x.op_type in ("Pow", "Cast"):
        src = x.input[0]
        x = producer.get(src)
    if x is None or x.op_type != "Add":
        fail("the final norm does not read a residual Add")
    return [hidden, trig("Cos"), trig("Sin")], [x.output[0]]


def dangling(graph):
    """Names the graph's nodes read that nothing in it defines."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {o for n in graph.node for o in n.output}
    return {x for n in graph.node for x in n.input if x and x not in defined}


def main():
    if len(sys.argv) != 3:
        fail("usage: extract_layer.py MODEL.onnx OUT.onnx")
    src, dst = sys.argv[1:]
    if os.path.dirname(os.path.abspath(src)) != os.path.dirname(os.path.abspath(dst)):
        fail("OUT.onnx must be in MODEL.onnx's folder (its weights are references into "
             "the model's external data)")
    if os.path.exists(dst):
        fail(f"{dst} exists; remove it first")
    model = onnx.load(src, load_external_data=False)
    inputs, outputs = cut_points(model.graph)
    layer = onnx.utils.Extractor(model).extract_model(inputs, outputs)
    # The layer may also read graph inputs (an attention mask, or the ids'
    # shape for the causal mask of a dynamic export): they stay inputs.
    missing = dangling(layer.graph)
    graph_inputs = [i.name for i in model.graph.input]
    if missing:
        if not missing <= set(graph_inputs):
            fail(f"the layer reads {sorted(missing - set(graph_inputs))}, "
                 "which the cut does not provide")
        inputs += [n for n in graph_inputs if n in missing]
        layer = onnx.utils.Extractor(model).extract_model(inputs, outputs)
    onnx.save(layer, dst)
    print("inputs", *inputs, "output", *outputs)


if __name__ == "__main__":
    main()
