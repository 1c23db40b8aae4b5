//! The prompt corpora: the text synthetic prompts are cut from, tokenized once per tokenizer
//! (`--prompt-corpus`, AIPerf §1.4 and §3.1).
//!
//! - `sonnet` (the default): `assets/shakespeare.txt`, the first 299,962 bytes (8,471 lines,
//!   from "THE SONNETS" and cut at a line end) of the public-domain Shakespeare text that
//!   AIPerf ships as its `sonnet` corpus (`aiperf/dataset/generator/assets/shakespeare.txt`).
//!   Lines are joined with single spaces before tokenizing.
//! - `coding`: `assets/coding.txt`, our own text (not AIPerf's): this repository's Rust
//!   sources, manifests and docs, with short shell sessions, JSON documents, Python-style
//!   tracebacks and unified diffs written for it, made by `assets/make_coding_corpus.sh`.
//!   ASCII only; tokenized as written, line breaks and indentation kept.
//! - `random`: token ids drawn from the tokenizer's vocabulary (see [`Corpus::random`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use inferbench_core::dataset_plan::DatasetPlan;
use inferbench_core::seed::sha256_hex;
use rand::Rng;

use crate::error::WorkloadError;
use crate::synthetic::{PURPOSE_RANDOM_CORPUS, rng_for};
use crate::tokenizer::{BUILTIN_NAME, O200K_SHA256, Tokenizer};

/// The bundled Shakespeare text, exactly as shipped.
pub const SHAKESPEARE: &str = include_str!("../assets/shakespeare.txt");

/// The token ids of [`SHAKESPEARE`] (normalized) under the built-in tokenizer, as
/// little-endian `u32`s: tokenizing the text took about 11 ms of every run's start. A test
/// checks them against the tokenizer, and rewrites the file when asked (assets/README.md).
const SHAKESPEARE_O200K_IDS: &[u8] = include_bytes!("../assets/shakespeare.o200k_base.ids");

/// The bundled coding text, exactly as `assets/make_coding_corpus.sh` wrote it.
pub const CODING: &str = include_str!("../assets/coding.txt");

/// Token ids in a `random` corpus (2^18; a prompt longer than this wraps around).
pub const RANDOM_CORPUS_TOKENS: usize = 262_144;

/// Token ids keyed by (tokenizer name, vocabulary hash).
type TokenCache = HashMap<(String, String), Arc<[u32]>>;

pub struct Corpus {
    text: String,
    sha256: String,
    /// Lines are trimmed and joined with one space before tokenizing (`sonnet`); otherwise
    /// the text is tokenized as it is.
    join_lines: bool,
    tokens: Mutex<TokenCache>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("bytes", &self.text.len())
            .field("sha256", &self.sha256)
            .field("join_lines", &self.join_lines)
            .finish_non_exhaustive()
    }
}

impl Clone for Corpus {
    /// A copy holding the same text and the token ids cached so far.
    fn clone(&self) -> Self {
        let cache = self
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Corpus {
            text: self.text.clone(),
            sha256: self.sha256.clone(),
            join_lines: self.join_lines,
            tokens: Mutex::new(cache),
        }
    }
}

impl Corpus {
    /// A corpus over `text` whose lines are joined with one space before tokenizing (as the
    /// `sonnet` corpus). Its hash is of the bytes given.
    pub fn from_text(text: impl Into<String>) -> Corpus {
        Self::new(text.into(), true)
    }

    /// A corpus over `text`, tokenized exactly as given (line breaks and indentation kept,
    /// as the `coding` corpus). Its hash is of the bytes given.
    pub fn from_raw_text(text: impl Into<String>) -> Corpus {
        Self::new(text.into(), false)
    }

    fn new(text: String, join_lines: bool) -> Corpus {
        Corpus {
            sha256: sha256_hex(text.as_bytes()),
            text,
            join_lines,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// The bundled Shakespeare corpus (`sonnet`), shared process-wide so its tokenization is
    /// cached.
    pub fn shakespeare() -> &'static Corpus {
        static C: OnceLock<Corpus> = OnceLock::new();
        C.get_or_init(|| {
            let c = Corpus::from_text(SHAKESPEARE);
            let ids: Arc<[u32]> = SHAKESPEARE_O200K_IDS
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            let key = (BUILTIN_NAME.to_string(), O200K_SHA256.to_string());
            c.tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, ids);
            c
        })
    }

    /// The bundled coding corpus (`coding`), shared process-wide so its tokenization is
    /// cached. Tokenized as written.
    pub fn coding() -> &'static Corpus {
        static C: OnceLock<Corpus> = OnceLock::new();
        C.get_or_init(|| Corpus::from_raw_text(CODING))
    }

    /// AIPerf's `random` corpus: [`RANDOM_CORPUS_TOKENS`] ids drawn uniformly, with
    /// replacement, from a pool of `tok`'s vocabulary, by the `corpus.random` generator of
    /// `seed`. The pool is `tok.round_trip_ids()` (ids that decode to valid UTF-8 and
    /// re-encode to themselves, so that decoding a window never splits a character and
    /// exact-length correction works as on text), and in `vllm` style without
    /// `tok.special_ids()`; `sglang` style keeps the special tokens that survive the round
    /// trip (AIPerf's "full `range(vocab)`").
    ///
    /// The ids are cached for `tok`, so prompts are windows of this exact sequence. `text()`
    /// is their decoded text (what another tokenizer would see), and `sha256()` is the hash
    /// of the ids as little-endian `u32`s, 4 bytes each: same seed, tokenizer and style give
    /// the same hash.
    pub fn random(
        tok: &Tokenizer,
        seed: u64,
        style: RandomCorpusStyle,
    ) -> Result<Corpus, WorkloadError> {
        let round_trip = tok.round_trip_ids();
        let pool: Vec<u32> = match style {
            RandomCorpusStyle::Sglang => round_trip.to_vec(),
            RandomCorpusStyle::Vllm => {
                let special = tok.special_ids();
                round_trip
                    .iter()
                    .copied()
                    .filter(|id| special.binary_search(id).is_err())
                    .collect()
            }
        };
        if pool.is_empty() {
            return Err(WorkloadError::Plan {
                field: "dataset.prompt_corpus",
                message: format!(
                    "--prompt-corpus random: no token id of tokenizer {} decodes and re-encodes \
                     to itself, so there is nothing to draw from",
                    tok.name()
                ),
            });
        }
        let mut rng = rng_for(seed, PURPOSE_RANDOM_CORPUS);
        let ids: Vec<u32> = (0..RANDOM_CORPUS_TOKENS)
            .map(|_| pool[rng.random_range(0..pool.len())])
            .collect();
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        let mut cache = HashMap::new();
        cache.insert(
            (tok.name().to_string(), tok.sha256().to_string()),
            Arc::from(ids.as_slice()),
        );
        Ok(Corpus {
            text: tok.decode(&ids),
            sha256: sha256_hex(&bytes),
            join_lines: false,
            tokens: Mutex::new(cache),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// SHA-256 (hex) of the corpus bytes as stored (`sha256sum assets/shakespeare.txt`); for a
    /// `random` corpus, of its token ids.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The text that is tokenized. For a corpus made by [`Corpus::from_text`] (`sonnet`):
    /// every line trimmed, empty lines dropped, the rest joined with one space, so prompts
    /// hold no line breaks (as AIPerf's prompts show). Otherwise the text as it is.
    pub fn normalized(&self) -> Cow<'_, str> {
        if !self.join_lines {
            return Cow::Borrowed(&self.text);
        }
        let mut out = String::with_capacity(self.text.len());
        for line in self.text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line);
        }
        Cow::Owned(out)
    }

    /// Token ids of the normalized text under `tok`, computed on first use and cached (a
    /// `random` corpus holds its ids for the tokenizer it was drawn for).
    pub fn tokens(&self, tok: &Tokenizer) -> Arc<[u32]> {
        let key = (tok.name().to_string(), tok.sha256().to_string());
        // Held while tokenizing so that concurrent first users do the work once.
        let mut cache = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| tok.encode(&self.normalized()).into())
            .clone()
    }
}

/// `--random-corpus-style`: which ids a `random` corpus draws from (and, elsewhere, how
/// `--random-range-ratio` makes its window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RandomCorpusStyle {
    /// vLLM's: the vocabulary without its special tokens (the default).
    #[default]
    Vllm,
    /// SGLang's: the whole `range(vocab)`.
    Sglang,
}

impl RandomCorpusStyle {
    /// The plan's style: None is `vllm`; anything but `vllm` or `sglang` is an error naming
    /// the option.
    pub fn from_plan(ds: &DatasetPlan) -> Result<Self, WorkloadError> {
        match ds.random_corpus_style.as_deref() {
            None | Some("vllm") => Ok(RandomCorpusStyle::Vllm),
            Some("sglang") => Ok(RandomCorpusStyle::Sglang),
            Some(other) => Err(WorkloadError::Plan {
                field: "dataset.random_corpus_style",
                message: format!("--random-corpus-style {other:?} is not vllm or sglang"),
            }),
        }
    }
}

/// `--prompt-corpus`: which corpus synthetic prompts are cut from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptCorpus {
    /// The corpus the caller passes in (`Corpus::shakespeare()` in the binary).
    Sonnet,
    /// [`Corpus::coding`].
    Coding,
    /// [`Corpus::random`] for the run's tokenizer and seed.
    Random(RandomCorpusStyle),
}

impl PromptCorpus {
    /// The names `--prompt-corpus` takes.
    pub const NAMES: [&'static str; 3] = ["sonnet", "coding", "random"];

    /// The plan's corpus: None is `sonnet`; an unknown name is an error listing the names.
    /// `--random-corpus-style` is checked whatever the corpus.
    pub fn from_plan(ds: &DatasetPlan) -> Result<Self, WorkloadError> {
        let style = RandomCorpusStyle::from_plan(ds)?;
        match ds.prompt_corpus.as_deref() {
            None | Some("sonnet") => Ok(PromptCorpus::Sonnet),
            Some("coding") => Ok(PromptCorpus::Coding),
            Some("random") => Ok(PromptCorpus::Random(style)),
            Some(other) => Err(WorkloadError::Plan {
                field: "dataset.prompt_corpus",
                message: format!(
                    "--prompt-corpus {other:?} is not a corpus (known: {})",
                    Self::NAMES.join(", ")
                ),
            }),
        }
    }

    /// The corpus to cut prompts from: `sonnet` for `Sonnet`, the bundled coding corpus, or
    /// a random corpus drawn for `tok` under `seed`.
    pub fn resolve<'a>(
        self,
        tok: &Tokenizer,
        sonnet: &'a Corpus,
        seed: u64,
    ) -> Result<Cow<'a, Corpus>, WorkloadError> {
        Ok(match self {
            PromptCorpus::Sonnet => Cow::Borrowed(sonnet),
            PromptCorpus::Coding => Cow::Borrowed(Corpus::coding()),
            PromptCorpus::Random(style) => Cow::Owned(Corpus::random(tok, seed, style)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_corpus_is_the_sonnets_slice() {
        let c = Corpus::shakespeare();
        assert!(
            c.text()
                .starts_with("THE SONNETS\n1\nFrom fairest creatures")
        );
        assert!(c.text().ends_with('\n'));
        assert_eq!(c.text().len(), 299_962);
        assert_eq!(c.text().lines().count(), 8_471);
        assert_eq!(c.sha256().len(), 64);
    }

    /// The stored ids are what the tokenizer gives for the text, read from a fresh corpus
    /// (whose cache holds nothing). `INFERBENCH_WRITE_ASSETS=1` rewrites the file instead,
    /// after a change to the corpus or the tokenizer.
    #[test]
    fn stored_sonnet_ids_are_the_built_in_tokenizers() {
        let tok = Tokenizer::builtin().unwrap();
        let fresh = Corpus::from_text(SHAKESPEARE).tokens(&tok);
        if std::env::var_os("INFERBENCH_WRITE_ASSETS").is_some() {
            let bytes: Vec<u8> = fresh.iter().flat_map(|id| id.to_le_bytes()).collect();
            let path = concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/assets/shakespeare.o200k_base.ids"
            );
            std::fs::write(path, bytes).unwrap();
            return;
        }
        let stored = Corpus::shakespeare().tokens(&tok);
        assert_eq!(stored.len(), 66_984);
        assert!(
            *stored == *fresh,
            "assets/shakespeare.o200k_base.ids is stale: INFERBENCH_WRITE_ASSETS=1 cargo test -p inferbench-workload stored_sonnet_ids"
        );
        // Another tokenizer still tokenizes the text itself.
        let fixture = format!("{}/tests/data/tokenizer", env!("CARGO_MANIFEST_DIR"));
        let other = Tokenizer::from_path(&fixture).unwrap();
        assert_eq!(
            *Corpus::shakespeare().tokens(&other),
            *other.encode(&Corpus::shakespeare().normalized())
        );
    }

    #[test]
    fn normalization_joins_trimmed_lines() {
        let c = Corpus::from_text("a b\n\n  c  \nd\n");
        assert_eq!(c.normalized(), "a b c d");
        // sha256("abc") from FIPS 180-2.
        assert_eq!(
            Corpus::from_text("abc").sha256(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn raw_text_is_tokenized_as_written() {
        let c = Corpus::from_raw_text("fn f() {\n    1\n}\n");
        assert_eq!(c.normalized(), "fn f() {\n    1\n}\n");
        let b = Tokenizer::builtin().unwrap();
        assert_eq!(b.decode(&c.tokens(&b)), "fn f() {\n    1\n}\n");
        // A copy keeps the ids already cached.
        let copy = c.clone();
        assert!(Arc::ptr_eq(&c.tokens(&b), &copy.tokens(&b)));
        assert_eq!(copy.sha256(), c.sha256());
    }

    #[test]
    fn corpus_names_and_styles() {
        let mut ds = DatasetPlan::default();
        assert_eq!(PromptCorpus::from_plan(&ds).unwrap(), PromptCorpus::Sonnet);
        ds.prompt_corpus = Some("coding".into());
        assert_eq!(PromptCorpus::from_plan(&ds).unwrap(), PromptCorpus::Coding);
        ds.prompt_corpus = Some("random".into());
        assert_eq!(
            PromptCorpus::from_plan(&ds).unwrap(),
            PromptCorpus::Random(RandomCorpusStyle::Vllm)
        );
        ds.random_corpus_style = Some("sglang".into());
        assert_eq!(
            PromptCorpus::from_plan(&ds).unwrap(),
            PromptCorpus::Random(RandomCorpusStyle::Sglang)
        );
        ds.random_corpus_style = Some("SGLang".into());
        let e = PromptCorpus::from_plan(&ds).unwrap_err().to_string();
        assert!(e.contains("plan.dataset.random_corpus_style"), "{e}");
        ds.random_corpus_style = None;
        ds.prompt_corpus = Some("Sonnet".into());
        let e = PromptCorpus::from_plan(&ds).unwrap_err().to_string();
        assert_eq!(
            e,
            "plan.dataset.prompt_corpus: --prompt-corpus \"Sonnet\" is not a corpus \
             (known: sonnet, coding, random)"
        );
    }

    #[test]
    fn resolve_picks_the_corpus() {
        let b = Tokenizer::builtin().unwrap();
        let mine = Corpus::from_text("a b c");
        let got = PromptCorpus::Sonnet.resolve(&b, &mine, 1).unwrap();
        assert!(std::ptr::eq(&*got, &mine));
        let got = PromptCorpus::Coding.resolve(&b, &mine, 1).unwrap();
        assert!(std::ptr::eq(&*got, Corpus::coding()));
        assert!(got.text().starts_with("// file: "));
    }

    #[test]
    fn tokens_are_cached_per_tokenizer() {
        let c = Corpus::from_text("From fairest creatures we desire increase\n");
        let b = Tokenizer::builtin().unwrap();
        let f = crate::tokenizer::tests::fixture();
        let t1 = c.tokens(&b);
        let t2 = c.tokens(&b);
        assert!(Arc::ptr_eq(&t1, &t2));
        let tf = c.tokens(&f);
        assert_eq!(
            &*tf,
            f.encode("From fairest creatures we desire increase")
                .as_slice()
        );
        assert_eq!(b.decode(&t1), "From fairest creatures we desire increase");
    }
}
