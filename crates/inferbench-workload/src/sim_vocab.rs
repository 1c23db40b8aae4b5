//! Words for the simulated server: each one token on its own and in any sequence, so that
//! the client's count of a simulated response equals the number of words streamed.

use std::collections::HashSet;

use crate::corpus::Corpus;
use crate::tokenizer::Tokenizer;

/// Up to `max` distinct corpus words, each with a leading space (" the"), in order of first
/// appearance, each encoding to one token alone and next to the others.
///
/// Only ASCII-letter words are taken: a space followed by letters is a piece of its own for
/// the usual pre-tokenizers (GPT-style regex, byte-level), so neighbours cannot merge. That
/// is checked, not assumed: a word must also stay two tokens doubled and next to the first
/// word kept, on both sides.
pub fn single_token_words(tok: &Tokenizer, corpus: &Corpus, max: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    let mut pair = String::new();
    for word in corpus.text().split_whitespace() {
        if out.len() >= max {
            break;
        }
        if !word.bytes().all(|b| b.is_ascii_alphabetic()) || !seen.insert(word) {
            continue;
        }
        let w = format!(" {word}");
        if tok.count(&w) != 1 {
            continue;
        }
        let mut two_tokens = |a: &str, b: &str| {
            pair.clear();
            pair.push_str(a);
            pair.push_str(b);
            tok.count(&pair) == 2
        };
        let ok = two_tokens(&w, &w)
            && out
                .first()
                .is_none_or(|first| two_tokens(first, &w) && two_tokens(&w, first));
        if ok {
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::rng_for;
    use rand::Rng;

    #[test]
    fn any_sequence_of_words_counts_one_token_per_word() {
        let builtin = Tokenizer::builtin().unwrap();
        let fixture = crate::tokenizer::tests::fixture();
        for tok in [&builtin, &fixture] {
            let words = single_token_words(tok, Corpus::shakespeare(), 1000);
            assert!(
                words.len() >= 200,
                "{} words for {}",
                words.len(),
                tok.name()
            );
            assert!(words.len() <= 1000);
            let distinct: HashSet<&String> = words.iter().collect();
            assert_eq!(distinct.len(), words.len());
            assert!(words.iter().any(|w| w == " the"));
            for w in &words {
                assert!(w.starts_with(' ') && w.len() > 1);
                assert_eq!(tok.encode(w).len(), 1, "{w:?}");
            }
            let mut rng = rng_for(3, "test.words");
            for _ in 0..4 {
                let text: String = (0..500)
                    .map(|_| words[rng.random_range(0..words.len())].as_str())
                    .collect();
                assert_eq!(tok.count(&text), 500, "{}", tok.name());
            }
        }
    }

    #[test]
    fn respects_max_and_first_appearance_order() {
        let tok = Tokenizer::builtin().unwrap();
        let c = Corpus::from_text("the and the of the 12 and, thee to\n");
        let words = single_token_words(&tok, &c, 3);
        assert_eq!(words, vec![" the", " and", " of"]);
        assert!(single_token_words(&tok, &c, 0).is_empty());
    }
}
