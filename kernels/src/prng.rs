//! A seeded pseudo-random generator whose stream is bit-identical natively and in WASM.

/// SplitMix64: integer-only, so the browser and the harness derive the same inputs from a seed.
#[derive(Debug, Clone)]
pub struct Prng {
    bits: stats::rng::SplitMix64,
}

impl Prng {
    /// A generator for one input buffer of one case: the stream depends on the case seed and the
    /// buffer's index, so buffers of a case differ while staying reproducible.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut p = Prng {
            bits: stats::rng::SplitMix64::new(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93)),
        };
        p.next_u64();
        p
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.bits.next_u64()
    }

    /// Uniform in `[lo, hi)`, exactly representable in f32 (24 random bits).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        uniform(self.next_u64(), lo, hi)
    }

    /// `len` values uniform in `[lo, hi)`: natively on every core where there are many (a seeded
    /// TinyLlama's weights are 1.1 billion), the same values in the same order either way.
    pub fn fill(&mut self, len: usize, lo: f32, hi: f32) -> Vec<f32> {
        let mut out = vec![0.0; len];
        let start = self.bits.clone();
        let block = |first: usize, block: &mut [f32]| {
            let mut bits = start.clone();
            bits.advance(first as u64);
            block.iter_mut().for_each(|v| *v = uniform(bits.next_u64(), lo, hi));
        };
        match len < PARALLEL_FILL {
            true => block(0, &mut out),
            false => crate::rows::row_blocks(&mut out, 1, PARALLEL_FILL, block),
        }
        self.bits.advance(len as u64);
        out
    }
}

/// Values a fill makes on one core: fewer are not worth a thread.
const PARALLEL_FILL: usize = 1 << 20;

/// `bits`' top 24 as a value uniform in `[lo, hi)`. The unit is scaled by a multiply by 2⁻²⁴,
/// which is exact, as the division by 2²⁴ it replaces was, and several times quicker.
fn uniform(bits: u64, lo: f32, hi: f32) -> f32 {
    let unit = (bits >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
    lo + (hi - lo) * unit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_fixed_for_a_seed() {
        // Pinned values: a change here silently changes every case's inputs on one platform.
        let mut p = Prng::new(1, 0);
        let first: Vec<u64> = (0..3).map(|_| p.next_u64()).collect();
        let mut q = Prng::new(1, 0);
        assert_eq!(first, (0..3).map(|_| q.next_u64()).collect::<Vec<_>>());
        assert_ne!(Prng::new(1, 0).next_u64(), Prng::new(2, 0).next_u64());
        assert_ne!(Prng::new(1, 0).next_u64(), Prng::new(1, 1).next_u64());
    }

    #[test]
    fn a_fill_is_the_stream_value_by_value_however_it_is_split() {
        // Long enough to be filled in blocks on several cores, then on from where it stopped.
        let mut p = Prng::new(3, 9);
        let filled = [p.fill(PARALLEL_FILL * 2 + 17, -0.5, 0.5), p.fill(5, -0.5, 0.5)].concat();
        let mut q = Prng::new(3, 9);
        let one_by_one: Vec<f32> = (0..filled.len()).map(|_| {
            let unit = (q.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            -0.5 + (0.5 - -0.5) * unit
        }).collect();
        assert!(filled.iter().zip(&one_by_one).all(|(a, b)| a.to_bits() == b.to_bits()), "bit for bit, as the division by 2^24 gave them");
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut p = Prng::new(7, 3);
        for _ in 0..10_000 {
            let x = p.uniform(-2.0, 3.0);
            assert!((-2.0..3.0).contains(&x), "{x}");
        }
    }
}
