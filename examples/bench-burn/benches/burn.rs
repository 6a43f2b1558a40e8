//! burn on its wgpu backend (cubecl-wgpu, with fusion and autotune, as burn ships it), set up on
//! harness's device and timed by harness: a matmul at 1024³ and 4096³ (on the catalogue's inputs,
//! beside the catalogue's own matmul kernel), a 3×3 conv2d of ResNet-50's first
//! stage, a softmax over 4096×4096 and a small MLP's forward pass. Each run submits burn's work on
//! harness's queue ([`GpuWork::submitted`]); the last run's output comes back through burn's own
//! readback and is checked against a plain-Rust f64 reference that shares no code with burn.

use burn::tensor::activation::{relu, softmax};
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::wgpu::WgpuSetup;
use burn::tensor::{Device, Tensor, TensorData};
use harness_bench::{Benches, GpuContext, GpuWork, Tolerance};
use bench_matmul::{catalogue_bench, catalogue_inputs, Passes};
use kernels::prng::Prng;
use kernels::Shape;
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    /// burn's device for each device harness handed out: cubecl-wgpu registers a setup once.
    static DEVICES: RefCell<Vec<(harness_bench::wgpu::Device, Device)>> = const { RefCell::new(Vec::new()) };
}

/// burn's device on harness's: burn registers harness's instance, adapter, device and queue as an
/// existing wgpu setup (`Device::wgpu_options().setup(…)`), so burn submits on the queue harness
/// times.
fn burn_device(gpu: &GpuContext) -> Device {
    DEVICES.with(|devices| {
        if let Some((_, device)) = devices.borrow().iter().find(|(d, _)| *d == gpu.device) {
            return device.clone();
        }
        let setup = WgpuSetup { instance: gpu.instance.clone(), adapter: gpu.adapter.clone(), device: gpu.device.clone(), queue: gpu.queue.clone(), backend: gpu.backend };
        let device = Device::wgpu_options().setup(setup).init().expect("burn takes harness's wgpu device");
        devices.borrow_mut().push((gpu.device.clone(), device.clone()));
        device
    })
}

/// A tensor of `values` shaped `shape` on `device`.
fn tensor<const D: usize>(values: &[f32], shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), device)
}

/// A burn computation as a bench. Each run computes `op` and flushes burn, so that its work is on
/// harness's queue when the run returns; the last run's output is read back by burn.
///
/// Before the timing, `op` runs and is read back a few times: burn's autotune picks its kernels
/// on the first runs (natively before the first returns; in the page on the event loop, which
/// the readbacks yield to), so the timed runs are of the kernels it chose.
async fn burn_work<const D: usize>(device: Device, op: impl Fn() -> Tensor<D> + 'static) -> GpuWork {
    for _ in 0..3 {
        read(op()).await;
    }
    let last: Rc<RefCell<Option<Tensor<D>>>> = Rc::default();
    let kept = last.clone();
    GpuWork::submitted(move |_gpu| {
        let out = op();
        device.flush().expect("burn flushes its work onto harness's queue");
        *kept.borrow_mut() = Some(out);
        async {}
    })
    .output_read(move |_gpu| {
        let out = last.borrow_mut().take();
        async move { read(out.expect("the bench ran before its output is read")).await }
    })
}

/// `tensor`'s values, through burn's readback.
async fn read<const D: usize>(tensor: Tensor<D>) -> Vec<f64> {
    let data = tensor.into_data_async().await.expect("burn reads the tensor back");
    data.iter::<f32>().map(f64::from).collect()
}

/// `C = A·B` at `n`³ on the catalogue's inputs (seed 1), checked against its f64 reference; beside
/// it, in the same page and with the same sampling, the catalogue's own matmul kernel recorded in
/// harness's pass (`matmul@…`, as examples/bench-matmul times it).
fn matmul(c: &mut Benches) {
    for n in [1024u32, 4096] {
        let shape = Shape(vec![n, n, n]);
        bench_matmul::register(c, "matmul", Passes::One, n);
        catalogue_bench(c, "burn/matmul", "matmul", &shape).run(move |gpu| {
            let shape = shape.clone();
            async move {
                let device = burn_device(&gpu);
                let [a, b] = &catalogue_inputs("matmul", &shape)[..] else { unreachable!("matmul has two inputs") };
                let n = n as usize;
                let (a, b) = (tensor(a, [n, n], &device), tensor(b, [n, n], &device));
                burn_work(device, move || a.clone().matmul(b.clone())).await
            }
        });
    }
}

/// Softmax over the rows of a 4096×4096 matrix, on the catalogue's softmax inputs (rows offset by
/// ±1e4, which overflow a softmax that does not subtract the row's maximum) and f64 reference.
fn softmax_rows(c: &mut Benches) {
    let shape = Shape(vec![4096, 4096]);
    catalogue_bench(c, "burn/softmax", "softmax", &shape).run(move |gpu| {
        let shape = shape.clone();
        async move {
            let device = burn_device(&gpu);
            let x = tensor(&catalogue_inputs("softmax", &shape)[0], [4096, 4096], &device);
            burn_work(device, move || softmax(x.clone(), 1)).await
        }
    });
}

/// ResNet-50's first stage's 3×3 convolution (conv2_x): 64 channels in and out at 56×56,
/// stride 1, padding 1, batch 8, with a bias.
struct Conv {
    batch: usize,
    channels: usize,
    side: usize,
}

const CONV: Conv = Conv { batch: 8, channels: 64, side: 56 };

impl Conv {
    /// Input `[batch, c, side, side]`, weight `[c, c, 3, 3]` (He-scaled) and bias `[c]`, seeded.
    fn inputs(&self) -> [Vec<f32>; 3] {
        let mut rng = Prng::new(7, 0);
        let c = self.channels;
        let scale = (2.0 / (c * 9) as f32).sqrt();
        [rng.fill(self.batch * c * self.side * self.side, -1.0, 1.0), rng.fill(c * c * 9, -scale, scale), rng.fill(c, -0.1, 0.1)]
    }

    /// The convolution in f64, term by term: `y[b,o,i,j] = bias[o] + Σ x[b,c,i+di-1,j+dj-1]·w[o,c,di,dj]`
    /// over the window inside the image (zero padding).
    fn reference(&self, [x, w, bias]: &[Vec<f32>; 3]) -> Vec<f64> {
        let (c, s) = (self.channels, self.side);
        let mut y = Vec::with_capacity(self.batch * c * s * s);
        for b in 0..self.batch {
            for o in 0..c {
                for i in 0..s {
                    for j in 0..s {
                        let mut sum = f64::from(bias[o]);
                        for ci in 0..c {
                            for di in 0..3 {
                                for dj in 0..3 {
                                    let (ii, jj) = ((i + di).wrapping_sub(1), (j + dj).wrapping_sub(1));
                                    if ii < s && jj < s {
                                        sum += f64::from(x[((b * c + ci) * s + ii) * s + jj]) * f64::from(w[((o * c + ci) * 3 + di) * 3 + dj]);
                                    }
                                }
                            }
                        }
                        y.push(sum);
                    }
                }
            }
        }
        y
    }
}

fn conv(c: &mut Benches) {
    let (n, ch, s) = (CONV.batch, CONV.channels, CONV.side);
    let macs = (n * ch * s * s * ch * 9) as f64;
    c.gpu("burn/conv2d-3x3")
        .param(format!("{n}x{ch}x{s}x{s}"))
        .flops(2.0 * macs)
        // Sums of 576 products of inputs in [-1, 1]: f32 accumulation in any order stays well inside.
        .reference(move || CONV.reference(&CONV.inputs()), Tolerance { abs: 1e-4, rel: 1e-4 })
        .run(move |gpu| async move {
            let device = burn_device(&gpu);
            let [x, w, bias] = CONV.inputs();
            let (x, w, bias) = (tensor(&x, [n, ch, s, s], &device), tensor(&w, [ch, ch, 3, 3], &device), tensor(&bias, [ch], &device));
            let options = ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
            burn_work(device, move || conv2d(x.clone(), w.clone(), Some(bias.clone()), options.clone())).await
        });
}

/// A small MLP, 784 → 512 → 512 → 10 with ReLUs and a softmax, on a batch of 64: the layer widths
/// of the classic MNIST classifier.
const BATCH: usize = 64;
const WIDTHS: [usize; 4] = [784, 512, 512, 10];

/// The input `[BATCH, 784]` and each layer's weight `[in, out]` and bias `[out]`, seeded.
fn mlp_inputs() -> (Vec<f32>, Vec<(Vec<f32>, Vec<f32>)>) {
    let mut rng = Prng::new(11, 0);
    let x = rng.fill(BATCH * WIDTHS[0], 0.0, 1.0);
    let layers = WIDTHS
        .windows(2)
        .map(|io| {
            let k = (1.0 / io[0] as f32).sqrt();
            (rng.fill(io[0] * io[1], -k, k), rng.fill(io[1], -k, k))
        })
        .collect();
    (x, layers)
}

/// The MLP in f64: `x·W + b`, ReLU between layers, softmax over the last.
fn mlp_reference() -> Vec<f64> {
    let (x, layers) = mlp_inputs();
    let mut h: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    for (l, (w, b)) in layers.iter().enumerate() {
        let (inputs, outputs) = (WIDTHS[l], WIDTHS[l + 1]);
        let mut next = vec![0.0f64; BATCH * outputs];
        for r in 0..BATCH {
            for o in 0..outputs {
                let sum: f64 = (0..inputs).map(|i| h[r * inputs + i] * f64::from(w[i * outputs + o])).sum();
                let v = sum + f64::from(b[o]);
                next[r * outputs + o] = if l + 2 < WIDTHS.len() { v.max(0.0) } else { v };
            }
        }
        h = next;
    }
    h.chunks(WIDTHS[3])
        .flat_map(|row| {
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            row.iter().map(move |v| (v - max).exp() / sum).collect::<Vec<_>>()
        })
        .collect()
}

fn mlp(c: &mut Benches) {
    let flops: usize = WIDTHS.windows(2).map(|io| 2 * BATCH * io[0] * io[1]).sum();
    c.gpu("burn/mlp")
        .param(format!("{BATCH}x784-512-512-10"))
        .flops(flops as f64)
        .reference(mlp_reference, Tolerance { abs: 1e-5, rel: 1e-4 })
        .run(|gpu| async move {
            let device = burn_device(&gpu);
            let (x, layers) = mlp_inputs();
            let x = tensor(&x, [BATCH, WIDTHS[0]], &device);
            let layers: Vec<(Tensor<2>, Tensor<1>)> =
                layers.iter().enumerate().map(|(l, (w, b))| (tensor(w, [WIDTHS[l], WIDTHS[l + 1]], &device), tensor(b, [WIDTHS[l + 1]], &device))).collect();
            burn_work(device, move || {
                let mut h = x.clone();
                for (l, (w, b)) in layers.iter().enumerate() {
                    h = h.matmul(w.clone()) + b.clone().unsqueeze();
                    if l + 1 < layers.len() {
                        h = relu(h);
                    }
                }
                softmax(h, 1)
            })
            .await
        });
}

harness_bench::group!(benches, matmul, conv, softmax_rows, mlp);
harness_bench::main!(benches);
