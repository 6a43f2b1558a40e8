//! Reading buffers back to the CPU: a program's outputs, a user's buffers, and the mapping they all
//! go through.

use super::error::GpuError;
use super::prepare::Prepared;
use super::Gpu;
use crate::program::{Init, Program};
use futures_channel::oneshot;

impl Gpu {
    /// Copies the program's output buffers back to the CPU, concatenated. A program that asks
    /// for a fresh output first gets its buffers' initial contents back and runs once more.
    pub async fn read_output(&self, case: &Prepared, program: &Program) -> Result<Vec<u8>, GpuError> {
        if program.fresh_output {
            let mut clears = self.device.create_command_encoder(&Default::default());
            for (buffer, b) in case.buffers.iter().zip(&program.buffers) {
                if let Init::View { .. } = b.init {
                    continue;
                }
                match b.init.bytes() {
                    Some(bytes) => self.queue.write_buffer(buffer, 0, &bytes),
                    None => clears.clear_buffer(buffer, 0, None),
                }
            }
            self.queue.submit([clears.finish()]);
            self.dispatch(case).await?;
        }
        self.read_ranges(&case.output_buffers()).await
    }

    /// Submits one run of `case` and reads its outputs back: one call of an app that awaits its
    /// answer.
    pub async fn run_and_read(&self, case: &Prepared) -> Result<Vec<u8>, GpuError> {
        self.queue.submit([self.encode(case, None, 1, None)]);
        self.read_ranges(&case.output_buffers()).await
    }

    /// Copies the first `len` bytes of each buffer back to the CPU, concatenated: what a check
    /// compares. Each buffer needs `COPY_SRC`.
    pub async fn read_buffers(&self, buffers: &[(&wgpu::Buffer, u64)]) -> Result<Vec<u8>, GpuError> {
        let ranges: Vec<(&wgpu::Buffer, u64, u64)> = buffers.iter().map(|&(buffer, len)| (buffer, 0, len)).collect();
        self.read_ranges(&ranges).await
    }

    /// [`read_buffers`](Gpu::read_buffers) of `len` bytes from `offset` of each buffer.
    pub(super) async fn read_ranges(&self, buffers: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<u8>, GpuError> {
        let total: u64 = buffers.iter().map(|(.., n)| n).sum();
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output readback"),
            size: total.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for &(buffer, offset, len) in buffers {
            encoder.copy_buffer_to_buffer(buffer, offset, &readback, at, len);
            at += len;
        }
        self.queue.submit([encoder.finish()]);
        let bytes = self.map_read(&readback, total).await;
        readback.destroy();
        bytes
    }

    /// The first `len` bytes of `buffer`, mapped for reading and copied out.
    pub(super) async fn map_read(&self, buffer: &wgpu::Buffer, len: u64) -> Result<Vec<u8>, GpuError> {
        let slice = buffer.slice(0..len);
        let (tx, rx) = oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait_natively(None)?;
        rx.await
            .map_err(|_| GpuError::Map("the mapping callback was dropped".into()))?
            .map_err(|e| GpuError::Map(e.to_string()))?;
        let bytes = slice
            .get_mapped_range()
            .map_err(|e| GpuError::Map(e.to_string()))?
            .to_vec();
        buffer.unmap();
        Ok(bytes)
    }
}
