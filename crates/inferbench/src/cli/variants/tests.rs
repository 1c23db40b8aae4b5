use proptest::prelude::*;

use super::*;

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, x)| (k.to_string(), x.to_string()))
        .collect()
}

#[test]
fn a_name_prefix_then_pairs_as_aiperf_reads_them() {
    let v = parse_variant("small: isl=128, osl = 64 ,concurrency=4").unwrap();
    assert_eq!(v.name.as_deref(), Some("small"));
    assert_eq!(
        v.pairs,
        pairs(&[("isl", "128"), ("osl", "64"), ("concurrency", "4")])
    );
    // No name: the text before ':' holds an '='.
    let v = parse_variant("extra-inputs=a:b, isl=8").unwrap();
    assert_eq!(v.name, None);
    assert_eq!(v.pairs, pairs(&[("extra-inputs", "a:b"), ("isl", "8")]));
    // Empty pieces are skipped; quotes come off; booleans any case.
    let v = parse_variant("x: streaming=TRUE,, model='m 1',").unwrap();
    assert_eq!(v.pairs, pairs(&[("streaming", "true"), ("model", "m 1")]));
}

#[test]
fn malformed_variants_are_one_line_errors() {
    for (s, want) in [
        ("   ", "empty"),
        (": isl=1", "empty name"),
        ("name:", "no KEY=VALUE after the name"),
        ("isl", "is not KEY=VALUE"),
        ("a: =4", "empty key"),
        ("a: isl=1, isl=2", "given twice"),
        ("a: ,", "no KEY=VALUE pairs"),
    ] {
        let e = parse_variant(s).unwrap_err();
        assert!(e.contains(want), "{s:?}: {e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn a_directory_keeps_the_name_without_what_a_path_cannot_hold() {
    assert_eq!(dir_segment("aa-1k", 0), "aa-1k");
    assert_eq!(dir_segment("q<p>s?*", 3), "qps");
    assert_eq!(dir_segment("...", 2), "variation_2");
    assert_eq!(dir_segment("\"|", 5), "variation_5");
}

#[test]
fn sweep_wide_flags_exist_on_profile() {
    let cmd = command_with_unbuilt();
    let p = cmd.find_subcommand("profile").unwrap();
    for f in SWEEP_WIDE {
        assert!(
            p.get_arguments().any(|a| a.get_long() == Some(*f)),
            "--{f} is not a profile flag"
        );
    }
}

proptest! {
    /// Any name and pairs written in the syntax read back as written.
    #[test]
    fn written_variants_read_back(
        name in proptest::option::of("[a-z][a-z0-9_-]{0,8}"),
        kv in proptest::collection::btree_map("[a-z][a-z-]{0,10}", "[a-z0-9.]{1,6}", 1..5),
    ) {
        let body: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let text = match &name {
            Some(n) => format!("{n}: {}", body.join(", ")),
            None => body.join(","),
        };
        let v = parse_variant(&text).unwrap();
        prop_assert_eq!(v.name, name);
        let want: Vec<(String, String)> = kv.into_iter().collect();
        prop_assert_eq!(v.pairs, want);
    }

    /// Whatever the text, parsing returns (no panic), and a name never holds ':'.
    #[test]
    fn any_text_parses_or_errs(s in ".{0,40}") {
        if let Ok(v) = parse_variant(&s) {
            prop_assert!(v.name.is_none_or(|n| !n.contains(':')));
            prop_assert!(!v.pairs.is_empty());
        }
    }
}
