"""torch.onnx.export as the examples here call it: opset 17, the named dims dynamic, and the file
saved at IR version 10 where torch writes a newer one, as onnxruntime-web 1.30 reads 13 at most."""
import onnx
import torch


def export(model, inputs, path, input_names, output_names, dynamic):
    """Exports `model` on example `inputs` to `path`; `dynamic` maps each input and output name to
    its dynamic dims ({0: "batch_size"})."""
    torch.onnx.export(model, inputs, path, input_names=input_names, output_names=output_names, dynamic_axes=dynamic, opset_version=17)
    saved = onnx.load(path)
    print(f"torch {torch.__version__} wrote {path}: IR {saved.ir_version}, opset {[o.version for o in saved.opset_import]}")
    if saved.ir_version > 10:
        saved.ir_version = 10
        onnx.save(saved, path)
