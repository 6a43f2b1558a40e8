"""Writes tiny-wav2vec2/, the Hugging Face automatic-speech-recognition folder of harness's
--hf-model tests, with other people's tools only: a Wav2Vec2 CTC model of two layers, hidden size
32, two heads, a three-layer convolutional front end of stride 80 and a character vocabulary of 32,
with seeded weights (transformers' Wav2Vec2Config and Wav2Vec2ForCTC), exported by
torch.onnx.export as the examples export (examples/onnx/torch_export.py: `input_values`
[batch_size, sequence_length], `logits`, IR 10), in the folder layout transformers.js loads:
config.json, preprocessor_config.json (Wav2Vec2FeatureExtractor's save_pretrained), vocab.json and
tokenizer_config.json (Wav2Vec2CTCTokenizer's save_pretrained), tokenizer.json and onnx/model.onnx.

transformers has no fast Wav2Vec2 tokenizer, and transformers.js reads tokenizer.json alone: it is
built here with the tokenizers library, as a word-level model over vocab.json with the CTC decoder,
as converted Wav2Vec2 folders on the Hugging Face hub have it. The files are committed, so the
tests need none of this.

    /tmp/exportenv/bin/python harness/tests/onnx-models/make_tiny_wav2vec2.py   # torch, transformers, onnx
"""
import json
import os
import sys

import torch
from tokenizers import Tokenizer, decoders, models
from transformers import Wav2Vec2Config, Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../../examples/onnx"))
from torch_export import export  # noqa: E402
from tiny_folder import Logits, one_file  # noqa: E402

out = os.path.join(here, "tiny-wav2vec2")
os.makedirs(os.path.join(out, "onnx"), exist_ok=True)

# Wav2Vec2's character vocabulary: the special tokens, `|` between words, then letters.
letters = list("ETAONIHSRDLUMWCFGYPBVK'XJQZ")
vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, "|": 4}
vocab.update({c: n + 5 for n, c in enumerate(letters)})
with open(os.path.join(out, "vocab.json"), "w") as f:
    json.dump(vocab, f)
tokenizer = Wav2Vec2CTCTokenizer(os.path.join(out, "vocab.json"))
tokenizer.save_pretrained(out)
os.remove(os.path.join(out, "special_tokens_map.json")) if os.path.exists(os.path.join(out, "special_tokens_map.json")) else None

fast = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
fast.add_special_tokens(["<pad>", "<s>", "</s>", "<unk>"])
fast.decoder = decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True)
fast.save(os.path.join(out, "tokenizer.json"))

torch.manual_seed(57)
config = Wav2Vec2Config(
    vocab_size=len(vocab),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    conv_dim=(32, 32, 32),
    conv_stride=(5, 4, 4),
    conv_kernel=(10, 8, 8),
    num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=4,
    feat_extract_norm="layer",
    do_stable_layer_norm=True,
    pad_token_id=0,
)
config.architectures = ["Wav2Vec2ForCTC"]
model = Wav2Vec2ForCTC(config).eval()
# Logits spread enough that frames' winners are clear: the seeded head is small at this width.
with torch.no_grad():
    model.lm_head.weight.mul_(20.0)
config.save_pretrained(out)
Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=True).save_pretrained(out)


path = os.path.join(out, "onnx", "model.onnx")
audio = torch.randn(2, 16000)
dynamic = {"input_values": {0: "batch_size", 1: "sequence_length"}, "logits": {0: "batch_size", 1: "frames"}}
export(Logits(model, "input_values"), (audio,), path, ["input_values"], ["logits"], dynamic)
saved = one_file(out)
print("ops:", sorted({n.op_type for n in saved.graph.node}))
