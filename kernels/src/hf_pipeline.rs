//! A Hugging Face model folder run through transformers.js's pipeline for its task (`harness run
//! --hf-model DIR`, on `--platform transformers`): the folder's files the page hands
//! transformers.js, the sentences it is called on, and what of the ONNX file's outputs the
//! pipeline turns into its own. The ONNX file itself is an [`crate::own_model::OwnModel`], whose
//! inputs are the sentences as the folder's tokenizer gives them, for the reference.

use serde::{Deserialize, Serialize};

/// A transformers.js pipeline task harness runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// `pipeline('feature-extraction')` called with `{pooling: 'mean', normalize: true}`:
    /// sentence embeddings, the model's hidden states mean-pooled over the attention mask and
    /// L2-normalised.
    FeatureExtraction,
}

impl Task {
    /// Its name, as transformers.js's `pipeline()` takes it and case ids show it.
    pub fn name(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "feature-extraction",
        }
    }

    /// The task of transformers.js's pipeline called `name`, where harness runs it.
    pub fn of_name(name: &str) -> Option<Task> {
        match name {
            "feature-extraction" => Some(Task::FeatureExtraction),
            _ => None,
        }
    }

    /// What the pipeline returns, as a failed check names it.
    pub fn output(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "embeddings",
        }
    }

    /// What the pipeline does after the model, as the reference does it natively.
    pub fn post_processing(self) -> &'static str {
        match self {
            Task::FeatureExtraction => "mean pooling over the attention mask and L2 normalisation, in f64",
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
    /// The sentences each call embeds, one a row of the output.
    pub texts: Vec<String>,
    /// The ONNX output the pipeline reads (`last_hidden_state`).
    pub output: String,
    /// Values a row of what the pipeline returns (the embedding's width).
    pub width: u64,
}

impl HfPipeline {
    /// The files the page fetches for it, by key, and where each is on the host.
    pub fn served(&self) -> impl Iterator<Item = (String, std::path::PathBuf)> + '_ {
        self.files.iter().map(|f| (f.key.clone(), std::path::Path::new(&self.folder).join(&f.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_named_as_transformers_js_names_it() {
        assert_eq!(Task::of_name("feature-extraction"), Some(Task::FeatureExtraction));
        assert_eq!(Task::FeatureExtraction.name(), "feature-extraction");
        assert_eq!(serde_json::to_string(&Task::FeatureExtraction).unwrap(), "\"feature-extraction\"");
        assert_eq!(Task::of_name("image-classification"), None);
    }
}
