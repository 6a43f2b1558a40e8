"""Writes tiny-vit/, the Hugging Face image-classification folder of harness's --hf-model tests,
with other people's tools only: a ViT of two layers, hidden size 32, two heads, 32-pixel images in
8-pixel patches and 10 labels, with seeded weights (transformers' ViTConfig and
ViTForImageClassification), exported by torch.onnx.export as the examples export
(examples/onnx/torch_export.py: `pixel_values` [batch, 3, 32, 32] with a dynamic batch, `logits`,
IR 10), in the folder layout transformers.js loads: config.json (`config.save_pretrained`, with
id2label), preprocessor_config.json (`ViTImageProcessor(size={"height": 32, "width": 32})`'s
save_pretrained) and onnx/model.onnx. The files are committed, so the tests need none of this.

    /tmp/exportenv/bin/python harness/tests/onnx-models/make_tiny_vit.py   # torch, transformers, onnx
"""
import os
import sys

import torch
from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../../examples/onnx"))
from torch_export import export  # noqa: E402
from tiny_folder import Logits, one_file  # noqa: E402

out = os.path.join(here, "tiny-vit")
os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
size = 32
labels = ["cat", "dog", "fox", "owl", "eel", "ant", "bee", "cow", "elk", "yak"]

torch.manual_seed(58)
config = ViTConfig(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    image_size=size,
    patch_size=8,
    num_labels=len(labels),
    id2label=dict(enumerate(labels)),
    label2id={label: n for n, label in enumerate(labels)},
)
config.architectures = ["ViTForImageClassification"]
model = ViTForImageClassification(config).eval()
# Logits spread enough that softmax is no flat row: the seeded head is small at this width.
with torch.no_grad():
    model.classifier.weight.mul_(20.0)
config.save_pretrained(out)
ViTImageProcessor(size={"height": size, "width": size}).save_pretrained(out)


path = os.path.join(out, "onnx", "model.onnx")
pixels = torch.randn(2, 3, size, size)
export(Logits(model, "pixel_values"), (pixels,), path, ["pixel_values"], ["logits"], {"pixel_values": {0: "batch_size"}, "logits": {0: "batch_size"}})
one_file(out)
