//! Filling an output of rows on every core: the f64 references of the largest cases (a 4096³
//! matmul is 137 GFLOP, a model's linear layers nearly all of its work) would take minutes on one.

/// Calls `f(first_row, block)` on consecutive blocks of up to `block_rows` rows of `out` (rows of
/// `row_len` values), natively spread over every core, in WASM one after the other. Each block is
/// computed by one call, so a result is the same however the blocks are spread.
pub fn row_blocks<T: Send>(out: &mut [T], row_len: usize, block_rows: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let block = row_len.max(1) * block_rows.max(1);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let blocks = out.len().div_ceil(block);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(blocks.max(1));
        let per_thread = blocks.div_ceil(threads).max(1) * block;
        let f = &f;
        std::thread::scope(|s| {
            for (t, part) in out.chunks_mut(per_thread).enumerate() {
                s.spawn(move || {
                    for (b, rows) in part.chunks_mut(block).enumerate() {
                        f((t * per_thread + b * block) / row_len.max(1), rows);
                    }
                });
            }
        });
    }
    #[cfg(target_arch = "wasm32")]
    for (b, rows) in out.chunks_mut(block).enumerate() {
        f(b * block / row_len.max(1), rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_visited_once_with_its_index() {
        for (rows, len, block) in [(0, 3, 4), (1, 3, 4), (37, 5, 4), (64, 1, 8), (5, 7, 1)] {
            let mut out = vec![usize::MAX; rows * len];
            row_blocks(&mut out, len, block, |first, part| {
                for (r, row) in part.chunks_mut(len).enumerate() {
                    row.fill(first + r);
                }
            });
            let want: Vec<usize> = (0..rows).flat_map(|r| std::iter::repeat_n(r, len)).collect();
            assert_eq!(out, want, "{rows} rows of {len}, blocks of {block}");
        }
    }
}
