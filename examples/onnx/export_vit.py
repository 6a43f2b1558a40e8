"""Exports a ViT-B/16 image classifier to ONNX as a new user would: Hugging Face transformers'
ViTForImageClassification, then torch.onnx.export with the batch dim dynamic. For
`harness run --onnx` (README, "Your own ONNX model").

    python3 -m pip install torch transformers onnx onnxscript onnxruntime
    python3 examples/onnx/export_vit.py /tmp/vit-onnx
    harness run --onnx /tmp/vit-onnx/model.onnx --dim batch_size=1,8 \\
      --platform ort-webgpu,ort-jsep,ort-wasm

The config is google/vit-base-patch16-224's, written out here (768 wide, 12 layers of 12 heads,
224 px images in 16 px patches, 1000 labels); the weights are seeded (torch.manual_seed(0)), as
no model hub is reached: the graph, shapes and cost are the real model's, its outputs are not.
Input `pixel_values` [batch_size,3,224,224], output `logits` [batch_size,1000]. The export is
torch's own (its default exporter); the file is saved at IR version 10 where torch writes a newer
one, as onnxruntime-web 1.30 reads 13 at most.
"""
import os
import sys

import torch
import torch_export
from transformers import ViTConfig, ViTForImageClassification

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
config = ViTConfig(
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    layer_norm_eps=1e-12,
    image_size=224,
    patch_size=16,
    num_channels=3,
    qkv_bias=True,
    num_labels=1000,
)
model = ViTForImageClassification(config).eval()
inputs = (torch.randn(2, 3, 224, 224),)
path = os.path.join(out, "model.onnx")
torch_export.export(model, inputs, path, ["pixel_values"], ["logits"], {"pixel_values": {0: "batch_size"}, "logits": {0: "batch_size"}})
