//! Synthetic media for every synthetic turn (AIPerf's `ImageGenerator` with `--image-source
//! noise`, and its `AudioGenerator`): random-noise RGB images as PNG or JPEG, Gaussian-noise
//! PCM WAV clips. Each concern draws from its own named generator, with AIPerf's labels:
//! `dataset.image.dimensions`, `dataset.image.format`, `dataset.image.noise`,
//! `dataset.audio.duration`, `dataset.audio.format`, `dataset.audio.data`.

use inferbench_core::media_plan::{AudioPlan, ImageFormat, ImagePlan, MediaPlan};
use rand::{Rng, RngCore};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::{MediaRef, audio_content, data_url, png, wav};
use crate::error::WorkloadError;
use crate::synthetic::{rng_for, sample_positive_normal_integer};

/// Pixels of the largest image made (8192 × 8192): noise does not compress, so each costs
/// four base64 bytes a pixel in every body that carries it.
pub const MAX_PIXELS: u64 = 8192 * 8192;
/// Bytes of the largest audio clip made (256 MiB of PCM).
pub const MAX_AUDIO_BYTES: f64 = 256.0 * 1024.0 * 1024.0;
/// JPEG quality, as AIPerf asks of Pillow (with 4:4:4 sampling).
pub const JPEG_QUALITY: u8 = 85;

fn err(field: &'static str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::Plan {
        field,
        message: message.into(),
    }
}

/// Random-noise images of drawn sizes.
pub struct ImageSynth {
    plan: ImagePlan,
    dims: ChaCha8Rng,
    format: ChaCha8Rng,
    noise: ChaCha8Rng,
}

impl ImageSynth {
    pub fn new(plan: &ImagePlan, seed: u64) -> Result<Self, WorkloadError> {
        for (v, name) in [
            (plan.width_mean, "width_mean"),
            (plan.width_stddev, "width_stddev"),
            (plan.height_mean, "height_mean"),
            (plan.height_stddev, "height_stddev"),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(err(
                    "dataset.media.image",
                    format!("{name} must be a finite number >= 0, got {v}"),
                ));
            }
        }
        Ok(ImageSynth {
            plan: plan.clone(),
            dims: rng_for(seed, "dataset.image.dimensions"),
            format: rng_for(seed, "dataset.image.format"),
            noise: rng_for(seed, "dataset.image.noise"),
        })
    }

    /// One image: the format (drawn for `random`), the width then the height (AIPerf passes
    /// the integer parts of mean and stddev), then the pixels.
    pub fn make(&mut self) -> Result<MediaRef, WorkloadError> {
        let jpeg = match self.plan.format {
            ImageFormat::Png => false,
            ImageFormat::Jpeg => true,
            ImageFormat::Random => self.format.random_bool(0.5),
        };
        let mut side = |mean: f64, stddev: f64| {
            sample_positive_normal_integer(&mut self.dims, mean.trunc(), stddev.trunc()).max(1)
        };
        let w = side(self.plan.width_mean, self.plan.width_stddev);
        let h = side(self.plan.height_mean, self.plan.height_stddev);
        if w.saturating_mul(h) > MAX_PIXELS || (jpeg && w.max(h) > u64::from(u16::MAX)) {
            return Err(err(
                "dataset.media.image",
                format!(
                    "a {w}×{h} image is too large (at most {MAX_PIXELS} pixels, JPEG sides ≤ 65535)"
                ),
            ));
        }
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        self.noise.fill_bytes(&mut rgb);
        let (w, h) = (w as u32, h as u32);
        Ok(MediaRef::new(if jpeg {
            data_url("image/jpeg", &encode_jpeg(w, h, &rgb)?)
        } else {
            data_url("image/png", &png::encode_rgb(w, h, &rgb))
        }))
    }
}

fn encode_jpeg(w: u32, h: u32, rgb: &[u8]) -> Result<Vec<u8>, WorkloadError> {
    let mut out = Vec::new();
    let mut enc = jpeg_encoder::Encoder::new(&mut out, JPEG_QUALITY);
    enc.set_sampling_factor(jpeg_encoder::SamplingFactor::F_1_1);
    enc.encode(rgb, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| err("dataset.media.image", format!("JPEG encoding failed: {e}")))?;
    Ok(out)
}

/// Gaussian-noise PCM WAV clips of drawn lengths.
pub struct AudioSynth {
    plan: AudioPlan,
    duration: ChaCha8Rng,
    format: ChaCha8Rng,
    data: ChaCha8Rng,
}

impl AudioSynth {
    pub fn new(plan: &AudioPlan, seed: u64) -> Result<Self, WorkloadError> {
        if !(plan.length_mean.is_finite() && plan.length_mean >= 0.01) {
            return Err(err(
                "dataset.media.audio",
                format!(
                    "the audio length must be at least 0.01 seconds, got {}",
                    plan.length_mean
                ),
            ));
        }
        if !(plan.length_stddev.is_finite() && plan.length_stddev >= 0.0) {
            return Err(err("dataset.media.audio", "length stddev must be >= 0"));
        }
        if plan.sample_rates_khz.is_empty() || plan.depths.is_empty() {
            return Err(err(
                "dataset.media.audio",
                "sample rates and depths need at least one value",
            ));
        }
        if let Some(r) = plan
            .sample_rates_khz
            .iter()
            .find(|r| !(r.is_finite() && (**r * 1000.0) as u32 >= 1))
        {
            return Err(err(
                "dataset.media.audio",
                format!("sample rate {r} kHz: must be a positive number of kHz"),
            ));
        }
        if let Some(d) = plan.depths.iter().find(|d| ![8, 16, 24, 32].contains(*d)) {
            return Err(err(
                "dataset.media.audio",
                format!("bit depth {d}: supported depths are 8, 16, 24, 32"),
            ));
        }
        if !(1..=2).contains(&plan.channels) {
            return Err(err(
                "dataset.media.audio",
                format!("{} channels: 1 or 2", plan.channels),
            ));
        }
        Ok(AudioSynth {
            plan: plan.clone(),
            duration: rng_for(seed, "dataset.audio.duration"),
            format: rng_for(seed, "dataset.audio.format"),
            data: rng_for(seed, "dataset.audio.data"),
        })
    }

    /// One clip: its length (a normal draw kept at ≥ 0.01 s), its sample rate and depth,
    /// then `int(length × rate)` frames of N(0, 0.3) noise clipped to [-1, 1].
    pub fn make(&mut self) -> Result<MediaRef, WorkloadError> {
        let p = &self.plan;
        let seconds =
            sample_normal_at_least(&mut self.duration, p.length_mean, p.length_stddev, 0.01);
        let khz = p.sample_rates_khz[self.format.random_range(0..p.sample_rates_khz.len())];
        let bits = p.depths[self.format.random_range(0..p.depths.len())];
        // Python's int(): truncation, as AIPerf converts kHz.
        let rate = (khz * 1000.0) as u32;
        let frames = (seconds * f64::from(rate)) as usize;
        let n = frames * p.channels as usize;
        if n as f64 * f64::from(bits / 8) > MAX_AUDIO_BYTES {
            return Err(err(
                "dataset.media.audio",
                format!("a {seconds:.1} s clip at {rate} Hz is too large (at most 256 MiB of PCM)"),
            ));
        }
        let normal =
            Normal::new(0.0, 0.3).map_err(|e| err("dataset.media.audio", e.to_string()))?;
        let samples: Vec<f64> = (0..n).map(|_| normal.sample(&mut self.data)).collect();
        let bytes = wav::encode_pcm(rate, bits as u16, p.channels as u16, &samples);
        Ok(MediaRef {
            seconds: Some(seconds),
            ..MediaRef::new(audio_content("wav", &bytes))
        })
    }
}

/// A normal draw, redrawn until it is ≥ `lower` (at most 10,000 tries, then the mean kept at
/// `lower`: AIPerf's `sample_normal` with a lower bound).
fn sample_normal_at_least<R: Rng>(rng: &mut R, mean: f64, stddev: f64, lower: f64) -> f64 {
    if stddev > 0.0
        && let Ok(d) = Normal::new(mean, stddev)
    {
        for _ in 0..10_000 {
            let x = d.sample(rng);
            if x >= lower {
                return x;
            }
        }
    }
    mean.max(lower)
}

/// The synthetic media of a plan: images and audio for each synthetic turn.
pub struct MediaSynth {
    image: Option<(ImageSynth, usize)>,
    audio: Option<(AudioSynth, usize)>,
}

impl MediaSynth {
    pub fn new(plan: &MediaPlan, seed: u64) -> Result<Self, WorkloadError> {
        Ok(MediaSynth {
            image: if plan.image.enabled() {
                Some((ImageSynth::new(&plan.image, seed)?, plan.image.batch_size))
            } else {
                None
            },
            audio: if plan.audio.enabled() {
                Some((AudioSynth::new(&plan.audio, seed)?, plan.audio.batch_size))
            } else {
                None
            },
        })
    }

    pub fn is_on(&self) -> bool {
        self.image.is_some() || self.audio.is_some()
    }

    /// The images and audio clips of one turn (`--image-batch-size`, `--audio-batch-size`
    /// of each), images first.
    pub fn turn(&mut self) -> Result<(Vec<MediaRef>, Vec<MediaRef>), WorkloadError> {
        let mut images = Vec::new();
        if let Some((g, n)) = &mut self.image {
            for _ in 0..*n {
                images.push(g.make()?);
            }
        }
        let mut audios = Vec::new();
        if let Some((g, n)) = &mut self.audio {
            for _ in 0..*n {
                audios.push(g.make()?);
            }
        }
        Ok((images, audios))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn b64(s: &str) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD.decode(s).unwrap()
    }

    #[test]
    fn noise_png_has_the_drawn_size_and_repeats_with_the_seed() {
        let plan = ImagePlan {
            width_mean: 3.0,
            height_mean: 2.0,
            ..Default::default()
        };
        let a = ImageSynth::new(&plan, 7).unwrap().make().unwrap();
        let b = ImageSynth::new(&plan, 7).unwrap().make().unwrap();
        assert_eq!(a, b);
        let png = b64(a.content.strip_prefix("data:image/png;base64,").unwrap());
        assert_eq!(&png[16..24], &[0, 0, 0, 3, 0, 0, 0, 2]);
        let c = ImageSynth::new(&plan, 8).unwrap().make().unwrap();
        assert_ne!(a, c, "another seed, other pixels");
    }

    #[test]
    fn jpeg_and_random_formats() {
        let plan = ImagePlan {
            width_mean: 8.0,
            height_mean: 8.0,
            format: ImageFormat::Jpeg,
            ..Default::default()
        };
        let j = ImageSynth::new(&plan, 1).unwrap().make().unwrap();
        let bytes = b64(j.content.strip_prefix("data:image/jpeg;base64,").unwrap());
        assert_eq!(&bytes[..2], &[0xFF, 0xD8]);
        assert_eq!(&bytes[bytes.len() - 2..], &[0xFF, 0xD9]);
        let mut g = ImageSynth::new(
            &ImagePlan {
                format: ImageFormat::Random,
                ..plan
            },
            1,
        )
        .unwrap();
        let kinds: std::collections::HashSet<bool> = (0..20)
            .map(|_| g.make().unwrap().content.starts_with("data:image/png"))
            .collect();
        assert_eq!(kinds.len(), 2, "both formats drawn");
    }

    #[test]
    fn wav_clip_has_the_drawn_length_rate_and_depth() {
        let plan = AudioPlan {
            length_mean: 0.25,
            sample_rates_khz: vec![8.0],
            depths: vec![8],
            channels: 2,
            ..Default::default()
        };
        let m = AudioSynth::new(&plan, 3).unwrap().make().unwrap();
        assert_eq!(m.seconds, Some(0.25));
        let wav_bytes = b64(m.content.strip_prefix("wav,").unwrap());
        // 0.25 s × 8000 Hz = 2000 frames × 2 channels × 1 byte.
        assert_eq!(wav_bytes.len(), 44 + 4000);
        assert_eq!(&wav_bytes[22..24], &[2, 0]);
        assert_eq!(&wav_bytes[24..28], &8000u32.to_le_bytes());
        assert_eq!(&wav_bytes[34..36], &[8, 0]);
        assert_eq!(wav::duration_seconds(&wav_bytes), Some(0.25));
    }

    #[test]
    fn bad_audio_plans_are_refused() {
        let bad = |p: AudioPlan| AudioSynth::new(&p, 1).err().unwrap().to_string();
        let base = AudioPlan {
            length_mean: 1.0,
            ..Default::default()
        };
        assert!(
            bad(AudioPlan {
                length_mean: 0.005,
                ..base.clone()
            })
            .contains("at least 0.01 seconds")
        );
        assert!(
            bad(AudioPlan {
                depths: vec![12],
                ..base.clone()
            })
            .contains("bit depth 12")
        );
        assert!(
            bad(AudioPlan {
                channels: 3,
                ..base.clone()
            })
            .contains("3 channels")
        );
        assert!(
            bad(AudioPlan {
                sample_rates_khz: vec![0.0],
                ..base
            })
            .contains("sample rate 0 kHz")
        );
    }

    #[test]
    fn batches_per_turn() {
        let plan = MediaPlan {
            image: ImagePlan {
                width_mean: 2.0,
                height_mean: 2.0,
                batch_size: 3,
                ..Default::default()
            },
            audio: AudioPlan {
                length_mean: 0.01,
                batch_size: 0,
                ..Default::default()
            },
        };
        let mut g = MediaSynth::new(&plan, 5).unwrap();
        let (i, a) = g.turn().unwrap();
        assert_eq!((i.len(), a.len()), (3, 0));
        assert_ne!(i[0], i[1]);
    }
}
