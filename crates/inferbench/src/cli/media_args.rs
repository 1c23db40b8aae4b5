//! `profile` flags: AIPerf's synthetic image, audio and video inputs (reference §1.6), and
//! their checks (docs/datasets.md, "Images, audio and video"). Video synthesis is refused
//! by name: AIPerf makes its videos with ffmpeg, which inferbench does not carry.

use clap::{Args, ValueEnum};
use inferbench_core::media_plan::{AudioPlan, ImageFormat, ImagePlan, MediaPlan};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImageFormatArg {
    Png,
    Jpeg,
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AudioFormatArg {
    Wav,
    Mp3,
}

#[derive(Args, Debug, Clone, Default)]
pub struct MediaArgs {
    /// Mean width in pixels of the synthetic random-noise images sent with every synthetic
    /// turn (images are on when width and height means are above 0).
    #[arg(long = "image-width-mean")]
    pub image_width_mean: Option<f64>,
    #[arg(long = "image-width-stddev")]
    pub image_width_stddev: Option<f64>,
    #[arg(long = "image-height-mean")]
    pub image_height_mean: Option<f64>,
    #[arg(long = "image-height-stddev")]
    pub image_height_stddev: Option<f64>,
    /// Images per synthetic turn (default 1; 0 sends none).
    #[arg(long = "image-batch-size", visible_alias = "batch-size-image")]
    pub image_batch_size: Option<usize>,
    /// png (default), jpeg, or random (drawn per image).
    #[arg(long = "image-format", value_enum)]
    pub image_format: Option<ImageFormatArg>,
    /// noise (the default and the only source built).
    #[arg(long = "image-source")]
    pub image_source: Option<String>,
    /// random-with-replacement (the only strategy that applies to noise).
    #[arg(long = "image-source-sampling")]
    pub image_source_sampling: Option<String>,
    /// Mean length in seconds of the synthetic noise audio clips sent with every synthetic
    /// turn (audio is on when above 0).
    #[arg(long = "audio-length-mean")]
    pub audio_length_mean: Option<f64>,
    #[arg(long = "audio-length-stddev")]
    pub audio_length_stddev: Option<f64>,
    /// Audio clips per synthetic turn (default 1; 0 sends none).
    #[arg(long = "audio-batch-size", visible_alias = "batch-size-audio")]
    pub audio_batch_size: Option<usize>,
    /// wav (default); mp3 is refused (no pure-Rust MP3 encoder).
    #[arg(long = "audio-format", value_enum)]
    pub audio_format: Option<AudioFormatArg>,
    /// Sample rates in kHz to draw from (default 16), space or comma separated.
    #[arg(long = "audio-sample-rates", num_args = 1.., value_delimiter = ',')]
    pub audio_sample_rates: Vec<f64>,
    /// Bit depths to draw from: 8, 16, 24, 32 (default 16).
    #[arg(long = "audio-depths", num_args = 1.., value_delimiter = ',')]
    pub audio_depths: Vec<u32>,
    /// 1 (mono, default) or 2 (stereo).
    #[arg(long = "audio-num-channels")]
    pub audio_num_channels: Option<u32>,
    // AIPerf's video synthesis flags: accepted by name to be refused with the reason.
    #[arg(
        long = "video-batch-size",
        visible_alias = "batch-size-video",
        hide = true
    )]
    pub video_batch_size: Option<String>,
    #[arg(long = "video-duration", hide = true)]
    pub video_duration: Option<String>,
    #[arg(long = "video-fps", hide = true)]
    pub video_fps: Option<String>,
    #[arg(long = "video-width", hide = true)]
    pub video_width: Option<String>,
    #[arg(long = "video-height", hide = true)]
    pub video_height: Option<String>,
    #[arg(long = "video-synth-type", hide = true)]
    pub video_synth_type: Option<String>,
    #[arg(long = "video-format", hide = true)]
    pub video_format: Option<String>,
    #[arg(long = "video-codec", hide = true)]
    pub video_codec: Option<String>,
    #[arg(long = "video-audio-sample-rate", hide = true)]
    pub video_audio_sample_rate: Option<String>,
    #[arg(long = "video-audio-num-channels", hide = true)]
    pub video_audio_num_channels: Option<String>,
    #[arg(long = "video-audio-codec", hide = true)]
    pub video_audio_codec: Option<String>,
    #[arg(long = "video-audio-depth", hide = true)]
    pub video_audio_depth: Option<String>,
}

fn non_negative(flag: &str, v: Option<f64>, default: f64) -> Result<f64, String> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Some(x) => Err(format!("{flag} {x}: must be a number ≥ 0")),
    }
}

/// The media plan these flags give; an error names the flag.
pub fn media_plan(a: &MediaArgs) -> Result<MediaPlan, String> {
    let video = [
        ("--video-batch-size", a.video_batch_size.is_some()),
        ("--video-duration", a.video_duration.is_some()),
        ("--video-fps", a.video_fps.is_some()),
        ("--video-width", a.video_width.is_some()),
        ("--video-height", a.video_height.is_some()),
        ("--video-synth-type", a.video_synth_type.is_some()),
        ("--video-format", a.video_format.is_some()),
        ("--video-codec", a.video_codec.is_some()),
        (
            "--video-audio-sample-rate",
            a.video_audio_sample_rate.is_some(),
        ),
        (
            "--video-audio-num-channels",
            a.video_audio_num_channels.is_some(),
        ),
        ("--video-audio-codec", a.video_audio_codec.is_some()),
        ("--video-audio-depth", a.video_audio_depth.is_some()),
    ];
    if let Some((flag, _)) = video.iter().find(|(_, set)| *set) {
        return Err(format!(
            "{flag}: synthetic video is not built (AIPerf encodes it with ffmpeg, which inferbench does not carry); send local .mp4/.webm files or video URLs with a single_turn/multi_turn dataset's video/videos fields"
        ));
    }
    match a.image_source.as_deref() {
        None | Some("noise") => {}
        Some(other) => {
            return Err(format!(
                "--image-source {other}: only noise is built (assets and a directory need an image decoder and resizer, which inferbench does not carry)"
            ));
        }
    }
    match a.image_source_sampling.as_deref() {
        None | Some("random-with-replacement") => {}
        Some(other) => {
            return Err(format!(
                "--image-source-sampling {other}: noise images have no finite pool; only random-with-replacement applies"
            ));
        }
    }
    if a.audio_format == Some(AudioFormatArg::Mp3) {
        return Err(
            "--audio-format mp3: not built (no small pure-Rust MP3 encoder); use wav".into(),
        );
    }
    let d = ImagePlan::default();
    let image = ImagePlan {
        width_mean: non_negative("--image-width-mean", a.image_width_mean, d.width_mean)?,
        width_stddev: non_negative("--image-width-stddev", a.image_width_stddev, d.width_stddev)?,
        height_mean: non_negative("--image-height-mean", a.image_height_mean, d.height_mean)?,
        height_stddev: non_negative(
            "--image-height-stddev",
            a.image_height_stddev,
            d.height_stddev,
        )?,
        batch_size: a.image_batch_size.unwrap_or(d.batch_size),
        format: match a.image_format {
            None | Some(ImageFormatArg::Png) => ImageFormat::Png,
            Some(ImageFormatArg::Jpeg) => ImageFormat::Jpeg,
            Some(ImageFormatArg::Random) => ImageFormat::Random,
        },
    };
    let d = AudioPlan::default();
    let length_mean = non_negative("--audio-length-mean", a.audio_length_mean, d.length_mean)?;
    if length_mean > 0.0 && length_mean < 0.01 {
        return Err(format!(
            "--audio-length-mean {length_mean}: must be at least 0.01 seconds"
        ));
    }
    if let Some(r) = a
        .audio_sample_rates
        .iter()
        .find(|r| !(r.is_finite() && **r * 1000.0 >= 1.0))
    {
        return Err(format!(
            "--audio-sample-rates {r}: must be a positive number of kHz"
        ));
    }
    if let Some(b) = a
        .audio_depths
        .iter()
        .find(|b| ![8, 16, 24, 32].contains(*b))
    {
        return Err(format!("--audio-depths {b}: must be 8, 16, 24 or 32"));
    }
    if let Some(c) = a.audio_num_channels.filter(|c| !(1..=2).contains(c)) {
        return Err(format!("--audio-num-channels {c}: must be 1 or 2"));
    }
    let audio = AudioPlan {
        length_mean,
        length_stddev: non_negative(
            "--audio-length-stddev",
            a.audio_length_stddev,
            d.length_stddev,
        )?,
        batch_size: a.audio_batch_size.unwrap_or(d.batch_size),
        sample_rates_khz: if a.audio_sample_rates.is_empty() {
            d.sample_rates_khz
        } else {
            a.audio_sample_rates.clone()
        },
        depths: if a.audio_depths.is_empty() {
            d.depths
        } else {
            a.audio_depths.clone()
        },
        channels: a.audio_num_channels.unwrap_or(d.channels),
    };
    Ok(MediaPlan { image, audio })
}
