//! Nothing: the benches are the fixture.
