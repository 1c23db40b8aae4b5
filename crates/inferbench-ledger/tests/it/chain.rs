//! The chain without packets: appends under the lock, `verify` on a tampered or cut file, a
//! newer format version, and `merge` of two branches grown from a common prefix.

use std::path::PathBuf;

use inferbench_ledger::entry::{Entry, GENESIS};
use inferbench_ledger::merge::{collect, merge, merge_entries};
use inferbench_ledger::verify::verify;
use inferbench_ledger::{Ledger, Stamp};
use serde_json::json;

/// A path that does not exist yet (the ledger's directory, made by `Ledger::init`) in a fresh
/// directory; that directory is removed, with all under it, when the guard drops.
fn tmpdir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::Builder::new()
        .prefix(&format!("inferbench-ledger-{name}-"))
        .tempdir()
        .unwrap();
    let d = root.path().join(name);
    (root, d)
}

fn at(s: &str) -> Stamp {
    Stamp {
        at: s.into(),
        by: "tester".into(),
    }
}

fn note(l: &Ledger, n: u64, when: &str) -> Entry {
    l.append(None, "run.classify", json!({"note": n}), &at(when))
        .unwrap()
}

fn lines(l: &Ledger) -> Vec<String> {
    std::fs::read_to_string(l.file())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn init_writes_the_format_and_refuses_a_second_time() {
    let (_tmp, d) = tmpdir("init");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    assert!(l.packets().is_dir() && l.epochs().is_dir());
    let es = l.entries().unwrap();
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].kind, "ledger.init");
    assert_eq!(es[0].body["format"], 1);
    assert_eq!(es[0].prev, GENESIS);
    let err = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap_err();
    assert!(err.message.contains("already here"), "{}", err.message);
    assert_eq!(err.code, 2);
    assert!(verify(&l).unwrap().ok());
}

#[test]
fn two_threads_appending_fifty_each_lose_and_interleave_nothing() {
    let (_tmp, d) = tmpdir("threads");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    let handles: Vec<_> = (0..2u64)
        .map(|t| {
            let l = l.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    note(&l, t * 1000 + i, "2026-12-01T10:00:01Z");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let es = l.entries().unwrap();
    assert_eq!(es.len(), 101);
    let mut notes: Vec<u64> = es[1..]
        .iter()
        .map(|e| e.body["note"].as_u64().unwrap())
        .collect();
    notes.sort();
    let want: Vec<u64> = (0..50).chain(1000..1050).collect();
    assert_eq!(notes, want);
    let r = verify(&l).unwrap();
    assert!(r.ok(), "{}", r.render());
    assert_eq!(r.entries, 101);
}

#[test]
fn verify_names_the_first_bad_line_and_field() {
    let (_tmp, d) = tmpdir("tamper");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    for i in 0..3 {
        note(&l, i, "2026-12-01T10:00:01Z");
    }
    let good = std::fs::read_to_string(l.file()).unwrap();
    let line3 = lines(&l)[2].clone();
    // (the text on line 3 replaced, the problem verify must name)
    let cases = [
        // a body value: the cid no longer matches
        (
            line3.replace(r#""note":1"#, r#""note":9"#),
            "ledger.jsonl line 3: cid:",
        ),
        // the prev link
        (
            String::new(), // built below: one hex digit of prev flipped
            "ledger.jsonl line 3: prev:",
        ),
        // a stamp: the hash no longer matches
        (
            line3.replace("2026-12-01T10:00:01Z", "2026-12-01T10:00:02Z"),
            "ledger.jsonl line 3: hash:",
        ),
        // whitespace: same content, not the canonical bytes
        (
            line3.replacen(':', ": ", 1),
            "ledger.jsonl line 3: line: not canonical",
        ),
    ];
    for (i, (bad, want)) in cases.into_iter().enumerate() {
        let mut ls = lines(&l);
        if i == 1 {
            // Flip one hex digit of prev (keeps it a well-formed id).
            let p = line3.find(r#""prev":"sha256:"#).unwrap() + 16;
            let mut b = line3.clone().into_bytes();
            b[p] = if b[p] == b'0' { b'1' } else { b'0' };
            ls[2] = String::from_utf8(b).unwrap();
        } else {
            ls[2] = bad;
        }
        std::fs::write(l.file(), ls.join("\n") + "\n").unwrap();
        let r = verify(&l).unwrap();
        assert!(!r.ok(), "case {i} passed");
        assert!(
            r.problems[0].starts_with(want),
            "case {i}: {:?}",
            r.problems
        );
        std::fs::write(l.file(), &good).unwrap();
    }
    assert!(verify(&l).unwrap().ok());
}

#[test]
fn a_cut_last_line_is_reported_and_blocks_appends() {
    let (_tmp, d) = tmpdir("cut");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    note(&l, 1, "2026-12-01T10:00:01Z");
    let mut text = std::fs::read_to_string(l.file()).unwrap();
    let half = lines(&l)[1].len() / 2;
    text.truncate(text.len() - 1 - half);
    std::fs::write(l.file(), &text).unwrap();
    let r = verify(&l).unwrap();
    assert!(
        r.problems[0].starts_with("ledger.jsonl line 2: cut"),
        "{:?}",
        r.problems
    );
    let err = l
        .append(None, "run.classify", json!({}), &at("2026-12-01T10:00:02Z"))
        .unwrap_err();
    assert!(err.message.contains("line 2: cut"), "{}", err.message);
    // Nothing was appended to the cut file.
    assert_eq!(std::fs::read_to_string(l.file()).unwrap(), text);
}

#[test]
fn a_newer_format_version_is_a_one_line_error() {
    let (_tmp, d) = tmpdir("newer");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    let mut ls = lines(&l);
    ls.push(ls[0].replace(r#""v":1"#, r#""v":3"#));
    std::fs::write(l.file(), ls.join("\n") + "\n").unwrap();
    let err = l.entries().unwrap_err();
    assert!(
        err.message
            .ends_with("ledger.jsonl: line 2: v: format version 3 is newer than this build reads (1): upgrade inferbench"),
        "{}",
        err.message
    );
    assert!(!err.message.contains('\n'));
}

/// Two clones of one ledger, each appending, then the file git would leave behind; the guard
/// of the directory both clones are in comes first.
fn fork(
    name: &str,
) -> (
    tempfile::TempDir,
    Ledger,
    Vec<String>,
    Vec<Entry>,
    Vec<Entry>,
) {
    let (tmp, d) = tmpdir(name);
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    note(&l, 0, "2026-12-01T10:00:01Z");
    let base = lines(&l);
    let other = Ledger {
        dir: tmp.path().join(format!("{name}-theirs")),
    };
    std::fs::create_dir_all(&other.dir).unwrap();
    std::fs::copy(l.file(), other.file()).unwrap();
    // Interleaved clocks, so ordering by `at` mixes the sides.
    let ours = vec![
        note(&l, 11, "2026-12-01T11:00:00Z"),
        note(&l, 12, "2026-12-01T13:00:00Z"),
    ];
    let theirs = vec![
        note(&other, 21, "2026-12-01T12:00:00Z"),
        note(&other, 22, "2026-12-01T14:00:00Z"),
    ];
    (tmp, l, base, ours, theirs)
}

fn check_merged(l: &Ledger, ours: &[Entry], theirs: &[Entry]) {
    let r = verify(l).unwrap();
    assert!(r.ok(), "{}", r.render());
    let es = l.entries().unwrap();
    let notes: Vec<u64> = es[1..]
        .iter()
        .map(|e| e.body["note"].as_u64().unwrap())
        .collect();
    assert_eq!(notes, vec![0, 11, 21, 12, 22], "ordered by at");
    // References by cid stay valid: every appended body is there under its old cid.
    for e in ours.iter().chain(theirs) {
        assert!(es.iter().any(|m| m.cid == e.cid && m.body == e.body));
    }
    assert_eq!(
        es.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=6).collect::<Vec<_>>()
    );
}

#[test]
fn merge_resolves_conflict_markers() {
    let (_tmp, l, base, ours, theirs) = fork("merge-markers");
    let line = |e: &Entry| e.to_line().unwrap();
    let mut text = base.join("\n") + "\n";
    text.push_str("<<<<<<< HEAD\n");
    for e in &ours {
        text.push_str(&(line(e) + "\n"));
    }
    text.push_str("=======\n");
    for e in &theirs {
        text.push_str(&(line(e) + "\n"));
    }
    text.push_str(">>>>>>> other\n");
    std::fs::write(l.file(), &text).unwrap();
    assert!(!verify(&l).unwrap().ok());
    let report = merge(&l).unwrap();
    assert_eq!((report.prefix, report.relinked), (2, 4));
    check_merged(&l, &ours, &theirs);
}

#[test]
fn merge_resolves_both_tails_one_after_the_other() {
    let (_tmp, l, base, ours, theirs) = fork("merge-union");
    let mut text = base.join("\n") + "\n";
    for e in ours.iter().chain(&theirs) {
        text.push_str(&(e.to_line().unwrap() + "\n"));
    }
    std::fs::write(l.file(), &text).unwrap();
    merge(&l).unwrap();
    check_merged(&l, &ours, &theirs);
}

#[test]
fn merge_refuses_a_tampered_side() {
    let (_tmp, l, base, ours, theirs) = fork("merge-tampered");
    let mut text = base.join("\n") + "\n";
    text.push_str(
        &(ours[0]
            .to_line()
            .unwrap()
            .replace(r#""note":11"#, r#""note":99"#)
            + "\n"),
    );
    text.push_str(&(theirs[0].to_line().unwrap() + "\n"));
    std::fs::write(l.file(), &text).unwrap();
    let err = merge(&l).unwrap_err();
    assert!(err.message.contains("line 3: cid"), "{}", err.message);
    assert_eq!(
        std::fs::read_to_string(l.file()).unwrap(),
        text,
        "left as it was"
    );
}

#[test]
fn merge_of_a_linear_ledger_changes_nothing() {
    let (_tmp, d) = tmpdir("merge-linear");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    note(&l, 1, "2026-12-01T10:00:01Z");
    let before = std::fs::read_to_string(l.file()).unwrap();
    let (merged, r) = merge_entries(collect(before.as_bytes()).unwrap()).unwrap();
    assert_eq!((r.prefix, r.relinked), (2, 0));
    assert_eq!(merged, l.entries().unwrap());
}

#[test]
fn verify_reports_a_missing_packet_and_notes_an_unfinished_one() {
    let (_tmp, d) = tmpdir("packets");
    let l = Ledger::init(&d, &at("2026-12-01T10:00:00Z")).unwrap();
    let id = format!("sha256:{}", "cd".repeat(32));
    l.append(
        None,
        "run.record",
        json!({"packet": id}),
        &at("2026-12-01T10:00:01Z"),
    )
    .unwrap();
    std::fs::create_dir_all(l.packets().join(".tmp-1-2")).unwrap();
    let r = verify(&l).unwrap();
    assert_eq!(
        r.problems,
        vec![format!(
            "ledger.jsonl line 2: body.packet: packet {id} is not in packets/"
        )]
    );
    assert!(
        r.notes[0].starts_with("packets/.tmp-1-2: an unfinished packet"),
        "{:?}",
        r.notes
    );
    assert_eq!(r.packets, 0);
}
