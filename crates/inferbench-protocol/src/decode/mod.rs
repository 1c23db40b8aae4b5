//! Response decoders for every endpoint type, streamed or not, following AIPerf 0.13's
//! endpoint parsers (`docs/endpoints.md` has the per-endpoint rules). Entry points:
//! [`decode_stream_message`] / [`decode_response_body`] (stateless, no options), and
//! [`Decoder`] (built once per run from the endpoint plan: `response_field`, `reasoning_tags`)
//! with its per-request [`StreamDecoder`].
//!
//! Chat and completions (this module):
//!
//! - chat reads `choices[0].delta` (streamed chunk) or `choices[0].message` (whole body);
//!   content is `content`; reasoning is `reasoning_content`, or `reasoning` when that is absent
//!   or empty (Python's `a or b`); tool-call text is `function.name + function.arguments` of
//!   every call in the delta, concatenated (AIPerf counts it as output text);
//! - completions reads `choices[0].text`;
//! - `usage` is taken from any object that has one, including the trailing usage-only chunk
//!   with `"choices": []`;
//! - a top-level `error` (an object with `message`, or a string), or vLLM's older
//!   `{"object": "error", "message": ...}`, gives [`Decoded::error`].
//!
//! Unlike AIPerf, the `object` field is not required to be `chat.completion(.chunk)`: some
//! servers omit or misname it, so the chat decoders look at `delta` and fall back to `message`
//! (the body decoder the other way round). All parts are kept separately; which of them count
//! (AIPerf's precedence reasoning > content + tool calls) is left to the metrics.
//!
//! A chunk is parsed into borrowed typed structs: no `serde_json::Value` is built except for
//! `usage` and `error`, which appear once per request. Unknown fields are skipped, and a text
//! field holding `null` or a non-string is read as absent rather than failing the chunk.
//!
//! The other APIs live in submodules (`responses`, `messages`, `other`) and read a
//! `serde_json::Value`. Events that carry nothing to count (pings, `message_stop`, lifecycle
//! events) decode to an empty [`Decoded`], never to an error.

mod common;
mod fast;
mod media;
mod messages;
mod other;
mod responses;

pub use other::FieldPath;

use inferbench_core::endpoint_plan::EndpointPlan;

use crate::text::excerpt;
use crate::think::ThinkSplitter;

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use inferbench_core::plan::EndpointType;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The parts of one response object (a streamed chunk or a whole body).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// Output text (`delta.content`, `message.content` or `text`); `Some("")` is kept as sent.
    pub content: Option<String>,
    /// Reasoning text (`reasoning_content`, else `reasoning`).
    pub reasoning: Option<String>,
    /// Tool-call text: `function.name + function.arguments` of each call, concatenated.
    pub tool: Option<String>,
    /// The `usage` object exactly as sent (absent or `null` gives `None`).
    pub usage: Option<Value>,
    /// `choices[0].finish_reason`.
    pub finish_reason: Option<String>,
    /// The error message when the object is an error response.
    pub error: Option<String>,
}

/// Why a payload could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the response is not JSON: {excerpt}")]
    NotJson { excerpt: String },
    #[error(
        "the response is JSON but not an OpenAI response (no choices, usage or error): {excerpt}"
    )]
    NotOpenAi { excerpt: String },
    #[error("no response decoder for endpoint type {endpoint}")]
    Unsupported { endpoint: &'static str },
    #[error(
        "the response is not what the {endpoint} endpoint sends (expected {expected}): {excerpt}"
    )]
    Unexpected {
        endpoint: &'static str,
        expected: &'static str,
        excerpt: String,
    },
    #[error("response field {path:?}: {message}")]
    BadFieldPath { path: String, message: String },
    #[error("reasoning tags {tags:?}: only \"think\" is supported")]
    BadReasoningTags { tags: String },
}

/// True for the `[DONE]` stream terminator (surrounding whitespace allowed).
pub fn is_done(data: &str) -> bool {
    data.trim_ascii() == "[DONE]"
}

/// Decodes one streamed `chat.completion.chunk` (`choices[0].delta`).
pub fn decode_chat_chunk(data: &str) -> Result<Decoded, DecodeError> {
    decode(data, Shape::Chat { body: false })
}

/// Decodes a non-streamed `chat.completion` body (`choices[0].message`).
pub fn decode_chat_body(data: &str) -> Result<Decoded, DecodeError> {
    decode(data, Shape::Chat { body: true })
}

/// Decodes one streamed `text_completion` chunk (`choices[0].text`).
pub fn decode_completions_chunk(data: &str) -> Result<Decoded, DecodeError> {
    decode(data, Shape::Completions)
}

/// Decodes a non-streamed `text_completion` body (`choices[0].text`, same shape as a chunk).
pub fn decode_completions_body(data: &str) -> Result<Decoded, DecodeError> {
    decode(data, Shape::Completions)
}

/// Decodes one streamed message of `endpoint`'s API; `event` is the SSE `event:` name, if any
/// (the Responses and Messages APIs name their events). Stateless and without options: a
/// Responses `response.output_text.done` counts nothing here (its text repeats the deltas'),
/// `raw`/`template` use no response field, and no `<think>` splitting is done; use
/// [`Decoder`] for those.
pub fn decode_stream_message(
    endpoint: EndpointType,
    event: Option<&str>,
    data: &str,
) -> Result<Decoded, DecodeError> {
    match endpoint {
        EndpointType::Chat => decode_chat_chunk(data),
        EndpointType::Completions => decode_completions_chunk(data),
        EndpointType::Responses => Ok(match responses::decode_event(event, data)? {
            responses::StreamItem::Decoded(d) => d,
            responses::StreamItem::TextDelta { decoded, .. } => decoded,
            responses::StreamItem::TextDone { .. } => Decoded::default(),
        }),
        EndpointType::Messages => messages::decode_event(event, data),
        EndpointType::HuggingfaceGenerate => other::decode_tgi_event(data),
        // These APIs do not stream; a server that sends an event anyway sends the body.
        EndpointType::Embeddings
        | EndpointType::NimEmbeddings
        | EndpointType::ChatEmbeddings
        | EndpointType::ImageRetrieval
        | EndpointType::NimRankings
        | EndpointType::HfTeiRankings
        | EndpointType::CohereRankings => other::decode_vectors(endpoint, data),
        EndpointType::AudioTranscription => media::decode_transcription(data),
        EndpointType::ImageGeneration => media::decode_images(data, false),
        EndpointType::Template | EndpointType::Raw => other::decode_auto(None, data, false),
    }
}

/// Decodes a whole (non-streamed) response body of `endpoint`'s API.
pub fn decode_response_body(endpoint: EndpointType, data: &str) -> Result<Decoded, DecodeError> {
    match endpoint {
        EndpointType::Chat => decode_chat_body(data),
        EndpointType::Completions => decode_completions_body(data),
        EndpointType::Responses => responses::decode_body(data),
        EndpointType::Messages => messages::decode_body(data),
        EndpointType::HuggingfaceGenerate => other::decode_tgi_body(data),
        EndpointType::Embeddings
        | EndpointType::NimEmbeddings
        | EndpointType::ChatEmbeddings
        | EndpointType::ImageRetrieval
        | EndpointType::NimRankings
        | EndpointType::HfTeiRankings
        | EndpointType::CohereRankings => other::decode_vectors(endpoint, data),
        EndpointType::AudioTranscription => media::decode_transcription(data),
        EndpointType::ImageGeneration => media::decode_images(data, true),
        EndpointType::Template | EndpointType::Raw => other::decode_auto(None, data, true),
    }
}

/// The decoder of one run: the endpoint type plus the options that change how responses are
/// read (`response_field` for `raw`/`template`, `--reasoning-tags think`). Build it once; make
/// a [`StreamDecoder`] per streamed response.
#[derive(Clone, Debug)]
pub struct Decoder {
    endpoint: EndpointType,
    response_field: Option<FieldPath>,
    split_think: bool,
}

impl Decoder {
    /// Checks the options: an unparsable `response_field`, or reasoning tags other than
    /// `think`, are errors that name the value.
    pub fn new(endpoint: EndpointType, plan: &EndpointPlan) -> Result<Decoder, DecodeError> {
        let response_field = match plan.response_field.as_deref() {
            Some(p) => Some(FieldPath::parse(p)?),
            None => None,
        };
        let split_think = match plan.reasoning_tags.as_deref() {
            None => false,
            Some("think") => true,
            Some(other) => {
                return Err(DecodeError::BadReasoningTags {
                    tags: other.to_owned(),
                });
            }
        };
        Ok(Decoder {
            endpoint,
            response_field,
            split_think,
        })
    }

    /// A decoder with no options (what the free functions do).
    pub fn plain(endpoint: EndpointType) -> Decoder {
        Decoder {
            endpoint,
            response_field: None,
            split_think: false,
        }
    }

    pub fn endpoint(&self) -> EndpointType {
        self.endpoint
    }

    /// Whether `--reasoning-tags think` asked for `<think>` to be split out of the content.
    pub fn splits_think(&self) -> bool {
        self.split_think
    }

    /// The same decoder, leaving `<think>` in the content: for a caller that splits it
    /// itself (the engine does, per event).
    pub fn without_think(&self) -> Decoder {
        Decoder {
            split_think: false,
            ..self.clone()
        }
    }

    /// State for one streamed response.
    pub fn stream(&self) -> StreamDecoder<'_> {
        StreamDecoder {
            decoder: self,
            streamed_parts: Vec::new(),
            think: self.split_think.then(ThinkSplitter::default),
            memo: fast::Memo::default(),
        }
    }

    /// Decodes a whole (non-streamed) body, splitting `<think>` out of the content when asked.
    pub fn body(&self, data: &str) -> Result<Decoded, DecodeError> {
        let mut d = match self.endpoint {
            EndpointType::Template | EndpointType::Raw => {
                other::decode_auto(self.response_field.as_ref(), data, true)?
            }
            e => decode_response_body(e, data)?,
        };
        if self.split_think
            && let Some(c) = d.content.take()
        {
            let (content, reasoning) = ThinkSplitter::split_all(&c);
            d.content = Some(content);
            if !reasoning.is_empty() {
                append_opt(&mut d.reasoning, &reasoning);
            }
        }
        Ok(d)
    }
}

/// Decodes the messages of one streamed response in order. It remembers which Responses text
/// parts had deltas (so their `response.output_text.done` is not counted twice) and, with
/// `--reasoning-tags think`, carries the `<think>` splitter across events.
#[derive(Debug)]
pub struct StreamDecoder<'a> {
    decoder: &'a Decoder,
    /// `(output_index, content_index)` of Responses text parts that had a non-empty delta.
    streamed_parts: Vec<(Option<u64>, Option<u64>)>,
    think: Option<ThinkSplitter>,
    /// The leading fields of the last chunk the fast path read whole.
    memo: fast::Memo,
}

impl StreamDecoder<'_> {
    /// Decodes the next message (`event` is the SSE `event:` name, if any).
    pub fn message(&mut self, event: Option<&str>, data: &str) -> Result<Decoded, DecodeError> {
        let mut d = Decoded::default();
        self.message_into(event, data, &mut d)?;
        Ok(d)
    }

    /// [`StreamDecoder::message`], written into `out`, whatever it held before (the engine's
    /// path: see `decode_into`).
    pub fn message_into(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Decoded,
    ) -> Result<(), DecodeError> {
        *out = Decoded::default();
        match self.decoder.endpoint {
            EndpointType::Chat => {
                decode_into(data, Shape::Chat { body: false }, out, Some(&mut self.memo))?
            }
            EndpointType::Completions => {
                decode_into(data, Shape::Completions, out, Some(&mut self.memo))?
            }
            e => *out = self.other_message(e, event, data)?,
        }
        if let Some(splitter) = self.think.as_mut()
            && let Some(c) = out.content.take()
        {
            let (content, reasoning) = splitter.push(&c);
            out.content = Some(content);
            if !reasoning.is_empty() {
                append_opt(&mut out.reasoning, &reasoning);
            }
        }
        Ok(())
    }

    /// A message of an endpoint other than chat and completions.
    fn other_message(
        &mut self,
        endpoint: EndpointType,
        event: Option<&str>,
        data: &str,
    ) -> Result<Decoded, DecodeError> {
        Ok(match endpoint {
            EndpointType::Responses => match responses::decode_event(event, data)? {
                responses::StreamItem::Decoded(d) => d,
                responses::StreamItem::TextDelta { part, decoded } => {
                    if !self.streamed_parts.contains(&part) {
                        self.streamed_parts.push(part);
                    }
                    decoded
                }
                responses::StreamItem::TextDone { part, text } => Decoded {
                    // Only a part that no delta carried: its text would be counted twice.
                    content: text.filter(|_| !self.streamed_parts.contains(&part)),
                    ..Decoded::default()
                },
            },
            EndpointType::Template | EndpointType::Raw => {
                other::decode_auto(self.decoder.response_field.as_ref(), data, false)?
            }
            e => decode_stream_message(e, event, data)?,
        })
    }

    /// Ends the stream: with `<think>` splitting, the text still held back (a partial tag
    /// that never completed) as content or reasoning; `None` when there is none. The caller
    /// adds it to the last event.
    pub fn finish(&mut self) -> Option<Decoded> {
        let (content, reasoning) = self.think.as_mut()?.finish();
        if content.is_empty() && reasoning.is_empty() {
            return None;
        }
        Some(Decoded {
            content: Some(content).filter(|c| !c.is_empty()),
            reasoning: Some(reasoning).filter(|r| !r.is_empty()),
            ..Decoded::default()
        })
    }
}

fn append_opt(acc: &mut Option<String>, part: &str) {
    acc.get_or_insert_with(String::new).push_str(part);
}

#[derive(Clone, Copy)]
enum Shape {
    Chat { body: bool },
    Completions,
}

fn decode(data: &str, shape: Shape) -> Result<Decoded, DecodeError> {
    let mut out = Decoded::default();
    decode_into(data, shape, &mut out, None)?;
    Ok(out)
}

/// `decode`, written into `out` (which must be empty): the engine's path for every streamed
/// chunk, where a returned `Decoded` (192 bytes) was copied at each call level on the way up,
/// a `memcpy` call each time (about 2 % of a streaming run's samples).
/// A stream's decoder passes its `memo` (see `fast::Memo`).
fn decode_into(
    data: &str,
    shape: Shape,
    out: &mut Decoded,
    memo: Option<&mut fast::Memo>,
) -> Result<(), DecodeError> {
    // Read and used where it lies: a `Wire` is 144 bytes, and moving it (out of the reader,
    // into `from_wire`) was a `memcpy` call a chunk (docs/timing.md).
    let mut wire = fast::empty();
    if fast::wire_into(data, &mut wire, memo) {
        return from_wire(data, &mut wire, shape, out);
    }
    *out = decode_serde(data, shape)?;
    Ok(())
}

/// `decode` without the fast path (the fast path's tests compare against it).
fn decode_serde(data: &str, shape: Shape) -> Result<Decoded, DecodeError> {
    let mut wire: Wire<'_> = match serde_json::from_str(data) {
        Ok(w) => w,
        // Slow path only on failure: tell "not JSON" from "JSON of another shape".
        Err(_) => {
            return Err(if serde_json::from_str::<IgnoredAny>(data).is_ok() {
                DecodeError::NotOpenAi {
                    excerpt: excerpt(data),
                }
            } else {
                DecodeError::NotJson {
                    excerpt: excerpt(data),
                }
            });
        }
    };
    let mut out = Decoded::default();
    from_wire(data, &mut wire, shape, &mut out)?;
    Ok(out)
}

/// Fills `out` (empty) from a parsed chunk or body, taking the parts it keeps out of `wire`.
fn from_wire(
    data: &str,
    wire: &mut Wire<'_>,
    shape: Shape,
    out: &mut Decoded,
) -> Result<(), DecodeError> {
    let error = error_message(wire);
    if wire.choices.is_none() && wire.usage.is_none() && error.is_none() {
        return Err(DecodeError::NotOpenAi {
            excerpt: excerpt(data),
        });
    }
    // Valid JSON by construction (the raw slice was already checked), so this cannot fail.
    out.usage = wire.usage.and_then(|u| serde_json::from_str(u.0).ok());
    out.error = error;
    let Some(choice) = wire.choices.take().and_then(|c| c.0) else {
        return Ok(());
    };
    out.finish_reason = owned(choice.finish_reason);
    match shape {
        Shape::Completions => out.content = owned(choice.text),
        Shape::Chat { body } => {
            let msg = if body {
                choice.message.or(choice.delta)
            } else {
                choice.delta.or(choice.message)
            };
            if let Some(m) = msg {
                out.content = owned(m.content);
                out.reasoning = match owned(m.reasoning_content) {
                    Some(r) if !r.is_empty() => Some(r),
                    _ => owned(m.reasoning),
                };
                out.tool = m.tool_calls.and_then(tool_text);
            }
        }
    }
    Ok(())
}

fn tool_text(raw: &RawValue) -> Option<String> {
    // Tool calls that are not a list of calls are ignored rather than failing the chunk.
    let calls: Vec<ToolCall<'_>> = serde_json::from_str(raw.get()).ok()?;
    let mut text: Option<String> = None;
    for f in calls.into_iter().filter_map(|c| c.function) {
        for part in [f.name.0, f.arguments.0].into_iter().flatten() {
            text.get_or_insert_with(String::new).push_str(&part);
        }
    }
    text
}

fn error_message(w: &Wire<'_>) -> Option<String> {
    let error: Option<Value> = w.error.and_then(|e| serde_json::from_str(e.0).ok());
    match &error {
        None | Some(Value::Bool(false)) => {}
        Some(Value::String(s)) => return Some(s.clone()),
        Some(e) => {
            return Some(match e.get("message").and_then(Value::as_str) {
                Some(m) => m.to_owned(),
                None => excerpt(&e.to_string()),
            });
        }
    }
    if w.object.0.as_deref() == Some("error") {
        return Some(
            w.message
                .0
                .as_deref()
                .map_or_else(|| "error".to_owned(), str::to_owned),
        );
    }
    None
}

fn owned(t: Text<'_>) -> Option<String> {
    t.0.map(Cow::into_owned)
}

// ---- wire types -------------------------------------------------------------------------------

/// A JSON value's own text: what serde reads as a `RawValue`, or what the fast reader has
/// already checked is one JSON value (so that it is not checked a second time).
#[derive(Clone, Copy)]
struct Raw<'a>(&'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|r| Raw(r.get()))
    }
}

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow, default)]
    object: Text<'a>,
    #[serde(borrow, default)]
    choices: Option<FirstChoice<'a>>,
    // `usage` and `error` are kept as raw slices and built into values only when present:
    // a `Value` field makes the whole struct large, and moving it around costs more than the
    // parse of a typical chunk.
    #[serde(borrow, default)]
    usage: Option<Raw<'a>>,
    #[serde(borrow, default)]
    error: Option<Raw<'a>>,
    /// Only used with `"object": "error"`.
    #[serde(borrow, default)]
    message: Text<'a>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    // Boxed: two inline messages made every parse level move a few hundred bytes, which cost
    // more than one small allocation.
    #[serde(borrow, default)]
    delta: Option<Box<Message<'a>>>,
    #[serde(borrow, default)]
    message: Option<Box<Message<'a>>>,
    #[serde(borrow, default)]
    text: Text<'a>,
    #[serde(borrow, default)]
    finish_reason: Text<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Text<'a>,
    #[serde(borrow, default)]
    reasoning_content: Text<'a>,
    #[serde(borrow, default)]
    reasoning: Text<'a>,
    /// Parsed only when present (rare), which keeps this struct small.
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Text<'a>,
    #[serde(borrow, default)]
    arguments: Text<'a>,
}

/// A string field read leniently: a string (borrowed when it has no escapes) is kept; `null`,
/// numbers, booleans, arrays and objects are skipped and read as absent.
#[derive(Default)]
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or anything else (ignored)")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `choices`, keeping only the first element (the rest are skipped without being built).
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let first = a.next_element::<Choice<'a>>()?;
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod decoder_tests;

#[cfg(test)]
mod fast_tests;
