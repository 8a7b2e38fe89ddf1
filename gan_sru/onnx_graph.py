"""Rewrites of the ONNX graph that nnabla-converter 1.39 writes, so that onnx.checker and onnxruntime accept
it and it runs over any batch size (gan_sru/export.py calls them in this order: single_assignment,
float_comparisons, batch_scan)."""


def batch_scan(model, output="samples"):
    """A model of batch size 1 -> the same network over a dynamic batch axis ("batch"): an ONNX Scan runs the
    batch-1 graph once per sequence (dim 0 of every input, stacked into dim 0 of the output), so each
    sequence's samples are exactly the batch-1 graph's. nnabla-converter writes fixed batch sizes only, and
    the unrolled SRU bakes B into its shapes, so the batch cannot simply be made symbolic."""
    import onnx
    from onnx import TensorProto, helper

    inner = model.graph
    rename = {v.name: f"{v.name}_b1" for v in [*inner.input, *inner.output]}  # no name shared with the outer graph
    for node in inner.node:
        for i, name in enumerate(node.input):
            node.input[i] = rename.get(name, name)
        for i, name in enumerate(node.output):
            node.output[i] = rename.get(name, name)
    axes = helper.make_node("Constant", [], ["scan_axis0"],
                            value=helper.make_tensor("scan_axis0_value", TensorProto.INT64, [1], [0]))
    body_inputs, unsqueeze, outer_inputs = [], [], []
    for value in inner.input:
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        body_inputs.append(helper.make_tensor_value_info(f"{value.name}_one", TensorProto.FLOAT, dims[1:]))
        unsqueeze.append(helper.make_node("Unsqueeze", [f"{value.name}_one", "scan_axis0"], [rename[value.name]]))
        outer_inputs.append(helper.make_tensor_value_info(value.name, TensorProto.FLOAT, ["batch", *dims[1:]]))
    out = inner.output[0]
    out_dims = [d.dim_value for d in out.type.tensor_type.shape.dim]
    squeeze = helper.make_node("Squeeze", [rename[out.name], "scan_axis0"], [f"{output}_one"])
    body = helper.make_graph([axes, *unsqueeze, *inner.node, squeeze], "one_sequence", body_inputs,
                             [helper.make_tensor_value_info(f"{output}_one", TensorProto.FLOAT, out_dims[1:])],
                             initializer=list(inner.initializer))
    scan = helper.make_node("Scan", [v.name for v in inner.input], [output], body=body,
                            num_scan_inputs=len(inner.input))
    graph = helper.make_graph([scan], inner.name, outer_inputs,
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", *out_dims[1:]])])
    wrapped = helper.make_model(graph, opset_imports=list(model.opset_import), producer_name=model.producer_name)
    wrapped.ir_version = model.ir_version
    onnx.checker.check_model(wrapped)
    return wrapped


def single_assignment(graph):
    """Rename node outputs that an earlier node already defined (nnabla-converter 1.39 emits one Constant
    per use of a Reshape's shape, all under one name), and point later inputs at the newest definition:
    what the duplicated graph meant, read in its topological order. Modifies `graph` in place."""
    defined, newest = {}, {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            node.input[i] = newest.get(name, name)
        for i, name in enumerate(node.output):
            if name in defined:
                defined[name] += 1
                node.output[i] = newest[name] = f"{name}__{defined[name]}"
            else:
                defined[name] = 0
    for out in graph.output:
        out.name = newest.get(out.name, out.name)


LOGICAL_OPS = ("Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal", "Not", "And", "Or", "Xor")


def float_comparisons(graph):
    """Cast to float32 each boolean (a comparison's or logical op's) output that an arithmetic node reads:
    nnabla's comparisons give 0.0 / 1.0 (the hard Gumbel-softmax subtracts `greater_equal(y, max y)` from y),
    while nnabla-converter 1.39 writes them as ONNX's boolean ops and feeds the booleans on unchanged, which
    onnx's type inference refuses. Modifies `graph` in place (node order stays topological)."""
    from onnx import TensorProto, helper

    logical = {o for node in graph.node if node.op_type in LOGICAL_OPS for o in node.output}
    nodes, cast = [], {}
    for node in graph.node:
        if node.op_type not in LOGICAL_OPS:
            for i, name in enumerate(node.input):
                if name in logical:
                    if name not in cast:
                        cast[name] = f"{name}__float"
                        nodes.append(helper.make_node("Cast", [name], [cast[name]], to=TensorProto.FLOAT))
                    node.input[i] = cast[name]
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
