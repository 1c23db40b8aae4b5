//! A synthetic dataset's `images`, `audio` and `video` tables → the `--image-*` and
//! `--audio-*` flags (docs/datasets.md, "Images, audio and video"). The YAML defaults differ
//! from the command line's (`batchSize` 0, image `format` jpeg), so both are always written.
//! `video` is refused unless it asks for none (`batchSize: 0` alone): synthetic video is not
//! built. Unknown keys and distributions other than a number, `{value}` or `{mean, stddev}`
//! are refused by name.

use serde_json::{Map, Value};

use super::refused;

fn table<'a>(file: &str, at: &str, v: &'a Value) -> Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{file}: {at}: expected a table"))
}

fn num(file: &str, at: &str, v: &Value) -> Result<f64, String> {
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("{file}: {at}: expected a number ≥ 0"))
}

fn fmt(x: f64) -> String {
    format!("{x}")
}

/// A distribution: a number, `{value}` or `{mean, stddev}` → (mean, stddev).
fn dist(file: &str, at: &str, v: &Value) -> Result<(f64, f64), String> {
    if v.is_number() {
        return Ok((num(file, at, v)?, 0.0));
    }
    let t = table(file, at, v)?;
    let mut mean = None;
    let mut stddev = 0.0;
    for (k, x) in t {
        let here = format!("{at}.{k}");
        match k.as_str() {
            "value" | "mean" if mean.is_none() => mean = Some(num(file, &here, x)?),
            "stddev" => stddev = num(file, &here, x)?,
            _ => return Err(refused(file, &here, x)),
        }
    }
    let mean = mean.ok_or_else(|| format!("{file}: {at}.mean: missing"))?;
    Ok((mean, stddev))
}

fn list(file: &str, at: &str, v: &Value) -> Result<String, String> {
    let items = match v {
        Value::Array(a) => a.iter().collect::<Vec<_>>(),
        one => vec![one],
    };
    let nums: Result<Vec<String>, String> =
        items.iter().map(|x| num(file, at, x).map(fmt)).collect();
    Ok(nums?.join(","))
}

fn string(file: &str, at: &str, v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{file}: {at}: expected a string"))
}

/// The flags of `dataset.images`.
pub(super) fn images(file: &str, at: &str, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut batch = 0.0;
    let mut format = "jpeg".to_string();
    for (k, x) in table(file, at, v)? {
        let here = format!("{at}.{k}");
        match k.as_str() {
            "batchSize" => batch = num(file, &here, x)?,
            "width" | "height" => {
                let (m, s) = dist(file, &here, x)?;
                out.extend([format!("--image-{k}-mean"), fmt(m)]);
                out.extend([format!("--image-{k}-stddev"), fmt(s)]);
            }
            "format" => format = string(file, &here, x)?,
            "source" => out.extend(["--image-source".into(), string(file, &here, x)?]),
            "sourceSampling" => {
                out.extend(["--image-source-sampling".into(), string(file, &here, x)?]);
            }
            _ => return Err(refused(file, &here, x)),
        }
    }
    out.extend(["--image-batch-size".into(), fmt(batch)]);
    out.extend(["--image-format".into(), format]);
    Ok(())
}

/// The flags of `dataset.audio`.
pub(super) fn audio(file: &str, at: &str, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut batch = 0.0;
    for (k, x) in table(file, at, v)? {
        let here = format!("{at}.{k}");
        match k.as_str() {
            "batchSize" => batch = num(file, &here, x)?,
            "length" => {
                let (m, s) = dist(file, &here, x)?;
                out.extend(["--audio-length-mean".into(), fmt(m)]);
                out.extend(["--audio-length-stddev".into(), fmt(s)]);
            }
            "format" => out.extend(["--audio-format".into(), string(file, &here, x)?]),
            "sampleRates" => out.extend(["--audio-sample-rates".into(), list(file, &here, x)?]),
            "depths" => out.extend(["--audio-depths".into(), list(file, &here, x)?]),
            "channels" => out.extend(["--audio-num-channels".into(), fmt(num(file, &here, x)?)]),
            _ => return Err(refused(file, &here, x)),
        }
    }
    out.extend(["--audio-batch-size".into(), fmt(batch)]);
    Ok(())
}

/// `dataset.video`: only a table asking for no video passes.
pub(super) fn video(file: &str, at: &str, v: &Value) -> Result<(), String> {
    let t = table(file, at, v)?;
    let none = t.len() == 1 && t.get("batchSize").and_then(Value::as_f64) == Some(0.0);
    if none || t.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{file}: {at}: synthetic video is not built (AIPerf encodes it with ffmpeg, which inferbench does not carry)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn images_and_audio_become_flags() {
        let mut out = Vec::new();
        images(
            "c.yaml",
            "benchmark.dataset.images",
            &json!({"batchSize": 2, "width": {"mean": 64, "stddev": 4}, "height": 32, "format": "png"}),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                "--image-width-mean",
                "64",
                "--image-width-stddev",
                "4",
                "--image-height-mean",
                "32",
                "--image-height-stddev",
                "0",
                "--image-batch-size",
                "2",
                "--image-format",
                "png"
            ]
        );
        let mut out = Vec::new();
        audio(
            "c.yaml",
            "a",
            &json!({"length": {"value": 1.5}, "sampleRates": [16, 44.1], "depths": 16, "batchSize": 1}),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                "--audio-length-mean",
                "1.5",
                "--audio-length-stddev",
                "0",
                "--audio-sample-rates",
                "16,44.1",
                "--audio-depths",
                "16",
                "--audio-batch-size",
                "1"
            ]
        );
    }

    #[test]
    fn unknown_parts_and_video_are_refused() {
        let mut out = Vec::new();
        let e = images(
            "c.yaml",
            "d.images",
            &json!({"width": {"median": 3}}),
            &mut out,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "c.yaml: d.images.width.median 3: not built in inferbench plans"
        );
        assert!(video("c.yaml", "d.video", &json!({"batchSize": 0})).is_ok());
        let e = video("c.yaml", "d.video", &json!({"batchSize": 1, "fps": 4})).unwrap_err();
        assert!(e.contains("synthetic video is not built"), "{e}");
    }
}
