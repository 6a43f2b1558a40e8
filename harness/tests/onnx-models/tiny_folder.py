"""What the tiny Hugging Face folders' scripts (make_tiny_bert.py, make_tiny_vit.py,
make_tiny_wav2vec2.py) share: a model's logits alone, as optimum exports a classifier, and the ONNX
file kept as one file in the folder's onnx/, where transformers.js loads it."""
import os

import onnx
import torch


class Logits(torch.nn.Module):
    """`model`'s logits alone, from its input named `name`."""

    def __init__(self, model, name):
        super().__init__()
        self.model = model
        self.name = name

    def forward(self, values):
        return self.model(**{self.name: values}).logits


def one_file(out):
    """Folds out/onnx/model.onnx's external data (torch writes model.onnx.data beside it) into the
    file, removes the rest of out/onnx/, and lists the folder."""
    path = os.path.join(out, "onnx", "model.onnx")
    saved = onnx.load(path)
    for extra in set(os.listdir(os.path.join(out, "onnx"))) - {"model.onnx"}:
        os.remove(os.path.join(out, "onnx", extra))
    onnx.save(saved, path, save_as_external_data=False)
    print(f"torch {torch.__version__} wrote {path} ({os.path.getsize(path)} bytes)")
    for name in sorted(os.listdir(out)):
        print(" ", name)
    return saved
