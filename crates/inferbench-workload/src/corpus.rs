//! The prompt corpus: the text synthetic prompts are cut from, tokenized once per tokenizer.
//!
//! The bundled corpus (`assets/shakespeare.txt`) is the first 299,962 bytes (8,471 lines,
//! from "THE SONNETS" and cut at a line end) of the public-domain Shakespeare text that AIPerf
//! ships as its `sonnet` corpus (`aiperf/dataset/generator/assets/shakespeare.txt`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use inferbench_core::seed::sha256_hex;

use crate::tokenizer::Tokenizer;

/// The bundled corpus text, exactly as shipped.
pub const SHAKESPEARE: &str = include_str!("../assets/shakespeare.txt");

/// Token ids keyed by (tokenizer name, vocabulary hash).
type TokenCache = HashMap<(String, String), Arc<[u32]>>;

pub struct Corpus {
    text: String,
    sha256: String,
    tokens: Mutex<TokenCache>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("bytes", &self.text.len())
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// A corpus over `text`. Its hash is of the bytes given.
    pub fn from_text(text: impl Into<String>) -> Corpus {
        let text = text.into();
        Corpus {
            sha256: sha256_hex(text.as_bytes()),
            text,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// The bundled Shakespeare corpus, shared process-wide so its tokenization is cached.
    pub fn shakespeare() -> &'static Corpus {
        static C: OnceLock<Corpus> = OnceLock::new();
        C.get_or_init(|| Corpus::from_text(SHAKESPEARE))
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// SHA-256 (hex) of the corpus bytes as stored (`sha256sum assets/shakespeare.txt`).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The text that is tokenized: every line trimmed, empty lines dropped, the rest joined
    /// with one space, so prompts hold no line breaks (as AIPerf's prompts show).
    pub fn normalized(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for line in self.text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line);
        }
        out
    }

    /// Token ids of the normalized text under `tok`, computed on first use and cached.
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
