"""Writes tiny-bert/, the Hugging Face model folder of harness's --hf-model tests, with other
people's tools only: a BERT of two layers and hidden size 32 with seeded weights (transformers'
BertConfig and BertModel), exported by torch.onnx.export as examples/onnx/export_minilm.py exports
MiniLM (dynamic batch and sequence dims, IR 10), in the folder layout transformers.js loads
(config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx).

Its tokenizer is MiniLM's (models/all-MiniLM-L6-v2, which ci/setup.sh fills) retrained by
transformers' `train_new_from_iterator` on the sentences harness embeds, to a vocabulary of a few
hundred tokens: the same normaliser, pre-tokeniser, special tokens and template as MiniLM's, and
a model of a few hundred kB instead of the 3.9 MB that MiniLM's 30522 rows would take at this
width. The files are committed, so the tests need none of this. (The trainer breaks ties between
merges in no fixed order: a folder written again may number its tokens otherwise, and the unit
tests that name ids, harness/src/plan/hf_model/mod.rs, with it.)

    /tmp/exportenv/bin/python harness/tests/onnx-models/make_tiny_bert.py   # torch, transformers, onnx
"""
import os
import sys

import torch
from transformers import AutoTokenizer, BertConfig, BertModel

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "../../../examples/onnx"))
import export_minilm  # noqa: E402  (torch.onnx.export as the MiniLM example exports)
from tiny_folder import one_file  # noqa: E402
minilm = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../models/all-MiniLM-L6-v2")
out = os.path.join(here, "tiny-bert")
os.makedirs(os.path.join(out, "onnx"), exist_ok=True)

# What harness embeds (harness/src/plan/workload/minilm.rs, SENTENCES), so that every word of
# theirs is in the vocabulary.
corpus = [
    "The quick brown fox jumps over the lazy dog.",
    "WebGPU brings compute shaders to the browser.",
    "A man is playing a guitar on stage.",
    "Benchmarks should report their spread, not just a mean.",
    "Hello!",
    "Sentence embeddings map text to vectors so that similar meanings land close together, which "
    "makes semantic search, clustering and deduplication cheap once every document has been encoded.",
    "The harness starts a server, drives the browser through WebDriver, times every case and checks "
    "each output against a reference computed independently on the CPU.",
    "Rain is expected tomorrow.",
]
positions = 64
tokenizer = AutoTokenizer.from_pretrained(minilm).train_new_from_iterator(corpus, vocab_size=400)
tokenizer.model_max_length = positions
tokenizer.save_pretrained(out)

torch.manual_seed(57)
config = BertConfig(
    vocab_size=len(tokenizer),
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=positions,
    pad_token_id=tokenizer.pad_token_id,
)
config.architectures = ["BertModel"]
model = BertModel(config).eval()
config.save_pretrained(out)

path = os.path.join(out, "onnx", "model.onnx")
export_minilm.export(model, path)
one_file(out)
print(f"vocabulary {config.vocab_size}")
