//! Nothing here: the bench builds the catalogue's matmul (benches/matmul.rs).
