//! The built-in tokenizer: OpenAI's `o200k_base`, from the vocabulary file in assets/ (laid
//! out at build time by build.rs, so loading costs nothing), tiktoken's pre-split pattern
//! (split.rs) and its byte-pair merging (merge.rs). Ordinary text only: special-token text is
//! encoded as the characters it is, as tiktoken's `encode_ordinary` does. Tested token for
//! token against tiktoken-rs (tests.rs).

mod hash;
mod merge;
mod split;
mod table;
#[cfg(test)]
mod tests;

pub use table::RANKS;

/// `<|endoftext|>`.
pub const ENDOFTEXT: u32 = 199_999;
/// `<|endofprompt|>`.
pub const ENDOFPROMPT: u32 = 200_018;

/// The special tokens and their text.
pub const SPECIAL: [(u32, &str); 2] = [
    (ENDOFTEXT, "<|endoftext|>"),
    (ENDOFPROMPT, "<|endofprompt|>"),
];

/// The token ids of `text`.
pub fn encode(text: &str) -> Vec<u32> {
    let mut ids = Vec::with_capacity(text.len() / 4 + 1);
    split::split(text, |piece| match table::rank(piece.as_bytes()) {
        Some(r) => ids.push(r),
        None => merge::merge(piece.as_bytes(), &mut |r| ids.push(r)),
    });
    ids
}

/// `encode(text).len()`, without building the list.
pub fn count(text: &str) -> usize {
    let mut n = 0;
    split::split(text, |piece| {
        if table::rank(piece.as_bytes()).is_some() {
            n += 1;
        } else {
            merge::merge(piece.as_bytes(), &mut |_| n += 1);
        }
    });
    n
}

/// The bytes of one token, ordinary or special.
pub fn token_bytes(id: u32) -> Option<&'static [u8]> {
    table::token(id).or_else(|| {
        SPECIAL
            .iter()
            .find(|(s, _)| *s == id)
            .map(|(_, text)| text.as_bytes())
    })
}

/// The bytes `ids` stand for, or `None` when one of them is no token.
pub fn decode_bytes(ids: &[u32]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for &id in ids {
        out.extend_from_slice(token_bytes(id)?);
    }
    Some(out)
}
