//! Every figure that docs/hardware/*.md and README.md quote from the H100 evidence, recomputed
//! from the committed JSON: the figure check. The claims are in `docs/hardware/claims.toml`; each
//! names the Markdown file that quotes it and the quoted text as a template whose `{EXPR:FORMAT}`
//! holes are recomputed from the JSON. The test renders every claim, asserts the rendered text is
//! in the Markdown, and fails where a number in a table of docs/hardware/*.md is covered by no
//! claim (a table of no measured figures is exempted by name, with the reason).
//!
//! How to add a claim (the header of claims.toml says the same, with the functions and formats):
//! write the sentence or table row as it stands in the Markdown, replace each measured number by
//! `{expression:format}`, such as `{gpu(ff, 0, 'matmul/4096x4096x4096'):.3} ms`, and run
//! `cargo test -p reports figures`. A table row per case takes `rows` (case ids, or every case of
//! a run) and `{row}` in the template.

use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Claims {
    /// Short names for JSON files, relative to docs/hardware.
    files: HashMap<String, String>,
    claim: Vec<Claim>,
    #[serde(default)]
    exempt: Vec<Exempt>,
}

#[derive(Deserialize)]
struct Claim {
    /// The Markdown file, relative to docs/hardware (README is `../../README.md`).
    doc: String,
    /// The text as quoted, with `{EXPR:FORMAT}` holes.
    text: String,
    /// Render the text once per row, `row` bound to each: case ids, or every case of a run.
    #[serde(default)]
    rows: Option<Rows>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Rows {
    Ids(Vec<String>),
    Run { file: String, run: usize, #[serde(default)] prefix: String },
}

/// A table of docs/hardware/*.md with digits but no measured figure (commands, dates, flags).
#[derive(Deserialize)]
struct Exempt {
    doc: String,
    /// The table's header row, as it starts (every row of the table is exempt) …
    #[serde(default)]
    header: Option<String>,
    /// … or the one row, as it starts.
    #[serde(default)]
    row: Option<String>,
    why: String,
}

#[derive(Clone, Debug, PartialEq)]
enum V {
    Num(f64),
    Str(String),
}

impl V {
    fn num(&self) -> Result<f64, String> {
        match self {
            V::Num(x) => Ok(*x),
            V::Str(s) => Err(format!("`{s}` is not a number")),
        }
    }
    fn str(&self) -> Result<&str, String> {
        match self {
            V::Str(s) => Ok(s),
            V::Num(x) => Err(format!("{x} is not a string")),
        }
    }
}

struct Ctx<'a> {
    root: &'a Path,
    files: &'a HashMap<String, String>,
    json: std::cell::RefCell<HashMap<String, std::rc::Rc<Value>>>,
    row: std::cell::RefCell<Option<String>>,
}

impl Ctx<'_> {
    fn file(&self, name: &str) -> Result<std::rc::Rc<Value>, String> {
        let rel = self.files.get(name).map(String::as_str).unwrap_or(name);
        if let Some(v) = self.json.borrow().get(rel) {
            return Ok(v.clone());
        }
        let text = std::fs::read_to_string(self.root.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
        let v = std::rc::Rc::new(serde_json::from_str::<Value>(&text).map_err(|e| format!("{rel}: {e}"))?);
        self.json.borrow_mut().insert(rel.to_string(), v.clone());
        Ok(v)
    }

    /// Case `id` of run `run`: the case of that id, else the one case whose id starts with it.
    fn case<'v>(json: &'v Value, run: usize, id: &str) -> Result<&'v Value, String> {
        let cases = json["runs"][run]["cases"].as_array().ok_or(format!("no run {run}"))?;
        if let Some(c) = cases.iter().find(|c| c["id"] == id) {
            return Ok(c);
        }
        let starts: Vec<&Value> = cases.iter().filter(|c| c["id"].as_str().is_some_and(|i| i.starts_with(id))).collect();
        match starts.as_slice() {
            [one] => Ok(one),
            [] => Err(format!("run {run} has no case `{id}`")),
            _ => Err(format!("run {run} has {} cases starting `{id}`", starts.len())),
        }
    }

    /// The ms of phase `name` in a case's `caseTime` (0 where it has none).
    fn phase_ms(time: &Value, name: &str) -> f64 {
        time["phases"].as_array().into_iter().flatten().filter(|p| p["name"] == name).filter_map(|p| p["ms"].as_f64()).sum()
    }

    fn pointer(v: &Value, pointer: &str) -> Result<V, String> {
        match v.pointer(pointer) {
            Some(Value::Number(n)) => Ok(V::Num(n.as_f64().unwrap())),
            Some(Value::String(s)) => Ok(V::Str(s.clone())),
            Some(Value::Bool(b)) => Ok(V::Num(f64::from(u8::from(*b)))),
            other => Err(format!("{pointer}: {other:?}")),
        }
    }

    /// GPU-median ratios run `a` ÷ run `b` over the cases whose id starts with `prefix` and whose
    /// median in `b` is at least `floor`.
    fn ratios(&self, args: &[V]) -> Result<Vec<f64>, String> {
        let json = self.file(args[0].str()?)?;
        let (a, b, prefix) = (args[1].num()? as usize, args[2].num()? as usize, args[3].str()?);
        let floor = args.get(4).map(V::num).transpose()?.unwrap_or(0.0);
        let mut out = Vec::new();
        for c in json["runs"][a]["cases"].as_array().ok_or("no run")? {
            let id = c["id"].as_str().unwrap();
            if !starts(id, prefix) {
                continue;
            }
            let other = Self::case(&json, b, id)?;
            let (x, y) = (c["gpu"]["median"].as_f64().ok_or(id)?, other["gpu"]["median"].as_f64().ok_or(id)?);
            if y >= floor {
                out.push(x / y);
            }
        }
        if out.is_empty() {
            return Err(format!("no case starts `{prefix}`"));
        }
        Ok(out)
    }

    fn call(&self, name: &str, args: Vec<V>) -> Result<V, String> {
        let want = |n: usize| if args.len() < n { Err(format!("{name} takes {n} arguments")) } else { Ok(()) };
        Ok(match name {
            "gpu" | "wall" | "at" | "has" => {
                want(3)?;
                let json = self.file(args[0].str()?)?;
                let case = Self::case(&json, args[1].num()? as usize, args[2].str()?);
                match name {
                    "has" => V::Num(if case.is_ok() { 1.0 } else { 0.0 }),
                    "gpu" => Self::pointer(case?, "/gpu/median")?,
                    "wall" => Self::pointer(case?, "/wall/median")?,
                    _ => {
                        want(4)?;
                        Self::pointer(case?, args[3].str()?)?
                    }
                }
            }
            "top" => {
                want(2)?;
                Self::pointer(&*self.file(args[0].str()?)?, args[1].str()?)?
            }
            "run" => {
                want(3)?;
                Self::pointer(&self.file(args[0].str()?)?["runs"][args[1].num()? as usize], args[2].str()?)?
            }
            "textnum" => {
                // The K-th number (from 0) in the text at a pointer of the file.
                want(3)?;
                let text = Self::pointer(&*self.file(args[0].str()?)?, args[1].str()?)?;
                let k = args[2].num()? as usize;
                let numbers: Vec<f64> = text
                    .str()?
                    .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .filter_map(|t| t.trim_matches('.').parse().ok())
                    .collect();
                V::Num(*numbers.get(k).ok_or(format!("no number {k} in `{}`", text.str()?))?)
            }
            "count" => {
                // Cases of a run whose id starts with PREFIX [and whose POINTER reads VALUE].
                want(3)?;
                let json = self.file(args[0].str()?)?;
                let prefix = args[2].str()?;
                let cases = json["runs"][args[1].num()? as usize]["cases"].as_array().ok_or("no run")?;
                let matches = |c: &&Value| match (args.get(3), args.get(4)) {
                    (Some(p), Some(v)) => Self::pointer(c, p.str().unwrap_or("")).ok().as_ref() == Some(v),
                    _ => true,
                };
                V::Num(cases.iter().filter(|c| c["id"].as_str().is_some_and(|i| starts(i, prefix))).filter(matches).count() as f64)
            }
            "best" | "bestvariant" => {
                // The fastest case (GPU median) whose id starts with PREFIX, its variant ending in
                // `-sg` when SG is 1 and not when 0: its median, or its variant.
                want(4)?;
                let json = self.file(args[0].str()?)?;
                let (prefix, sg) = (args[2].str()?, args[3].num()? != 0.0);
                let cases = json["runs"][args[1].num()? as usize]["cases"].as_array().ok_or("no run")?;
                let best = cases
                    .iter()
                    .filter(|c| c["id"].as_str().is_some_and(|i| i.starts_with(prefix)))
                    .filter(|c| c["variant"].as_str().is_some_and(|v| v.ends_with("-sg") == sg))
                    .min_by(|a, b| a["gpu"]["median"].as_f64().partial_cmp(&b["gpu"]["median"].as_f64()).unwrap())
                    .ok_or(format!("no variant of `{prefix}`"))?;
                if name == "best" { Self::pointer(best, "/gpu/median")? } else { Self::pointer(best, "/variant")? }
            }
            "phase" | "casetime" | "beyond" | "timed" => {
                // Over a run's cases that say where their time went (`caseTime`): the sum of phase
                // NAME's ms, of their wall ms, the mean of their wall ms beyond the timed samples,
                // or their number.
                want(2)?;
                let json = self.file(args[0].str()?)?;
                let cases = json["runs"][args[1].num()? as usize]["cases"].as_array().ok_or("no run")?;
                let times: Vec<&Value> = cases.iter().map(|c| &c["caseTime"]).filter(|t| t.is_object()).collect();
                let wall = |t: &Value| t["wallMs"].as_f64().unwrap_or(0.0);
                V::Num(match name {
                    "phase" => {
                        want(3)?;
                        let n = args[2].str()?;
                        times.iter().map(|t| Self::phase_ms(t, n)).sum()
                    }
                    "casetime" => times.iter().map(|t| wall(t)).sum(),
                    "beyond" => times.iter().map(|t| wall(t) - Self::phase_ms(t, "samples")).sum::<f64>() / times.len().max(1) as f64,
                    _ => times.len() as f64,
                })
            }
            "phaseof" => {
                // One case's phase NAME, ms (its `caseTime`).
                want(4)?;
                let json = self.file(args[0].str()?)?;
                let case = Self::case(&json, args[1].num()? as usize, args[2].str()?)?;
                let n = args[3].str()?;
                V::Num(Self::phase_ms(&case["caseTime"], n))
            }
            "minratio" => V::Num(self.ratios(&args)?.into_iter().fold(f64::INFINITY, f64::min)),
            "maxratio" => V::Num(self.ratios(&args)?.into_iter().fold(f64::NEG_INFINITY, f64::max)),
            "nratio" => V::Num(self.ratios(&args)?.len() as f64),
            "fmt" => {
                want(2)?;
                V::Str(format(args[0].num()?, args[1].str()?)?)
            }
            "split" => {
                // The K-th piece (from 0) of a string split at SEP.
                want(3)?;
                let (text, sep, k) = (args[0].str()?, args[1].str()?, args[2].num()? as usize);
                V::Str(text.split(sep).nth(k).ok_or(format!("`{text}` has no piece {k}"))?.to_string())
            }
            "cat" => V::Str(args.iter().map(|a| a.str().map(str::to_string)).collect::<Result<Vec<_>, _>>()?.concat()),
            "min" => V::Num(args.iter().map(V::num).collect::<Result<Vec<_>, _>>()?.into_iter().fold(f64::INFINITY, f64::min)),
            "max" => V::Num(args.iter().map(V::num).collect::<Result<Vec<_>, _>>()?.into_iter().fold(f64::NEG_INFINITY, f64::max)),
            _ => return Err(format!("no function `{name}`")),
        })
    }
}

/// Whether `id` starts with PREFIX, or with one of `a|b|c`.
fn starts(id: &str, prefix: &str) -> bool {
    prefix.split('|').any(|p| id.starts_with(p))
}

/// A small recursive-descent evaluator: numbers, 'strings', names (`row`, a file's short name),
/// + - * / ^, comparisons (1 or 0), parentheses and calls.
struct Parser<'a, 'c> {
    s: &'a [u8],
    i: usize,
    ctx: &'c Ctx<'c>,
    /// Parsing the branch of an `if` not taken: nothing is looked up.
    dead: bool,
}

impl Parser<'_, '_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn expr(&mut self) -> Result<V, String> {
        let a = self.sum()?;
        for (op, f) in [(">=", f64::ge as fn(&f64, &f64) -> bool), ("<=", f64::le), ("==", f64::eq), (">", f64::gt), ("<", f64::lt)] {
            if self.eat(op) {
                let b = self.sum()?;
                return Ok(V::Num(if f(&a.num()?, &b.num()?) { 1.0 } else { 0.0 }));
            }
        }
        Ok(a)
    }
    fn sum(&mut self) -> Result<V, String> {
        let mut a = self.product()?;
        loop {
            if self.eat("+") {
                a = V::Num(a.num()? + self.product()?.num()?);
            } else if self.eat("-") {
                a = V::Num(a.num()? - self.product()?.num()?);
            } else {
                return Ok(a);
            }
        }
    }
    fn product(&mut self) -> Result<V, String> {
        let mut a = self.power()?;
        loop {
            if self.eat("*") {
                a = V::Num(a.num()? * self.power()?.num()?);
            } else if self.eat("/") {
                a = V::Num(a.num()? / self.power()?.num()?);
            } else {
                return Ok(a);
            }
        }
    }
    fn power(&mut self) -> Result<V, String> {
        let a = self.atom()?;
        if self.eat("^") {
            return Ok(V::Num(a.num()?.powf(self.power()?.num()?)));
        }
        Ok(a)
    }
    fn atom(&mut self) -> Result<V, String> {
        self.ws();
        let start = self.i;
        let Some(&c) = self.s.get(self.i) else { return Err("unexpected end".into()) };
        if self.eat("-") {
            return Ok(V::Num(-self.atom()?.num()?));
        }
        if self.eat("(") {
            let v = self.expr()?;
            return if self.eat(")") { Ok(v) } else { Err("missing )".into()) };
        }
        if c == b'\'' {
            let end = self.s[start + 1..].iter().position(|&b| b == b'\'').ok_or("unclosed string")? + start + 1;
            self.i = end + 1;
            return Ok(V::Str(String::from_utf8(self.s[start + 1..end].to_vec()).unwrap()));
        }
        if c.is_ascii_digit() || c == b'.' {
            while self.i < self.s.len() && (self.s[self.i].is_ascii_digit() || matches!(self.s[self.i], b'.' | b'e')) {
                self.i += 1;
            }
            let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
            return t.parse().map(V::Num).map_err(|_| format!("bad number `{t}`"));
        }
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
            self.i += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.i]).unwrap().to_string();
        if name.is_empty() {
            return Err(format!("unexpected `{}`", c as char));
        }
        if name == "if" && self.eat("(") {
            let cond = self.expr()?;
            let take = self.dead || cond.num()? != 0.0;
            let was = self.dead;
            if !self.eat(",") {
                return Err("if(: expected ,".into());
            }
            self.dead = was || !take;
            let a = self.expr()?;
            if !self.eat(",") {
                return Err("if(: expected ,".into());
            }
            self.dead = was || take;
            let b = self.expr()?;
            self.dead = was;
            if !self.eat(")") {
                return Err("if(: expected )".into());
            }
            return Ok(if take { a } else { b });
        }
        if self.eat("(") {
            let mut args = Vec::new();
            if !self.eat(")") {
                loop {
                    args.push(self.expr()?);
                    if self.eat(")") {
                        break;
                    }
                    if !self.eat(",") {
                        return Err(format!("{name}(: expected , or )"));
                    }
                }
            }
            if self.dead {
                return Ok(V::Num(0.0));
            }
            return self.ctx.call(&name, args);
        }
        if name == "row" {
            return self.ctx.row.borrow().clone().map(V::Str).ok_or("`row` outside a claim with rows".into());
        }
        if self.ctx.files.contains_key(&name) {
            return Ok(V::Str(name));
        }
        Err(format!("unknown name `{name}`"))
    }
}

/// `x` as FORMAT: `.N` N decimals; `sN` N significant digits; `,N` N decimals with thousands
/// grouped by a space (`2 855`); `%N` x × 100 with N decimals; `ms` the ms tables' rule (≥ 100:
/// 1 decimal, ≥ 1: 3, else 4).
fn format(x: f64, fmt: &str) -> Result<String, String> {
    let digits = |s: &str| s.parse::<usize>().map_err(|_| format!("bad format `{fmt}`"));
    Ok(match fmt {
        f if f.starts_with('e') => {
            // 1.2e-05, as printf writes it.
            let t = format!("{x:.*e}", digits(&f[1..])?);
            let (mantissa, exp) = t.split_once('e').unwrap();
            let exp: i32 = exp.parse().unwrap();
            format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
        }
        "ms" => format(x, if x.abs() >= 100.0 { ".1" } else if x.abs() >= 1.0 { ".3" } else { ".4" })?,
        f if f.starts_with('.') => format!("{x:.*}", digits(&f[1..])?),
        f if f.starts_with('%') => format!("{:.*}", digits(&f[1..])?, x * 100.0),
        f if f.starts_with('s') => {
            let n = digits(&f[1..])? as i32;
            let magnitude = if x == 0.0 { 0 } else { x.abs().log10().floor() as i32 };
            format!("{x:.*}", (n - 1 - magnitude).max(0) as usize)
        }
        f if f.starts_with(',') => {
            let s = format!("{x:.*}", digits(&f[1..])?);
            let (int, frac) = s.split_at(s.find('.').unwrap_or(s.len()));
            let mut grouped = String::new();
            for (k, ch) in int.chars().enumerate() {
                if k > 0 && (int.len() - k) % 3 == 0 {
                    grouped.push(' ');
                }
                grouped.push(ch);
            }
            grouped + frac
        }
        _ => return Err(format!("unknown format `{fmt}`")),
    })
}

/// `template` with every `{EXPR:FORMAT}` (or `{EXPR}` for a string) filled in.
fn render(template: &str, ctx: &Ctx) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let body_start = open + 1;
        let (mut depth, mut quoted, mut close, mut colon) = (0, false, None, None);
        for (k, ch) in rest[body_start..].char_indices() {
            match ch {
                '\'' => quoted = !quoted,
                '(' if !quoted => depth += 1,
                ')' if !quoted => depth -= 1,
                ':' if !quoted && depth == 0 => colon = Some(k),
                '}' if !quoted && depth == 0 => {
                    close = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let close = close.ok_or("unclosed {")?;
        let body = &rest[body_start..body_start + close];
        let (expr, fmt) = match colon {
            Some(c) => (&body[..c], Some(&body[c + 1..])),
            None => (body, None),
        };
        let mut p = Parser { s: expr.as_bytes(), i: 0, ctx, dead: false };
        let v = p.expr().map_err(|e| format!("{{{body}}}: {e}"))?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("{{{body}}}: trailing `{}`", &expr[p.i..]));
        }
        match (v, fmt) {
            (V::Num(x), Some(f)) => out.push_str(&format(x, f)?),
            (V::Str(s), None) => out.push_str(&s),
            (V::Num(x), None) => return Err(format!("{{{body}}} = {x}: a number needs a format")),
            (V::Str(s), Some(_)) => return Err(format!("{{{body}}} = `{s}`: a string takes no format")),
        }
        rest = &rest[body_start + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Byte ranges of `doc` inside backtick code spans (case ids, variant names, commands).
fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let ticks: Vec<usize> = line.match_indices('`').map(|(i, _)| i).collect();
    ticks.chunks(2).filter(|p| p.len() == 2).map(|p| (p[0], p[1])).collect()
}

/// Every failure of the claims against `docs` (path relative to docs/hardware → text).
fn check(root: &Path, claims: &Claims, docs: &HashMap<String, String>) -> Vec<String> {
    let mut errors = Vec::new();
    let mut covered: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    let ctx = Ctx { root, files: &claims.files, json: Default::default(), row: Default::default() };
    for (n, claim) in claims.claim.iter().enumerate() {
        let Some(doc) = docs.get(&claim.doc) else {
            errors.push(format!("claim {n}: no document `{}`", claim.doc));
            continue;
        };
        let rows: Vec<Option<String>> = match &claim.rows {
            None => vec![None],
            Some(Rows::Ids(ids)) => ids.iter().cloned().map(Some).collect(),
            Some(Rows::Run { file, run, prefix }) => match ctx.file(file) {
                Ok(json) => json["runs"][*run]["cases"]
                    .as_array()
                    .map(|cases| cases.iter().filter_map(|c| c["id"].as_str()).filter(|i| starts(i, prefix)).map(|i| Some(i.to_string())).collect())
                    .unwrap_or_default(),
                Err(e) => {
                    errors.push(format!("claim {n}: {e}"));
                    continue;
                }
            },
        };
        for row in rows {
            *ctx.row.borrow_mut() = row.clone();
            let text = match render(&claim.text, &ctx) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(format!("{} (claim {n}{}): {e}", claim.doc, row.map(|r| format!(", row {r}")).unwrap_or_default()));
                    continue;
                }
            };
            let found: Vec<(usize, usize)> = doc.match_indices(&text).map(|(i, t)| (i, i + t.len())).collect();
            if found.is_empty() {
                errors.push(format!("{}: the JSON gives\n    {text}\n  which is not in the document (claim {n})", claim.doc));
            }
            covered.entry(claim.doc.as_str()).or_default().extend(found);
        }
    }
    // Every digit in a table of docs/hardware/*.md lies in a claim's text, in a code span or in an
    // exempted table.
    let mut names: Vec<&String> = docs.keys().filter(|d| !d.starts_with("..")).collect();
    names.sort();
    for name in names {
        let doc = &docs[name];
        let spans = covered.get(name.as_str()).cloned().unwrap_or_default();
        let mut offset = 0;
        let mut table: Option<(&str, usize)> = None; // (header, rows seen)
        for line in doc.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            if !line.starts_with('|') {
                table = None;
                continue;
            }
            let (header, seen) = match table {
                None => (line.trim_end(), 0),
                Some((h, s)) => (h, s + 1),
            };
            table = Some((header, seen));
            if seen < 2 {
                continue; // the header and the separator
            }
            let exempt = |e: &Exempt| match (&e.header, &e.row) {
                (Some(h), _) => header.starts_with(h.as_str()),
                (None, Some(r)) => line.starts_with(r.as_str()),
                (None, None) => false,
            };
            if claims.exempt.iter().any(|e| &e.doc == name && exempt(e) && !e.why.is_empty()) {
                continue;
            }
            let code = code_spans(line);
            for (k, ch) in line.char_indices() {
                if !ch.is_ascii_digit() || code.iter().any(|&(a, b)| a < k && k < b) {
                    continue;
                }
                let at = start + k;
                if !spans.iter().any(|&(a, b)| a <= at && at < b) {
                    errors.push(format!("{name}: a figure in a table is covered by no claim:\n    {}", line.trim_end()));
                    break;
                }
            }
        }
    }
    errors
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hardware")
}

fn load() -> (Claims, HashMap<String, String>) {
    let root = root();
    let claims: Claims = toml::from_str(&std::fs::read_to_string(root.join("claims.toml")).unwrap()).unwrap();
    let mut docs = HashMap::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.insert(path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&path).unwrap());
        }
    }
    docs.insert("../../README.md".into(), std::fs::read_to_string(root.join("../../README.md")).unwrap());
    (claims, docs)
}

/// The figure check: every claim of docs/hardware/claims.toml recomputed from the committed JSON
/// is in its document, and every figure in a table of docs/hardware/*.md is a claim's.
#[test]
fn every_quoted_h100_figure_is_recomputed_from_the_committed_json() {
    let (claims, docs) = load();
    let errors = check(&root(), &claims, &docs);
    assert!(errors.is_empty(), "{} figure(s) do not hold:\n{}", errors.len(), errors.join("\n"));
}

/// The check fails on a wrong figure and on a table figure no claim covers.
#[test]
fn the_figure_check_fails_on_a_wrong_or_unclaimed_figure() {
    let (claims, mut docs) = load();
    let doc = docs.get_mut("h100-matmul.md").unwrap();
    assert!(doc.contains("| 4096³ | 46.23 ms"), "the figure this test changes");
    *doc = doc.replace("| 4096³ | 46.23 ms", "| 4096³ | 46.24 ms");
    let errors = check(&root(), &claims, &docs);
    assert_eq!(errors.len(), 2, "{}", errors.join("\n"));
    assert!(errors[0].contains("46.23 ms") && errors[0].contains("not in the document"), "{}", errors[0]);
    assert!(errors[1].contains("covered by no claim") && errors[1].contains("46.24 ms"), "{}", errors[1]);
    assert_eq!(format(1.23e-5, "e1").unwrap(), "1.2e-05");
    assert_eq!(format(2855.4, ",0").unwrap(), "2 855");
    assert_eq!(format(0.02345, "s2").unwrap(), "0.023");
    assert_eq!(format(152.24, "ms").unwrap(), "152.2");
}
