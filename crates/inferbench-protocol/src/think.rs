//! `--reasoning-tags think`: moving text between `<think>` and `</think>` out of the content
//! into reasoning, for servers that stream a reasoning model's thoughts inline.
//!
//! The splitter is fed the content pieces of one response in order. A tag may be cut across
//! pieces (`<thi` + `nk>`): the possible start of a tag is held back until the next piece
//! shows whether it is one, and [`ThinkSplitter::finish`] releases whatever is still held at
//! the end. Reasoning starts only at an explicit `<think>`: text before it is content, even
//! when a later `</think>` suggests the server dropped the opening tag. A `</think>` outside
//! reasoning and a `<think>` inside it are ordinary text. The tags themselves are dropped.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits a stream of content pieces into content and reasoning. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThinkSplitter {
    in_think: bool,
    /// A suffix of the text seen so far that may be the start of the next tag.
    held: String,
}

impl ThinkSplitter {
    /// Whether the text so far ended inside `<think>…` (no closing tag yet).
    pub fn in_reasoning(&self) -> bool {
        self.in_think
    }

    /// Feeds the next content piece; returns the (content, reasoning) text it releases.
    pub fn push(&mut self, piece: &str) -> (String, String) {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut buf = std::mem::take(&mut self.held);
        buf.push_str(piece);
        let mut rest = buf.as_str();
        loop {
            let tag = if self.in_think { CLOSE } else { OPEN };
            let out = if self.in_think {
                &mut reasoning
            } else {
                &mut content
            };
            match rest.find(tag) {
                Some(i) => {
                    out.push_str(&rest[..i]);
                    rest = &rest[i + tag.len()..];
                    self.in_think = !self.in_think;
                }
                None => {
                    let keep = partial_tag_len(rest, tag);
                    out.push_str(&rest[..rest.len() - keep]);
                    self.held = rest[rest.len() - keep..].to_string();
                    break;
                }
            }
        }
        (content, reasoning)
    }

    /// Ends the response: a held partial tag was text after all, and goes where the text
    /// around it went.
    pub fn finish(&mut self) -> (String, String) {
        let held = std::mem::take(&mut self.held);
        if self.in_think {
            (String::new(), held)
        } else {
            (held, String::new())
        }
    }

    /// Splits one whole text (a non-streamed body): `push` then `finish`.
    pub fn split_all(text: &str) -> (String, String) {
        let mut s = ThinkSplitter::default();
        let (mut c, mut r) = s.push(text);
        let (c2, r2) = s.finish();
        c.push_str(&c2);
        r.push_str(&r2);
        (c, r)
    }
}

/// Length of the longest proper prefix of `tag` that `text` ends with (the bytes to hold).
fn partial_tag_len(text: &str, tag: &str) -> usize {
    // Tags are ASCII, so any matching suffix starts on a char boundary.
    (1..tag.len())
        .rev()
        .find(|&n| text.len() >= n && text.as_bytes()[text.len() - n..] == tag.as_bytes()[..n])
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn feed(pieces: &[&str]) -> (String, String) {
        let mut s = ThinkSplitter::default();
        let (mut c, mut r) = (String::new(), String::new());
        for p in pieces {
            let (a, b) = s.push(p);
            c.push_str(&a);
            r.push_str(&b);
        }
        let (a, b) = s.finish();
        c.push_str(&a);
        r.push_str(&b);
        (c, r)
    }

    fn pair(c: &str, r: &str) -> (String, String) {
        (c.to_string(), r.to_string())
    }

    #[test]
    fn whole_text() {
        assert_eq!(
            ThinkSplitter::split_all("<think>plan it</think>The answer"),
            pair("The answer", "plan it")
        );
        assert_eq!(
            ThinkSplitter::split_all("a<think>b</think>c<think>d</think>e"),
            pair("ace", "bd")
        );
        assert_eq!(ThinkSplitter::split_all("no tags"), pair("no tags", ""));
    }

    #[test]
    fn tags_cut_across_pieces() {
        assert_eq!(
            feed(&["<thi", "nk>x", "y</th", "ink>", "z"]),
            pair("z", "xy")
        );
        // One character at a time.
        let text = "<think>ab</think>cd";
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(feed(&pieces), pair("cd", "ab"));
    }

    #[test]
    fn held_prefix_is_released_as_soon_as_it_is_not_a_tag() {
        let mut s = ThinkSplitter::default();
        assert_eq!(s.push("a <th"), pair("a ", ""));
        assert_eq!(s.push("e end"), pair("<the end", ""));
        // A partial tag at the very end is text.
        assert_eq!(s.push(" <"), pair(" ", ""));
        assert_eq!(s.finish(), pair("<", ""));
    }

    #[test]
    fn unterminated_reasoning_stays_reasoning() {
        assert_eq!(
            feed(&["<think>still thinking</"]),
            pair("", "still thinking</")
        );
    }

    #[test]
    fn no_reasoning_without_an_opening_tag() {
        assert_eq!(
            feed(&["thoughts", "</think>answer"]),
            pair("thoughts</think>answer", "")
        );
        // A nested opening tag inside reasoning is text.
        assert_eq!(
            ThinkSplitter::split_all("<think>a<think>b</think>c"),
            pair("c", "a<think>b")
        );
    }

    #[test]
    fn multibyte_text_next_to_tags() {
        assert_eq!(feed(&["é<thi", "nk>ü</thin", "k>ß"]), pair("éß", "ü"));
    }

    proptest! {
        #[test]
        fn any_split_gives_the_unsplit_result(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("<think>".to_string()),
                    Just("</think>".to_string()),
                    Just("<".to_string()),
                    Just("</".to_string()),
                    Just("<th".to_string()),
                    "[a-z <>/é]{0,6}",
                ],
                0..12,
            ),
            cuts in proptest::collection::vec(0usize..64, 0..8),
        ) {
            let text: String = parts.concat();
            let whole = ThinkSplitter::split_all(&text);
            // Cut at char boundaries chosen by `cuts`.
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut at: Vec<usize> = cuts.iter().map(|c| bounds[c % bounds.len()]).collect();
            at.sort_unstable();
            at.dedup();
            let mut pieces = Vec::new();
            let mut prev = 0;
            for a in at {
                pieces.push(&text[prev..a]);
                prev = a;
            }
            pieces.push(&text[prev..]);
            prop_assert_eq!(feed(&pieces), whole);
        }
    }
}
