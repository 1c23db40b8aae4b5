//! Synthetic prompts of an exact token length (AIPerf §3.1): a contiguous window of the
//! tokenized corpus at a random offset, decoded, then corrected until it re-encodes to exactly
//! the length wanted.

use std::sync::Arc;

use inferbench_core::seed::derive_seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::tokenizer::Tokenizer;

/// Purpose labels of the named generators (see `inferbench_core::seed::derive_seed`).
pub const PURPOSE_PROMPTS: &str = "dataset";
pub const PURPOSE_ISL: &str = "dataset.isl";
pub const PURPOSE_OSL: &str = "dataset.osl";
pub const PURPOSE_SAMPLING: &str = "dataset.sampling";
/// The token ids of a `--prompt-corpus random` corpus (`Corpus::random`).
pub const PURPOSE_RANDOM_CORPUS: &str = "corpus.random";

/// Decode/re-encode rounds tried at one offset before moving on.
const FIX_ROUNDS: usize = 16;
/// Offsets tried before giving up (in practice the first one almost always fits).
const MAX_OFFSETS: usize = 64;
/// Step between the offsets tried; a prime, so retries land far from each other.
const RETRY_STRIDE: usize = 7_919;

/// The seed to use: the one given, or a fresh one from OS entropy (record it in the manifest).
pub fn resolve_seed(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(rand::random)
}

/// The generator for `purpose` under `seed`.
pub fn rng_for(seed: u64, purpose: &str) -> ChaCha8Rng {
    ChaCha8Rng::from_seed(derive_seed(seed, purpose))
}

/// AIPerf's `sample_positive_normal_integer`: a normal draw rounded to the nearest integer and
/// at least 1. A zero (or invalid) stddev gives the mean itself, rounded, without drawing.
pub fn sample_positive_normal_integer<R: Rng + ?Sized>(rng: &mut R, mean: f64, stddev: f64) -> u64 {
    if !mean.is_finite() {
        return 0;
    }
    if !(stddev > 0.0 && stddev.is_finite()) {
        return mean.round().max(0.0) as u64;
    }
    match Normal::new(mean, stddev) {
        Ok(d) => d.sample(rng).round().max(1.0) as u64,
        Err(_) => mean.round().max(0.0) as u64,
    }
}

/// Makes prompts of exact lengths from a corpus, drawing offsets from the `dataset` generator.
pub struct PromptGenerator<'a> {
    tok: &'a Tokenizer,
    tokens: Arc<[u32]>,
    rng: ChaCha8Rng,
}

impl<'a> PromptGenerator<'a> {
    pub fn new(tok: &'a Tokenizer, corpus: &Corpus, seed: u64) -> Result<Self, WorkloadError> {
        Self::with_purpose(tok, corpus, seed, PURPOSE_PROMPTS)
    }

    /// A generator drawing its offsets from the `purpose` generator, so that texts made for
    /// another purpose (prefixes, system prompts) do not shift the user prompts.
    pub fn with_purpose(
        tok: &'a Tokenizer,
        corpus: &Corpus,
        seed: u64,
        purpose: &str,
    ) -> Result<Self, WorkloadError> {
        let tokens = corpus.tokens(tok);
        if tokens.is_empty() {
            return Err(WorkloadError::EmptyCorpus {
                tokenizer: tok.name().to_string(),
            });
        }
        Ok(PromptGenerator {
            tok,
            tokens,
            rng: rng_for(seed, purpose),
        })
    }

    /// A prompt that encodes to exactly `n` tokens ("" for 0; no offset is drawn then).
    pub fn prompt(&mut self, n: usize) -> Result<String, WorkloadError> {
        if n == 0 {
            return Ok(String::new());
        }
        let offset = self.rng.random_range(0..self.tokens.len());
        exact_length_text(self.tok, &self.tokens, offset, n)
    }
}

/// Text that `tok` encodes to exactly `n` tokens, cut from `corpus` (token ids) starting at
/// `offset` and wrapping at the end. Deterministic for its inputs.
pub fn exact_length_text(
    tok: &Tokenizer,
    corpus: &[u32],
    offset: usize,
    n: usize,
) -> Result<String, WorkloadError> {
    if n == 0 {
        return Ok(String::new());
    }
    if corpus.is_empty() {
        return Err(WorkloadError::EmptyCorpus {
            tokenizer: tok.name().to_string(),
        });
    }
    for attempt in 0..MAX_OFFSETS {
        let start = (offset + attempt * RETRY_STRIDE) % corpus.len();
        if let Some(text) = fit_at(tok, corpus, start, n) {
            return Ok(text);
        }
    }
    Err(WorkloadError::ExactLength {
        tokens: n,
        tokenizer: tok.name().to_string(),
    })
}

/// Appends `len` ids of `corpus` from `start`, wrapping around.
fn push_window(corpus: &[u32], start: usize, len: usize, out: &mut Vec<u32>) {
    let mut pos = start % corpus.len();
    let mut left = len;
    while left > 0 {
        let take = left.min(corpus.len() - pos);
        out.extend_from_slice(&corpus[pos..pos + take]);
        left -= take;
        pos = 0;
    }
}

/// Decoding a window and re-encoding it can merge or split tokens at the seams, so the count
/// may drift. Each round re-encodes the text, then cuts the excess tokens or appends the
/// following corpus tokens, and checks again. None when it does not settle.
fn fit_at(tok: &Tokenizer, corpus: &[u32], start: usize, n: usize) -> Option<String> {
    let mut ids = Vec::with_capacity(n + 8);
    push_window(corpus, start, n, &mut ids);
    let mut next = start + n;
    for _ in 0..FIX_ROUNDS {
        let text = tok.decode(&ids);
        let enc = tok.encode(&text);
        if enc.len() == n {
            return Some(text);
        }
        ids = enc;
        if ids.len() > n {
            ids.truncate(n);
        } else {
            let missing = n - ids.len();
            push_window(corpus, next, missing, &mut ids);
            next += missing;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::tests::fixture;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    fn builtin() -> &'static Tokenizer {
        static T: OnceLock<Tokenizer> = OnceLock::new();
        T.get_or_init(|| Tokenizer::builtin().unwrap())
    }

    fn fixture_tok() -> &'static Tokenizer {
        static T: OnceLock<Tokenizer> = OnceLock::new();
        T.get_or_init(fixture)
    }

    #[test]
    fn zero_stddev_gives_the_mean_without_drawing() {
        let mut rng = rng_for(1, PURPOSE_ISL);
        let before = rng.clone();
        assert_eq!(sample_positive_normal_integer(&mut rng, 550.0, 0.0), 550);
        assert_eq!(sample_positive_normal_integer(&mut rng, 0.0, 0.0), 0);
        assert_eq!(sample_positive_normal_integer(&mut rng, 2.6, 0.0), 3);
        assert_eq!(rng, before);
    }

    #[test]
    fn normal_draws_are_positive_and_centred() {
        let mut rng = rng_for(7, PURPOSE_ISL);
        let draws: Vec<u64> = (0..20_000)
            .map(|_| sample_positive_normal_integer(&mut rng, 100.0, 10.0))
            .collect();
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - 100.0).abs() < 0.5, "{mean}");
        let mut rng = rng_for(7, PURPOSE_ISL);
        assert!((0..5_000).all(|_| sample_positive_normal_integer(&mut rng, 1.0, 5.0) >= 1));
    }

    #[test]
    fn window_wraps_at_the_end() {
        let mut out = Vec::new();
        push_window(&[1, 2, 3], 2, 5, &mut out);
        assert_eq!(out, vec![3, 1, 2, 3, 1]);
    }

    #[test]
    fn zero_tokens_is_empty() {
        let mut g = PromptGenerator::new(builtin(), Corpus::shakespeare(), 1).unwrap();
        assert_eq!(g.prompt(0).unwrap(), "");
    }

    #[test]
    fn wrapping_prompt_has_exact_length() {
        let tok = builtin();
        let ids = Corpus::shakespeare().tokens(tok);
        let text = exact_length_text(tok, &ids, ids.len() - 3, 40).unwrap();
        assert_eq!(tok.count(&text), 40);
        // The window crossed the end, so the corpus start follows its last words.
        assert!(text.contains("THE SONNETS"), "{text}");
    }

    #[test]
    fn same_seed_same_prompts_other_seed_other_prompts() {
        let run = |seed| {
            let mut g = PromptGenerator::new(builtin(), Corpus::shakespeare(), seed).unwrap();
            (0..5).map(|_| g.prompt(64).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(run(42), run(42));
        assert_ne!(run(42), run(43));
        let p = run(42);
        assert!(
            p.iter()
                .all(|t| builtin().count(t) == 64 && !t.contains('\n'))
        );
    }

    #[test]
    fn aiperf_fixture_prompts_count_32_with_the_fixture_tokenizer() {
        // AIPerf made these with --isl 32 and this tokenizer; our loader must agree.
        let path = format!(
            "{}/../../../shared/fixtures/S1-chat-stream/aiperf/inputs.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let Ok(text) = std::fs::read_to_string(&path) else {
            return; // the shared fixtures are not part of every clone
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let tok = fixture_tok();
        for s in v["data"].as_array().unwrap() {
            let content = s["payloads"][0]["messages"][0]["content"].as_str().unwrap();
            assert_eq!(tok.count(content), 32, "{content}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn prompts_re_encode_to_exactly_n(n in 1usize..600, seed in any::<u64>()) {
            for tok in [builtin(), fixture_tok()] {
                let mut g = PromptGenerator::new(tok, Corpus::shakespeare(), seed).unwrap();
                let text = g.prompt(n).unwrap();
                prop_assert_eq!(tok.encode(&text).len(), n);
                prop_assert_eq!(tok.count(&text), n);
            }
        }
    }
}
