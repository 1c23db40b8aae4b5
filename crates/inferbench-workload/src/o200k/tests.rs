//! The built-in tokenizer against tiktoken-rs, the implementation it replaces, as the oracle.

use std::sync::OnceLock;

use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

use super::*;

fn oracle() -> &'static CoreBPE {
    static O: OnceLock<CoreBPE> = OnceLock::new();
    O.get_or_init(|| tiktoken_rs::o200k_base().unwrap())
}

fn pieces(text: &str) -> Vec<&str> {
    let mut v = Vec::new();
    split::split(text, &mut split::new_cache(), |p| v.push(p));
    v
}

fn same_as_oracle(text: &str) -> Result<(), TestCaseError> {
    let want = oracle().encode_ordinary(text);
    prop_assert_eq!(&encode(text), &want, "{:?}", text);
    prop_assert_eq!(count(text), want.len(), "{:?}", text);
    Ok(())
}

#[test]
fn every_rank_is_found_by_its_bytes_and_decodes_as_tiktoken_does() {
    for r in 0..RANKS {
        let bytes = table::token(r).unwrap();
        assert_eq!(table::rank(bytes), Some(r), "rank {r}");
        assert_eq!(oracle().decode_bytes(&[r]).unwrap(), bytes, "rank {r}");
    }
    assert_eq!(table::token(RANKS), None);
    for (id, text) in SPECIAL {
        assert_eq!(token_bytes(id), Some(text.as_bytes()));
        assert_eq!(oracle().encode_with_special_tokens(text), vec![id]);
    }
    assert_eq!(decode_bytes(&[RANKS]), None);
    assert_eq!(decode_bytes(&[200_000]), None);
}

#[test]
fn bytes_that_are_no_token_are_not_found() {
    // Two bytes that never occur together in the vocabulary, and a long run.
    assert_eq!(table::rank(&[0xff, 0xfe]), None);
    assert_eq!(table::rank(&[b'a'; 300]), None);
    assert_eq!(table::rank(b""), None);
}

#[test]
fn known_encodings() {
    // o200k_base: "hello world" is ["hello", " world"] = [24912, 2375].
    assert_eq!(encode("hello world"), vec![24912, 2375]);
    assert_eq!(count("hello world"), 2);
    assert_eq!(decode_bytes(&[24912, 2375]).unwrap(), b"hello world");
    assert_eq!(count(""), 0);
    assert!(encode("").is_empty());
}

#[test]
fn whitespace_runs_leave_their_last_space_to_the_next_word() {
    // Alternative 6: a run of two or more spaces before a word gives its last to the word.
    assert_eq!(pieces("a  b"), ["a", " ", " b"]);
    assert_eq!(pieces("a   b"), ["a", "  ", " b"]);
    // A single space is the word's own (alternative 1).
    assert_eq!(pieces("a b"), ["a", " b"]);
    // At the end of the text the run stays whole.
    assert_eq!(pieces("a   "), ["a", "   "]);
    // A run holding a line break is alternative 5's, up to the last break.
    assert_eq!(pieces("a \n  b"), ["a", " \n", " ", " b"]);
    // Tabs and other whitespace count too; the last one starts the next piece.
    assert_eq!(pieces("x\t\t1"), ["x", "\t", "\t", "1"]);
    assert_eq!(pieces("x \u{3000}y"), ["x", " ", "\u{3000}y"]);
}

#[test]
fn the_usual_pieces() {
    assert_eq!(
        pieces("Hello, world's 12345!\n"),
        ["Hello", ",", " world's", " ", "123", "45", "!\n"]
    );
    assert_eq!(pieces("HTTPServer"), ["HTTPServer"]);
    assert_eq!(pieces("a/b//\n"), ["a", "/b", "//\n"]);
}

#[test]
fn long_pieces_merge_as_tiktoken_does() {
    for text in [
        "a".repeat(100),
        "a".repeat(1001),
        "ab".repeat(300),
        "Supercalifragilisticexpialidocious".repeat(5),
        "x".repeat(99),
        "é".repeat(150),
        "\u{1F600}".repeat(40),
        " ".repeat(500),
        format!("{}b", " ".repeat(300)),
    ] {
        same_as_oracle(&text).unwrap();
    }
}

/// Characters from every class the pattern tells apart.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'z'),
        2 => prop::char::range('A', 'Z'),
        1 => prop::char::range('0', '9'),
        2 => Just(' '),
        1 => prop::sample::select(vec![
            '\t', '\n', '\r', '\u{b}', '\u{c}', '\u{a0}', '\u{3000}', '\u{2028}', '\u{85}',
        ]),
        1 => prop::sample::select(vec![
            '\'', '/', '.', ',', '!', '?', '-', '_', '(', ')', '"', '#', '`', '{', '}', '*',
        ]),
        1 => prop::sample::select(vec![
            'é', 'ß', 'Ä', 'ǅ', 'ʰ', '中', '文', 'Ж', 'ж', 'ا', 'ע', '\u{301}', '\u{94d}',
            'क', '٣', '²', 'Ⅻ', '€', '\u{1F600}', '\u{200d}', '\u{feff}', 'ſ', 'İ', 'K',
        ]),
        1 => any::<char>(),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any_char(), 0..60).prop_map(|v| v.into_iter().collect()),
        // Words and contractions, as English output is.
        prop::collection::vec(
            prop::sample::select(vec![
                "the", " the", "The", " King", "'s", "'S", "'ll", "'LL", "'d", "'re", "'ve", "'m",
                "'t", " ", "  ", "   ", "\n", "\r\n", "\n\n", " \n", "123", "4567", ".", "...",
                " !", "//", "/", "\t", "don't", " I'M", "HTTP", "Server", "é", " über",
            ]),
            0..30,
        )
        .prop_map(|v| v.concat()),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn encodes_as_tiktoken_does(s in text()) {
        same_as_oracle(&s)?;
    }

    #[test]
    fn pieces_tile_the_text(s in text()) {
        prop_assert_eq!(pieces(&s).concat(), s);
    }

    #[test]
    fn decodes_what_it_encodes(s in text()) {
        prop_assert_eq!(decode_bytes(&encode(&s)).unwrap(), s.as_bytes());
    }
}

/// ASCII text of every byte, weighted to the ones the pattern tells apart: letters of both
/// cases, digits, apostrophes and the contraction letters, spaces and line breaks, `/`.
fn ascii() -> impl Strategy<Value = String> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"aZsStTrReEvVmMlLdD".to_vec()),
        2 => prop::sample::select(b" \t\n\r\x0b\x0c".to_vec()),
        2 => prop::sample::select(b"'/.!0123456789".to_vec()),
        1 => 0u8..0x80,
    ];
    prop::collection::vec(byte, 0..40).prop_map(|b| String::from_utf8(b).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn ascii_splits_as_the_automaton_does(s in ascii()) {
        let (mut by_hand, mut by_regex) = (Vec::new(), Vec::new());
        split::split_ascii(&s, |p| by_hand.push(p));
        split::split_regex(&s, &mut split::new_cache(), |p| by_regex.push(p));
        prop_assert_eq!(by_hand, by_regex, "{:?}", s);
        same_as_oracle(&s)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn long_words_encode_as_tiktoken_does(
        s in prop::collection::vec(prop::sample::select(vec!['a', 'b', 'e', 'r', 'é', 'Q']), 90..400)
    ) {
        same_as_oracle(&s.into_iter().collect::<String>())?;
    }
}
