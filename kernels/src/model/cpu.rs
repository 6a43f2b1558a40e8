//! The model ops on the CPU in f64, written straight from their definitions: the reference the
//! GPU's f32 results are checked against. Linear layers (nearly all the work) use every core
//! natively.

use super::op::Op;

/// Each sentence's embedding from its tokens' rows `x` (`seq` rows of `hidden` a sentence): their
/// mean weighted by `mask` (a value a token: 1 for a token, 0 for padding), L2-normalised; what
/// sentence-transformers does, and transformers.js's `mean_pooling` then `normalize(2, -1)`.
pub fn mean_pool(x: &[f64], mask: &[f64], seq: usize, hidden: usize) -> Vec<f64> {
    let batch = mask.len() / seq.max(1);
    let mut out = vec![0.0; batch * hidden];
    for (b, row) in out.chunks_mut(hidden.max(1)).enumerate() {
        let weights = &mask[b * seq..][..seq];
        for (r, &w) in weights.iter().enumerate().filter(|(_, w)| **w != 0.0) {
            row.iter_mut().zip(&x[(b * seq + r) * hidden..][..hidden]).for_each(|(o, v)| *o += w * v);
        }
        let count: f64 = weights.iter().sum();
        row.iter_mut().for_each(|e| *e /= count);
        let norm = row.iter().map(|e| e * e).sum::<f64>().sqrt().max(1e-12);
        row.iter_mut().for_each(|e| *e /= norm);
    }
    out
}

/// Applies `op` to the tensors `v`.
pub fn eval(op: &Op, v: &mut [Vec<f64>]) {
    match *op {
        Op::Linear { x, w, b, add, y, m, k, n } => {
            let (m, k, n) = (m as usize, k as usize, n as usize);
            let mut out = linear(&v[x], &v[w], b.map(|b| v[b].as_slice()), m, k, n);
            if let Some(add) = add {
                out.iter_mut().zip(&v[add]).for_each(|(o, a)| *o += a);
            }
            v[y] = out;
        }
        Op::SwiGlu { x, gate, up, y, m, k, n } => {
            let (m, k, n) = (m as usize, k as usize, n as usize);
            let (g, u) = (linear(&v[x], &v[gate], None, m, k, n), linear(&v[x], &v[up], None, m, k, n));
            v[y] = g.iter().zip(&u).map(|(g, u)| silu(*g) * u).collect();
        }
        Op::Norm { x, g, b, y, rows, cols, eps } => {
            let cols = cols as usize;
            let mut out = vec![0.0; rows as usize * cols];
            let (xs, gs, bs) = (&v[x], &v[g], b.map(|b| &v[b]));
            crate::rows::row_blocks(&mut out, cols, 64, |first, block| {
                for (r, dst) in block.chunks_mut(cols).enumerate() {
                    let row = &xs[(first + r) * cols..][..cols];
                    let mean = if bs.is_some() { row.iter().sum::<f64>() / cols as f64 } else { 0.0 };
                    let var = row.iter().map(|&e| (e - mean) * (e - mean)).sum::<f64>() / cols as f64;
                    let inv = 1.0 / (var + eps as f64).sqrt();
                    for (c, d) in dst.iter_mut().enumerate() {
                        *d = (row[c] - mean) * inv * gs[c] + bs.map_or(0.0, |b| b[c]);
                    }
                }
            });
            v[y] = out;
        }
        Op::Add { a, b, y, n } => v[y] = (0..n as usize).map(|i| v[a][i] + v[b][i]).collect(),
        Op::Gelu { x, y, n } => {
            let mut out = v[x][..n as usize].to_vec();
            crate::rows::row_blocks(&mut out, 1, 1 << 16, |_, block| {
                block.iter_mut().for_each(|e| *e = 0.5 * *e * (1.0 + libm::erf(*e / std::f64::consts::SQRT_2)));
            });
            v[y] = out;
        }
        Op::SiluMul { g, u, y, n } => v[y] = (0..n as usize).map(|i| silu(v[g][i]) * v[u][i]).collect(),
        Op::Rope { x, y, tokens, heads, hd, pos0, base, .. } => {
            let (width, half) = (hd as usize, hd as usize / 2);
            let mut out = v[x].clone();
            for th in 0..(tokens * heads) as usize {
                let pos = pos0 + (th / heads as usize) as u32;
                for i in 0..half {
                    let (s, c) = super::rope::angle(pos, i, hd, base).sin_cos();
                    let at = th * width + i;
                    let (x1, x2) = (v[x][at], v[x][at + half]);
                    out[at] = x1 * c - x2 * s;
                    out[at + half] = x2 * c + x1 * s;
                }
            }
            v[y] = out;
        }
        Op::KvWrite { src, cache, tokens, dim, pos0 } => {
            let (n, at) = ((tokens * dim) as usize, (pos0 * dim) as usize);
            let rows: Vec<f64> = v[src][..n].to_vec();
            v[cache][at..at + n].copy_from_slice(&rows);
        }
        Op::Attention { q, k, v: vv, lens, y, rows, seq, heads, kv_heads, hd, kv_len, causal, pos0 } => {
            let (seq, heads, hd, kv_len) = (seq as usize, heads as usize, hd as usize, kv_len as usize);
            let kvdim = kv_heads as usize * hd;
            let scale = 1.0 / (hd as f64).sqrt();
            let mut out = vec![0.0; rows as usize * heads * hd];
            let (qs, ks, vs, ls) = (&v[q], &v[k], &v[vv], &v[lens]);
            // A query row (every head) a call, the rows spread over the cores: Whisper's encoder at
            // 8×1500 took 110 s here on one.
            crate::rows::row_blocks(&mut out, heads * hd, 1, |row, dst| {
                let b = row / seq;
                let n = if causal { pos0 as usize + row % seq + 1 } else { ls[b] as usize }.min(kv_len);
                for (h, dst) in dst.chunks_mut(hd).enumerate() {
                    let group = h / (heads / kv_heads as usize);
                    let qrow = &qs[(row * heads + h) * hd..][..hd];
                    let key = |j: usize| (b * kv_len + j) * kvdim + group * hd;
                    let scores: Vec<f64> = (0..n).map(|j| dot(qrow, &ks[key(j)..][..hd]) * scale).collect();
                    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let total: f64 = weights.iter().sum();
                    dst.fill(0.0);
                    for (j, w) in weights.iter().enumerate() {
                        dst.iter_mut().zip(&vs[key(j)..][..hd]).for_each(|(acc, value)| *acc += w * value);
                    }
                    dst.iter_mut().for_each(|acc| *acc /= total);
                }
            });
            v[y] = out;
        }
        Op::Embed { ids, word, pos, ty, y, rows, seq, hidden } => {
            let (seq, hidden) = (seq as usize, hidden as usize);
            let mut out = vec![0.0; rows as usize * hidden];
            for r in 0..rows as usize {
                let id = v[ids][r] as usize;
                for c in 0..hidden {
                    out[r * hidden + c] = v[word][id * hidden + c] + v[pos][(r % seq) * hidden + c] + v[ty][c];
                }
            }
            v[y] = out;
        }
        Op::Pool { x, lens, y, batch, seq, hidden } => {
            let seq = seq as usize;
            // A sentence's real tokens come first: a mask of its length (one at least).
            let mask: Vec<f64> = (0..batch as usize * seq).map(|i| f64::from(u8::from(i % seq < (v[lens][i / seq] as usize).clamp(1, seq)))).collect();
            v[y] = mean_pool(&v[x], &mask, seq, hidden as usize);
        }
        Op::Patches { x, y, batch, channels, size, patch } => {
            let (c, s, p) = (channels as usize, size as usize, patch as usize);
            let per_side = s / p;
            let mut out = Vec::with_capacity(batch as usize * per_side * per_side * c * p * p);
            for b in 0..batch as usize {
                for (py, px) in (0..per_side).flat_map(|py| (0..per_side).map(move |px| (py, px))) {
                    for (ch, ky, kx) in (0..c).flat_map(|ch| (0..p).flat_map(move |ky| (0..p).map(move |kx| (ch, ky, kx)))) {
                        out.push(v[x][((b * c + ch) * s + py * p + ky) * s + px * p + kx]);
                    }
                }
            }
            v[y] = out;
        }
        Op::Unfold { x, y, batch, channels, len, kernel, stride, pad, channels_last } => {
            let (c, len, k) = (channels as usize, len as usize, kernel as usize);
            let out_len = Op::unfolded_len(len as u32, kernel, stride, pad) as usize;
            let mut out = Vec::with_capacity(batch as usize * out_len * c * k);
            for b in 0..batch as usize {
                for t in 0..out_len {
                    for (ch, j) in (0..c).flat_map(|ch| (0..k).map(move |j| (ch, j))) {
                        let at = (t * stride as usize + j).checked_sub(pad as usize).filter(|&at| at < len);
                        let index = |at: usize| if channels_last { (b * len + at) * c + ch } else { (b * c + ch) * len + at };
                        out.push(at.map_or(0.0, |at| v[x][index(at)]));
                    }
                }
            }
            v[y] = out;
        }
        Op::Positions { x, pos, cls, y, batch, seq, hidden } => {
            let (h, rows) = (hidden as usize, seq as usize + cls.is_some() as usize);
            let mut out = Vec::with_capacity(batch as usize * rows * h);
            for b in 0..batch as usize {
                for j in 0..rows {
                    for ch in 0..h {
                        let value = match cls {
                            Some(cls) if j == 0 => v[cls][ch],
                            Some(_) => v[x][(b * seq as usize + j - 1) * h + ch],
                            None => v[x][(b * seq as usize + j) * h + ch],
                        };
                        out.push(value + v[pos][j * h + ch]);
                    }
                }
            }
            v[y] = out;
        }
    }
}

fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `x[m,k] · w[n,k]ᵀ + b`, output rows split over the available cores.
fn linear(x: &[f64], w: &[f64], b: Option<&[f64]>, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    crate::rows::row_blocks(&mut out, n, 1, |i, dst| {
        let xr = &x[i * k..][..k];
        for (j, d) in dst.iter_mut().enumerate() {
            *d = dot(xr, &w[j * k..][..k]) + b.map_or(0.0, |b| b[j]);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_weighs_each_token_by_its_mask_then_normalises() {
        // Two sentences of three tokens of width 2; the second's last token is padding.
        let x = [1.0, 0.0, 3.0, 0.0, 2.0, 0.0, /* second */ 0.0, 3.0, 4.0, 1.0, 100.0, 100.0];
        let pooled = mean_pool(&x, &[1.0, 1.0, 1.0, 1.0, 1.0, 0.0], 3, 2);
        // Means (2, 0) and (2, 2): their directions.
        let h = 0.5f64.sqrt();
        let expected = [1.0, 0.0, h, h];
        assert!(pooled.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-15), "{pooled:?}");
    }
}
