//! What a request carried besides text: how many images, audio clips and videos, their
//! decoded size, and the first audio clip's length. Kept on the frozen payload and copied
//! onto the record, so that the evidence says what was sent without keeping the base64
//! itself (docs/evidence.md), and the media metrics (`num_images`, `image_throughput`,
//! `image_latency`, `audio_duration`, `rtfx`) are views of the record alone.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct MediaSent {
    /// Image parts in the body as sent (AIPerf's `media_counts.images`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub images: u32,
    /// Audio parts (chat `input_audio`) or uploaded audio files.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub audios: u32,
    /// Video parts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub videos: u32,
    /// Bytes of media data inlined in the body (base64 decoded); media sent as URLs count 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub bytes: u64,
    /// Seconds of the turn's first audio clip (AIPerf's `audio_duration_seconds`): the drawn
    /// length of a synthetic clip; for a WAV file, its data size over its byte rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_seconds: Option<f64>,
}

impl MediaSent {
    /// Nothing but text was sent.
    pub fn is_empty(&self) -> bool {
        self.images == 0
            && self.audios == 0
            && self.videos == 0
            && self.bytes == 0
            && self.audio_seconds.is_none()
    }

    /// The media of `other` added to this one (a history body resends earlier turns' parts);
    /// the audio length stays the first clip's.
    pub fn add(&mut self, other: &MediaSent) {
        self.images += other.images;
        self.audios += other.audios;
        self.videos += other.videos;
        self.bytes += other.bytes;
        if self.audio_seconds.is_none() {
            self.audio_seconds = other.audio_seconds;
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fields_are_left_out_and_read_back() {
        let m = MediaSent {
            images: 2,
            bytes: 70,
            ..Default::default()
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"images":2,"bytes":70}"#);
        assert_eq!(serde_json::from_str::<MediaSent>(&s).unwrap(), m);
        assert!(MediaSent::default().is_empty());
        let mut a = MediaSent {
            audio_seconds: Some(1.5),
            ..Default::default()
        };
        a.add(&MediaSent {
            images: 1,
            audio_seconds: Some(9.0),
            ..Default::default()
        });
        assert_eq!(a.images, 1);
        assert_eq!(a.audio_seconds, Some(1.5));
    }
}
