//! The reference of a user's ONNX model: tract-onnx runs it natively, on the CPU, on the same
//! seeded inputs the page gives onnxruntime-web. tract is pure Rust with kernels of its own, so
//! onnxruntime-web's providers (the WASM CPU one included) are not checked against ONNX Runtime's
//! own kernels.

use kernels::own_model::{Elem, InputData, ModelInput, OwnModel};
use std::path::Path;
use tract_onnx::prelude::*;

/// The reference engine, as reports name it.
pub const ENGINE: &str = "tract-onnx 0.23 (CPU, in the model's own element types: f32, f16 or int8)";

/// tract's ONNX front end as harness uses it. The shapes an exporter declares for values and
/// outputs name its dynamic dims (torch's `batch_size`), which tract would have to unify with the
/// dims given: it takes the inputs' shapes alone and infers the rest.
fn framework() -> tract_onnx::Onnx {
    tract_onnx::onnx().with_ignore_value_info(true).with_ignore_output_shapes(true)
}

/// The operators of `ops` (as `domain.Op`, or `Op` in ONNX's own domain) tract-onnx has no
/// implementation of.
pub fn ops_missing(ops: &std::collections::BTreeSet<String>) -> Vec<String> {
    let register = framework().op_register;
    ops.iter().filter(|op| op.contains('.') || !register.0.contains_key(op.as_str())).cloned().collect()
}

/// The graph of `proto` (read from `path`, whose folder holds its external data), as tract parses
/// it, before any input's shape is known.
pub fn parse(proto: &tract_onnx::pb::ModelProto, path: &Path) -> TractResult<InferenceModel> {
    let parsed = framework().parse(proto, path.parent().and_then(Path::to_str))?;
    tract_onnx::tract_core::internal::ensure!(parsed.unresolved_inputs.is_empty(), "inputs tract could not resolve: {:?}", parsed.unresolved_inputs);
    Ok(parsed.model)
}

/// `model` with its inputs' types and shapes set, or why tract cannot take them.
fn with_inputs(mut model: InferenceModel, inputs: &[ModelInput]) -> TractResult<InferenceModel> {
    for (slot, outlet) in model.input_outlets()?.to_vec().into_iter().enumerate() {
        let name = model.node(outlet.node).name.clone();
        let input = inputs.iter().find(|i| i.name == name).ok_or_else(|| tract_onnx::tract_core::internal::format_err!("tract sees an input `{name}` the graph does not declare"))?;
        let shape: Vec<usize> = input.shape.iter().map(|&d| d as usize).collect();
        model.set_input_fact(slot, InferenceFact::dt_shape(datum_type(input.elem), shape))?;
    }
    Ok(model)
}

/// The shape of every output of `parsed` ([`parse`]) at these inputs, where tract can infer them
/// without running the model; `None` where it cannot, or where there is no parsed graph (an
/// operator tract lacks).
pub fn output_shapes(parsed: Option<&InferenceModel>, inputs: &[ModelInput]) -> Option<Vec<Vec<u64>>> {
    let typed = with_inputs(parsed?.clone(), inputs).and_then(|m| m.into_typed()).ok()?;
    (0..typed.output_outlets().ok()?.len()).map(|i| Some(typed.output_fact(i).ok()?.shape.as_concrete()?.iter().map(|&d| d as u64).collect())).collect()
}

/// Why the reference engine cannot run a model with `ops` it lacks; `None` when it lacks none.
pub fn missing(ops: &[String]) -> Option<String> {
    (!ops.is_empty()).then(|| format!("{ENGINE}, the reference engine, has no {}", ops.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", ")))
}

/// The model's outputs on the inputs of the case seeded `seed`, laid end to end as f64.
pub fn outputs(path: &Path, model_case: &OwnModel, seed: u64) -> Result<Vec<f64>, String> {
    Ok(each_output(path, model_case, seed)?.concat())
}

/// The model's outputs on the inputs of the case seeded `seed`, each as f64, in the graph's order.
pub fn each_output(path: &Path, model_case: &OwnModel, seed: u64) -> Result<Vec<Vec<f64>>, String> {
    if let Some(why) = &model_case.no_reference {
        return Err(why.clone());
    }
    let run = || -> TractResult<Vec<Vec<f64>>> {
        let plan = with_inputs(framework().model_for_path(path)?, &model_case.inputs)?.into_optimized()?.into_runnable()?;
        let mut feeds: TVec<TValue> = TVec::new();
        for (n, i) in model_case.inputs.iter().enumerate() {
            let given = i.given().map(|(_, path)| std::fs::read(path)).transpose()?;
            feeds.push(tensor(i, i.data(seed, n, given.as_deref()).map_err(anyhow::Error::msg)?)?.into_tvalue());
        }
        let mut values = Vec::new();
        for out in plan.run(feeds)? {
            let out = out.into_tensor();
            let out = if out.datum_type() == bool::datum_type() { out.cast_to::<u8>()?.into_owned() } else { out };
            values.push(out.cast_to::<f64>()?.to_plain_array_view::<f64>()?.iter().copied().collect());
        }
        Ok(values)
    };
    run().map_err(|e| format!("{ENGINE} could not run it: {e:#}"))
}

fn datum_type(elem: Elem) -> DatumType {
    match elem {
        Elem::Float32 => f32::datum_type(),
        Elem::Float16 => f16::datum_type(),
        Elem::Int64 => i64::datum_type(),
        Elem::Int32 => i32::datum_type(),
        Elem::Int8 => i8::datum_type(),
        Elem::Uint8 => u8::datum_type(),
        Elem::Bool => bool::datum_type(),
    }
}

/// An input's values as a tract tensor of its shape and type.
fn tensor(input: &ModelInput, data: InputData) -> TractResult<Tensor> {
    let shape: Vec<usize> = input.shape.iter().map(|&d| d as usize).collect();
    Ok(match data {
        InputData::F32(v) => Tensor::from_shape(&shape, &v)?,
        InputData::F16(v) => Tensor::from_shape(&shape, &v.into_iter().map(f16::from_bits).collect::<Vec<_>>())?,
        InputData::I64(v) => Tensor::from_shape(&shape, &v)?,
        InputData::I32(v) => Tensor::from_shape(&shape, &v)?,
        InputData::I8(v) => Tensor::from_shape(&shape, &v)?,
        InputData::U8(v) if input.elem == Elem::Bool => Tensor::from_shape(&shape, &v.into_iter().map(|b| b != 0).collect::<Vec<_>>())?,
        InputData::U8(v) => Tensor::from_shape(&shape, &v)?,
    })
}
