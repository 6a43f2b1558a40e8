"""Exports Whisper-tiny's audio encoder to ONNX as a new user would: Hugging Face transformers'
WhisperModel, its encoder alone, then torch.onnx.export with the batch dim dynamic. For
`harness run --onnx` (README, "Your own ONNX model").

    python3 -m pip install torch transformers onnx onnxscript onnxruntime
    python3 examples/onnx/export_whisper_encoder.py /tmp/whisper-onnx
    harness run --onnx /tmp/whisper-onnx/model.onnx --dim batch_size=1 \\
      --platform ort-webgpu,ort-jsep,ort-wasm

The config is openai/whisper-tiny's, written out here (384 wide, 4 encoder layers of 6 heads, a
1536-wide feed-forward, 80 mel bins, 1500 positions: 30 s of audio); the weights are seeded
(torch.manual_seed(0)), as no model hub is reached: the graph, shapes and cost are the real
encoder's, its outputs are not. Input `input_features` [batch_size,80,3000] (the log-mel
spectrogram), output `last_hidden_state` [batch_size,1500,384]. The export is torch's own (its
default exporter); the file is saved at IR version 10 where torch writes a newer one, as
onnxruntime-web 1.30 reads 13 at most.
"""
import os
import sys

import torch
import torch_export
from transformers import WhisperConfig, WhisperModel

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
config = WhisperConfig(
    vocab_size=51865,
    num_mel_bins=80,
    d_model=384,
    encoder_layers=4,
    encoder_attention_heads=6,
    encoder_ffn_dim=1536,
    decoder_layers=4,
    decoder_attention_heads=6,
    decoder_ffn_dim=1536,
    activation_function="gelu",
    max_source_positions=1500,
    max_target_positions=448,
)
encoder = WhisperModel(config).get_encoder().eval()


class Encoder(torch.nn.Module):
    """The encoder's `last_hidden_state` alone, as a plain tensor."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features):
        return self.encoder(input_features).last_hidden_state


inputs = (torch.randn(2, 80, 3000),)
path = os.path.join(out, "model.onnx")
dims = {0: "batch_size"}
torch_export.export(Encoder(encoder).eval(), inputs, path, ["input_features"], ["last_hidden_state"], {"input_features": dims, "last_hidden_state": dims})
