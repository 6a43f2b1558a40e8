"""Writes the real inputs of harness's --inputs tests with NumPy and the safetensors package, not
with harness's own code: `python3 make_inputs.py` (numpy 2, safetensors 0.8). Committed, so the
tests need neither.

  embed_inputs.npz           numpy.savez: input_ids int64 [3,5] (ids 0..49 of embed.onnx's table)
                             and attention_mask int32 [3,5] with the last two tokens of row 2
                             masked (int32: harness converts it to the model's int64)
  mlp_inputs.safetensors     safetensors.numpy.save_file: x float64 [3,16] (harness converts it
                             to the model's float32)
"""
import os
import numpy as np
from safetensors.numpy import save_file

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
ids = rng.integers(0, 50, size=(3, 5), dtype=np.int64)
mask = np.ones((3, 5), dtype=np.int32)
mask[2, 3:] = 0
np.savez(os.path.join(here, "embed_inputs.npz"), input_ids=ids, attention_mask=mask)
save_file({"x": rng.standard_normal((3, 16))}, os.path.join(here, "mlp_inputs.safetensors"))
