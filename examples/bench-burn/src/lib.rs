//! Nothing here: the benches are in benches/burn.rs.
