//! Bucket lists in JSON: serde_json writes a non-finite float as `null` and cannot read it
//! back, so the `+Inf` bound is written as the string `"+Inf"` (as in the text format).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::quantile::Bucket;

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Le {
    Finite(f64),
    Text(String),
}

#[derive(Serialize, Deserialize)]
struct Row {
    le: Le,
    count: f64,
}

pub(crate) fn serialize<S: Serializer>(buckets: &[Bucket], s: S) -> Result<S::Ok, S::Error> {
    let rows: Vec<Row> = buckets
        .iter()
        .map(|b| Row {
            le: if b.le.is_finite() {
                Le::Finite(b.le)
            } else {
                Le::Text(if b.le > 0.0 { "+Inf" } else { "-Inf" }.into())
            },
            count: b.count,
        })
        .collect();
    rows.serialize(s)
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Bucket>, D::Error> {
    let rows = Vec::<Row>::deserialize(d)?;
    rows.into_iter()
        .map(|r| {
            let le = match r.le {
                Le::Finite(v) => v,
                Le::Text(t) => match t.as_str() {
                    "+Inf" => f64::INFINITY,
                    "-Inf" => f64::NEG_INFINITY,
                    other => {
                        return Err(serde::de::Error::custom(format!(
                            "bucket bound {other:?} is neither a number nor \"+Inf\""
                        )));
                    }
                },
            };
            Ok(Bucket { le, count: r.count })
        })
        .collect()
}
