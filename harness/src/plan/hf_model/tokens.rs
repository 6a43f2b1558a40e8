//! A model folder's tokenizer, natively: the tokenizers crate on its tokenizer.json, and a batch
//! padded and cut as transformers.js's tokenizer pads and cuts it when its pipeline calls it
//! (`{padding: true, truncation: true}`), by what it reads of the folder's tokenizer_config.json.

use serde::Deserialize;
use std::path::Path;
use tokenizers::{Encoding, Tokenizer};

/// Each of `sentences` as the tokenizer.json at `path` tokenizes it, with its special tokens
/// (`[CLS]`, `[SEP]`), neither padded nor cut: the file's own padding and truncation are what a
/// Python caller gets, not what transformers.js does. Returns the tokenizer too.
pub fn encode(path: &Path, sentences: &[&str]) -> Result<(Tokenizer, Vec<Encoding>), String> {
    let bad = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| bad(&e))?;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|e| bad(&e))?;
    let encodings = sentences.iter().map(|s| tokenizer.encode(*s, true).map_err(|e| bad(&e))).collect::<Result<_, _>>()?;
    Ok((tokenizer, encodings))
}

/// Sentences as a model is fed them: every row as long as the longest, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// `input_ids`.
    pub ids: Vec<i64>,
    /// `attention_mask`: 1 for a token, 0 for padding.
    pub mask: Vec<i64>,
    /// `token_type_ids`.
    pub types: Vec<i64>,
    /// Sentences.
    pub rows: u64,
    /// Tokens a row.
    pub seq: u64,
}

impl Batch {
    /// The values of the model input called `name`, where the tokenizer gives one of that name.
    pub fn input(&self, name: &str) -> Option<&[i64]> {
        match name {
            "input_ids" => Some(&self.ids),
            "attention_mask" => Some(&self.mask),
            "token_type_ids" => Some(&self.types),
            _ => None,
        }
    }
}

/// The inputs [`Batch::input`] gives, by name.
pub const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

/// What transformers.js's tokenizer reads of tokenizer_config.json to pad and cut a batch.
#[derive(Debug, Default, Deserialize)]
struct TokenizerConfig {
    /// Longest row; none: no limit.
    model_max_length: Option<f64>,
    pad_token: Option<Token>,
    /// The padding where there is no `pad_token`.
    eos_token: Option<Token>,
    /// `right` (the default) or `left`.
    padding_side: Option<String>,
}

/// A special token, as text or as an `AddedToken` object.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Token {
    Text(String),
    Added { content: String },
}

impl Token {
    fn text(&self) -> &str {
        match self {
            Token::Text(t) | Token::Added { content: t } => t,
        }
    }
}

/// `texts` tokenized by the folder's tokenizer.json, padded to the longest with the pad token
/// (on the side tokenizer_config.json says) and cut at its `model_max_length`, as transformers.js
/// does it.
pub fn batch(folder: &Path, texts: &[String]) -> Result<Batch, String> {
    let sentences: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (tokenizer, encodings) = encode(&folder.join("tokenizer.json"), &sentences)?;
    let config_path = folder.join("tokenizer_config.json");
    let config: TokenizerConfig = match std::fs::read_to_string(&config_path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", config_path.display()))?,
        Err(_) => TokenizerConfig::default(),
    };
    let limit = config.model_max_length.filter(|l| l.is_finite() && *l >= 1.0).map_or(usize::MAX, |l| l as usize);
    let seq = encodings.iter().map(Encoding::len).max().unwrap_or(0).min(limit);
    let left = config.padding_side.as_deref() == Some("left");
    let pad = match config.pad_token.as_ref().or(config.eos_token.as_ref()) {
        Some(token) => tokenizer.token_to_id(token.text()).map(i64::from),
        None => None,
    };
    let mut out = Batch { ids: Vec::new(), mask: Vec::new(), types: Vec::new(), rows: encodings.len() as u64, seq: seq as u64 };
    for (e, text) in encodings.iter().zip(texts) {
        let len = e.len().min(seq);
        let padding = seq - len;
        let pad = match (padding, pad) {
            (0, _) => 0,
            (_, Some(id)) => id,
            (_, None) => return Err(format!("{}: no pad_token (nor eos_token) that tokenizer.json knows, which transformers.js pads a batch with (`{text}` is shorter than the longest sentence)", config_path.display())),
        };
        let row = |values: &[u32], fill: i64, into: &mut Vec<i64>| {
            let values = values[..len].iter().map(|&v| i64::from(v));
            let fill = std::iter::repeat_n(fill, padding);
            match left {
                true => into.extend(fill.chain(values)),
                false => into.extend(values.chain(fill)),
            }
        };
        row(e.get_ids(), pad, &mut out.ids);
        row(e.get_attention_mask(), 0, &mut out.mask);
        row(e.get_type_ids(), 0, &mut out.types);
    }
    Ok(out)
}
