//! AIPerf's `single_turn`, `multi_turn` and `random_pool` JSONL datasets.

use std::collections::HashMap;
use std::path::Path;

use inferbench_core::plan::RunPlan;
use rand::Rng;
use serde_json::Value;

use super::error::DatasetError;
use super::media_rows::{RowMedia, read_media};
use super::row::{Row, Rows, kind, parse_jsonl, read_text};
use super::synth::OslDraws;
use super::{Conv, DEFAULT_POOL_CONVERSATIONS, NamedText, TurnSpec, plan_err, purpose, session_id};
use crate::error::WorkloadError;
use crate::media::MediaResolver;
use crate::synthetic::rng_for;

const SINGLE_TURN_FIELDS: &[&str] = &[
    "text",
    "texts",
    "timestamp",
    "delay",
    "role",
    "session_id",
    "output_length",
    "extra",
    // inferbench's extension: the expected answer (docs/correctness.md).
    "answer",
    "image",
    "images",
    "image_uuids",
    "audio",
    "audios",
    "video",
    "videos",
];

/// `random_pool` rows: texts and media.
const POOL_FIELDS: &[&str] = &[
    "text",
    "texts",
    "image",
    "images",
    "image_uuids",
    "audio",
    "audios",
    "video",
    "videos",
];

/// `text` (a string) or `texts` (strings, or `{name, contents: [strings]}` objects), never
/// both; at least one non-empty text.
pub(crate) fn read_texts(r: &Row<'_>) -> Result<Vec<NamedText>, DatasetError> {
    let out = read_texts_or_none(r)?;
    if out.is_empty() {
        return Err(r.err("text", "a row needs a text (text or texts)"));
    }
    Ok(out)
}

/// The texts of a row that may carry media instead: a row needs a text or some media.
fn read_texts_and_media(
    r: &Row<'_>,
    res: &mut MediaResolver,
) -> Result<(Vec<NamedText>, RowMedia), DatasetError> {
    let texts = read_texts_or_none(r)?;
    let media = read_media(r, res)?;
    if texts.is_empty() && media.is_empty() {
        return Err(r.err(
            "text",
            "a row needs a text or media (text/texts, image/images, audio/audios, video/videos)",
        ));
    }
    Ok((texts, media))
}

/// [`read_texts`] without the need for one.
fn read_texts_or_none(r: &Row<'_>) -> Result<Vec<NamedText>, DatasetError> {
    let text = r.opt_str("text")?;
    let texts = r.get("texts");
    if text.is_some() && texts.is_some() {
        return Err(r.err("texts", "text and texts cannot be set together"));
    }
    let mut out = Vec::new();
    if let Some(t) = text {
        out.push(NamedText::plain(t));
    }
    if let Some(v) = texts {
        let Value::Array(items) = v else {
            return Err(r.err("texts", format!("expected a list, got {}", kind(v))));
        };
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(NamedText::plain(s.clone())),
                Value::Object(o) => {
                    let name = match o.get("name") {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => {
                            return Err(r.err(
                                &format!("texts[{i}].name"),
                                format!("expected a string, got {}", kind(v)),
                            ));
                        }
                    };
                    let Some(Value::Array(contents)) = o.get("contents") else {
                        return Err(r.err(
                            &format!("texts[{i}].contents"),
                            "expected a list of strings",
                        ));
                    };
                    for (j, c) in contents.iter().enumerate() {
                        let Value::String(s) = c else {
                            return Err(r.err(
                                &format!("texts[{i}].contents[{j}]"),
                                format!("expected a string, got {}", kind(c)),
                            ));
                        };
                        out.push(NamedText {
                            name: name.clone(),
                            text: s.clone(),
                        });
                    }
                }
                other => {
                    return Err(r.err(
                        &format!("texts[{i}]"),
                        format!(
                            "expected a string or {{name, contents}}, got {}",
                            kind(other)
                        ),
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// One single_turn object (a row, or one of a multi_turn row's `turns`).
fn read_single_turn(
    r: &Row<'_>,
    osl: &mut OslDraws,
    res: &mut MediaResolver,
) -> Result<TurnSpec, DatasetError> {
    r.check_keys(SINGLE_TURN_FIELDS, "single_turn")?;
    let (texts, media) = read_texts_and_media(r, res)?;
    let timestamp_ms = r.opt_ms("timestamp")?;
    let delay_ms = r.opt_ms("delay")?;
    // AIPerf refuses both set (non-zero) on one turn.
    if timestamp_ms.is_some_and(|t| t > 0.0) && delay_ms.is_some_and(|d| d > 0.0) {
        return Err(r.err("delay", "timestamp and delay cannot be set together"));
    }
    let output_length = r.opt_u64("output_length")?;
    if output_length == Some(0) {
        return Err(r.err("output_length", "must be > 0"));
    }
    let extra = r.opt_object("extra")?.cloned();
    let role = r.opt_str("role")?.map(str::to_string);
    let answer = match r.get("answer") {
        None => None,
        Some(v) => Some(
            inferbench_metrics::correctness::Answer::parse(v, "answer")
                .map_err(|e| r.err(&e.field, e.message))?,
        ),
    };
    Ok(TurnSpec {
        answer,
        texts,
        role,
        max_tokens: output_length.or_else(|| osl.next()),
        extra,
        timestamp_ms,
        delay_ms,
        origin: Some((r.file.to_string(), r.line.unwrap_or(0))),
        images: media.images,
        audios: media.audios,
        videos: media.videos,
        ..Default::default()
    })
}

/// Groups turns into conversations by session id, in order of first appearance; a row
/// without one is a conversation of its own, numbered `session_NNNNNN` by position.
pub(crate) struct Grouper {
    pub(crate) convs: Vec<Conv>,
    index: HashMap<String, usize>,
    history: bool,
}

impl Grouper {
    pub(crate) fn new(history: bool) -> Self {
        Grouper {
            convs: Vec::new(),
            index: HashMap::new(),
            history,
        }
    }

    pub(crate) fn push(&mut self, session: Option<String>, turns: Vec<TurnSpec>) {
        let i = match session {
            Some(id) => *self.index.entry(id.clone()).or_insert_with(|| {
                self.convs.push(Conv {
                    id,
                    history: self.history,
                    turns: Vec::new(),
                });
                self.convs.len() - 1
            }),
            None => {
                self.convs.push(Conv {
                    id: session_id(self.convs.len()),
                    history: self.history,
                    turns: Vec::new(),
                });
                self.convs.len() - 1
            }
        };
        self.convs[i].turns.extend(turns);
    }
}

fn read_rows(path: &Path) -> Result<(String, Rows), DatasetError> {
    if path.is_dir() {
        return Err(DatasetError::file(
            path.display().to_string(),
            "is a directory: this dataset type reads one file",
        ));
    }
    let shown = path.display().to_string();
    let text = read_text(path)?;
    let rows = parse_jsonl(&shown, &text)?;
    Ok((shown, rows))
}

/// `single_turn`: one request per row; rows sharing a `session_id` are sent in order, each
/// on its own (no history).
pub(crate) fn load_single_turn(
    path: &Path,
    plan: &RunPlan,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let (file, rows) = read_rows(path)?;
    let mut osl = OslDraws::new(plan, seed)?;
    let mut g = Grouper::new(false);
    let mut res = MediaResolver::default();
    for (no, obj) in &rows {
        let r = Row::new(&file, *no, obj);
        let session = r.opt_session_id("session_id")?;
        let turn = read_single_turn(&r, &mut osl, &mut res)?;
        g.push(session, vec![turn]);
    }
    Ok(g.convs)
}

/// `multi_turn`: one conversation per row (`session_id`, `turns`), sent with history. Rows
/// repeating a session id add their turns to it.
pub(crate) fn load_multi_turn(
    path: &Path,
    plan: &RunPlan,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let (file, rows) = read_rows(path)?;
    let mut osl = OslDraws::new(plan, seed)?;
    let mut g = Grouper::new(true);
    let mut res = MediaResolver::default();
    for (no, obj) in &rows {
        let r = Row::new(&file, *no, obj);
        r.check_keys(&["session_id", "turns"], "multi_turn")?;
        let session = r.opt_session_id("session_id")?;
        let turns_v = match r.get("turns") {
            Some(Value::Array(t)) if !t.is_empty() => t,
            Some(Value::Array(_)) => {
                return Err(r.err("turns", "at least one turn is needed").into());
            }
            Some(v) => {
                return Err(r
                    .err("turns", format!("expected a list, got {}", kind(v)))
                    .into());
            }
            None => {
                return Err(r
                    .err("turns", "missing (a multi_turn row lists its turns)")
                    .into());
            }
        };
        let mut turns = Vec::with_capacity(turns_v.len());
        for (i, t) in turns_v.iter().enumerate() {
            let Value::Object(tobj) = t else {
                return Err(r
                    .err(
                        &format!("turns[{i}]"),
                        format!("expected an object, got {}", kind(t)),
                    )
                    .into());
            };
            let tr = r.nested(format!("turns[{i}]."), tobj);
            if tr.has("session_id") {
                return Err(tr
                    .err("session_id", "goes on the row, not on a turn")
                    .into());
            }
            turns.push(read_single_turn(&tr, &mut osl, &mut res)?);
        }
        g.push(session, turns);
    }
    Ok(g.convs)
}

/// `random_pool`: a file (one pool) or a directory (one pool per file, sorted by name, the
/// file stem naming its texts unless they carry names). Without batching, conversation `i`
/// is one turn merging, from every pool, the `i`-th of `--conversation-num` rows drawn with
/// replacement; with `--batch-size` ≠ 1 each conversation draws that many texts from all
/// pools' texts together.
pub(crate) fn load_random_pool(
    path: &Path,
    plan: &RunPlan,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| {
                DatasetError::file(path.display().to_string(), format!("cannot list: {e}"))
            })?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(
                DatasetError::file(path.display().to_string(), "directory has no files").into(),
            );
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    let in_dir = path.is_dir();
    // Each pool: its rows' texts and media.
    let mut pools: Vec<Vec<(Vec<NamedText>, RowMedia)>> = Vec::with_capacity(files.len());
    let mut res = MediaResolver::default();
    for f in &files {
        let shown = f.display().to_string();
        let text = read_text(f)?;
        let rows = parse_jsonl(&shown, &text)?;
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut pool = Vec::with_capacity(rows.len());
        for (no, obj) in &rows {
            let r = Row::new(&shown, *no, obj);
            r.check_keys(POOL_FIELDS, "random_pool")?;
            let (mut texts, media) = read_texts_and_media(&r, &mut res)?;
            if in_dir {
                for t in texts.iter_mut().filter(|t| t.name.is_empty()) {
                    t.name = stem.clone();
                }
            }
            if plan.dataset.batch_size != 1 && !media.is_empty() {
                return Err(r
                    .err(
                        "images",
                        "random_pool with --batch-size other than 1 draws texts only: batching images, audio and video is not built",
                    )
                    .into());
            }
            pool.push((texts, media));
        }
        pools.push(pool);
    }
    let n = plan
        .dataset
        .num_conversations
        .unwrap_or(DEFAULT_POOL_CONVERSATIONS);
    if n == 0 {
        return Err(plan_err("dataset.num_conversations", "must be at least 1"));
    }
    let batch = plan.dataset.batch_size;
    let mut rng = rng_for(seed, purpose::RANDOM_POOL);
    let mut osl = OslDraws::new(plan, seed)?;
    let mut convs: Vec<Conv> = (0..n)
        .map(|i| Conv {
            id: session_id(i),
            history: false,
            turns: vec![TurnSpec::default()],
        })
        .collect();
    if batch == 1 {
        // Pool by pool, n draws each, as AIPerf samples them.
        for pool in &pools {
            for c in convs.iter_mut() {
                let (texts, media) = &pool[rng.random_range(0..pool.len())];
                let t = &mut c.turns[0];
                t.texts.extend(texts.iter().cloned());
                t.images.extend(media.images.iter().cloned());
                t.audios.extend(media.audios.iter().cloned());
                t.videos.extend(media.videos.iter().cloned());
            }
        }
    } else {
        let flat: Vec<&NamedText> = pools.iter().flatten().flat_map(|(t, _)| t).collect();
        for c in convs.iter_mut() {
            for _ in 0..batch {
                c.turns[0]
                    .texts
                    .push(flat[rng.random_range(0..flat.len())].clone());
            }
        }
    }
    for c in convs.iter_mut() {
        c.turns[0].max_tokens = osl.next();
    }
    Ok(convs)
}
