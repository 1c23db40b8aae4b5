//! Synthetic images and audio sent with every synthetic turn: AIPerf's `--image-*` and
//! `--audio-*` flags (reference §1.6), checked by the binary and read by
//! `inferbench_workload::media`. Off unless a width and height, or an audio length, are
//! given (AIPerf's rule). See `docs/datasets.md`, "Images, audio and video".

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct MediaPlan {
    #[serde(default, skip_serializing_if = "ImagePlan::is_off")]
    pub image: ImagePlan,
    #[serde(default, skip_serializing_if = "AudioPlan::is_off")]
    pub audio: AudioPlan,
}

impl MediaPlan {
    pub fn is_default(&self) -> bool {
        *self == MediaPlan::default()
    }
}

/// `--image-format`: PNG, JPEG, or either drawn per image.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
    Random,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ImagePlan {
    /// `--image-width-mean`/`-stddev`, `--image-height-mean`/`-stddev` (pixels).
    pub width_mean: f64,
    pub width_stddev: f64,
    pub height_mean: f64,
    pub height_stddev: f64,
    /// `--image-batch-size`: images per turn (default 1; 0 sends none).
    pub batch_size: usize,
    pub format: ImageFormat,
}

impl Default for ImagePlan {
    fn default() -> Self {
        ImagePlan {
            width_mean: 0.0,
            width_stddev: 0.0,
            height_mean: 0.0,
            height_stddev: 0.0,
            batch_size: 1,
            format: ImageFormat::Png,
        }
    }
}

impl ImagePlan {
    /// AIPerf includes images when both mean dimensions are above 0.
    pub fn enabled(&self) -> bool {
        self.width_mean > 0.0 && self.height_mean > 0.0
    }

    fn is_off(&self) -> bool {
        *self == ImagePlan::default()
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AudioPlan {
    /// `--audio-length-mean`/`-stddev` (seconds).
    pub length_mean: f64,
    pub length_stddev: f64,
    /// `--audio-batch-size`: clips per turn (default 1; 0 sends none).
    pub batch_size: usize,
    /// `--audio-sample-rates` in kHz (one drawn per clip), default [16].
    pub sample_rates_khz: Vec<f64>,
    /// `--audio-depths` in bits (one drawn per clip), default [16].
    pub depths: Vec<u32>,
    /// `--audio-num-channels`, 1 or 2.
    pub channels: u32,
}

impl Default for AudioPlan {
    fn default() -> Self {
        AudioPlan {
            length_mean: 0.0,
            length_stddev: 0.0,
            batch_size: 1,
            sample_rates_khz: vec![16.0],
            depths: vec![16],
            channels: 1,
        }
    }
}

impl AudioPlan {
    /// AIPerf includes audio when the mean length is above 0.
    pub fn enabled(&self) -> bool {
        self.length_mean > 0.0
    }

    fn is_off(&self) -> bool {
        *self == AudioPlan::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_off_and_serializes_to_nothing() {
        let p = MediaPlan::default();
        assert!(!p.image.enabled() && !p.audio.enabled());
        assert_eq!(serde_json::to_string(&p).unwrap(), "{}");
        let back: MediaPlan = serde_json::from_str("{}").unwrap();
        assert_eq!(back, p);
    }
}
