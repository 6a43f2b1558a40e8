"""Carries an exported ONNX model's external weights to the GPU machine without their bytes.

The GPU machine takes 64 MiB per call; ViT-B/16's weights alone are 346 MB. The graph (model.onnx, as
torch.onnx.export wrote it) travels as is, with a manifest of its external tensors; there, `fill`
rewrites each float tensor with seeded values of the same mean and spread, and copies every other
tensor (integer ids, small ones) byte for byte. harness computes the reference there, on the same
file, so the check is unchanged; only the weights' values are not the exporter's seeded ones.

    here:   python3 onnx-weights.py manifest /tmp/onnx-exports/vit/model.onnx vit.json   (onnx, numpy)
    there:  python3 onnx-weights.py fill vit.json /tmp/gpu/vit                            (stdlib only)
"""
import array
import base64
import json
import os
import random
import sys

FLOAT = 1  # TensorProto.FLOAT
KEEP_BYTES = 1 << 16  # smaller tensors travel verbatim


def manifest(model_path, out):
    import numpy as np
    import onnx

    model = onnx.load(model_path, load_external_data=False)
    folder = os.path.dirname(os.path.abspath(model_path))
    files, tensors = {}, []
    for t in model.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        location, offset, length = info["location"], int(info.get("offset", 0)), int(info["length"])
        with open(os.path.join(folder, location), "rb") as f:
            f.seek(offset)
            raw = f.read(length)
        files[location] = max(files.get(location, 0), offset + length)
        entry = {"name": t.name, "location": location, "offset": offset, "length": length}
        if t.data_type == FLOAT and length > KEEP_BYTES:
            values = np.frombuffer(raw, dtype="<f4").astype(np.float64)
            entry.update(mean=float(values.mean()), std=float(values.std()))
        else:
            entry["bytes"] = base64.b64encode(raw).decode()
        tensors.append(entry)
    with open(out, "w") as f:
        json.dump({"model": os.path.basename(model_path), "files": files, "tensors": tensors}, f)
    print(f"{out}: {len(tensors)} external tensors, {sum(files.values()) / 1e6:.0f} MB, {sum('bytes' in t for t in tensors)} verbatim")


def fill(manifest_path, folder):
    with open(manifest_path) as f:
        m = json.load(f)
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(57)
    handles = {loc: open(os.path.join(folder, loc), "wb") for loc in m["files"]}
    for loc, size in m["files"].items():
        handles[loc].truncate(size)
    for t in m["tensors"]:
        f = handles[t["location"]]
        f.seek(t["offset"])
        if "bytes" in t:
            f.write(base64.b64decode(t["bytes"]))
            continue
        # Uniform with the tensor's mean and standard deviation.
        half_width, mean, r = t["std"] * 3 ** 0.5, t["mean"], rng.random
        f.write(array.array("f", [mean + half_width * (2 * r() - 1) for _ in range(t["length"] // 4)]).tobytes())
    for h in handles.values():
        h.close()
    print(f"{folder}: {', '.join(f'{loc} {size / 1e6:.0f} MB' for loc, size in m['files'].items())}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "manifest":
        manifest(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "fill":
        fill(sys.argv[2], sys.argv[3])
    else:
        print(__doc__)
        sys.exit(2)
