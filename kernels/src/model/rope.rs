//! Rotary position embeddings' angles, and the cos/sin table the GPU reads them from. WGSL bounds
//! `sin` and `cos` only loosely (2^-11 absolute on [-π, π]), and SwiftShader uses that room: a
//! rotation computed on the GPU was off by 2e-4, enough to fail a model's strict check on
//! arithmetic the spec allows. So the table is computed once on the CPU in f64 and stored as f32,
//! as Hugging Face's rotary embedding caches it, and the kernels only read it.

/// The angle by which pair `i` (of `hd / 2`) of a head is rotated at position `pos`.
pub fn angle(pos: u32, i: usize, hd: u32, base: f32) -> f64 {
    f64::from(pos) * f64::from(base).powf(-2.0 * i as f64 / f64::from(hd))
}

/// For `tokens` tokens at positions `pos0…`, each of the `hd / 2` pairs' `(cos, sin)` one after
/// the other: `2 · (t · hd/2 + i)` holds the cosine of token `t`'s pair `i`, the next value its sine.
pub fn table(tokens: u32, hd: u32, pos0: u32, base: f32) -> Vec<f32> {
    (0..tokens)
        .flat_map(|t| (0..hd as usize / 2).map(move |i| angle(pos0 + t, i, hd, base).sin_cos()))
        .flat_map(|(s, c)| [c as f32, s as f32])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_each_tokens_pairs_cosine_then_sine_at_its_position() {
        let t = table(2, 4, 3, 10_000.0);
        assert_eq!(t.len(), 2 * 2 * 2);
        // Token 1 is at position 4; pair 1's frequency is 10000^(-1/2) = 0.01.
        assert_eq!(&t[..2], &[3f64.cos() as f32, 3f64.sin() as f32]);
        assert_eq!(&t[6..], &[0.04f64.cos() as f32, 0.04f64.sin() as f32]);
    }
}
