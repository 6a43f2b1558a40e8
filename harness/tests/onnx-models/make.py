"""Writes the small ONNX models of harness's --onnx tests with the ONNX project's own Python
package (onnx.helper, onnx.save), not with harness's writer: `python3 make.py` (onnx 1.23, numpy).
The files are committed, so the tests need neither.

  mlp.onnx        x[batch,16] -> MatMul, Add, Relu (output `hidden`) -> MatMul -> `logits`[batch,8],
                  the shapes of its inner values declared with `batch`, as torch writes them
  embed.onnx      input_ids, attention_mask int64 [batch,seq] -> Gather from a 50-row table,
                  masked, summed over seq -> `pooled`[batch,8]
  external.onnx   mlp.onnx with its weights in external.onnx_data
  int8.onnx       the pattern onnxruntime's quantize_dynamic writes: DynamicQuantizeLinear,
                  MatMulInteger with int8 weights, rescaled to f32
  fastgelu.onnx   x -> com.microsoft FastGelu: an operator ONNX Runtime has and tract-onnx lacks
  ir14.onnx       mlp.onnx at the IR version onnx 1.23 writes by default (14), newer than
                  onnxruntime-web 1.30 reads (13); the others are written at IR 10, as torch.onnx
                  exports are
  f16_constants.onnx  f32 in and out, its arithmetic in float16: x[batch,16] -> Cast to float16 ->
                  MatMul with a float16 weight held in a Constant node (no initializer) -> Cast ->
                  `logits`[batch,8]
  f16.onnx        the MLP in float16 throughout (input, weights, outputs): x[batch,64] -> MatMul,
                  Add, GELU in its sigmoid form x*sigmoid(1.702x) (output `hidden`) -> MatMul ->
                  `logits`[batch,16]
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
if os.path.exists(os.path.join(here, "external.onnx_data")):
    os.remove(os.path.join(here, "external.onnx_data"))
rng = np.random.default_rng(7)


def save(model, name, ir_version=10, **kw):
    model.ir_version = ir_version
    onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(here, name), **kw)


def mlp():
    w1 = numpy_helper.from_array((rng.standard_normal((16, 32)) / 4).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((32, 8)) / 6).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["xw"]),
        helper.make_node("Add", ["xw", "b1"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w2"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 8]), helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", 32])],
        [w1, b1, w2],
        # Shapes of values inside the graph, named by the dynamic dim, as torch.onnx.export writes them.
        value_info=[helper.make_tensor_value_info("xw", TensorProto.FLOAT, ["batch", 32]), helper.make_tensor_value_info("pre", TensorProto.FLOAT, ["batch", 32])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx.helper")


def embed():
    table = numpy_helper.from_array(rng.standard_normal((50, 8)).astype(np.float32), "table")
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    sum_axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "sum_axes")
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["embedded"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axes"], ["mask_3d"]),
        helper.make_node("Mul", ["embedded", "mask_3d"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "sum_axes"], ["pooled"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "embed",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]), helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", 8])],
        [table, axes, sum_axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx.helper")


def int8():
    w = rng.standard_normal((16, 8)).astype(np.float32)
    w_scale = np.float32(np.abs(w).max() / 127)
    wq = numpy_helper.from_array(np.round(w / w_scale).astype(np.int8), "w_q")
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["x_q", "x_scale", "x_zero"]),
        helper.make_node("MatMulInteger", ["x_q", "w_q", "x_zero", "w_zero"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["acc_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x_scale", "w_scale"], ["scale"]),
        helper.make_node("Mul", ["acc_f", "scale"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "int8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
        [wq, numpy_helper.from_array(np.array(0, dtype=np.int8), "w_zero"), numpy_helper.from_array(np.array(w_scale, dtype=np.float32), "w_scale")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx.helper")


def fastgelu():
    node = helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node],
        "fastgelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], producer_name="onnx.helper")
    model.ir_version = 10
    # The checker knows ONNX's own domain only.
    onnx.save_model(model, os.path.join(here, "fastgelu.onnx"))


def f16():
    half = TensorProto.FLOAT16
    w1 = numpy_helper.from_array((rng.standard_normal((64, 128)) / 8).astype(np.float16), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(128).astype(np.float16), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((128, 16)) / 11).astype(np.float16), "w2")
    k = numpy_helper.from_array(np.array(1.702, dtype=np.float16), "k")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["xw"]),
        helper.make_node("Add", ["xw", "b1"], ["pre"]),
        helper.make_node("Mul", ["pre", "k"], ["scaled"]),
        helper.make_node("Sigmoid", ["scaled"], ["gate"]),
        helper.make_node("Mul", ["pre", "gate"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w2"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "f16",
        [helper.make_tensor_value_info("x", half, ["batch", 64])],
        [helper.make_tensor_value_info("logits", half, ["batch", 16]), helper.make_tensor_value_info("hidden", half, ["batch", 128])],
        [w1, b1, w2, k],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx.helper")


save(mlp(), "mlp.onnx")
save(embed(), "embed.onnx")
save(mlp(), "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True, location="external.onnx_data", size_threshold=0)
save(int8(), "int8.onnx")
save(mlp(), "ir14.onnx", ir_version=14)
fastgelu()
save(f16(), "f16.onnx")


def f16_constants():
    half = TensorProto.FLOAT16
    w = numpy_helper.from_array((rng.standard_normal((16, 8)) / 4).astype(np.float16), "w_value")
    nodes = [
        helper.make_node("Constant", [], ["w"], value=w),
        helper.make_node("Cast", ["x"], ["x16"], to=half),
        helper.make_node("MatMul", ["x16", "w"], ["y16"]),
        helper.make_node("Cast", ["y16"], ["logits"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(nodes, "f16_constants", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])], [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx.helper")


save(f16_constants(), "f16_constants.onnx")
