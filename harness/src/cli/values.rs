//! Values of options several subcommands take: where kernels run (`--platform`), the device a
//! WebNN context asks for (`--webnn-device`) and how much to run (`--suite`).

use clap::ValueEnum;

/// Where kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    /// WebGPU in the browser, through wgpu's WebGPU backend compiled to WASM.
    Webgpu,
    /// The same kernels as plain Rust in WASM (SIMD128) on the CPU, in the same page: the CPU
    /// baseline.
    Wasm,
    /// The same WGSL through wgpu on this machine's Vulkan, Metal or DX12 driver, no browser.
    Native,
    /// TensorFlow.js 4.22's WebGPU backend in the same page: its own ops (`tf.matMul`, `tf.add`,
    /// `tf.softmax`, …) on the same inputs, checked the same way; kernels it has no op for are
    /// reported as unsupported there. Needs its npm packages (`bash ci/setup.sh`, or --tfjs-dir).
    Tfjs,
    /// The browser's WebNN (`navigator.ml`): each kernel as a graph of WebNN operators (matmul,
    /// add/sub/mul/div, relu, tanh, gelu and silu composed, softmax, layerNormalization, rmsnorm
    /// composed) on the OS's ML stack: DirectML or ONNX Runtime (Chrome, Edge on Windows), Core ML
    /// (macOS), TFLite. Where the browser has none it is reported unavailable, with its reason.
    /// Chromium gets --enable-features=WebMachineLearningNeuralNetwork.
    Webnn,
    /// webgpu and webnn, side by side.
    Both,
    /// onnxruntime-web 1.30 (the engine under transformers.js) with its C++ WebGPU execution
    /// provider, on an ONNX file harness writes of the case's model: same weights, inputs and
    /// checks as harness's own run; or on your own ONNX file (--onnx). Models only (--model,
    /// --onnx). Needs its npm package (`bash ci/setup.sh`, or --ort-dir).
    OrtWebgpu,
    /// The same with onnxruntime-web's JavaScript WebGPU execution provider (JSEP).
    OrtJsep,
    /// onnxruntime-web's CPU execution provider (WASM with SIMD): your ONNX files (--onnx) only.
    OrtWasm,
    /// onnxruntime-web's WebNN execution provider: your ONNX files (--onnx) on the browser's WebNN,
    /// on the device --webnn-device names. Unavailable, with the browser's reason, where it has no
    /// WebNN backend (Firefox; Linux builds of Chromium).
    OrtWebnn,
    /// ort-webgpu and ort-jsep, both.
    Ort,
    /// transformers.js 4.3 (onnxruntime-web's C++ WebGPU provider underneath): its
    /// `pipeline('feature-extraction')` on MiniLM from text, tokenizer included, on the ONNX file
    /// harness writes with BERT's signature (--model minilm --from-text); or its pipeline for the
    /// task of your own Hugging Face folder (--hf-model: feature-extraction, image-classification,
    /// automatic-speech-recognition by a CTC model).
    /// Needs its npm package (`bash ci/setup.sh`, or --transformers-dir).
    Transformers,
}

impl PlatformArg {
    /// The platforms it stands for.
    pub fn platforms(self) -> &'static [kernels::Platform] {
        use kernels::Platform as P;
        match self {
            PlatformArg::Webgpu => &[P::Webgpu],
            PlatformArg::Wasm => &[P::Wasm],
            PlatformArg::Native => &[P::Native],
            PlatformArg::Tfjs => &[P::Tfjs],
            PlatformArg::Webnn => &[P::Webnn],
            PlatformArg::Both => &[P::Webgpu, P::Webnn],
            PlatformArg::OrtWebgpu => &[P::OrtWebgpu],
            PlatformArg::OrtJsep => &[P::OrtJsep],
            PlatformArg::OrtWasm => &[P::OrtWasm],
            PlatformArg::OrtWebnn => &[P::OrtWebnn],
            PlatformArg::Ort => &[P::OrtWebgpu, P::OrtJsep],
            PlatformArg::Transformers => &[P::Transformers],
        }
    }
}

/// `--webnn-device`: which device a WebNN context is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WebnnDeviceArg {
    /// The CPU.
    Cpu,
    /// The GPU.
    Gpu,
    /// A neural processing unit, where the machine has one.
    Npu,
}

impl From<WebnnDeviceArg> for kernels::webnn::Device {
    fn from(d: WebnnDeviceArg) -> Self {
        match d {
            WebnnDeviceArg::Cpu => kernels::webnn::Device::Cpu,
            WebnnDeviceArg::Gpu => kernels::webnn::Device::Gpu,
            WebnnDeviceArg::Npu => kernels::webnn::Device::Npu,
        }
    }
}

/// `--gpu-timer`: which GPU timer times harness's own cases in a browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuTimerArg {
    /// Harness's own timestamps around the pass a batch is recorded in.
    Harness,
    /// The page's GPU timer alone, the one that times onnxruntime-web, TensorFlow.js and
    /// transformers.js: run beside `harness` to check that the two agree.
    Page,
}

impl From<GpuTimerArg> for kernels::gpu_timer::GpuTimerChoice {
    fn from(t: GpuTimerArg) -> Self {
        match t {
            GpuTimerArg::Harness => kernels::gpu_timer::GpuTimerChoice::Harness,
            GpuTimerArg::Page => kernels::gpu_timer::GpuTimerChoice::Page,
        }
    }
}

impl From<kernels::gpu_timer::GpuTimerChoice> for GpuTimerArg {
    fn from(t: kernels::gpu_timer::GpuTimerChoice) -> Self {
        match t {
            kernels::gpu_timer::GpuTimerChoice::Harness => GpuTimerArg::Harness,
            kernels::gpu_timer::GpuTimerChoice::Page => GpuTimerArg::Page,
        }
    }
}

/// How much to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteArg {
    /// Small shapes: seconds, even on a software adapter.
    Quick,
    /// Medium shapes.
    Default,
    /// Large shapes, for real GPUs.
    Full,
}

impl From<SuiteArg> for kernels::Suite {
    fn from(s: SuiteArg) -> Self {
        match s {
            SuiteArg::Quick => kernels::Suite::Quick,
            SuiteArg::Default => kernels::Suite::Default,
            SuiteArg::Full => kernels::Suite::Full,
        }
    }
}
