//! What `profile --config` does around each run beyond its flags: AIPerf's
//! `artifacts.userFiles` (templated files written into the run directory) and
//! `artifacts.autoPlot` (charts drawn after the run).
//!
//! User files are rendered with the file's `variables` plus AIPerf's run-time names
//! (`epoch`, `job_name`, `namespace`, `model`, `endpoint_url`, `artifact_dir`): once before
//! the run, so that a template error stops it before any request, and written when the run
//! directory is complete. `json` files are written with a two-space indent, `yaml` in block
//! style, `text` as rendered.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde_json::{Map, Value};

use super::read::{finish, read_raw, resolve_scenario};
use super::{Options, jinja};

/// One `artifacts.userFiles` entry, checked.
#[derive(Clone, Debug)]
pub(super) struct UserFile {
    path: String,
    format: &'static str,
    content: Value,
}

/// The run hooks of a config (none: the config asks for nothing after its runs).
#[derive(Clone, Debug)]
pub struct RunHooks {
    file: String,
    user_files: Vec<UserFile>,
    variables: Map<String, Value>,
    /// `autoPlot`: Some(plotRequired).
    pub auto_plot: Option<bool>,
    /// The top-level `plot:` block (inline, or the YAML file it names): AIPerf's plot
    /// specifications, drawn after each run and after the sweep.
    pub plot: Option<inferbench_report::plot_spec::PlotConfig>,
    epoch: String,
}

impl RunHooks {
    /// The hooks `path` asks for, or None.
    pub fn from_config(path: &Path, opts: &Options) -> Result<Option<RunHooks>, String> {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
        let raw = read_raw(&file, &text)?;
        let raw = if raw
            .get("sweep")
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            == Some("scenarios")
        {
            resolve_scenario(&file, &raw, opts.scenario.as_deref())?
        } else {
            raw
        };
        let doc = finish(&file, raw)?;
        let artifacts = doc
            .get("benchmark")
            .and_then(|b| b.get("artifacts"))
            .cloned()
            .unwrap_or(Value::Null);
        let files = match artifacts.get("userFiles").or(artifacts.get("user_files")) {
            Some(v) => user_files(&file, v)?,
            None => Vec::new(),
        };
        let plot = match doc.get("plot") {
            None | Some(Value::Null) => None,
            Some(v) => Some(plot_config(&file, path, v)?),
        };
        // A plot block implies autoPlot unless the file sets it false (AIPerf).
        let auto_plot_on = match artifacts.get("autoPlot") {
            Some(Value::Bool(b)) => *b,
            _ => plot.is_some(),
        };
        let auto_plot =
            auto_plot_on.then(|| artifacts.get("plotRequired") == Some(&Value::Bool(true)));
        if files.is_empty() && auto_plot.is_none() {
            return Ok(None);
        }
        let variables = doc
            .get("variables")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default()
            .to_string();
        Ok(Some(RunHooks {
            file,
            user_files: files,
            variables,
            auto_plot,
            plot,
            epoch,
        }))
    }

    /// Renders every user file against a run directory named `dir` (not written): the
    /// check before the run.
    pub fn preflight(&self, dir: &Path, model: &str, endpoint_url: &str) -> Result<(), String> {
        self.render_all(dir, model, endpoint_url).map(|_| ())
    }

    /// Writes the user files into the run directory `dir`.
    pub fn write_user_files(
        &self,
        dir: &Path,
        model: &str,
        endpoint_url: &str,
    ) -> Result<(), String> {
        for (rel, bytes) in self.render_all(dir, model, endpoint_url)? {
            let target = dir.join(&rel);
            let rel = rel.display();
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    format!("{}: benchmark.artifacts.userFiles: {rel}: {e}", self.file)
                })?;
            }
            std::fs::write(&target, bytes)
                .map_err(|e| format!("{}: benchmark.artifacts.userFiles: {rel}: {e}", self.file))?;
        }
        Ok(())
    }

    fn render_all(
        &self,
        dir: &Path,
        model: &str,
        endpoint_url: &str,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
        let mut ctx = self.variables.clone();
        // AIPerf: a run directory named by an epoch is a job's; else its name is the job.
        let leaf = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (epoch, job) = if !leaf.is_empty() && leaf.bytes().all(|b| b.is_ascii_digit()) {
            let parent = dir
                .parent()
                .and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (leaf.clone(), parent)
        } else {
            (self.epoch.clone(), leaf)
        };
        for (k, v) in [
            ("epoch", epoch),
            ("job_name", job),
            (
                "namespace",
                std::env::var("AIPERF_NAMESPACE").unwrap_or_default(),
            ),
            ("model", model.to_string()),
            ("endpoint_url", endpoint_url.to_string()),
            ("artifact_dir", dir.display().to_string()),
        ] {
            ctx.insert(k.into(), Value::String(v));
        }
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        let mut out = Vec::new();
        for (i, f) in self.user_files.iter().enumerate() {
            let at = format!("benchmark.artifacts.userFiles[{i}]");
            let rendered = render(&env, &f.content, &ctx, f.format != "text")
                .map_err(|e| format!("{}: {at} ({}): {e}", self.file, f.path))?;
            let bytes = match f.format {
                "json" => serde_json::to_string_pretty(&rendered)
                    .map_err(|e| format!("{}: {at}: {e}", self.file))?
                    .into_bytes(),
                "yaml" => yaml(&rendered).into_bytes(),
                _ => match rendered {
                    Value::String(s) => s.into_bytes(),
                    other => other.to_string().into_bytes(),
                },
            };
            out.push((PathBuf::from(&f.path), bytes));
        }
        Ok(out)
    }
}

/// `artifacts.userFiles`, checked as AIPerf checks it: a relative path without `..` or
/// control characters, and a format that fits the content (default: text for a string,
/// else json).
pub(super) fn user_files(file: &str, v: &Value) -> Result<Vec<UserFile>, String> {
    let Some(items) = v.as_array() else {
        return Err(format!(
            "{file}: benchmark.artifacts.userFiles: expected a list"
        ));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{file}: benchmark.artifacts.userFiles[{i}]");
        let path = item
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{at}.path: missing"))?;
        if path.is_empty()
            || path.starts_with('/')
            || path.chars().any(|c| c.is_control())
            || path.split('/').any(|s| s == "..")
        {
            return Err(format!(
                "{at}.path: \"{path}\": a path relative to the run directory, without \"..\""
            ));
        }
        let content = item
            .get("content")
            .cloned()
            .ok_or_else(|| format!("{at}.content: missing"))?;
        let format = match item.get("format").and_then(Value::as_str) {
            Some("json") => "json",
            Some("yaml") => "yaml",
            Some("text") => "text",
            Some(other) => return Err(format!("{at}.format: \"{other}\": json, yaml or text")),
            None if content.is_string() => "text",
            None => "json",
        };
        match (format, content.is_string()) {
            ("text", false) => {
                return Err(format!("{at}.content: format text needs a string"));
            }
            ("json" | "yaml", true) => {
                return Err(format!(
                    "{at}.content: format {format} needs structured content (a table, list or number); for a string use format: text"
                ));
            }
            _ => {}
        }
        out.push(UserFile {
            path: path.to_string(),
            format,
            content,
        });
    }
    Ok(out)
}

/// Every string with a Jinja marker rendered; `coerce` turns the text into a number or
/// boolean when it is one (json, yaml), as AIPerf does.
fn render(
    env: &Environment<'_>,
    v: &Value,
    ctx: &Map<String, Value>,
    coerce: bool,
) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) if ["{{", "{%", "{#"].iter().any(|m| s.contains(m)) => {
            let text = env.render_str(s, ctx).map_err(|e| {
                let mut m = e.to_string();
                if let Some(i) = m.find(" (in ") {
                    m.truncate(i);
                }
                format!("Jinja: {m}")
            })?;
            if coerce {
                jinja::coerce(&text)
            } else {
                Value::String(text)
            }
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| render(env, x, ctx, coerce))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(k.clone(), render(env, x, ctx, coerce)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// YAML in PyYAML's `safe_dump` block style: a table's keys in order, list items at the
/// key's indentation, strings plain unless they would read back as something else.
pub(super) fn yaml(v: &Value) -> String {
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                out.push_str(&format!("{pad}{}:", scalar(&Value::String(k.clone()))));
                nested(x, indent, out, false);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for x in a {
                out.push_str(&format!("{pad}-"));
                nested(x, indent, out, true);
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// The value after `key:` or `-`.
fn nested(x: &Value, indent: usize, out: &mut String, in_list: bool) {
    match x {
        Value::Object(m) if !m.is_empty() => {
            if in_list {
                // `- a: 1` then the other keys under `a`.
                let mut inner = String::new();
                block(x, indent + 2, &mut inner);
                out.push(' ');
                out.push_str(inner.trim_start());
            } else {
                out.push('\n');
                block(x, indent + 2, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            block(x, if in_list { indent + 2 } else { indent }, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            if plain_ok(s) {
                s.clone()
            } else {
                format!("'{}'", s.replace('\'', "''"))
            }
        }
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// Whether a string can be written without quotes and read back as the same string.
fn plain_ok(s: &str) -> bool {
    if s.is_empty() || s != s.trim() || s.contains('\n') {
        return false;
    }
    if !matches!(jinja::coerce(s), Value::String(_)) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "null" | "~" | "yes" | "no" | "on" | "off" | ".inf" | "-.inf" | ".nan"
    ) {
        return false;
    }
    let first = s.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    !(s.contains(": ") || s.contains(" #") || s.ends_with(':'))
}

/// The `plot` block: an inline mapping, or the path of a plot YAML (relative to the config
/// file's directory), read and checked.
fn plot_config(
    file: &str,
    path: &Path,
    v: &Value,
) -> Result<inferbench_report::plot_spec::PlotConfig, String> {
    match v {
        Value::String(p) => {
            let rel = Path::new(p);
            let f = if rel.is_absolute() {
                rel.to_path_buf()
            } else {
                path.parent().unwrap_or(Path::new("")).join(rel)
            };
            read_plot_file(&f).map_err(|e| format!("{file}: plot: \"{p}\": {e}"))
        }
        other => inferbench_report::plot_spec::PlotConfig::parse(&format!("{file}: plot"), other),
    }
}

/// A plot YAML file (AIPerf's `plot_config.yaml` shape), read and checked; errors name it.
pub fn read_plot_file(f: &Path) -> Result<inferbench_report::plot_spec::PlotConfig, String> {
    let text =
        std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
    let v: Value = serde_saphyr::from_str(&text).map_err(|e| {
        format!(
            "{}: not YAML: {}",
            f.display(),
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    inferbench_report::plot_spec::PlotConfig::parse(&format!("{}: ", f.display()), &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_block_style_with_plain_strings_where_safe() {
        let v = serde_json::json!({
            "run_id": "job-17",
            "tags": ["dense-agg", "isl=1024"],
            "n": 3,
            "quoted": "42",
            "colon": "a: b",
            "runs": [{"a": 1, "b": "x"}],
        });
        assert_eq!(
            yaml(&v),
            "run_id: job-17\ntags:\n- dense-agg\n- isl=1024\nn: 3\nquoted: '42'\ncolon: 'a: b'\nruns:\n- a: 1\n  b: x\n"
        );
    }

    #[test]
    fn user_files_refuse_escaping_paths_and_mismatched_formats() {
        let bad = serde_json::json!([{"path": "../x", "content": "t"}]);
        assert!(
            user_files("f.yaml", &bad)
                .unwrap_err()
                .contains("userFiles[0].path")
        );
        let bad = serde_json::json!([{"path": "a.json", "format": "json", "content": "t"}]);
        assert!(
            user_files("f.yaml", &bad)
                .unwrap_err()
                .contains("format json needs structured")
        );
        let ok = serde_json::json!([{"path": "a", "content": {"k": 1}}]);
        assert_eq!(user_files("f.yaml", &ok).unwrap()[0].format, "json");
    }
}
