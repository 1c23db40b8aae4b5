//! The built-in tokenizer: OpenAI's `o200k_base`, from the vocabulary file in assets/ (laid
//! out at build time by build.rs, so loading costs nothing), tiktoken's pre-split pattern
//! (split.rs) and its byte-pair merging (merge.rs). Ordinary text only: special-token text is
//! encoded as the characters it is, as tiktoken's `encode_ordinary` does. Tested token for
//! token against tiktoken-rs (tests.rs).

use std::cell::RefCell;

mod hash;
mod hot;
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

/// A thread's search cache and lookup memo.
struct Scratch {
    regex: regex_automata::meta::Cache,
    hot: hot::Hot,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// Calls `token` with the rank of each token of `text`, in order.
fn each_token(text: &str, mut token: impl FnMut(u32)) {
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let Scratch { regex, hot } = guard.get_or_insert_with(|| Scratch {
            regex: split::new_cache(),
            hot: hot::Hot::new(),
        });
        split::split(text, regex, |piece| match hot.rank(piece.as_bytes()) {
            Some(r) => token(r),
            None => merge::merge(piece.as_bytes(), hot, &mut token),
        });
    });
}

/// The token ids of `text`.
pub fn encode(text: &str) -> Vec<u32> {
    let mut ids = Vec::with_capacity(text.len() / 4 + 1);
    each_token(text, |r| ids.push(r));
    ids
}

/// `encode(text).len()`, without building the list.
pub fn count(text: &str) -> usize {
    let mut n = 0;
    each_token(text, |_| n += 1);
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
