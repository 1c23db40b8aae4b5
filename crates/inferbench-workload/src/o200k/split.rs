//! The pre-split of `o200k_base`: text is cut into pieces by tiktoken's pattern before any
//! merging, and no token spans two pieces. The pattern, in order of preference:
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`
//! 6. `\s+(?!\S)`
//! 7. `\s+`
//!
//! A finite automaton cannot look ahead, so alternative 6 is dropped and its effect restored
//! by hand. It only matters where 1 to 5 fail, that is at a run of whitespace holding no
//! `\r` or `\n`: there 6 takes the whole run when it ends the text, and otherwise all of it
//! but its last character when that leaves at least one (the last space then starts the next
//! piece, " word"). Without 6, alternative 7 takes the whole run, so such a match of two or
//! more characters, not at the end, is cut back by one character. The rest of the pattern is
//! matched as the backtracking engine does: leftmost-first, anchored where the previous
//! piece ended (every character starts some alternative, so the pieces tile the text).

use std::sync::OnceLock;

use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

const PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

fn regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // The pattern is a constant, tested to compile.
    RE.get_or_init(|| Regex::new(PATTERN).expect("the o200k pre-split pattern compiles"))
}

/// A search cache for [`split`] (each thread keeps its own: the regex's shared pool would
/// serialise threads).
pub fn new_cache() -> Cache {
    regex().create_cache()
}

/// Calls `piece` with each piece of `text`, in order; together they are `text`.
pub fn split<'t>(text: &'t str, cache: &mut Cache, mut piece: impl FnMut(&'t str)) {
    let re = regex();
    let mut pos = 0;
    while pos < text.len() {
        let input = Input::new(text).range(pos..).anchored(Anchored::Yes);
        let end = match re.search_half_with(cache, &input) {
            Some(m) if m.offset() > pos => cut_back(text, pos, m.offset()),
            // Not reached (alternative 4 or 7 matches any character); a character of its own
            // keeps the text covered if it were.
            _ => pos + text[pos..].chars().next().map_or(1, char::len_utf8),
        };
        piece(&text[pos..end]);
        pos = end;
    }
}

/// Alternative 6's look-ahead: a match of `text[start..end]` that is all whitespace without a
/// line break (alternative 7's), at least two characters and followed by more text, gives up
/// its last character.
fn cut_back(text: &str, start: usize, end: usize) -> usize {
    if end == text.len() {
        return end;
    }
    // Most pieces start with a letter or a space and a letter: `all` stops at the first
    // non-whitespace character, before the line-break scan.
    let m = &text[start..end];
    if !m.chars().all(char::is_whitespace) || m.contains(['\r', '\n']) {
        return end;
    }
    match m.char_indices().next_back() {
        Some((last, _)) if last > 0 => start + last,
        _ => end,
    }
}
