//! Tests that reach beyond one module. The model's rules checked on `testdata`'s hand-made reports
//! live here rather than beside the rules, since `testdata` names modules above the model (and
//! sibling modules must not name each other in a circle); so do the tests that follow one feature
//! of the model through `results.json` and every writer, and those of the committed evidence.

mod case;
mod every_report;
mod evidence;
mod memory;
mod roofline;
