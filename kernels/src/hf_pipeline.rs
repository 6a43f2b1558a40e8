//! A Hugging Face model folder run through transformers.js's pipeline for its task (`harness run
//! --hf-model DIR`, on `--platform transformers`): the folder's files the page hands
//! transformers.js, the sentences or images it is called on, and what of the ONNX file's outputs
//! the pipeline turns into its own. The ONNX file itself is an [`crate::own_model::OwnModel`],
//! whose inputs are the sentences as the folder's tokenizer gives them, the images as its image
//! processor gives them ([`images`], [`pixel_values`]) or the audio clips as its feature extractor
//! gives them ([`audio`], [`input_values`]), for the reference.

use serde::{Deserialize, Serialize};

/// A transformers.js pipeline task harness runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// `pipeline('feature-extraction')` called with `{pooling: 'mean', normalize: true}`:
    /// sentence embeddings, the model's hidden states mean-pooled over the attention mask and
    /// L2-normalised.
    FeatureExtraction,
    /// `pipeline('image-classification')` called with `{top_k: num_labels}`: each image's
    /// softmax scores over every label, handed back in label-id order.
    ImageClassification,
    /// `pipeline('automatic-speech-recognition')` on a CTC model (Wav2Vec2ForCTC, HubertForCTC):
    /// a transcript per clip, the greedy decode of each frame's logits. The logits of each
    /// clip's model run are what is checked: the transcript is the argmax of each frame, which
    /// rounding the spec allows can flip where two tokens tie.
    #[serde(rename = "automatic-speech-recognition")]
    SpeechRecognition,
}

/// What a pipeline is called on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feeds {
    /// Sentences.
    Texts,
    /// RGB images ([`images`]).
    Images,
    /// Mono audio clips ([`audio`]).
    Audio,
}

impl Task {
    /// Its name, as transformers.js's `pipeline()` takes it and case ids show it.
    pub fn name(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "feature-extraction",
            Task::ImageClassification => "image-classification",
            Task::SpeechRecognition => "automatic-speech-recognition",
        }
    }

    /// The task of transformers.js's pipeline called `name`, where harness runs it.
    pub fn of_name(name: &str) -> Option<Task> {
        match name {
            "feature-extraction" => Some(Task::FeatureExtraction),
            "image-classification" => Some(Task::ImageClassification),
            "automatic-speech-recognition" => Some(Task::SpeechRecognition),
            _ => None,
        }
    }

    /// What the pipeline returns, as a failed check names it.
    pub fn output(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "embeddings",
            Task::ImageClassification => "scores",
            Task::SpeechRecognition => "logits",
        }
    }

    /// What the pipeline does after the model, as the reference does it natively.
    pub fn post_processing(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "mean pooling over the attention mask and L2 normalisation, in f64",
            Task::ImageClassification => "softmax over each image's logits, in f64",
            Task::SpeechRecognition => "each frame's logits as the model gives them, which the pipeline's greedy CTC decode reads",
        }
    }

    /// What it is called on.
    pub fn feeds(self) -> Feeds {
        match self {
            Task::FeatureExtraction => Feeds::Texts,
            Task::ImageClassification => Feeds::Images,
            Task::SpeechRecognition => Feeds::Audio,
        }
    }

    /// The names of the phases a call is timed in, as the page times them.
    pub fn phases(self) -> [&'static str; 3] {
        match self {
            Task::FeatureExtraction => ["tokenize", "run", "pool"],
            Task::ImageClassification | Task::SpeechRecognition => ["preprocess", "run", "postprocess"],
        }
    }
}

/// A file of the model folder besides its ONNX file and external data (`config.json`,
/// `tokenizer.json`, …), by its name in the folder and the key the harness serves it under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderFile {
    /// Its name in the folder.
    pub name: String,
    /// The key the harness server serves it under.
    pub key: String,
}

/// How an ONNX file of a Hugging Face folder is run: the pipeline of its task, on sentences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HfPipeline {
    /// The task, read from the folder's config.json.
    pub task: Task,
    /// The folder on the host (absolute): a replayed or resumed run serves its files again.
    pub folder: String,
    /// The folder's files transformers.js reads beside the ONNX file.
    pub files: Vec<FolderFile>,
    /// The sentences each call embeds, one a row of the output (none for a task on images,
    /// whose images are made from the case's seed, [`images`]).
    pub texts: Vec<String>,
    /// The ONNX output the pipeline reads (`last_hidden_state`, `logits`).
    pub output: String,
    /// Values a row of what the pipeline returns (the embedding's width, the labels).
    pub width: u64,
}

impl HfPipeline {
    /// The files the page fetches for it, by key, and where each is on the host.
    pub fn served(&self) -> impl Iterator<Item = (String, std::path::PathBuf)> + '_ {
        self.files.iter().map(|f| (f.key.clone(), std::path::Path::new(&self.folder).join(&f.name)))
    }
}

/// The stream of the case's [`crate::prng::Prng`] that images are drawn from.
const IMAGE_STREAM: u64 = 0x1_3a6e_0000;

/// `count` RGB images of `height` × `width` for the case seeded `seed`, each pixel's channels
/// uniform in 0..=255, one image after another, each row by row with its channels interleaved
/// (HWC: what transformers.js's `RawImage` holds). Integer draws only, so the page (WASM) and
/// the host make the same bytes.
pub fn images(seed: u64, count: usize, height: usize, width: usize) -> Vec<u8> {
    let mut prng = crate::prng::Prng::new(seed, IMAGE_STREAM);
    (0..count * height * width * 3).map(|_| (prng.next_u64() >> 56) as u8).collect()
}

/// The stream of the case's [`crate::prng::Prng`] that audio is drawn from.
const AUDIO_STREAM: u64 = 0x1_a0d1_0000;

/// `count` mono clips of `samples` each for the case seeded `seed`, one after another: 16-bit
/// PCM samples, uniform over their range, as f32 in -1..1 (each exact in f32, so the page and the
/// host hold the same bits).
pub fn audio(seed: u64, count: usize, samples: usize) -> Vec<f32> {
    let mut prng = crate::prng::Prng::new(seed, AUDIO_STREAM);
    (0..count * samples).map(|_| f32::from((prng.next_u64() >> 48) as u16 as i16) / 32768.0).collect()
}

/// `clips` ([`audio`]: clips of `samples` one after another) as a CTC model's `input_values`: each
/// clip to mean 0 and variance 1 where `normalize` (the feature extractor's `do_normalize`), in
/// f64 and in the order transformers.js's `Wav2Vec2FeatureExtractor` sums, each value rounded to
/// f32 as its `Float32Array` holds it; else as they are.
pub fn input_values(clips: &[f32], samples: usize, normalize: bool) -> Vec<f32> {
    if !normalize {
        return clips.to_vec();
    }
    clips
        .chunks(samples.max(1))
        .flat_map(|clip| {
            let len = clip.len() as f64;
            let mean = clip.iter().fold(0.0, |a, &b| a + f64::from(b)) / len;
            let variance = clip.iter().fold(0.0, |a, &b| a + (f64::from(b) - mean).powi(2)) / len;
            let scale = (variance + 1e-7).sqrt();
            clip.iter().map(move |&x| ((f64::from(x) - mean) / scale) as f32)
        })
        .collect()
}

/// How an image processor turns a pixel's bytes into a model's values, as its
/// preprocessor_config.json says and transformers.js reads it: `value * rescale` (its
/// `rescale_factor` where `do_rescale`, else 1), then `(value - mean[c]) / std[c]` (its
/// `image_mean` and `image_std` where `do_normalize`, else 0 and 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Normalization {
    /// The factor each byte is multiplied by.
    pub rescale: f64,
    /// Each channel's mean, subtracted after rescaling.
    pub mean: [f64; 3],
    /// Each channel's deviation, divided by last.
    pub std: [f64; 3],
}

/// `pixels` ([`images`]: HWC bytes of `count` images of `height` × `width`) as a model's
/// `pixel_values`: rescaled and normalized by `norm`, laid out NCHW. Rounded to f32 after each
/// step, as transformers.js's processor does in its `Float32Array`, so the values are the bits it
/// feeds the model.
pub fn pixel_values(pixels: &[u8], height: usize, width: usize, norm: &Normalization) -> Vec<f32> {
    let plane = height * width;
    let mut out = vec![0.0f32; pixels.len()];
    for (n, image) in pixels.chunks(plane * 3).enumerate() {
        for (p, rgb) in image.chunks(3).enumerate() {
            for (c, &byte) in rgb.iter().enumerate() {
                let rescaled = (norm.rescale * f64::from(byte)) as f32;
                out[(n * 3 + c) * plane + p] = ((f64::from(rescaled) - norm.mean[c]) / norm.std[c]) as f32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_named_as_transformers_js_names_it() {
        assert_eq!(Task::of_name("feature-extraction"), Some(Task::FeatureExtraction));
        assert_eq!(Task::FeatureExtraction.name(), "feature-extraction");
        assert_eq!(serde_json::to_string(&Task::FeatureExtraction).unwrap(), "\"feature-extraction\"");
        assert_eq!(Task::of_name("image-classification"), Some(Task::ImageClassification));
        assert_eq!(serde_json::to_string(&Task::ImageClassification).unwrap(), "\"image-classification\"");
        assert_eq!(Task::of_name("automatic-speech-recognition"), Some(Task::SpeechRecognition));
        assert_eq!(Task::SpeechRecognition.feeds(), Feeds::Audio);
        assert_eq!(serde_json::to_string(&Task::SpeechRecognition).unwrap(), "\"automatic-speech-recognition\"");
        assert_eq!(Task::of_name("text-generation"), None);
    }

    #[test]
    fn images_are_seeded_bytes_and_pixel_values_their_normalized_planes() {
        let bytes = images(5, 2, 4, 3);
        assert_eq!(bytes.len(), 2 * 4 * 3 * 3);
        assert_eq!(bytes, images(5, 2, 4, 3), "the same bytes for the same seed");
        assert_ne!(bytes, images(6, 2, 4, 3));
        // Spread over the bytes' range.
        let mut all = images(1, 4, 32, 32);
        all.sort_unstable();
        assert!(all[0] < 8 && all[all.len() - 1] > 247, "{} {}", all[0], all[all.len() - 1]);
        // ViTImageProcessor's: 1/255, mean 0.5, std 0.5, so 0 is -1 and 255 is 1.
        let vit = Normalization { rescale: 1.0 / 255.0, mean: [0.5; 3], std: [0.5; 3] };
        let pixels = [0u8, 255, 51, 255, 0, 102];
        let values = pixel_values(&pixels, 1, 2, &vit);
        // NCHW: the red plane (0, 255), then green (255, 0), then blue (51, 102).
        assert_eq!(&values[..4], [-1.0, 1.0, 1.0, -1.0]);
        assert!((values[4] - (0.2 - 0.5) / 0.5).abs() < 1e-6 && (values[5] - (0.4 - 0.5) / 0.5).abs() < 1e-6, "{values:?}");
        // As transformers.js rounds: the rescaled byte to f32 first.
        let odd = Normalization { rescale: 1.0 / 255.0, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
        let v = pixel_values(&[77, 0, 0], 1, 1, &odd)[0];
        assert_eq!(v, ((f64::from((77.0f64 / 255.0) as f32) - 0.485) / 0.229) as f32);
    }

    #[test]
    fn audio_is_seeded_pcm_and_input_values_each_clip_normalized() {
        let clips = audio(3, 2, 1000);
        assert_eq!(clips, audio(3, 2, 1000), "the same samples for the same seed");
        assert_ne!(clips, audio(4, 2, 1000));
        assert!(clips.iter().all(|v| (-1.0..1.0).contains(v) && (v * 32768.0).fract() == 0.0));
        let values = input_values(&clips, 1000, true);
        for clip in values.chunks(1000) {
            let mean = clip.iter().map(|&v| f64::from(v)).sum::<f64>() / 1000.0;
            let variance = clip.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / 1000.0;
            assert!(mean.abs() < 1e-6 && (variance - 1.0).abs() < 1e-5, "{mean} {variance}");
        }
        assert_eq!(values[..1000], input_values(&clips[..1000], 1000, true), "a clip is normalized alone, whatever follows it");
        assert_eq!(input_values(&clips, 1000, false), clips);
    }
}
