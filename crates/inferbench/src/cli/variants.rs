//! `--variant` / `--sweep-variant` (AIPerf 0.13): each occurrence is one cell of a
//! hand-picked sweep (AIPerf's `scenarios` sweep), written `[NAME:] KEY=VALUE, KEY=VALUE, …`
//! with the keys `profile` flags without their `--` (kebab or snake case). A cell is the
//! command line with the variant's flags given last, each replacing the command line's own.

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::{ProfileArgs, command_with_unbuilt};

/// One `--variant`: its name (None: `v{index}`) and its (key, value) pairs in order, the
/// value as AIPerf coerces it (surrounding quotes removed; `true`/`false` any case).
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub name: Option<String>,
    pub pairs: Vec<(String, String)>,
}

/// AIPerf's `parse_variant`: a `NAME:` prefix when the text before the first `:` has no
/// `=`; then comma-separated `key=value` pairs (empty pieces skipped), every key once.
pub fn parse_variant(s: &str) -> Result<Variant, String> {
    let raw = s.trim();
    if raw.is_empty() {
        return Err("--variant: empty".into());
    }
    let mut name = None;
    let mut body = raw;
    if let Some((head, tail)) = raw.split_once(':')
        && !head.contains('=')
    {
        let n = head.trim();
        if n.is_empty() {
            return Err(format!("--variant {s:?}: empty name before ':'"));
        }
        name = Some(n.to_string());
        body = tail.trim();
    }
    if body.is_empty() {
        return Err(format!("--variant {s:?}: no KEY=VALUE after the name"));
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for chunk in body.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        let Some((k, v)) = chunk.split_once('=') else {
            return Err(format!(
                "--variant {s:?}: {chunk:?} is not KEY=VALUE (no '=')"
            ));
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(format!("--variant {s:?}: {chunk:?} has an empty key"));
        }
        if pairs.iter().any(|(p, _)| p == k) {
            return Err(format!("--variant {s:?}: the key {k:?} is given twice"));
        }
        pairs.push((k.to_string(), coerce(v)));
    }
    if pairs.is_empty() {
        return Err(format!("--variant {s:?}: no KEY=VALUE pairs"));
    }
    Ok(Variant { name, pairs })
}

/// `true`/`false` in any case become lower case; a value quoted with the same quote at both
/// ends loses them; anything else is kept as written (the flag's own parser reads it).
fn coerce(v: &str) -> String {
    if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        return v.to_ascii_lowercase();
    }
    let b = v.as_bytes();
    if b.len() >= 2 && b[0] == b[b.len() - 1] && matches!(b[0], b'\'' | b'"') {
        return v[1..v.len() - 1].to_string();
    }
    v.to_string()
}

/// Flags that hold for the whole sweep, not one cell, so a variant cannot set them: the
/// sweep and repeat settings, the tree the sweep writes, the one tokenizer and the one
/// server (simulated or not) every cell shares. (AIPerf keeps only a variant's `benchmark`
/// part; these live elsewhere or are shared.) Canonical long names.
const SWEEP_WIDE: &[&str] = &[
    "variant",
    "config",
    "scenario",
    "simulated",
    "config-note",
    "config-scenario",
    "declare",
    "num-profile-runs",
    "profile-run-cooldown-seconds",
    "profile-run-disable-warmup-after-first",
    "confidence-level",
    "set-consistent-seed",
    "vary-seed-per-trial",
    "random-seed",
    "parameter-sweep-cooldown-seconds",
    "parameter-sweep-mode",
    "parameter-sweep-same-seed",
    "sweep-type",
    "no-sweep-table",
    "convergence-metric",
    "convergence-stat",
    "convergence-threshold",
    "convergence-mode",
    "output-artifact-dir",
    "profile-export-prefix",
    "tokenizer",
    "tokenizer-revision",
    "apply-chat-template",
    "url",
    "wait-for-model-timeout",
    "wait-for-model-mode",
    "wait-for-model-interval",
];

/// One cell of a `--variant` sweep.
#[derive(Debug)]
pub struct VariantCell {
    pub name: String,
    /// Its directory: the name without the characters a path cannot hold (`variation_{i}`
    /// if nothing is left), as AIPerf names a scenario's.
    pub dir_name: String,
    pub args: ProfileArgs,
    /// Warnings of this cell's flags that the command line alone did not give.
    pub warnings: Vec<String>,
    /// The cell's own command line, when it is not the sweep's with extra flags (a config
    /// scenario: the command line with `--scenario NAME`, the file's flags merged in).
    pub argv: Option<Vec<String>>,
}

/// The cells of the `--variant`s of `a` (none when there are none). `argv` is the command
/// line, with `--config`'s flags merged in.
pub fn variant_cells(a: &ProfileArgs, argv: &[String]) -> Result<Vec<VariantCell>, String> {
    let raw = &a.aiperf.variants;
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    if raw.len() == 1 {
        return Err("--variant: a single variant is refused, as in AIPerf: give its flags directly, or give --variant at least twice for a sweep of them".into());
    }
    if a.aiperf.scenario.is_some() {
        return Err("--variant cannot be used with --scenario: the config's sweep already chooses the cells".into());
    }
    let lists = super::cells::swept_flags(a);
    if !lists.is_empty() {
        return Err(format!(
            "--variant cannot be used with comma lists ({}): the lists sweep every combination, --variant lists its cells by hand",
            lists.join(", ")
        ));
    }
    let parsed: Vec<Variant> = raw
        .iter()
        .map(|s| parse_variant(s))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = parsed
        .iter()
        .enumerate()
        .map(|(i, v)| v.name.clone().unwrap_or_else(|| format!("v{i}")))
        .collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(format!(
                "--variant: the name {n:?} is used twice; names must be unique"
            ));
        }
        if n.contains('/') || n.contains('\\') || n.contains("..") || n.chars().all(|c| c == '.') {
            return Err(format!(
                "--variant: the name {n:?} cannot name a directory (a path separator, '..' or only dots)"
            ));
        }
    }
    let cmd = command_with_unbuilt();
    let profile = cmd
        .find_subcommand("profile")
        .ok_or("no profile subcommand")?
        .clone();
    let base = command_with_unbuilt()
        .try_get_matches_from(argv)
        .map_err(|e| format!("--variant: the command line does not parse again: {e}"))?;
    let base_warnings = super::check_given(&base).unwrap_or_default();
    let sub = base
        .subcommand_matches("profile")
        .or_else(|| base.subcommand_matches("inspect"))
        .ok_or("--variant: only with profile")?;
    let mut out = Vec::with_capacity(parsed.len());
    for (i, (v, name)) in parsed.iter().zip(&names).enumerate() {
        let (ids, tokens) = tokens_of(&profile, sub, name, v)?;
        // The variant's flags after the command line's, each overriding the earlier ones.
        let cmd = command_with_unbuilt().mut_subcommand("profile", |mut c| {
            for id in &ids {
                c = c.mut_arg(id.as_str(), |x| x.overrides_with(id));
            }
            c
        });
        let mut args = argv.to_vec();
        args.extend(tokens);
        let m = cmd.try_get_matches_from(&args).map_err(|e| {
            let text = e.render().to_string();
            format!(
                "--variant {name}: {}",
                text.lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
            )
        })?;
        super::check_unbuilt(&m).map_err(|e| format!("--variant {name}: {e}"))?;
        let warnings = super::check_given(&m)
            .map_err(|e| format!("--variant {name}: {e}"))?
            .into_iter()
            .filter(|w| !base_warnings.contains(w))
            .map(|w| format!("--variant {name}: {w}"))
            .collect();
        let parsed = <super::Cli as clap::FromArgMatches>::from_arg_matches(&m)
            .map_err(|e| format!("--variant {name}: {e}"))?;
        let super::Command::Profile(args) = parsed.command else {
            return Err("--variant: only with profile".into());
        };
        out.push(VariantCell {
            name: name.clone(),
            dir_name: dir_segment(name, i),
            args: *args,
            warnings,
            argv: None,
        });
    }
    Ok(out)
}

/// The variant's flags as command-line tokens, with the ids of the arguments they set.
fn tokens_of(
    profile: &clap::Command,
    base: &ArgMatches,
    name: &str,
    v: &Variant,
) -> Result<(Vec<clap::Id>, Vec<String>), String> {
    let mut ids = Vec::new();
    let mut tokens = Vec::new();
    for (key, value) in &v.pairs {
        let long = key.replace('_', "-");
        let arg = profile
            .get_arguments()
            .find(|a| {
                a.get_long() == Some(long.as_str())
                    || a.get_all_aliases()
                        .is_some_and(|al| al.contains(&long.as_str()))
            })
            .ok_or_else(|| {
                format!(
                    "--variant {name}: {key}: not a profile flag (a key is a flag without its --)"
                )
            })?;
        let canonical = arg.get_long().unwrap_or_default();
        if SWEEP_WIDE.contains(&canonical) || canonical == "sweep-variant" {
            return Err(format!(
                "--variant {name}: {key}: --{canonical} holds for the whole sweep, not one variant; give it outside --variant"
            ));
        }
        if canonical.starts_with("sim-") {
            return Err(format!(
                "--variant {name}: {key}: the simulated server is one for the whole sweep; give --{canonical} outside --variant"
            ));
        }
        let id = arg.get_id().clone();
        if arg.get_action().takes_values() {
            tokens.push(format!("--{canonical}"));
            tokens.push(value.clone());
        } else {
            match value.as_str() {
                "true" => tokens.push(format!("--{canonical}")),
                "false" if base.value_source(id.as_str()) == Some(ValueSource::CommandLine) => {
                    return Err(format!(
                        "--variant {name}: {key}=false: --{canonical} is given to the whole sweep; a variant cannot take it back (give it to the variants that want it)"
                    ));
                }
                "false" => {}
                other => {
                    return Err(format!(
                        "--variant {name}: {key}={other}: --{canonical} takes no value (true or false)"
                    ));
                }
            }
        }
        ids.push(id);
    }
    Ok((ids, tokens))
}

/// AIPerf's directory segment of a scenario: the name without `/ \ < > : " | ? *` and `..`;
/// `variation_{index}` if nothing (or only dots) is left.
pub fn dir_segment(name: &str, index: usize) -> String {
    let s: String = name
        .replace("..", "")
        .chars()
        .filter(|c| !matches!(c, '/' | '\\' | '<' | '>' | ':' | '"' | '|' | '?' | '*'))
        .collect();
    if s.chars().all(|c| c == '.') {
        format!("variation_{index}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests;
