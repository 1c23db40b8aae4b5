//! The client-side tokenizer: tiktoken `o200k_base` (built in, no files) or a Hugging Face
//! `tokenizer.json` from disk. Never adds special tokens, as AIPerf counts with
//! `add_special_tokens=False`.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use inferbench_core::plan::TokenizerSpec;
use inferbench_core::seed::sha256_hex;

use crate::chat_template::ChatTemplate;
use crate::error::WorkloadError;
use crate::o200k;

/// Name of the built-in tokenizer, as recorded in artifacts.
pub const BUILTIN_NAME: &str = "builtin:o200k_base";

enum Inner {
    Builtin,
    HuggingFace(Box<tokenizers::Tokenizer>),
}

/// A loaded tokenizer. `Send + Sync`; share it with `Arc`.
pub struct Tokenizer {
    name: String,
    sha256: String,
    inner: Inner,
    /// `round_trip_ids()`, computed on first use.
    round_trip: OnceLock<Arc<[u32]>>,
    /// `--apply-chat-template`: the model's chat template, applied to ISL counts.
    chat: Option<Arc<ChatTemplate>>,
    /// `chat_template_overheads()`, computed on first use.
    chat_overheads: OnceLock<(u64, u64)>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("name", &self.name)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl Tokenizer {
    pub fn load(spec: &TokenizerSpec) -> Result<Tokenizer, WorkloadError> {
        match spec {
            TokenizerSpec::Builtin => Self::builtin(),
            TokenizerSpec::HuggingFace { path } => Self::from_path(path),
        }
    }

    /// The embedded `o200k_base` (src/o200k). Its `sha256` is that of the canonical
    /// `o200k_base.tiktoken` file (one `base64(bytes) rank` line per rank), which is the file
    /// the tables are built from; the tests rebuild the file from the tables and hash it.
    pub fn builtin() -> Result<Tokenizer, WorkloadError> {
        Ok(Tokenizer {
            name: BUILTIN_NAME.to_string(),
            sha256: O200K_SHA256.to_string(),
            inner: Inner::Builtin,
            round_trip: OnceLock::new(),
            chat: None,
            chat_overheads: OnceLock::new(),
        })
    }

    /// A Hugging Face tokenizer from `path`: a `tokenizer.json` file or a directory holding
    /// one. The name is `path` as given.
    pub fn from_path(path: &str) -> Result<Tokenizer, WorkloadError> {
        let p = Path::new(path);
        if !p.exists() {
            return Err(WorkloadError::TokenizerNotFound { path: path.into() });
        }
        let file = if p.is_dir() {
            let f = p.join("tokenizer.json");
            if !f.is_file() {
                return Err(WorkloadError::NoTokenizerJson { path: path.into() });
            }
            f
        } else {
            p.to_path_buf()
        };
        let shown = file.display().to_string();
        let bytes = std::fs::read(&file).map_err(|source| WorkloadError::TokenizerRead {
            path: shown.clone(),
            source,
        })?;
        let mut tok = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| {
            WorkloadError::NotATokenizer {
                path: shown.clone(),
                message: e.to_string(),
            }
        })?;
        // A tokenizer.json may carry truncation or padding settings; either would distort
        // counts, so both are switched off.
        tok.with_truncation(None)
            .map_err(|e| WorkloadError::TokenizerSetup {
                path: shown.clone(),
                message: e.to_string(),
            })?;
        tok.with_padding(None);
        Ok(Tokenizer {
            name: path.to_string(),
            sha256: sha256_hex(&bytes),
            inner: Inner::HuggingFace(Box::new(tok)),
            round_trip: OnceLock::new(),
            chat: None,
            chat_overheads: OnceLock::new(),
        })
    }

    /// The tokenizer of `spec`, with its chat template when `apply_chat_template` (AIPerf's
    /// `--apply-chat-template`). AIPerf quietly counts plain text when there is no template
    /// (tiktoken, or a model without one); here that is an error naming the reason, since
    /// the flag would otherwise do nothing.
    pub fn load_for(
        spec: &TokenizerSpec,
        apply_chat_template: bool,
    ) -> Result<Tokenizer, WorkloadError> {
        let tok = Self::load(spec)?;
        if !apply_chat_template {
            return Ok(tok);
        }
        let path = match spec {
            TokenizerSpec::HuggingFace { path } => path,
            TokenizerSpec::Builtin => {
                return Err(WorkloadError::ChatTemplate {
                    path: BUILTIN_NAME.into(),
                    message: "--apply-chat-template needs a Hugging Face tokenizer directory \
                              with a chat template (--tokenizer DIR); the built-in vocabulary \
                              has none"
                        .into(),
                });
            }
        };
        match ChatTemplate::find(path)? {
            Some(t) => Ok(tok.with_chat_template(t)),
            None => Err(WorkloadError::ChatTemplate {
                path: path.clone(),
                message: "--apply-chat-template: no chat template here (looked for \
                          chat_template.jinja, chat_template.json and tokenizer_config.json's \
                          chat_template)"
                    .into(),
            }),
        }
    }

    /// This tokenizer with `template` applied to ISL counts.
    pub fn with_chat_template(mut self, template: ChatTemplate) -> Tokenizer {
        self.chat = Some(Arc::new(template));
        self.chat_overheads = OnceLock::new();
        self
    }

    /// The chat template ISL counts go through, when `--apply-chat-template` set one.
    pub fn chat_template(&self) -> Option<&ChatTemplate> {
        self.chat.as_deref()
    }

    /// The template's (per-request fixed, per-message wrap) token costs, estimated once as
    /// AIPerf does (`crate::chat_template::overheads`); (0, 0) without a template.
    pub fn chat_template_overheads(&self) -> (u64, u64) {
        *self
            .chat_overheads
            .get_or_init(|| match self.chat.as_deref() {
                Some(t) => crate::chat_template::overheads(self, t),
                None => (0, 0),
            })
    }

    /// Special tokens the tokenizer adds to one sequence (its post-processor's, as
    /// `num_special_tokens_to_add(pair=False)`): 1 for a BOS-adding model, 0 for the
    /// built-in vocabulary.
    pub fn prompt_special_tokens(&self) -> usize {
        match &self.inner {
            Inner::Builtin => 0,
            Inner::HuggingFace(t) => t
                .get_post_processor()
                .map_or(0, |p| tokenizers::PostProcessor::added_tokens(p, false)),
        }
    }

    /// `builtin:o200k_base`, or the path given for a Hugging Face tokenizer.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// SHA-256 (hex) of the vocabulary: the `tokenizer.json` bytes, or the canonical
    /// `o200k_base.tiktoken` file for the built-in one.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Token ids of `text`, no special tokens added. Special-token text in the input is
    /// encoded as ordinary text by the built-in tokenizer; a Hugging Face tokenizer matches
    /// its added tokens as it always does. An encoding failure (not expected once truncation
    /// is off) gives no tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match &self.inner {
            Inner::Builtin => o200k::encode(text),
            Inner::HuggingFace(t) => t
                .encode_fast(text, false)
                .map(|e| e.get_ids().to_vec())
                .unwrap_or_default(),
        }
    }

    /// Number of tokens of `text` (as `encode(text).len()`), for the hot path.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        match &self.inner {
            Inner::Builtin => o200k::count(text),
            // `encode_fast` skips offset tracking; the ids are not copied out.
            Inner::HuggingFace(t) => t.encode_fast(text, false).map(|e| e.len()).unwrap_or(0),
        }
    }

    /// Text of `ids`. Bytes that do not form valid UTF-8 (a window cutting a character)
    /// become U+FFFD. Unknown ids give an empty string.
    pub fn decode(&self, ids: &[u32]) -> String {
        match &self.inner {
            Inner::Builtin => o200k::decode_bytes(ids)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default(),
            Inner::HuggingFace(t) => t.decode(ids, false).unwrap_or_default(),
        }
    }

    /// One past the largest token id: `range(vocab)`. Built-in: the 199,998 ordinary ranks
    /// and the special tokens up to `<|endofprompt|>` (200,018), so 200,019, gaps included.
    /// Hugging Face: the largest id of the model's vocabulary and the added tokens, plus one.
    pub fn vocab_size(&self) -> u32 {
        match &self.inner {
            Inner::Builtin => self
                .special_ids()
                .into_iter()
                .map(|id| id.saturating_add(1))
                .fold(o200k::RANKS, u32::max),
            Inner::HuggingFace(t) => t
                .get_vocab(true)
                .into_values()
                .map(|id| id.saturating_add(1))
                .fold(0, u32::max),
        }
    }

    /// The special tokens' ids, ascending. Built-in: `<|endoftext|>` (199,999) and
    /// `<|endofprompt|>` (200,018), read from the loaded encoding. Hugging Face: the added
    /// tokens marked `"special": true` (what `all_special_ids` lists for the usual
    /// tokenizers; added tokens not marked special, such as `<think>`, are ordinary here).
    pub fn special_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = match &self.inner {
            Inner::Builtin => o200k::SPECIAL.iter().map(|(id, _)| *id).collect(),
            Inner::HuggingFace(t) => t
                .get_added_tokens_decoder()
                .into_iter()
                .filter(|(_, tok)| tok.special)
                .map(|(id, _)| id)
                .collect(),
        };
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The ids in `0..vocab_size()` that survive a round trip alone: they decode to valid
    /// UTF-8 (the built-in decoder gives bytes; a Hugging Face decoder's U+FFFD marks bytes
    /// that are not) and that text encodes back to exactly that one id. Ascending; computed
    /// on first use and kept.
    ///
    /// With a byte-level vocabulary (`o200k_base`, the usual BPEs) any sequence of such ids
    /// decodes to the concatenation of their texts, so a window never splits a character and
    /// decoding is lossless; this is what keeps the exact-length correction of a `random`
    /// corpus working as it does on text. Ids dropped: unused ranks, byte fragments of multi-byte characters, and
    /// tokens the encoder never produces alone (for the built-in tokenizer its special tokens
    /// too, since it encodes special-token text as ordinary text).
    pub fn round_trip_ids(&self) -> Arc<[u32]> {
        self.round_trip
            .get_or_init(|| {
                (0..self.vocab_size())
                    .filter(|&id| self.round_trips(id))
                    .collect()
            })
            .clone()
    }

    fn round_trips(&self, id: u32) -> bool {
        let text = match &self.inner {
            Inner::Builtin => match o200k::token_bytes(id).map(std::str::from_utf8) {
                Some(Ok(s)) => s.to_string(),
                _ => return false,
            },
            Inner::HuggingFace(t) => match t.decode(&[id], false) {
                Ok(s) if !s.contains('\u{FFFD}') => s,
                _ => return false,
            },
        };
        !text.is_empty() && self.encode(&text) == [id]
    }
}

/// SHA-256 of `o200k_base.tiktoken` as published (assets/): for each rank in order, the
/// token's bytes in standard base64, a space, the rank, a newline.
pub const O200K_SHA256: &str = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d";

#[cfg(test)]
fn tiktoken_file_sha256() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut line = String::new();
    for rank in 0..o200k::RANKS {
        let bytes = o200k::token_bytes(rank).unwrap_or_default();
        line.clear();
        base64_into(bytes, &mut line);
        line.push(' ');
        line.push_str(&rank.to_string());
        line.push('\n');
        h.update(line.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Standard base64 with padding (RFC 4648), only needed for the vocabulary hash.
#[cfg(test)]
fn base64_into(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn fixture_path() -> String {
        format!("{}/tests/data/tokenizer", env!("CARGO_MANIFEST_DIR"))
    }

    pub(crate) fn fixture() -> Tokenizer {
        Tokenizer::from_path(&fixture_path()).unwrap()
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Tokenizer>();
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut s = String::new();
            base64_into(input.as_bytes(), &mut s);
            assert_eq!(s, want, "{input}");
        }
    }

    #[test]
    fn builtin_hash_is_that_of_the_published_vocabulary_file() {
        let t = Tokenizer::builtin().unwrap();
        assert_eq!(t.name(), "builtin:o200k_base");
        // The constant is what a rebuild of the file from the compiled-in tables hashes to.
        assert_eq!(tiktoken_file_sha256(), O200K_SHA256);
        // `sha256sum o200k_base.tiktoken` of the file OpenAI publishes (assets/).
        assert_eq!(
            t.sha256(),
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
        );
    }

    #[test]
    fn builtin_known_encodings() {
        let t = Tokenizer::builtin().unwrap();
        // o200k_base: "hello world" is ["hello", " world"] = [24912, 2375].
        assert_eq!(t.encode("hello world"), vec![24912, 2375]);
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.decode(&[24912, 2375]), "hello world");
        assert_eq!(t.count(""), 0);
        // Special-token text is plain text here: more than one token.
        assert!(t.count("<|endoftext|>") > 1);
    }

    #[test]
    fn fixture_loads_from_dir_and_file_and_hashes_the_file() {
        let dir = fixture();
        let file = Tokenizer::from_path(&format!("{}/tokenizer.json", fixture_path())).unwrap();
        let bytes = std::fs::read(format!("{}/tokenizer.json", fixture_path())).unwrap();
        use sha2::Digest;
        let want = hex::encode(sha2::Sha256::digest(&bytes));
        assert_eq!(dir.sha256(), want);
        assert_eq!(file.sha256(), want);
        assert_eq!(dir.name(), fixture_path());
        let ids = dir.encode(" the king");
        // Vocabulary entries "Ġthe" = 268 and "Ġking" = 893 in the fixture's tokenizer.json.
        assert_eq!(ids, vec![268, 893]);
        assert_eq!(ids, file.encode(" the king"));
        assert_eq!(dir.decode(&ids), " the king");
        assert_eq!(dir.count(" the king"), ids.len());
    }

    #[test]
    fn fixture_adds_no_special_tokens() {
        let t = fixture();
        // Id 0 is <|endoftext|>, the fixture's bos/eos; it must not be added.
        let ids = t.encode("From fairest creatures we desire increase");
        assert!(!ids.contains(&0));
        assert_eq!(t.decode(&ids), "From fairest creatures we desire increase");
    }

    #[test]
    fn errors_name_the_path() {
        let e = Tokenizer::from_path("/nonexistent/tok")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/tok"), "{e}");
        let tmp = tempfile::Builder::new()
            .prefix("ib-wl-tok-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let e = Tokenizer::from_path(dir.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no tokenizer.json"), "{e}");
        let bad = dir.join("tokenizer.json");
        std::fs::write(&bad, b"{\"not\": \"a tokenizer\"}").unwrap();
        let e = Tokenizer::from_path(dir.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a Hugging Face tokenizer.json"), "{e}");
        assert!(e.contains(bad.to_str().unwrap()), "{e}");
    }
}
