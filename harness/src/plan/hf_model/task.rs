//! Which of transformers.js's pipelines a model folder is for, read from its config.json: the
//! model class its `architectures` names (`BertModel`, `ViTForImageClassification`,
//! `WhisperForConditionalGeneration`), as Hugging Face's own `pipeline()` picks a task by the
//! class's head.

use kernels::hf_pipeline::Task;
use serde_json::Value;

/// The model types transformers.js's automatic-speech-recognition pipeline decodes as CTC models.
const CTC_MODEL_TYPES: [&str; 6] = ["wav2vec2", "wav2vec2-bert", "unispeech", "unispeech-sat", "hubert", "parakeet_ctc"];

/// The task harness runs for the model class `architecture` (of `config`) whose pipeline task is
/// `name`, if it runs it: automatic speech recognition only by a CTC head, whose pipeline is one
/// model run a clip, and of a model type transformers.js's pipeline decodes so.
pub fn harness_runs(name: &str, architecture: &str, config: &Value) -> Option<Task> {
    let task = Task::of_name(name)?;
    let ctc = architecture.ends_with("ForCTC") && config["model_type"].as_str().is_some_and(|t| CTC_MODEL_TYPES.contains(&t));
    (task != Task::SpeechRecognition || ctc).then_some(task)
}

/// Heads of a model class's name, and the pipeline task each is for, in the order they are
/// tried: the first whose suffix the name ends with wins.
const HEADS: [(&str, &str); 16] = [
    ("ForImageClassification", "image-classification"),
    ("ForAudioClassification", "audio-classification"),
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForQuestionAnswering", "question-answering"),
    ("ForMaskedLM", "fill-mask"),
    ("ForCausalLM", "text-generation"),
    ("LMHeadModel", "text-generation"),
    ("ForCTC", "automatic-speech-recognition"),
    ("ForSpeechSeq2Seq", "automatic-speech-recognition"),
    ("ForObjectDetection", "object-detection"),
    ("ForSemanticSegmentation", "image-segmentation"),
    ("ForUniversalSegmentation", "image-segmentation"),
    ("ForDepthEstimation", "depth-estimation"),
    ("ForVision2Seq", "image-to-text"),
    ("ForImageTextToText", "image-text-to-text"),
];

/// The pipeline task of the model class `architecture` (of a config.json `config`), as
/// transformers.js names it.
pub fn of_architecture(architecture: &str, config: &Value) -> &'static str {
    let speech = ["Whisper", "Speech2Text", "Moonshine"].iter().any(|p| architecture.starts_with(p));
    if speech {
        return "automatic-speech-recognition";
    }
    if let Some((_, task)) = HEADS.iter().find(|(head, _)| architecture.ends_with(head)) {
        return task;
    }
    if architecture.ends_with("ForConditionalGeneration") {
        return "text2text-generation";
    }
    if ["CLIP", "SigLIP", "Siglip"].iter().any(|p| architecture.starts_with(p)) {
        return "zero-shot-image-classification";
    }
    // A base model, no head: its hidden states, of text or of images.
    let vision = ["image_size", "num_channels", "patch_size"].iter().any(|k| config.get(k).is_some());
    match vision {
        true => "image-feature-extraction",
        false => "feature-extraction",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_is_the_task_of_its_head() {
        let text = serde_json::json!({"model_type": "bert", "vocab_size": 30522});
        let vision = serde_json::json!({"model_type": "vit", "image_size": 224, "num_channels": 3});
        for (class, config, task) in [
            ("BertModel", &text, "feature-extraction"),
            ("XLMRobertaModel", &text, "feature-extraction"),
            ("ViTModel", &vision, "image-feature-extraction"),
            ("ViTForImageClassification", &vision, "image-classification"),
            ("WhisperForConditionalGeneration", &text, "automatic-speech-recognition"),
            ("Wav2Vec2ForCTC", &text, "automatic-speech-recognition"),
            ("BertForSequenceClassification", &text, "text-classification"),
            ("DistilBertForTokenClassification", &text, "token-classification"),
            ("BertForMaskedLM", &text, "fill-mask"),
            ("LlamaForCausalLM", &text, "text-generation"),
            ("GPT2LMHeadModel", &text, "text-generation"),
            ("T5ForConditionalGeneration", &text, "text2text-generation"),
            ("CLIPModel", &text, "zero-shot-image-classification"),
            ("DetrForObjectDetection", &vision, "object-detection"),
        ] {
            assert_eq!(of_architecture(class, config), task, "{class}");
        }
    }

    #[test]
    fn speech_is_run_by_a_ctc_head_of_a_model_type_the_pipeline_decodes() {
        let wav2vec2 = serde_json::json!({"model_type": "wav2vec2"});
        let asr = "automatic-speech-recognition";
        assert_eq!(harness_runs(asr, "Wav2Vec2ForCTC", &wav2vec2), Some(Task::SpeechRecognition));
        assert_eq!(harness_runs(asr, "HubertForCTC", &serde_json::json!({"model_type": "hubert"})), Some(Task::SpeechRecognition));
        assert_eq!(harness_runs(asr, "WhisperForConditionalGeneration", &serde_json::json!({"model_type": "whisper"})), None);
        assert_eq!(harness_runs(asr, "Data2VecAudioForCTC", &serde_json::json!({"model_type": "data2vec-audio"})), None);
        assert_eq!(harness_runs("feature-extraction", "BertModel", &wav2vec2), Some(Task::FeatureExtraction));
        assert_eq!(harness_runs("fill-mask", "BertForMaskedLM", &wav2vec2), None);
    }
}
