//! A speech model folder's feature extractor, natively: what harness reads of its
//! preprocessor_config.json to make the clips transformers.js's `Wav2Vec2FeatureExtractor` takes
//! (at its sampling rate, so nothing is resampled) and to normalize them as it does
//! ([`kernels::hf_pipeline::input_values`]), with transformers.js's default where the file is
//! silent (`do_normalize` false).

use serde::Deserialize;
use std::path::Path;

/// How long each clip a case feeds is, in seconds.
pub const CLIP_SECONDS: u64 = 1;

/// The clips a feature extractor takes, and how it normalizes them.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureExtractor {
    /// Samples a second.
    pub sampling_rate: u64,
    /// Whether each clip is brought to mean 0 and variance 1.
    pub normalize: bool,
}

/// What transformers.js's `Wav2Vec2FeatureExtractor` reads of preprocessor_config.json.
#[derive(Debug, Deserialize)]
struct Config {
    feature_extractor_type: Option<String>,
    sampling_rate: Option<u64>,
    do_normalize: Option<bool>,
    feature_size: Option<u64>,
}

/// The feature extractor whose raw-waveform inputs harness makes.
const WAV2VEC2: &str = "Wav2Vec2FeatureExtractor";

impl FeatureExtractor {
    /// Reads the preprocessor_config.json at `path`; a feature extractor other than Wav2Vec2's
    /// (a spectrogram's, say) is refused, naming it.
    pub fn read(path: &Path) -> Result<FeatureExtractor, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))?;
        let config: Config = serde_json::from_str(&text).map_err(|e| format!("is not a feature extractor's config: {e}"))?;
        match config.feature_extractor_type.as_deref() {
            Some(WAV2VEC2) => {}
            Some(other) => return Err(format!("names the feature extractor {other}; harness makes the raw waveforms {WAV2VEC2} takes, as CTC models such as Wav2Vec2ForCTC and HubertForCTC are fed")),
            None => return Err(format!("names no `feature_extractor_type`; save the model's feature extractor beside it (`AutoFeatureExtractor.from_pretrained(MODEL).save_pretrained(DIR)`), which writes {WAV2VEC2}")),
        }
        if config.feature_size.is_some_and(|f| f != 1) {
            return Err(format!("has `feature_size` {}; a waveform is one value a sample", config.feature_size.unwrap_or_default()));
        }
        let sampling_rate = config.sampling_rate.filter(|&r| r > 0).ok_or("names no `sampling_rate`, the rate of the clips the model takes")?;
        Ok(FeatureExtractor { sampling_rate, normalize: config.do_normalize.unwrap_or(false) })
    }

    /// Samples a clip: [`CLIP_SECONDS`] at its rate.
    pub fn samples(&self) -> u64 {
        self.sampling_rate * CLIP_SECONDS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<FeatureExtractor, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preprocessor_config.json");
        std::fs::write(&path, json).unwrap();
        FeatureExtractor::read(&path)
    }

    #[test]
    fn wav2vec2s_extractor_is_read_and_others_refused_by_name() {
        let f = read(r#"{"feature_extractor_type": "Wav2Vec2FeatureExtractor", "sampling_rate": 16000, "do_normalize": true, "feature_size": 1}"#).unwrap();
        assert_eq!((f.sampling_rate, f.normalize, f.samples()), (16000, true, 16000));
        let f = read(r#"{"feature_extractor_type": "Wav2Vec2FeatureExtractor", "sampling_rate": 8000}"#).unwrap();
        assert!(!f.normalize, "transformers.js's default");
        let err = read(r#"{"feature_extractor_type": "WhisperFeatureExtractor", "sampling_rate": 16000}"#).unwrap_err();
        assert!(err.contains("WhisperFeatureExtractor") && err.contains("Wav2Vec2FeatureExtractor"), "{err}");
        let err = read(r#"{"sampling_rate": 16000}"#).unwrap_err();
        assert!(err.contains("no `feature_extractor_type`") && err.contains("save_pretrained"), "{err}");
        let err = read(r#"{"feature_extractor_type": "Wav2Vec2FeatureExtractor"}"#).unwrap_err();
        assert!(err.contains("no `sampling_rate`"), "{err}");
    }
}
