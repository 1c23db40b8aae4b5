//! `--apply-chat-template`: the model's own Hugging Face chat template, read from the local
//! tokenizer directory and rendered with minijinja the way `transformers` renders it, so
//! that ISL counts the role headers and control tokens the server tokenizes (AIPerf 0.13's
//! rule; docs/workload.md "Chat templates"). Nothing is fetched: the template is a file.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use inferbench_core::seed::sha256_hex;
use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, State, Value};
use serde_json::{Map, Value as Json};

use crate::error::WorkloadError;
use crate::tokenizer::Tokenizer;

/// The name the template is stored under in its environment.
const NAME: &str = "chat_template";

/// AIPerf's probe texts for the template's overheads (`dataset/composer/base.py`).
pub const PROBE_SAMPLES: [&str; 3] = [
    "Hello, how are you today?",
    "Could you write a Python function to reverse a string?",
    "What's the difference between TCP and UDP in networking?",
];

/// A loaded chat template and the special-token strings it may refer to.
pub struct ChatTemplate {
    /// The file it came from, as found.
    source: String,
    sha256: String,
    env: Environment<'static>,
    tokens: Map<String, Json>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source", &self.source)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// The template of the tokenizer at `tokenizer_path` (a `tokenizer.json` or its
    /// directory), looked up as `transformers` does: `chat_template.jinja`, then
    /// `chat_template.json`, then `tokenizer_config.json`'s `chat_template` (a string, or a
    /// list of named templates of which `default` is used). `Ok(None)` when there is none.
    pub fn find(tokenizer_path: &str) -> Result<Option<ChatTemplate>, WorkloadError> {
        let p = Path::new(tokenizer_path);
        let dir = if p.is_dir() {
            p.to_path_buf()
        } else {
            p.parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        let config_path = dir.join("tokenizer_config.json");
        let config = match read_optional(&config_path)? {
            Some(text) => Some(parse_json(&config_path, &text)?),
            None => None,
        };
        let tokens = special_tokens(config.as_ref());
        let jinja = dir.join("chat_template.jinja");
        if let Some(text) = read_optional(&jinja)? {
            return Self::new(&jinja, text, tokens).map(Some);
        }
        let json_path = dir.join("chat_template.json");
        if let Some(text) = read_optional(&json_path)? {
            let v = parse_json(&json_path, &text)?;
            let t = template_field(&json_path, v.get("chat_template"))?;
            return match t {
                Some(t) => Self::new(&json_path, t, tokens).map(Some),
                None => Err(bad(&json_path, "chat_template: missing")),
            };
        }
        match config
            .as_ref()
            .map(|c| template_field(&config_path, c.get("chat_template")))
        {
            Some(Ok(Some(t))) => Self::new(&config_path, t, tokens).map(Some),
            Some(Err(e)) => Err(e),
            _ => Ok(None),
        }
    }

    /// A template from its text (`source` names it in messages and the manifest).
    pub fn new(
        source: &Path,
        text: String,
        tokens: Map<String, Json>,
    ) -> Result<ChatTemplate, WorkloadError> {
        let shown = source.display().to_string();
        let sha256 = sha256_hex(text.as_bytes());
        let mut env = Environment::new();
        // transformers' environment: trim_blocks and lstrip_blocks on, no trailing newline
        // kept, loop controls, `raise_exception`, `strftime_now` and its own `tojson`.
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_filter("tojson", tojson);
        env.set_unknown_method_callback(python_method);
        env.add_template_owned(NAME, text)
            .map_err(|e| bad(source, &format!("not a valid template: {}", one_line(&e))))?;
        let t = ChatTemplate {
            source: shown,
            sha256,
            env,
            tokens,
        };
        // A template that cannot render a plain exchange would fail on every request.
        t.render(&probe_messages(PROBE_SAMPLES[0], 1), true)
            .map_err(|e| bad(source, &format!("cannot render a user message: {e}")))?;
        Ok(t)
    }

    /// The file the template came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// SHA-256 (hex) of the template text.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The text of `messages` (each `{role, content[, tool_calls]}`) through the template,
    /// with `add_generation_prompt` as given. The special-token strings of the tokenizer's
    /// config (`bos_token`, `eos_token`, …) are in the context, as transformers passes them.
    pub fn render(&self, messages: &[Json], add_generation_prompt: bool) -> Result<String, String> {
        let mut ctx = self.tokens.clone();
        ctx.insert("messages".into(), Json::Array(messages.to_vec()));
        ctx.insert(
            "add_generation_prompt".into(),
            Json::Bool(add_generation_prompt),
        );
        let t = self.env.get_template(NAME).map_err(|e| one_line(&e))?;
        t.render(Json::Object(ctx)).map_err(|e| one_line(&e))
    }
}

/// `[user, assistant, user, …]` of `n` messages, each `text`: AIPerf's probe shapes.
pub fn probe_messages(text: &str, n: usize) -> Vec<Json> {
    (0..n)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            serde_json::json!({"role": role, "content": text})
        })
        .collect()
}

/// AIPerf's chat view of a body (`endpoints/payload_extraction.py`): every item of
/// `messages` (then `input`) that has a string `role`, as `{role, content}` with the text
/// parts of its content joined with no separator (media parts dropped) and its replayed
/// `tool_calls` passed through. Empty when the body has no such item.
pub fn messages_view(body: &Map<String, Json>) -> Vec<Json> {
    let mut out = Vec::new();
    for key in ["messages", "input"] {
        let Some(Json::Array(items)) = body.get(key) else {
            continue;
        };
        for item in items {
            let Some(role) = item.get("role").and_then(Json::as_str) else {
                continue;
            };
            let content = match item.get("content") {
                Some(Json::String(s)) => s.clone(),
                Some(Json::Array(parts)) => parts
                    .iter()
                    .filter(|p| {
                        matches!(
                            p.get("type").and_then(Json::as_str),
                            Some("text" | "input_text" | "output_text")
                        )
                    })
                    .filter_map(|p| p.get("text").and_then(Json::as_str))
                    .collect(),
                _ => String::new(),
            };
            let mut m = Map::new();
            m.insert("role".into(), Json::from(role));
            m.insert("content".into(), Json::from(content));
            if let Some(Json::Array(calls)) = item.get("tool_calls")
                && !calls.is_empty()
            {
                m.insert("tool_calls".into(), Json::Array(calls.clone()));
            }
            out.push(Json::Object(m));
        }
    }
    out
}

/// The tool text the chat view leaves out, which AIPerf counts on top of the templated
/// count: Responses `function_call` (`name`, `arguments`) and `function_call_output`
/// (`output`) items, and the top-level `tools` schemas (`name`, `description`, and
/// `parameters`/`input_schema` as compact JSON), in body order.
pub fn tool_texts(body: &Map<String, Json>) -> Vec<Cow<'_, str>> {
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    let push = |v: Option<&'_ Json>, out: &mut Vec<Cow<'_, str>>| {
        if let Some(s) = v.and_then(Json::as_str)
            && !s.is_empty()
        {
            out.push(Cow::Owned(s.to_string()));
        }
    };
    for key in ["messages", "input"] {
        let Some(Json::Array(items)) = body.get(key) else {
            continue;
        };
        for item in items {
            match item.get("type").and_then(Json::as_str) {
                Some("function_call") => {
                    push(item.get("name"), &mut out);
                    push(item.get("arguments"), &mut out);
                }
                Some("function_call_output") => push(item.get("output"), &mut out),
                _ => {}
            }
        }
    }
    if let Some(Json::Array(tools)) = body.get("tools") {
        for tool in tools {
            for source in [tool.get("function"), Some(tool)].into_iter().flatten() {
                push(source.get("name"), &mut out);
                push(source.get("description"), &mut out);
                for k in ["parameters", "input_schema"] {
                    if let Some(v @ Json::Object(_)) = source.get(k) {
                        out.push(Cow::Owned(v.to_string()));
                    }
                }
            }
        }
    }
    out
}

/// ISL of `body` through the template (AIPerf 0.13, `records/inference_result_parser.py`):
/// the chat view rendered with the generation prompt and encoded with no special tokens
/// added (the template writes its own), plus the tool text the view leaves out, joined by a
/// space and encoded. None when the body has no chat view or the template fails on it: the
/// caller then counts the plain texts, as AIPerf falls back.
pub fn count_input(
    tok: &Tokenizer,
    template: &ChatTemplate,
    body: &Map<String, Json>,
) -> Option<u64> {
    let messages = messages_view(body);
    if messages.is_empty() {
        return None;
    }
    let rendered = template.render(&messages, true).ok()?;
    let tools = tool_texts(body).join(" ");
    Some((tok.count(&rendered) + tok.count(&tools)) as u64)
}

/// The template's token costs as AIPerf estimates them (`_estimate_chat_template_overheads`),
/// for synthetic prompts to be shortened by: for each probe text s, with n(x) the token
/// count of x and b the tokens the tokenizer adds to a sequence,
/// wrap = (n(render[u, a, u]) − n(render[u]) − 2·n(s)) / 2 and
/// fixed = n(render[u]) − n(s) − wrap − b, all messages s, generation prompt on. Returns
/// (fixed, wrap), each the mean over the probes rounded half to even (Python's `round`), or
/// (0, 0) if any probe fails to render or gives a negative cost.
pub fn overheads(tok: &Tokenizer, template: &ChatTemplate) -> (u64, u64) {
    let bos = tok.prompt_special_tokens() as f64;
    let (mut fixed, mut wrap) = (0.0, 0.0);
    for s in PROBE_SAMPLES {
        let (Ok(single), Ok(triple)) = (
            template.render(&probe_messages(s, 1), true),
            template.render(&probe_messages(s, 3), true),
        ) else {
            return (0, 0);
        };
        let (n1, n3, bare) = (
            tok.count(&single) as f64,
            tok.count(&triple) as f64,
            tok.count(s) as f64,
        );
        let w = (n3 - n1 - 2.0 * bare) / 2.0;
        let f = n1 - bare - w - bos;
        if w < 0.0 || f < 0.0 {
            return (0, 0);
        }
        fixed += f;
        wrap += w;
    }
    let k = PROBE_SAMPLES.len() as f64;
    (
        (fixed / k).round_ties_even() as u64,
        (wrap / k).round_ties_even() as u64,
    )
}

fn read_optional(path: &Path) -> Result<Option<String>, WorkloadError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(bad(path, &format!("cannot read: {e}"))),
    }
}

fn parse_json(path: &Path, text: &str) -> Result<Json, WorkloadError> {
    serde_json::from_str(text).map_err(|e| bad(path, &format!("not JSON: {e}")))
}

/// A `chat_template` field: a string, or `[{name, template}, …]` (the `default` one).
fn template_field(path: &Path, v: Option<&Json>) -> Result<Option<String>, WorkloadError> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(Json::Array(list)) => {
            let default = list
                .iter()
                .find(|t| t.get("name").and_then(Json::as_str) == Some("default"));
            match default
                .and_then(|t| t.get("template"))
                .and_then(Json::as_str)
            {
                Some(t) => Ok(Some(t.to_string())),
                None => Err(bad(
                    path,
                    "chat_template: a list of named templates with no \"default\" one",
                )),
            }
        }
        Some(_) => Err(bad(path, "chat_template: must be a string or a list")),
    }
}

/// `bos_token`, `eos_token`, `unk_token`, `pad_token`: a string, or `{content}`.
fn special_tokens(config: Option<&Json>) -> Map<String, Json> {
    let mut out = Map::new();
    for key in ["bos_token", "eos_token", "unk_token", "pad_token"] {
        let v = config.and_then(|c| c.get(key));
        let s = match v {
            Some(Json::String(s)) => Some(s.clone()),
            Some(Json::Object(o)) => o.get("content").and_then(Json::as_str).map(str::to_string),
            _ => None,
        };
        if let Some(s) = s {
            out.insert(key.into(), Json::from(s));
        }
    }
    out
}

fn bad(path: &Path, message: &str) -> WorkloadError {
    WorkloadError::ChatTemplate {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn one_line(e: &Error) -> String {
    let mut s = e.to_string();
    if let Some(line) = e.line() {
        s.push_str(&format!(" (template line {line})"));
    }
    s.replace('\n', " ")
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `strftime_now(format)`: the current UTC time, for the usual directives.
fn strftime_now(format: String) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    strftime(secs, &format)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// `%Y %y %m %B %b %d %-d %A %a %H %M %S %%` of `secs` since the epoch (UTC); other
/// directives are kept as written.
pub(crate) fn strftime(secs: u64, format: &str) -> String {
    let days = (secs / 86_400) as i64;
    let (y, m, d) = inferbench_core::time::civil_from_days(days);
    let weekday = ((days + 3).rem_euclid(7)) as usize; // 1970-01-01 was a Thursday
    let rem = secs % 86_400;
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = chars.next();
        let no_pad = spec == Some('-');
        if no_pad {
            spec = chars.next();
        }
        let two = |v: u64| {
            if no_pad {
                v.to_string()
            } else {
                format!("{v:02}")
            }
        };
        match spec {
            Some('Y') => out.push_str(&y.to_string()),
            Some('y') => out.push_str(&format!("{:02}", y.rem_euclid(100))),
            Some('m') => out.push_str(&two(m as u64)),
            Some('B') => out.push_str(MONTHS[m as usize - 1]),
            Some('b') => out.push_str(&MONTHS[m as usize - 1][..3]),
            Some('d') => out.push_str(&two(d as u64)),
            Some('A') => out.push_str(DAYS[weekday]),
            Some('a') => out.push_str(&DAYS[weekday][..3]),
            Some('H') => out.push_str(&two(hh)),
            Some('M') => out.push_str(&two(mm)),
            Some('S') => out.push_str(&two(ss)),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                if no_pad {
                    out.push('-');
                }
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// transformers' `tojson`: Python's `json.dumps(x, ensure_ascii=False)` (separators `", "`
/// and `": "`, keys in their order or, with `sort_keys=True`, sorted), or with `indent=N`
/// one item a line.
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    if sort_keys == Some(true) {
        sort_all_keys(&mut json);
    }
    let mut out = String::new();
    python_dumps(&json, indent, 0, &mut out);
    Ok(Value::from_safe_string(out))
}

/// Every object's keys in code-point order (Python's `sort_keys`), at every depth.
fn sort_all_keys(v: &mut Json) {
    match v {
        Json::Array(items) => items.iter_mut().for_each(sort_all_keys),
        Json::Object(map) => {
            let mut entries: Vec<(String, Json)> = std::mem::take(map).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, mut x) in entries {
                sort_all_keys(&mut x);
                map.insert(k, x);
            }
        }
        _ => {}
    }
}

fn python_dumps(v: &Json, indent: Option<usize>, depth: usize, out: &mut String) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * depth));
        }
    };
    let sep = if indent.is_some() { "," } else { ", " };
    match v {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                newline(out, depth + 1);
                python_dumps(x, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, x)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                newline(out, depth + 1);
                out.push_str(&Json::from(k.as_str()).to_string());
                out.push_str(": ");
                python_dumps(x, indent, depth + 1, out);
            }
            newline(out, depth);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The Python `str` and `dict` methods chat templates call, which Jinja2 has through
/// Python and minijinja does not.
fn python_method(_: &State, value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    let arg = |i: usize| args.get(i).and_then(Value::as_str);
    if let Some(s) = value.as_str() {
        let chars = arg(0);
        let strip = |c: char| chars.map_or(c.is_whitespace(), |set| set.contains(c));
        return Ok(match method {
            "strip" => Value::from(s.trim_matches(strip)),
            "lstrip" => Value::from(s.trim_start_matches(strip)),
            "rstrip" => Value::from(s.trim_end_matches(strip)),
            "startswith" => Value::from(any_affix(args, |p| s.starts_with(p))),
            "endswith" => Value::from(any_affix(args, |p| s.ends_with(p))),
            "lower" => Value::from(s.to_lowercase()),
            "upper" => Value::from(s.to_uppercase()),
            "replace" => match (arg(0), arg(1)) {
                (Some(a), Some(b)) => Value::from(s.replace(a, b)),
                _ => return Err(method_error(method)),
            },
            "split" => {
                let parts: Vec<Value> = match arg(0) {
                    Some(sep) => s.split(sep).map(Value::from).collect(),
                    None => s.split_whitespace().map(Value::from).collect(),
                };
                Value::from(parts)
            }
            "join" => {
                let items = args.first().ok_or_else(|| method_error(method))?;
                let parts: Vec<String> = items.try_iter()?.map(|v| v.to_string()).collect();
                Value::from(parts.join(s))
            }
            "find" => Value::from(arg(0).map_or(-1, |p| {
                s.find(p).map_or(-1, |i| s[..i].chars().count() as i64)
            })),
            _ => return Err(method_error(method)),
        });
    }
    if value.kind() == minijinja::value::ValueKind::Map {
        return match method {
            "items" => {
                let pairs: Vec<Value> = value
                    .try_iter()?
                    .map(|k| {
                        let v = value.get_item(&k).unwrap_or_default();
                        Value::from(vec![k, v])
                    })
                    .collect();
                Ok(Value::from(pairs))
            }
            "keys" => Ok(Value::from(value.try_iter()?.collect::<Vec<_>>())),
            "values" => Ok(Value::from(
                value
                    .try_iter()?
                    .map(|k| value.get_item(&k).unwrap_or_default())
                    .collect::<Vec<_>>(),
            )),
            "get" => {
                let key = args.first().ok_or_else(|| method_error(method))?;
                let v = value.get_item(key)?;
                Ok(if v.is_undefined() {
                    args.get(1).cloned().unwrap_or(Value::from(()))
                } else {
                    v
                })
            }
            _ => Err(method_error(method)),
        };
    }
    Err(method_error(method))
}

/// `startswith(prefix)` or `startswith((a, b, …))`.
fn any_affix(args: &[Value], test: impl Fn(&str) -> bool) -> bool {
    match args.first() {
        Some(v) if v.as_str().is_some() => v.as_str().is_some_and(&test),
        Some(v) => v
            .try_iter()
            .is_ok_and(|mut it| it.any(|p| p.as_str().is_some_and(&test))),
        None => false,
    }
}

fn method_error(method: &str) -> Error {
    Error::new(
        ErrorKind::UnknownMethod,
        format!("method {method}() is not supported in chat templates here"),
    )
}

#[cfg(test)]
#[path = "chat_template_tests.rs"]
mod tests;
