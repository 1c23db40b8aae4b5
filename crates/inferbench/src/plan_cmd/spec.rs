//! The plan file (docs/plan.md): TOML with spans, so that every error names the plan file,
//! the line and the field.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// The seed's three traffic profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Regression,
    ServiceLoad,
    TraceReplay,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Regression, Kind::ServiceLoad, Kind::TraceReplay];

    /// The name, as the plan writes it and as the identity's `profile` pin says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Regression => "regression",
            Kind::ServiceLoad => "service-load",
            Kind::TraceReplay => "trace-replay",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    plan: Option<Spanned<RawPlan>>,
    defaults: Option<RawDefaults>,
    #[serde(default)]
    profile: Vec<Spanned<RawProfile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    name: Spanned<String>,
    ledger: Spanned<String>,
    output: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    #[serde(default)]
    args: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
    args: Option<Spanned<Vec<Spanned<String>>>>,
    aiperf_config: Option<Spanned<String>>,
    scenario: Option<Spanned<String>>,
    repeats: Option<Spanned<i64>>,
    simulated: Option<Spanned<bool>>,
    gate: Option<Spanned<String>>,
    declare: Option<Spanned<Vec<Spanned<String>>>>,
}

/// A string from the plan with the line it is on.
#[derive(Clone, Debug)]
pub struct At<T> {
    pub value: T,
    pub line: usize,
}

/// Where a profile's load comes from.
#[derive(Clone, Debug)]
pub enum Load {
    /// `args = [...]`: `inferbench profile` / AIPerf flags, each with its line.
    Args(Vec<At<String>>),
    /// `aiperf_config = "file.yaml"` (resolved against the plan's directory), and `scenario`.
    AiperfConfig {
        path: PathBuf,
        scenario: Option<String>,
        /// `simulated = true`: the built-in simulated server, not the config's URL.
        simulated: bool,
    },
}

/// One `[[profile]]`, as written (checked for shape, not yet built into a run).
#[derive(Clone, Debug)]
pub struct ProfileSpec {
    /// 1-based position among the profiles.
    pub index: usize,
    pub line: usize,
    pub name: String,
    pub kind: Kind,
    pub load: Load,
    /// The line of `args` or `aiperf_config`.
    pub load_line: usize,
    pub repeats: usize,
    pub gate: Option<At<PathBuf>>,
    pub declare: Vec<At<String>>,
}

impl ProfileSpec {
    /// `profile[N].FIELD`, as errors name it.
    pub fn field(&self, field: &str) -> String {
        format!("profile[{}].{field}", self.index)
    }
}

/// A plan file, parsed: paths resolved against the plan file's directory.
#[derive(Clone, Debug)]
pub struct PlanSpec {
    /// The plan file as given (errors name it so).
    pub file: String,
    pub name: String,
    pub ledger: PathBuf,
    /// The line of `ledger`, for errors about the ledger directory.
    pub ledger_line: usize,
    pub output: PathBuf,
    pub defaults: Vec<At<String>>,
    pub profiles: Vec<ProfileSpec>,
}

/// `FILE:LINE: FIELD: message`.
pub fn located(file: &str, line: usize, field: &str, msg: impl std::fmt::Display) -> String {
    format!("{file}:{line}: {field}: {msg}")
}

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Reads and parses `path`.
pub fn read(path: &Path) -> Result<PlanSpec, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    parse(&file, &text, &base)
}

/// Parses plan text; `file` names it in messages, `base` resolves its relative paths.
pub fn parse(file: &str, text: &str, base: &Path) -> Result<PlanSpec, String> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        // toml's message names the field (`unknown field `x``, `missing field `y``).
        let msg = e.message().trim().replace('\n', "; ");
        format!("{file}:{line}: {msg}")
    })?;
    let line = |s: std::ops::Range<usize>| line_of(text, s.start);
    let resolve = |p: &str| -> PathBuf { resolve_in(base, p) };
    let Some(plan) = raw.plan else {
        return Err(format!(
            "{file}:1: plan: missing the [plan] table (name, ledger, output)"
        ));
    };
    let plan_line = line(plan.span());
    let plan = plan.into_inner();
    let non_empty = |s: &Spanned<String>, field: &str| -> Result<String, String> {
        if s.get_ref().trim().is_empty() {
            Err(located(file, line(s.span()), field, "must not be empty"))
        } else {
            Ok(s.get_ref().clone())
        }
    };
    let name = non_empty(&plan.name, "plan.name")?;
    let ledger = resolve(&non_empty(&plan.ledger, "plan.ledger")?);
    let ledger_line = line(plan.ledger.span());
    let output = resolve(&non_empty(&plan.output, "plan.output")?);
    let strings = |v: Spanned<Vec<Spanned<String>>>| -> Vec<At<String>> {
        v.into_inner()
            .into_iter()
            .map(|s| At {
                line: line(s.span()),
                value: s.into_inner(),
            })
            .collect()
    };
    let defaults = raw
        .defaults
        .and_then(|d| d.args)
        .map(strings)
        .unwrap_or_default();
    if raw.profile.is_empty() {
        return Err(located(
            file,
            plan_line,
            "profile",
            "the plan declares no [[profile]]",
        ));
    }
    let mut profiles: Vec<ProfileSpec> = Vec::new();
    for (i, p) in raw.profile.into_iter().enumerate() {
        let index = i + 1;
        let pline = line(p.span());
        let p = p.into_inner();
        let f = |field: &str| format!("profile[{index}].{field}");
        let Some(name) = p.name else {
            return Err(located(file, pline, &f("name"), "missing"));
        };
        let name_line = line(name.span());
        let name = name.into_inner();
        check_name(&name).map_err(|m| located(file, name_line, &f("name"), m))?;
        if let Some(other) = profiles.iter().find(|q| q.name == name) {
            return Err(located(
                file,
                name_line,
                &f("name"),
                format!(
                    "\"{name}\" is already profile[{}] (line {})",
                    other.index, other.line
                ),
            ));
        }
        let Some(kind) = p.kind else {
            return Err(located(
                file,
                pline,
                &f("kind"),
                "missing (regression, service-load or trace-replay)",
            ));
        };
        let kind_line = line(kind.span());
        let kind = Kind::parse(kind.get_ref()).ok_or_else(|| {
            located(
                file,
                kind_line,
                &f("kind"),
                format!(
                    "unknown kind \"{}\" (regression, service-load or trace-replay)",
                    kind.get_ref()
                ),
            )
        })?;
        let (load, load_line) = match (p.args, p.aiperf_config) {
            (Some(_), Some(c)) => {
                return Err(located(
                    file,
                    line(c.span()),
                    &f("aiperf_config"),
                    "give either args or aiperf_config, not both",
                ));
            }
            (None, None) => {
                return Err(located(
                    file,
                    pline,
                    &f("args"),
                    "missing: a profile's load is `args = [...]` or `aiperf_config = \"FILE.yaml\"`",
                ));
            }
            (Some(a), None) => {
                if let Some(s) = &p.scenario {
                    return Err(located(
                        file,
                        line(s.span()),
                        &f("scenario"),
                        "selects a scenario of an aiperf_config; this profile has args",
                    ));
                }
                if let Some(s) = &p.simulated {
                    return Err(located(
                        file,
                        line(s.span()),
                        &f("simulated"),
                        "replaces an aiperf_config's URL; with args, leave out --url instead",
                    ));
                }
                let l = line(a.span());
                (Load::Args(strings(a)), l)
            }
            (None, Some(c)) => {
                let l = line(c.span());
                let path = resolve(c.get_ref());
                (
                    Load::AiperfConfig {
                        path,
                        scenario: p.scenario.map(Spanned::into_inner),
                        simulated: p.simulated.is_some_and(|s| s.into_inner()),
                    },
                    l,
                )
            }
        };
        let repeats = match p.repeats {
            None => 1,
            Some(r) => {
                let v = *r.get_ref();
                if !(1..=10).contains(&v) {
                    return Err(located(
                        file,
                        line(r.span()),
                        &f("repeats"),
                        format!("{v}: must be 1 to 10 (--num-profile-runs)"),
                    ));
                }
                v as usize
            }
        };
        let gate = p.gate.map(|g| At {
            line: line(g.span()),
            value: resolve(g.get_ref()),
        });
        let declare = p.declare.map(strings).unwrap_or_default();
        profiles.push(ProfileSpec {
            index,
            line: pline,
            name,
            kind,
            load,
            load_line,
            repeats,
            gate,
            declare,
        });
    }
    Ok(PlanSpec {
        file: file.to_string(),
        name,
        ledger,
        ledger_line,
        output,
        defaults,
        profiles,
    })
}

/// `p` against `base` when relative, with `a/../` folded away lexically (so messages and
/// the result name `artifacts/x`, not `examples/../artifacts/x`).
pub fn resolve_in(base: &Path, p: &str) -> PathBuf {
    use std::path::Component;
    let joined = if Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        base.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// A profile's name is its directory under the plan's output.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "\"{name}\": a directory name (letters, digits, '-', '_', '.'; not starting with '.')"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "[plan]\nname = \"p\"\nledger = \"l\"\noutput = \"o\"\n";

    fn err(body: &str) -> String {
        parse("p.toml", &format!("{HEAD}{body}"), Path::new("base")).unwrap_err()
    }

    #[test]
    fn paths_resolve_against_the_plan_directory() {
        let p = parse(
            "p.toml",
            &format!("{HEAD}[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\ngate = \"../g.toml\"\n"),
            Path::new("dir/sub"),
        )
        .unwrap();
        assert_eq!(p.ledger, PathBuf::from("dir/sub/l"));
        assert_eq!(p.output, PathBuf::from("dir/sub/o"));
        assert_eq!(
            p.profiles[0].gate.as_ref().unwrap().value,
            PathBuf::from("dir/g.toml")
        );
        assert_eq!(p.profiles[0].gate.as_ref().unwrap().line, 9);
        assert_eq!(p.profiles[0].repeats, 1);
    }

    #[test]
    fn shape_errors_name_the_line_and_field() {
        assert_eq!(
            parse("p.toml", "[defaults]\nargs = []\n", Path::new("")).unwrap_err(),
            "p.toml:1: plan: missing the [plan] table (name, ledger, output)"
        );
        assert_eq!(
            err(""),
            "p.toml:1: profile: the plan declares no [[profile]]"
        );
        // Line 5 is `[[profile]]`, 6 name, 7 kind, 8 the load.
        let both = "[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\naiperf_config = \"x.yaml\"\n";
        assert_eq!(
            err(both),
            "p.toml:9: profile[1].aiperf_config: give either args or aiperf_config, not both"
        );
        let scen =
            "[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\nscenario = \"s\"\n";
        assert!(
            err(scen).starts_with("p.toml:9: profile[1].scenario: "),
            "{}",
            err(scen)
        );
        let reps = "[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\nrepeats = 11\n";
        assert_eq!(
            err(reps),
            "p.toml:9: profile[1].repeats: 11: must be 1 to 10 (--num-profile-runs)"
        );
        let dup = "[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\n[[profile]]\nname = \"a\"\nkind = \"regression\"\nargs = []\n";
        assert_eq!(
            err(dup),
            "p.toml:10: profile[2].name: \"a\" is already profile[1] (line 5)"
        );
        let bad = "[[profile]]\nname = \"../x\"\nkind = \"regression\"\nargs = []\n";
        assert!(err(bad).starts_with("p.toml:6: profile[1].name: \"../x\": a directory name"));
        let nokind = "[[profile]]\nname = \"a\"\nargs = []\n";
        assert!(err(nokind).starts_with("p.toml:5: profile[1].kind: missing"));
    }

    #[test]
    fn resolve_folds_parent_components() {
        assert_eq!(resolve_in(Path::new("a/b"), "../c"), PathBuf::from("a/c"));
        assert_eq!(resolve_in(Path::new(""), "../c"), PathBuf::from("../c"));
        assert_eq!(
            resolve_in(Path::new("a"), "/abs/x"),
            PathBuf::from("/abs/x")
        );
        assert_eq!(
            resolve_in(Path::new("a"), "./x/./y"),
            PathBuf::from("a/x/y")
        );
    }
}
