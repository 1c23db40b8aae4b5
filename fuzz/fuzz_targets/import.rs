//! The AIPerf and GenAI-Perf importers never panic on any file content. The first byte picks
//! which file of a run directory the rest becomes (the others absent, or minimal where the
//! importer needs one to recognise the tool); the import then succeeds or fails with an
//! error, never a panic.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;

/// The file the input becomes, and any companions the tool's detection needs.
const LAYOUTS: [(&str, &[(&str, &str)]); 6] = [
    ("profile_export.jsonl", &[]),
    ("profile_export_raw.jsonl", &[]),
    (
        "profile_export_aiperf.json",
        &[("profile_export.jsonl", "")],
    ),
    ("profile_export.json", &[]),
    (
        "profile_export_genai_perf.json",
        &[("profile_export.json", "{\"experiments\":[]}")],
    ),
    (
        "profile_export_genai_perf.csv",
        &[("profile_export.json", "{\"experiments\":[]}")],
    ),
];

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("inferbench-fuzz-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a fresh directory");
    d
}

fuzz_target!(|input: &[u8]| {
    let Some((&pick, content)) = input.split_first() else {
        return;
    };
    let (name, companions) = LAYOUTS[usize::from(pick) % LAYOUTS.len()];
    let d = dir();
    std::fs::write(d.join(name), content).expect("written");
    for (file, text) in companions {
        std::fs::write(d.join(file), text).expect("written");
    }
    let _ = inferbench_import::import(&d, &|s: &str| s.split_whitespace().count() as u64);
    // Removed after every input, so that a fuzzing session leaves no directory behind.
    let _ = std::fs::remove_dir_all(&d);
});
