//! `--prompt-corpus coding` and `--prompt-corpus random`: exact lengths with both tokenizers,
//! the vocabulary pool of the random corpus, determinism by seed, and coding prompts cut from
//! the bundled asset.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use inferbench_core::dataset_plan::DatasetPlan;
use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_core::workload::Payload;
use inferbench_workload::corpus::{CODING, PromptCorpus, RANDOM_CORPUS_TOKENS, RandomCorpusStyle};
use inferbench_workload::dataset::{BuiltWorkload, build_workload};
use inferbench_workload::synthetic::{PURPOSE_RANDOM_CORPUS, rng_for};
use inferbench_workload::{Corpus, PromptGenerator, Tokenizer};
use rand::Rng;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn builtin() -> &'static Tokenizer {
    common::builtin()
}

/// The GenAI-Perf fixture's tokenizer (a byte-level BPE of 8,192 ids plus `<think>` and
/// `</think>`; id 0 is `<|endoftext|>`, its one special token), or the identical copy kept in
/// this crate's tests when the import crate's data is absent.
fn hf() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let import = manifest.join("../inferbench-import/tests/data/genai_perf/tokenizer");
        let path = if import.join("tokenizer.json").is_file() {
            import
        } else {
            manifest.join("tests/data/tokenizer")
        };
        Tokenizer::from_path(&path.display().to_string()).unwrap()
    })
}

fn tokenizers() -> [&'static Tokenizer; 2] {
    [builtin(), hf()]
}

fn plan(corpus: &str, isl: f64) -> RunPlan {
    let mut p = common::base_plan(EndpointType::Chat);
    p.isl.mean = isl;
    p.num_dataset_entries = 6;
    p.random_seed = Some(11);
    p.dataset = DatasetPlan {
        prompt_corpus: Some(corpus.into()),
        ..DatasetPlan::default()
    };
    p
}

fn build(p: &RunPlan, tok: &Tokenizer) -> BuiltWorkload {
    build_workload(p, tok, Corpus::shakespeare()).unwrap()
}

fn messages(p: &Payload) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(&p.body).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn last_user(p: &Payload) -> String {
    messages(p)
        .into_iter()
        .rev()
        .find(|(r, _)| r == "user")
        .unwrap()
        .1
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn coding_asset_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/coding.txt")
}

// ------------------------------------------------------------------ tokenizer vocabulary

#[test]
fn vocabulary_sizes_and_special_ids() {
    // o200k_base: ordinary ranks 0..=199_997; <|endoftext|> = 199_999 and
    // <|endofprompt|> = 200_018 (tiktoken's o200k_base definition), so range(vocab) is
    // 0..200_019.
    assert_eq!(builtin().vocab_size(), 200_019);
    assert_eq!(builtin().special_ids(), vec![199_999, 200_018]);
    // The fixture: model ids 0..=8_191, added <think> = 8_192 and </think> = 8_193; only
    // <|endoftext|> (id 0) is marked special.
    assert_eq!(hf().vocab_size(), 8_194);
    assert_eq!(hf().special_ids(), vec![0]);
}

#[test]
fn round_trip_pool_keeps_whole_tokens_only() {
    let b = builtin().round_trip_ids();
    // "hello" = 24912 and " world" = 2375 in o200k_base.
    assert!(b.binary_search(&24_912).is_ok());
    assert!(b.binary_search(&2_375).is_ok());
    // The built-in tokenizer encodes special-token text as ordinary text, so its special
    // tokens never survive; neither does the unused rank 199_998.
    for id in [199_998, 199_999, 200_018] {
        assert!(b.binary_search(&id).is_err(), "{id}");
    }
    assert!(b.windows(2).all(|w| w[0] < w[1]));
    // Most of the vocabulary survives; byte fragments and oddities do not.
    assert!(b.len() > 150_000 && b.len() < 199_998, "{}", b.len());

    let h = hf().round_trip_ids();
    // "Ġthe" = 268 and "Ġking" = 893; <|endoftext|> (0) is an added token the encoder
    // matches, so it survives here (and only the vllm style drops it).
    for id in [0, 268, 893] {
        assert!(h.binary_search(&id).is_ok(), "{id}");
    }
    for id in h.iter() {
        let text = hf().decode(&[*id]);
        assert_eq!(hf().encode(&text), vec![*id], "{text:?}");
        assert!(!text.contains('\u{FFFD}'));
    }
}

// ------------------------------------------------------------------ random corpus

#[test]
fn random_corpus_is_drawn_from_the_pool_by_its_own_generator() {
    for tok in tokenizers() {
        let c = Corpus::random(tok, 5, RandomCorpusStyle::Vllm).unwrap();
        let ids = c.tokens(tok);
        assert_eq!(ids.len(), RANDOM_CORPUS_TOKENS);
        assert_eq!(RANDOM_CORPUS_TOKENS, 1 << 18);
        // Rebuild the first draws from the definition: the pool is the round-trip ids
        // without the special ones, each draw a uniform index into it.
        let special = tok.special_ids();
        let pool: Vec<u32> = tok
            .round_trip_ids()
            .iter()
            .copied()
            .filter(|id| !special.contains(id))
            .collect();
        let mut rng = rng_for(5, PURPOSE_RANDOM_CORPUS);
        assert_eq!(PURPOSE_RANDOM_CORPUS, "corpus.random");
        for (i, id) in ids.iter().take(64).enumerate() {
            assert_eq!(*id, pool[rng.random_range(0..pool.len())], "draw {i}");
        }
        // The hash is of the ids, 4 little-endian bytes each.
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(c.sha256(), sha256_hex(&bytes));
        assert_eq!(c.text(), tok.decode(&ids));
    }
}

#[test]
fn vllm_style_drops_special_tokens_sglang_keeps_them() {
    let tok = hf();
    let vllm = Corpus::random(tok, 1, RandomCorpusStyle::Vllm).unwrap();
    assert!(!vllm.tokens(tok).contains(&0));
    // sglang draws from the P ids that round-trip, P <= 8,194 and id 0 among them, so id 0
    // is expected 262,144 / P >= 32 times; none at all would have odds of about e^-32.
    let sglang = Corpus::random(tok, 1, RandomCorpusStyle::Sglang).unwrap();
    let zeros = sglang.tokens(tok).iter().filter(|&&i| i == 0).count();
    assert!((10..80).contains(&zeros), "{zeros}");
    assert_ne!(vllm.sha256(), sglang.sha256());
}

#[test]
fn vllm_random_prompts_hold_no_special_tokens_when_re_encoded() {
    let mut p = plan("random", 200.0);
    p.num_dataset_entries = 20;
    for tok in tokenizers() {
        let special = tok.special_ids();
        let w = build(&p, tok);
        for x in &w.workload.payloads {
            let ids = tok.encode(&last_user(x));
            assert_eq!(ids.len(), 200);
            assert!(ids.iter().all(|i| !special.contains(i)), "{}", tok.name());
        }
    }
}

#[test]
fn random_prompts_have_exact_lengths() {
    for tok in tokenizers() {
        for style in [RandomCorpusStyle::Vllm, RandomCorpusStyle::Sglang] {
            let c = Corpus::random(tok, 3, style).unwrap();
            let mut g = PromptGenerator::new(tok, &c, 3).unwrap();
            for n in [1, 2, 3, 7, 16, 64, 257, 1000, 3000] {
                for _ in 0..4 {
                    let text = g.prompt(n).unwrap();
                    assert_eq!(tok.count(&text), n, "{} {style:?} {text:?}", tok.name());
                }
            }
        }
    }
}

// ------------------------------------------------------------------ coding corpus

#[test]
fn coding_asset_is_ascii_code_of_every_genre() {
    let bytes = std::fs::read(coding_asset_path()).unwrap();
    assert_eq!(bytes, CODING.as_bytes());
    assert!(
        (150_000..=300_000).contains(&bytes.len()),
        "{}",
        bytes.len()
    );
    assert!(
        bytes
            .iter()
            .all(|&b| b == b'\t' || b == b'\n' || (0x20..0x7f).contains(&b))
    );
    assert_eq!(Corpus::coding().sha256(), sha256_hex(&bytes));
    for genre in [
        "// sample: shell session",
        "// sample: JSON document",
        "// sample: Python traceback",
        "// sample: unified diff",
        "// file: crates/inferbench-workload/Cargo.toml",
        "Traceback (most recent call last):",
        "\n@@ -",
        "\n$ ",
        "fn ",
    ] {
        assert!(CODING.contains(genre), "{genre}");
    }
    // Tokenized as written: line breaks and indentation kept.
    let c = Corpus::coding();
    assert_eq!(c.normalized(), CODING);
    assert_eq!(builtin().decode(&c.tokens(builtin())), CODING);
}

#[test]
fn coding_prompts_are_windows_of_the_asset() {
    let twice = format!("{CODING}{CODING}"); // a window may wrap at the end
    for tok in tokenizers() {
        let mut g = PromptGenerator::new(tok, Corpus::coding(), 9).unwrap();
        let mut with_newline = 0;
        for n in [1, 5, 32, 100, 550, 2000] {
            for _ in 0..5 {
                let text = g.prompt(n).unwrap();
                assert_eq!(tok.count(&text), n, "{}", tok.name());
                assert!(twice.contains(&text), "{} {text:?}", tok.name());
                with_newline += usize::from(text.contains('\n'));
            }
        }
        // Code has a line break every few dozen tokens: the long prompts keep theirs.
        assert!(with_newline >= 15, "{with_newline}");
    }
}

// ------------------------------------------------------------------ through the builder

#[test]
fn builder_makes_exact_prompts_from_each_corpus() {
    for corpus in ["coding", "random"] {
        for tok in tokenizers() {
            for isl in [1.0, 13.0, 128.0, 700.0] {
                let w = build(&plan(corpus, isl), tok);
                assert_eq!(w.workload.payloads.len(), 6);
                for x in &w.workload.payloads {
                    assert_eq!(x.input_tokens, Some(isl as u64), "{corpus} {}", tok.name());
                    assert_eq!(tok.count(&last_user(x)), isl as usize);
                }
            }
        }
    }
}

#[test]
fn the_manifest_hash_is_that_of_the_corpus_used() {
    let coding = build(&plan("coding", 16.0), builtin());
    assert_eq!(
        coding.corpus_sha256,
        sha256_hex(&std::fs::read(coding_asset_path()).unwrap())
    );
    let sonnet = build(&plan("sonnet", 16.0), builtin());
    assert_eq!(sonnet.corpus_sha256, Corpus::shakespeare().sha256());
    let random = build(&plan("random", 16.0), builtin());
    let expected = Corpus::random(builtin(), 11, RandomCorpusStyle::Vllm).unwrap();
    assert_eq!(random.corpus_sha256, expected.sha256());
    assert_ne!(random.corpus_sha256, coding.corpus_sha256);
}

#[test]
fn same_seed_same_workload_other_seed_other_workload() {
    for corpus in ["coding", "random"] {
        for tok in tokenizers() {
            let mut p = plan(corpus, 48.0);
            p.dataset.random_corpus_style = Some("sglang".into());
            let a = build(&p, tok);
            let b = build(&p, tok);
            assert_eq!(a.workload, b.workload, "{corpus}");
            assert_eq!(a.workload.sha256(), b.workload.sha256());
            assert_eq!(a.corpus_sha256, b.corpus_sha256);
            p.random_seed = Some(12);
            let c = build(&p, tok);
            assert_ne!(a.workload, c.workload, "{corpus}");
            // The coding corpus is fixed; a random one is drawn anew for each seed.
            assert_eq!(corpus == "coding", a.corpus_sha256 == c.corpus_sha256);
        }
    }
}

#[test]
fn prefixes_system_prompts_and_turns_use_the_chosen_corpus() {
    let twice = format!("{CODING}{CODING}");
    for corpus in ["coding", "random"] {
        for tok in tokenizers() {
            // A prefix pool: PREFIX + " " + PROMPT.
            let mut p = plan(corpus, 20.0);
            p.dataset.num_prefix_prompts = 2;
            p.dataset.prefix_prompt_length = 9;
            let w = build(&p, tok);
            let base = build(&plan(corpus, 20.0), tok);
            for (x, y) in w.workload.payloads.iter().zip(&base.workload.payloads) {
                let with = last_user(x);
                let without = last_user(y);
                let prefix = with.strip_suffix(&without).unwrap();
                let prefix = prefix.strip_suffix(' ').unwrap();
                assert_eq!(tok.count(prefix), 9);
                if corpus == "coding" {
                    assert!(twice.contains(prefix));
                }
            }

            // A shared system prompt, a user context and three turns per conversation.
            let mut p = plan(corpus, 12.0);
            p.dataset.shared_system_prompt_length = Some(30);
            p.dataset.user_context_prompt_length = Some(17);
            p.dataset.conversation_turn_mean = 3.0;
            let w = build(&p, tok);
            assert_eq!(w.workload.payloads.len(), 18);
            let mut systems = Vec::new();
            for x in &w.workload.payloads {
                assert!(x.history);
                let m = messages(x);
                if x.turn_index == 0 {
                    assert_eq!(m.len(), 3, "{m:?}");
                    assert_eq!(m[0].0, "system");
                    assert_eq!(tok.count(&m[0].1), 30);
                    assert_eq!(tok.count(&m[1].1), 17);
                    assert_eq!(tok.count(&m[2].1), 12);
                    systems.push(m[0].1.clone());
                    if corpus == "coding" {
                        assert!(m.iter().all(|(_, t)| twice.contains(t.as_str())));
                    }
                } else {
                    assert_eq!(tok.count(&last_user(x)), 12);
                }
            }
            assert!(systems.windows(2).all(|s| s[0] == s[1]));
        }
    }
}

#[test]
fn mooncake_hash_blocks_come_from_the_chosen_corpus() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "data",
        "datasets",
        "mooncake.jsonl",
    ]
    .iter()
    .collect();
    let mut p = plan("coding", 16.0);
    p.dataset.input_file = Some(path.display().to_string());
    p.dataset.isl_block_size = Some(8);
    let w = build(&p, builtin());
    assert_eq!(w.corpus_sha256, Corpus::coding().sha256());
    // The file's first three rows ask for 20, 24 and 11 tokens (the fifth for 7).
    let pl = &w.workload.payloads;
    for (i, n) in [(0, 20), (1, 24), (2, 11), (4, 7)] {
        assert_eq!(builtin().count(&last_user(&pl[i])), n, "row {i}");
    }
}

// ------------------------------------------------------------------ errors

#[test]
fn unknown_corpus_and_style_are_errors_naming_the_flag() {
    let e = build_workload(&plan("shakespeare", 8.0), builtin(), Corpus::shakespeare())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--prompt-corpus"), "{e}");
    assert!(e.contains("dataset.prompt_corpus"), "{e}");
    assert!(e.contains("sonnet, coding, random"), "{e}");
    let mut p = plan("random", 8.0);
    p.dataset.random_corpus_style = Some("tgi".into());
    let e = build_workload(&p, builtin(), Corpus::shakespeare())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--random-corpus-style \"tgi\""), "{e}");
    assert_eq!(
        PromptCorpus::from_plan(&DatasetPlan::default()).unwrap(),
        PromptCorpus::Sonnet
    );
}
