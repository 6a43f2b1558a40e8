//! An image model folder's processor, natively: what harness reads of its
//! preprocessor_config.json to make the images transformers.js's image processor leaves as they
//! are (the size it resizes to, so its resize is the identity) and to normalize their pixels as it
//! does ([`kernels::hf_pipeline::pixel_values`]), with transformers.js's defaults where the file
//! is silent (`do_rescale` true, `rescale_factor` 1/255, `do_normalize` false).

use kernels::hf_pipeline::Normalization;
use serde::Deserialize;
use std::path::Path;

/// The images an image processor takes as they are, and how it normalizes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Processor {
    /// Pixels down.
    pub height: u64,
    /// Pixels across.
    pub width: u64,
    /// Its rescaling and normalization.
    pub norm: Normalization,
}

/// What transformers.js's `ImageProcessor` reads of preprocessor_config.json, as far as harness
/// follows it.
#[derive(Debug, Deserialize)]
struct Config {
    size: Option<Size>,
    do_rescale: Option<bool>,
    rescale_factor: Option<f64>,
    do_normalize: Option<bool>,
    image_mean: Option<PerChannel>,
    image_std: Option<PerChannel>,
    do_center_crop: Option<bool>,
    crop_size: Option<Size>,
}

/// A size as image processors write it: `{"height": H, "width": W}`, `{"shortest_edge": S}`
/// (a square image of S is left as it is) or a number.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Size {
    Square(u64),
    HeightWidth { height: u64, width: u64 },
    ShortestEdge { shortest_edge: u64 },
}

impl Size {
    fn height_width(&self) -> (u64, u64) {
        match *self {
            Size::Square(s) | Size::ShortestEdge { shortest_edge: s } => (s, s),
            Size::HeightWidth { height, width } => (height, width),
        }
    }
}

/// A mean or deviation: one for all channels, or one a channel.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum PerChannel {
    All(f64),
    Each(Vec<f64>),
}

impl PerChannel {
    fn channels(&self, name: &str) -> Result<[f64; 3], String> {
        match self {
            PerChannel::All(v) => Ok([*v; 3]),
            PerChannel::Each(v) => <[f64; 3]>::try_from(v.as_slice()).map_err(|_| format!("gives `{name}` {} values; an RGB image has 3 channels", v.len())),
        }
    }
}

impl Processor {
    /// The processor of the preprocessor_config.json at `path`, or what harness cannot follow.
    pub fn read(path: &Path) -> Result<Processor, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))?;
        let config: Config = serde_json::from_str(&text).map_err(|e| format!("is not an image processor's config: {e}"))?;
        let (height, width) = config.size.as_ref().map(Size::height_width).filter(|&(h, w)| h > 0 && w > 0).ok_or("gives no `size` (`{\"height\": 224, \"width\": 224}`) to resize images to, which harness makes its images at so that the resize leaves them as they are; save the model's image processor (`AutoImageProcessor.from_pretrained(MODEL).save_pretrained(DIR)`)")?;
        if let Some(crop) = config.crop_size.as_ref().filter(|_| config.do_center_crop == Some(true)).map(Size::height_width).filter(|&crop| crop != (height, width)) {
            return Err(format!("crops images of {height}×{width} to {}×{}, which harness does not do yet; it runs processors that resize only (`do_center_crop: false`)", crop.0, crop.1));
        }
        let rescale = match config.do_rescale.unwrap_or(true) {
            true => config.rescale_factor.unwrap_or(1.0 / 255.0),
            false => 1.0,
        };
        let (mean, std) = match config.do_normalize.unwrap_or(false) {
            true => {
                let missing = |name: &str| format!("sets `do_normalize` without `{name}`");
                let mean = config.image_mean.as_ref().ok_or_else(|| missing("image_mean"))?.channels("image_mean")?;
                let std = config.image_std.as_ref().ok_or_else(|| missing("image_std"))?.channels("image_std")?;
                if std.iter().any(|&s| s == 0.0 || !s.is_finite()) {
                    return Err(format!("gives `image_std` {std:?}; each must be a non-zero number"));
                }
                (mean, std)
            }
            false => ([0.0; 3], [1.0; 3]),
        };
        Ok(Processor { height, width, norm: Normalization { rescale, mean, std } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Processor, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preprocessor_config.json");
        std::fs::write(&path, json).unwrap();
        Processor::read(&path)
    }

    #[test]
    fn a_processor_is_read_with_transformers_js_defaults() {
        // As transformers' ViTImageProcessor(size={"height": 32, "width": 32}) saves it.
        let vit = Processor::read(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-models/tiny-vit/preprocessor_config.json")).unwrap();
        assert_eq!(vit, Processor { height: 32, width: 32, norm: Normalization { rescale: 1.0 / 255.0, mean: [0.5; 3], std: [0.5; 3] } });
        let edge = read(r#"{"size": {"shortest_edge": 24}, "do_normalize": true, "image_mean": 0.5, "image_std": [0.25, 0.5, 1.0]}"#).unwrap();
        assert_eq!((edge.height, edge.width, edge.norm.mean, edge.norm.std), (24, 24, [0.5; 3], [0.25, 0.5, 1.0]));
        // transformers.js does not normalize unless told to, and rescales unless told not to.
        let plain = read(r#"{"size": 16, "do_rescale": false}"#).unwrap();
        assert_eq!(plain.norm, Normalization { rescale: 1.0, mean: [0.0; 3], std: [1.0; 3] });
        assert_eq!(read(r#"{"size": 16}"#).unwrap().norm.rescale, 1.0 / 255.0);
    }

    #[test]
    fn what_harness_cannot_follow_is_refused_naming_it() {
        assert!(read("{}").unwrap_err().contains("gives no `size`"));
        assert!(read(r#"{"size": 32, "do_center_crop": true, "crop_size": 24}"#).unwrap_err().contains("crops images of 32×32 to 24×24"));
        assert!(read(r#"{"size": 32, "do_center_crop": true, "crop_size": 32}"#).is_ok());
        assert!(read(r#"{"size": 32, "do_normalize": true}"#).unwrap_err().contains("without `image_mean`"));
        assert!(read(r#"{"size": 32, "do_normalize": true, "image_mean": [0.5, 0.5], "image_std": 1}"#).unwrap_err().contains("2 values"));
        assert!(read("[").unwrap_err().contains("is not an image processor's config"));
    }

    use std::path::PathBuf;
}
