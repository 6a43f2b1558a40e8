//! The Tera rendering every harness HTML page shares (the report, the index of runs): its template,
//! with the stylesheet and table script each page inlines.

use crate::error::ReportError;

const STYLE: &str = include_str!("../templates/style.css");
const SCRIPT: &str = include_str!("../templates/tables.js");

/// Renders `template` with `context`, plus the shared stylesheet (`style`) and table script
/// (`script`) every harness page inlines.
pub fn render_template(name: &str, template: &str, mut context: tera::Context) -> Result<String, ReportError> {
    let mut tera = tera::Tera::default();
    tera.add_raw_template(name, template).map_err(|e| ReportError::Template(format!("{e:?}")))?;
    context.insert("style", STYLE);
    context.insert("script", SCRIPT);
    tera.render(name, &context).map_err(|e| ReportError::Template(format!("{e:?}")))
}
