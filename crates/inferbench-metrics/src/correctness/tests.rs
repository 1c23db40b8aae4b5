use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn a(v: Value) -> Answer {
    Answer::parse(&v, "answer").unwrap()
}

fn ok(answer: &Answer, out: &str) -> bool {
    score(answer, out).correct
}

#[test]
fn correctness_exact_text_normalised() {
    let x = a(json!("Paris"));
    assert!(ok(&x, "Paris"));
    assert!(ok(&x, "  paris.\n"));
    assert!(ok(&x, "PARIS ."));
    assert!(!ok(&x, "Paris, France"));
    assert!(!ok(&x, "Lyon"));
    // Only one trailing period goes.
    assert!(!ok(&x, "Paris.."));
    let y = a(json!({"exact": "New   York City"}));
    assert!(ok(&y, "new york\tcity"));
    assert_eq!(normalize("  The  END. "), "the end");
    assert_eq!(normalize("Ünïcode."), "ünïcode");
    assert_eq!(normalize("a.b"), "a.b");
}

#[test]
fn correctness_regex_matches_the_trimmed_output() {
    let x = a(json!({"regex": "^4[0-9]$", "example": "42"}));
    assert!(ok(&x, " 42\n"));
    assert!(!ok(&x, "142"));
    assert!(!ok(&x, "4"));
    // Unanchored patterns search.
    let y = a(json!({"regex": "(?i)blue"}));
    assert!(ok(&y, "The sky is Blue today"));
    assert!(!ok(&y, "green"));
}

#[test]
fn correctness_json_schema_whole_output_or_first_fenced_block() {
    let schema =
        json!({"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}});
    let x = a(json!({"json_schema": schema}));
    assert!(ok(&x, r#"{"x": 3}"#));
    assert!(ok(&x, "Here you go:\n```json\n{\"x\": 4}\n```\nthanks"));
    assert!(!ok(&x, r#"{"x": "three"}"#));
    assert!(!ok(&x, "x = 3"));
    // Only the first fenced block counts.
    assert!(!ok(&x, "```json\n{\"y\":1}\n```\n```json\n{\"x\":1}\n```"));
}

#[test]
fn correctness_number_first_number_with_tolerances() {
    let x = a(json!({"number": 3.5, "abs_tol": 0.01}));
    assert!(ok(&x, "3.5"));
    assert!(ok(&x, "It is 3.505 metres, not 7"));
    assert!(!ok(&x, "3.52"));
    // The first number decides, even if a later one is right.
    assert!(!ok(&x, "4 or 3.5"));
    let r = a(json!({"number": 1000, "rel_tol": 0.01}));
    assert!(ok(&r, "about 1,009 units"));
    assert!(!ok(&r, "1,011"));
    let e = a(json!({"number": -12}));
    assert!(ok(&e, "-12"));
    assert!(!ok(&e, "12"));
    assert!(!ok(&e, "no number"));
    assert_eq!(first_number("x=.5e1"), Some(5.0));
    assert_eq!(first_number("12,34"), Some(12.0));
}

#[test]
fn correctness_choice_answer_prefix_or_first_standalone_letter() {
    let x = a(json!({"choice": "b"}));
    assert!(ok(&x, "B"));
    assert!(ok(&x, "(B) because"));
    assert!(ok(&x, "I think the answer is b."));
    assert!(ok(&x, "Answer: B"));
    assert!(!ok(&x, "A"));
    assert!(!ok(&x, "Because of Bob"));
    // The answer prefix wins over an earlier standalone capital.
    assert!(ok(&x, "I reckon, answer: B"));
    assert_eq!(extract_choice("A and B"), Some('A'));
    assert_eq!(extract_choice("no letters here"), None);
}

#[test]
fn correctness_degenerate_rule() {
    assert!(is_degenerate(""));
    assert!(is_degenerate("  \n"));
    assert!(is_degenerate("the the the the the the the the"));
    assert!(is_degenerate("The the THE the the the the the the"));
    // Seven repeats are not enough; two distinct words are not degenerate.
    assert!(!is_degenerate("the the the the the the the"));
    assert!(!is_degenerate("the the the the the the the a"));
    assert!(!is_degenerate("Paris"));
    let x = a(json!("Paris"));
    let s = score(&x, "");
    assert!(s.degenerate && !s.correct);
}

#[test]
fn correctness_wilson_interval_of_92_of_100() {
    // By hand: p = 0.92, z = 1.959964, z²/n = 0.0384146;
    // centre 0.939207 / 1.038415, half 0.0565354 / 1.038415 → 0.85002 .. 0.95891.
    let acc = accuracy(92, 100, 0.95);
    assert_eq!(acc.fraction, Some(0.92));
    assert!((acc.low.unwrap() - 0.85002).abs() < 1e-4, "{acc:?}");
    assert!((acc.high.unwrap() - 0.95891).abs() < 1e-4, "{acc:?}");
    let none = accuracy(0, 0, 0.95);
    assert_eq!(none.fraction, None);
    assert_eq!(none.low, None);
}

#[test]
fn correctness_bad_specs_name_their_field() {
    let e = |v: Value| Answer::parse(&v, "answer").unwrap_err().to_string();
    assert!(
        e(json!({"regex": "(unclosed"})).starts_with("field 'answer.regex': invalid pattern"),
        "{}",
        e(json!({"regex": "(unclosed"}))
    );
    assert!(!e(json!({"regex": "(unclosed"})).contains('\n'));
    assert_eq!(
        e(json!({"choice": "AB"})),
        "field 'answer.choice': expected one letter A-Z, got \"AB\""
    );
    assert_eq!(
        e(json!({"number": "3"})),
        "field 'answer.number': expected a number, got a string"
    );
    assert_eq!(
        e(json!({"number": 3, "tol": 1})),
        "field 'answer.tol': unknown field for a number answer"
    );
    assert_eq!(
        e(json!({"exact": "a", "choice": "B"})),
        "field 'answer.choice': an answer has one kind (exact is already given)"
    );
    assert_eq!(
        e(json!({"regex": "^a$", "example": "b"})),
        "field 'answer.example': the example does not satisfy the answer"
    );
    assert!(e(json!({"json_schema": {"type": 12}})).starts_with("field 'answer.json_schema'"));
    assert!(e(json!(3)).starts_with("field 'answer': expected a string or an object"));
    assert_eq!(
        e(json!({})),
        "field 'answer': an answer object needs one of exact, regex, json_schema, number, choice"
    );
    assert_eq!(
        e(json!({"number": 1, "abs_tol": -1})),
        "field 'answer.abs_tol': must be a number >= 0"
    );
    assert_eq!(
        e(json!("  ")),
        "field 'answer.exact': the expected text is empty"
    );
}

#[test]
fn correctness_canonical_form_round_trips_and_sorts_schema_keys() {
    let x = a(
        json!({"json_schema": {"type": "object", "properties": {"b": {}, "a": {}}}, "example": {"z": 1, "a": 2}}),
    );
    let c = x.canonical();
    assert_eq!(
        c.to_string(),
        r#"{"kind":"json_schema","schema":{"properties":{"a":{},"b":{}},"type":"object"},"example":{"a":2,"z":1}}"#
    );
    assert_eq!(Answer::parse(&c, "answer").unwrap(), x);
    let n = a(json!({"rel_tol": 0.1, "number": 2}));
    assert_eq!(
        n.canonical().to_string(),
        r#"{"kind":"number","value":2.0,"rel_tol":0.1}"#
    );
    assert_eq!(Answer::parse(&n.canonical(), "a").unwrap(), n);
    assert_eq!(
        a(json!("Hi")).canonical(),
        json!({"kind": "exact", "text": "Hi"})
    );
    let e = Answer::parse(&json!({"kind": "maybe"}), "answer").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("field 'answer.kind': unknown answer kind")
    );
}

#[test]
fn correctness_simulated_answers_score_as_intended() {
    let answers = [
        json!("Paris"),
        json!({"regex": "^[0-9]{3}$", "example": "123"}),
        json!({"json_schema": {"type": "object", "required": ["k"]}, "example": {"k": true}}),
        json!({"number": 0.25, "abs_tol": 0.001}),
        json!({"number": -40}),
        json!({"choice": "Z"}),
    ];
    for v in answers {
        let x = a(v);
        assert!(ok(&x, &x.simulated(true).unwrap()), "{:?}", x.spec);
        assert!(!ok(&x, &x.simulated(false).unwrap()), "{:?}", x.spec);
    }
    let no_example = a(json!({"regex": "^x$"}));
    assert!(no_example.simulated(true).is_err());
    let everything = a(json!({"regex": "", "example": "a"}));
    assert!(everything.simulated(false).is_err());
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z(){}^$.*+?\\[\\]\\\\]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("exact".to_string()),
                        Just("regex".to_string()),
                        Just("json_schema".to_string()),
                        Just("number".to_string()),
                        Just("choice".to_string()),
                        Just("example".to_string()),
                        Just("abs_tol".to_string()),
                        Just("kind".to_string()),
                        "[a-z]{1,5}"
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    /// The answer parser never panics, and whatever it accepts round-trips through its
    /// canonical form.
    #[test]
    fn correctness_parser_fuzz_never_panics(v in any_json()) {
        if let Ok(x) = Answer::parse(&v, "answer") {
            let back = Answer::parse(&x.canonical(), "answer").unwrap();
            prop_assert_eq!(back, x);
        }
    }

    /// Scoring never panics on any text, and a degenerate output is never a number match
    /// by accident of the rule: the degenerate flag depends on the text only.
    #[test]
    fn correctness_score_never_panics(out in "\\PC{0,40}", n in -1e6f64..1e6) {
        let x = Answer::parse(&json!({"number": n, "abs_tol": 0.5}), "answer").unwrap();
        let s = score(&x, &out);
        prop_assert_eq!(s.degenerate, is_degenerate(&out));
        let c = Answer::parse(&json!({"choice": "C"}), "answer").unwrap();
        let _ = score(&c, &out);
    }

    /// A number written out in the output is found within the tolerance.
    #[test]
    fn correctness_number_written_is_found(n in -1e6f64..1e6) {
        let x = Answer::parse(&json!({"number": n, "rel_tol": 1e-9}), "answer").unwrap();
        let out = format!("The result is {n} exactly");
        prop_assert!(score(&x, &out).correct);
    }
}
