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
pub fn split<'t>(text: &'t str, cache: &mut Cache, piece: impl FnMut(&'t str)) {
    if text.is_ascii() {
        split_ascii(text, piece)
    } else {
        split_regex(text, cache, piece)
    }
}

/// [`split`] by the automaton, whatever the text.
pub(super) fn split_regex<'t>(text: &'t str, cache: &mut Cache, mut piece: impl FnMut(&'t str)) {
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

/// [`split`] of ASCII text, where the pattern's classes are plain byte ranges (`\p{Lu}` is
/// `A-Z`, `\p{Ll}` is `a-z`, `\p{Lt}`, `\p{Lm}`, `\p{Lo}` and `\p{M}` hold no ASCII,
/// `\p{N}` is `0-9`, `\s` is tab to carriage return and space), matched by hand: most
/// responses are ASCII, and the automaton's search was a quarter of counting a response's
/// tokens. Tested piece for piece against the automaton.
pub(super) fn split_ascii<'t>(text: &'t str, mut piece: impl FnMut(&'t str)) {
    let b = text.as_bytes();
    let mut pos = 0;
    while pos < b.len() {
        let end = cut_back(text, pos, ascii_match(b, pos));
        piece(&text[pos..end]);
        pos = end;
    }
}

fn space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// Neither space nor letter nor digit (alternative 4's class).
fn other(c: u8) -> bool {
    !space(c) && !c.is_ascii_alphanumeric()
}

/// The end of the pattern's leftmost-first match at `pos` (`pos < b.len()`), alternative 6
/// left to `cut_back` as in [`split`].
fn ascii_match(b: &[u8], pos: usize) -> usize {
    let at = |i: usize| b.get(i).copied();
    let run = |mut i: usize, class: fn(u8) -> bool| {
        while at(i).is_some_and(class) {
            i += 1;
        }
        i
    };
    let c = b[pos];
    // 1 and 2: an optional lead (not a line break, letter or digit), then upper case letters
    // and lower case ones, at least one letter. 1 (`U*L+`) and 2 (`U+L*`) together take
    // `U*L*`, and both end where it does; then an optional contraction.
    let lead = c != b'\r' && c != b'\n' && !c.is_ascii_alphanumeric();
    let first = if lead { pos + 1 } else { pos };
    if at(first).is_some_and(|x| x.is_ascii_alphabetic()) {
        let end = run(run(first, |x| x.is_ascii_uppercase()), |x| {
            x.is_ascii_lowercase()
        });
        return end + contraction(&b[end..]);
    }
    // 3.
    if c.is_ascii_digit() {
        return run(pos, |x| x.is_ascii_digit()).min(pos + 3);
    }
    // 4: ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
    let start = if c == b' ' && at(pos + 1).is_some_and(other) {
        pos + 1
    } else {
        pos
    };
    if other(b[start]) {
        return run(run(start, other), |x| matches!(x, b'\r' | b'\n' | b'/'));
    }
    // 5 (`\s*[\r\n]+`: the space run up to its last line break), else 7 (`\s+`). Here `c`
    // is a space: every byte is a letter, a digit, space or `other`.
    let end = run(pos, space);
    match b[pos..end].iter().rposition(|&x| x == b'\r' || x == b'\n') {
        Some(last) => pos + last + 1,
        None => end,
    }
}

/// The length of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at the start of `b`, or 0.
fn contraction(b: &[u8]) -> usize {
    if b.first() != Some(&b'\'') {
        return 0;
    }
    let lower = |i: usize| b.get(i).map(u8::to_ascii_lowercase);
    match (lower(1), lower(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => 2,
        (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => 3,
        _ => 0,
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
