//! Synthetic conversations (AIPerf §3.1): prompts of drawn lengths from the corpus, with the
//! prefix pool, the shared system prompt, per-session user context, `--seq-dist`,
//! `--random-range-ratio`, multi-turn sessions, text batches and rankings queries.

use inferbench_core::plan::{EndpointType, LengthDist, RunPlan};
use rand_chacha::ChaCha8Rng;

use super::length_shape::LengthShape;
use super::seq_dist::{RangeRatio, SeqDist};
use super::{Conv, NamedText, TurnSpec, plan_err, purpose, session_id};
use crate::corpus::{Corpus, RandomCorpusStyle};
use crate::error::WorkloadError;
use crate::synthetic::{
    PURPOSE_ISL, PURPOSE_OSL, PromptGenerator, rng_for, sample_positive_normal_integer,
};
use crate::tokenizer::Tokenizer;

fn check_dist(field: &'static str, mean: f64, stddev: f64) -> Result<(), WorkloadError> {
    if !(mean.is_finite() && mean >= 0.0 && stddev.is_finite() && stddev >= 0.0) {
        return Err(plan_err(
            field,
            format!("mean and stddev must be finite numbers >= 0, got {mean} and {stddev}"),
        ));
    }
    Ok(())
}

/// How each turn's (ISL, OSL) is drawn.
enum Lengths {
    /// `--isl`/`--osl` normal draws, each axis replaced by its `--isl-dist`/`--osl-dist`
    /// when given.
    Normal {
        isl: Option<LengthShape>,
        osl: Option<LengthShape>,
    },
    Seq(SeqDist),
    Range {
        ratio: RangeRatio,
        sglang: bool,
    },
}

/// Draws lengths for each turn from the generators of their purposes.
pub(crate) struct LengthDraws {
    how: Lengths,
    isl: LengthDist,
    osl: Option<LengthDist>,
    isl_rng: ChaCha8Rng,
    osl_rng: ChaCha8Rng,
    seq_rng: ChaCha8Rng,
}

impl LengthDraws {
    fn new(plan: &RunPlan, seed: u64) -> Result<Self, WorkloadError> {
        let ds = &plan.dataset;
        check_dist("isl", plan.isl.mean, plan.isl.stddev)?;
        if let Some(o) = &plan.osl {
            check_dist("osl", o.mean, o.stddev)?;
        }
        let (isl_shape, osl_shape) = shapes(plan)?;
        if isl_shape.is_some() || osl_shape.is_some() {
            for (set, field, flag) in [
                (ds.seq_dist.is_some(), "dataset.seq_dist", "--seq-dist"),
                (
                    ds.random_range_ratio.is_some(),
                    "dataset.random_range_ratio",
                    "--random-range-ratio",
                ),
            ] {
                if set {
                    return Err(plan_err(
                        field,
                        format!("{flag} cannot be used with --isl-dist/--osl-dist"),
                    ));
                }
            }
        }
        let how = match (&ds.seq_dist, &ds.random_range_ratio) {
            (Some(_), Some(_)) => {
                return Err(plan_err(
                    "dataset.seq_dist",
                    "--seq-dist and --random-range-ratio cannot be used together",
                ));
            }
            (Some(s), None) => Lengths::Seq(SeqDist::parse(s)?),
            (None, Some(r)) => {
                if plan.osl.is_none() {
                    return Err(plan_err(
                        "dataset.random_range_ratio",
                        "--random-range-ratio needs --osl (and --isl) to center its windows",
                    ));
                }
                let sglang = RandomCorpusStyle::from_plan(ds)? == RandomCorpusStyle::Sglang;
                Lengths::Range {
                    ratio: RangeRatio::parse(r)?,
                    sglang,
                }
            }
            (None, None) => Lengths::Normal {
                isl: isl_shape,
                osl: osl_shape,
            },
        };
        Ok(LengthDraws {
            how,
            isl: plan.isl,
            osl: plan.osl,
            isl_rng: rng_for(seed, PURPOSE_ISL),
            osl_rng: rng_for(seed, PURPOSE_OSL),
            seq_rng: rng_for(seed, purpose::SEQ_DIST),
        })
    }

    /// The (ISL, OSL) of the next turn. OSL is None when no `--osl` (nor `--seq-dist`) asks
    /// for one.
    fn next(&mut self) -> (u64, Option<u64>) {
        match &self.how {
            Lengths::Normal { isl, osl } => {
                let isl = match isl {
                    Some(s) => s.sample(&mut self.isl_rng),
                    None => sample_positive_normal_integer(
                        &mut self.isl_rng,
                        self.isl.mean,
                        self.isl.stddev,
                    ),
                };
                let osl = match osl {
                    Some(s) => Some(s.sample(&mut self.osl_rng)),
                    None => self.osl.map(|d| {
                        sample_positive_normal_integer(&mut self.osl_rng, d.mean, d.stddev)
                    }),
                };
                (isl, osl)
            }
            Lengths::Seq(d) => {
                let (i, o) = d.sample(&mut self.seq_rng);
                (i, Some(o))
            }
            Lengths::Range { ratio, sglang } => {
                let isl = RangeRatio::draw(&mut self.isl_rng, self.isl.mean, ratio.input, *sglang);
                let osl = self
                    .osl
                    .map(|d| RangeRatio::draw(&mut self.osl_rng, d.mean, ratio.output, *sglang));
                (isl, osl)
            }
        }
    }

    /// One more ISL only (the further texts of a batch).
    fn next_isl(&mut self) -> u64 {
        match &self.how {
            Lengths::Normal { isl: Some(s), .. } => s.sample(&mut self.isl_rng),
            Lengths::Seq(_) | Lengths::Normal { isl: None, .. } => {
                sample_positive_normal_integer(&mut self.isl_rng, self.isl.mean, self.isl.stddev)
            }
            Lengths::Range { ratio, sglang } => {
                RangeRatio::draw(&mut self.isl_rng, self.isl.mean, ratio.input, *sglang)
            }
        }
    }
}

/// `--isl-dist` and `--osl-dist`, parsed.
fn shapes(plan: &RunPlan) -> Result<(Option<LengthShape>, Option<LengthShape>), WorkloadError> {
    let parse = |flag: &str, field: &'static str, t: &Option<String>| {
        t.as_deref()
            .map(|t| LengthShape::parse(flag, t).map_err(|e| plan_err(field, e)))
            .transpose()
    };
    Ok((
        parse("--isl-dist", "dataset.isl_dist", &plan.dataset.isl_dist)?,
        parse("--osl-dist", "dataset.osl_dist", &plan.dataset.osl_dist)?,
    ))
}

/// Output lengths for file rows that give none: drawn from `--osl` (or `--osl-dist`) on the
/// `dataset.osl` generator, in row order; None without either.
pub(crate) struct OslDraws {
    osl: Option<LengthDist>,
    shape: Option<LengthShape>,
    rng: ChaCha8Rng,
}

impl OslDraws {
    pub fn new(plan: &RunPlan, seed: u64) -> Result<Self, WorkloadError> {
        Ok(OslDraws {
            osl: plan.osl,
            shape: shapes(plan)?.1,
            rng: rng_for(seed, PURPOSE_OSL),
        })
    }
    pub fn next(&mut self) -> Option<u64> {
        if let Some(s) = &self.shape {
            return Some(s.sample(&mut self.rng));
        }
        self.osl
            .map(|d| sample_positive_normal_integer(&mut self.rng, d.mean, d.stddev))
    }
}

/// The synthetic dataset. Per conversation: the turn count (`dataset.turns`), the user
/// context (`dataset.user_context`); per turn: the lengths (`dataset.isl`, `dataset.osl`, or
/// `dataset.seq_dist`), then the prompt (`dataset`), then its prefix pick (`dataset.prefix`),
/// and for later turns the delay (`dataset.turn_delay`). Each purpose has its own generator,
/// so with no extra the bodies equal `render::render_workload`'s. `corpus` is the one
/// `--prompt-corpus` chose (`build_workload` resolves it); every text comes from it.
pub(crate) fn generate(
    plan: &RunPlan,
    tok: &Tokenizer,
    corpus: &Corpus,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let ds = &plan.dataset;
    let n_conv = ds.num_conversations.unwrap_or(plan.num_dataset_entries);
    if n_conv == 0 {
        return Err(plan_err(
            "num_dataset_entries",
            "must be at least 1 (conversations to make)",
        ));
    }
    if ds.batch_size == 0 {
        return Err(plan_err("dataset.batch_size", "must be at least 1"));
    }
    let prefixes_on = ds.num_prefix_prompts > 0 || ds.prefix_prompt_length > 0;
    if prefixes_on && (ds.num_prefix_prompts == 0 || ds.prefix_prompt_length == 0) {
        return Err(plan_err(
            "dataset.num_prefix_prompts",
            "--num-prefix-prompts and --prefix-prompt-length must both be > 0",
        ));
    }
    if prefixes_on
        && (ds.shared_system_prompt_length.is_some() || ds.user_context_prompt_length.is_some())
    {
        return Err(plan_err(
            "dataset.shared_system_prompt_length",
            "--shared-system-prompt-length and --user-context-prompt-length cannot be used \
             with --num-prefix-prompts/--prefix-prompt-length",
        ));
    }
    if ds.system_prompt.is_some() && ds.shared_system_prompt_length.is_some() {
        return Err(plan_err(
            "dataset.system_prompt",
            "--system-prompt and --shared-system-prompt-length cannot be used together",
        ));
    }
    check_dist(
        "dataset.conversation_turn",
        ds.conversation_turn_mean,
        ds.conversation_turn_stddev,
    )?;
    check_dist(
        "dataset.turn_delay",
        ds.turn_delay_mean_ms,
        ds.turn_delay_stddev_ms,
    )?;
    if !(ds.turn_delay_ratio.is_finite() && ds.turn_delay_ratio >= 0.0) {
        return Err(plan_err(
            "dataset.turn_delay_ratio",
            format!("must be a finite number >= 0, got {}", ds.turn_delay_ratio),
        ));
    }
    let rankings = matches!(
        plan.endpoint_type,
        EndpointType::NimRankings | EndpointType::HfTeiRankings | EndpointType::CohereRankings
    );
    if rankings {
        check_dist(
            "dataset.rankings_passages",
            ds.rankings_passages_mean,
            ds.rankings_passages_stddev,
        )?;
        check_dist(
            "dataset.rankings_passages_token",
            ds.rankings_passages_token_mean,
            ds.rankings_passages_token_stddev,
        )?;
        check_dist(
            "dataset.rankings_query_token",
            ds.rankings_query_token_mean,
            ds.rankings_query_token_stddev,
        )?;
    }

    let mut lengths = LengthDraws::new(plan, seed)?;
    let mut prompts = PromptGenerator::new(tok, corpus, seed)?;
    let mut turns_rng = rng_for(seed, purpose::TURNS);
    let mut delay_rng = rng_for(seed, purpose::TURN_DELAY);
    let mut prefix_rng = rng_for(seed, purpose::PREFIX_PICK);
    let mut rank_rng = rng_for(seed, purpose::RANKINGS);
    // `--image-*`, `--audio-*`: each turn's media, drawn after its texts.
    let mut media = crate::media::synth::MediaSynth::new(&ds.media, seed)?;

    let prefix_pool: Vec<String> = if prefixes_on {
        let mut g = PromptGenerator::with_purpose(tok, corpus, seed, purpose::PREFIX_POOL)?;
        (0..ds.num_prefix_prompts)
            .map(|_| g.prompt(ds.prefix_prompt_length))
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let system = match (ds.shared_system_prompt_length, &ds.system_prompt) {
        (Some(n), _) => {
            Some(PromptGenerator::with_purpose(tok, corpus, seed, purpose::SYSTEM)?.prompt(n)?)
        }
        (None, Some(text)) => Some(text.clone()),
        (None, None) => None,
    };
    let mut ctx_gen = match ds.user_context_prompt_length {
        Some(_) => Some(PromptGenerator::with_purpose(
            tok,
            corpus,
            seed,
            purpose::USER_CONTEXT,
        )?),
        None => None,
    };
    // `--apply-chat-template`: prompts shortened by the template's own tokens.
    let chat_costs = tok.chat_template_overheads();
    let multi_turn = ds.conversation_turn_mean != 1.0 || ds.conversation_turn_stddev > 0.0;
    let delays_on = ds.turn_delay_mean_ms > 0.0 || ds.turn_delay_stddev_ms > 0.0;

    let mut convs = Vec::with_capacity(n_conv);
    for c in 0..n_conv {
        let n_turns = sample_positive_normal_integer(
            &mut turns_rng,
            ds.conversation_turn_mean,
            ds.conversation_turn_stddev,
        )
        .max(1);
        let user_context = match (&mut ctx_gen, ds.user_context_prompt_length) {
            (Some(g), Some(n)) => Some(g.prompt(n)?),
            _ => None,
        };
        let mut turns = Vec::with_capacity(n_turns as usize);
        for t in 0..n_turns {
            let mut spec = TurnSpec::default();
            if rankings {
                let q = sample_positive_normal_integer(
                    &mut rank_rng,
                    ds.rankings_query_token_mean,
                    ds.rankings_query_token_stddev,
                );
                spec.query = Some(prompts.prompt(q as usize)?);
                let n_pass = sample_positive_normal_integer(
                    &mut rank_rng,
                    ds.rankings_passages_mean,
                    ds.rankings_passages_stddev,
                );
                for _ in 0..n_pass {
                    let len = sample_positive_normal_integer(
                        &mut rank_rng,
                        ds.rankings_passages_token_mean,
                        ds.rankings_passages_token_stddev,
                    );
                    spec.passages.push(prompts.prompt(len as usize)?);
                }
            } else {
                let (isl, osl) = lengths.next();
                spec.max_tokens = osl;
                for b in 0..ds.batch_size {
                    let isl = if b == 0 { isl } else { lengths.next_isl() };
                    let isl =
                        template_compensated(isl, t == 0, chat_costs, !prefix_pool.is_empty());
                    let mut text = prompts.prompt(isl as usize)?;
                    if !prefix_pool.is_empty() {
                        let i = rand::Rng::random_range(&mut prefix_rng, 0..prefix_pool.len());
                        text = format!("{} {text}", prefix_pool[i]);
                    }
                    spec.texts.push(NamedText::plain(text));
                }
            }
            if media.is_on() {
                (spec.images, spec.audios) = media.turn()?;
            }
            if t == 0 {
                spec.system = system.clone();
                spec.user_context = user_context.clone();
            } else if delays_on {
                let d = if ds.turn_delay_stddev_ms > 0.0 {
                    sample_positive_normal_integer(
                        &mut delay_rng,
                        ds.turn_delay_mean_ms,
                        ds.turn_delay_stddev_ms,
                    ) as f64
                } else {
                    ds.turn_delay_mean_ms
                };
                spec.delay_ms = Some(d * ds.turn_delay_ratio);
            }
            turns.push(spec);
        }
        convs.push(Conv {
            id: session_id(c),
            history: multi_turn,
            turns,
        });
    }
    Ok(convs)
}

/// A synthetic turn's ISL less the chat template's cost, as AIPerf shortens it
/// (`dataset/composer/synthetic.py`): the first turn by the per-request fixed cost and one
/// message wrap, a later turn by one wrap; never below 1 (0 when a prefix carries the
/// request). `costs` is (fixed, wrap): (0, 0) without `--apply-chat-template`.
pub(crate) fn template_compensated(isl: u64, first: bool, costs: (u64, u64), prefix: bool) -> u64 {
    let (fixed, wrap) = costs;
    let adjustment = if first { fixed + wrap } else { wrap };
    let floor = if prefix { 0 } else { 1 };
    if adjustment == 0 {
        return isl;
    }
    isl.saturating_sub(adjustment).max(floor)
}

/// Options that act on synthetic prompts only are refused for file datasets (rather than
/// silently ignored); `--system-prompt` goes before each conversation's first turn.
pub(crate) fn apply_prompt_options_to_files(
    plan: &RunPlan,
    convs: &mut [Conv],
) -> Result<(), WorkloadError> {
    let ds = &plan.dataset;
    let synthetic_only: [(&'static str, bool, &str); 6] = [
        (
            "dataset.num_prefix_prompts",
            ds.num_prefix_prompts > 0 || ds.prefix_prompt_length > 0,
            "--num-prefix-prompts/--prefix-prompt-length",
        ),
        (
            "dataset.shared_system_prompt_length",
            ds.shared_system_prompt_length.is_some(),
            "--shared-system-prompt-length",
        ),
        (
            "dataset.user_context_prompt_length",
            ds.user_context_prompt_length.is_some(),
            "--user-context-prompt-length",
        ),
        ("dataset.seq_dist", ds.seq_dist.is_some(), "--seq-dist"),
        ("dataset.isl_dist", ds.isl_dist.is_some(), "--isl-dist"),
        (
            "dataset.random_range_ratio",
            ds.random_range_ratio.is_some(),
            "--random-range-ratio",
        ),
    ];
    let media_only = [
        (
            "dataset.media.image",
            ds.media.image != Default::default(),
            "--image-width-mean/--image-height-mean/--image-batch-size/--image-format",
        ),
        (
            "dataset.media.audio",
            ds.media.audio != Default::default(),
            "--audio-length-mean/--audio-batch-size/--audio-sample-rates/--audio-depths/--audio-num-channels",
        ),
    ];
    for (field, set, flag) in synthetic_only.into_iter().chain(media_only) {
        if set {
            return Err(plan_err(
                field,
                format!(
                    "{flag} applies to synthetic turns only, not to --input-file datasets (give the media in the file's rows)"
                ),
            ));
        }
    }
    if let Some(sys) = &ds.system_prompt {
        for c in convs.iter_mut() {
            if let Some(first) = c.turns.first_mut()
                && first.payload.is_none()
            {
                first.system = Some(sys.clone());
            }
        }
    }
    Ok(())
}
