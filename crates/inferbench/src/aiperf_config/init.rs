//! `config init`: inferbench's own starter configs in AIPerf's YAML format (AIPerf's
//! `config init` interface: `--list`, `--search`, `--category`, `--template NAME` to stdout
//! or `--output FILE`, `--model`/`--url` filled in). The templates are written for
//! inferbench (AIPerf's own are not shipped) and embedded in the binary; each carries
//! AIPerf's `# @template` block of `# key: value` lines.

/// The categories in listing order (AIPerf's).
pub const CATEGORY_ORDER: &[&str] = &[
    "Getting Started",
    "Load Testing",
    "Datasets",
    "Sweep & Multi-Run",
    "Advanced",
    "Multimodal",
    "Specialized Endpoints",
];

/// (name, text) of every embedded template.
const TEXTS: &[(&str, &str)] = &[
    ("first_run", include_str!("templates/first_run.yaml")),
    (
        "warmup_then_rate",
        include_str!("templates/warmup_then_rate.yaml"),
    ),
    ("slo_goodput", include_str!("templates/slo_goodput.yaml")),
    ("timed_soak", include_str!("templates/timed_soak.yaml")),
    (
        "chat_sessions",
        include_str!("templates/chat_sessions.yaml"),
    ),
    (
        "inline_prompts",
        include_str!("templates/inline_prompts.yaml"),
    ),
    ("rate_grid", include_str!("templates/rate_grid.yaml")),
    (
        "derived_sizes",
        include_str!("templates/derived_sizes.yaml"),
    ),
];

/// A template's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateInfo {
    pub name: &'static str,
    pub title: String,
    pub description: String,
    pub category: String,
    pub tags: Vec<String>,
    pub difficulty: String,
    pub features: Vec<String>,
}

/// The `# key: value` lines right after `# @template`, up to the first line of another form.
fn meta(name: &'static str, text: &str) -> TemplateInfo {
    let mut m = std::collections::BTreeMap::new();
    let mut lines = text.lines().skip_while(|l| l.trim() != "# @template");
    lines.next();
    for l in lines {
        let Some(rest) = l.trim().strip_prefix("# ") else {
            break;
        };
        let Some((k, v)) = rest.split_once(": ") else {
            break;
        };
        if k.trim().is_empty() || v.trim().is_empty() {
            break;
        }
        m.insert(k.trim().to_string(), v.trim().to_string());
    }
    let csv = |k: &str| -> Vec<String> {
        m.get(k)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    };
    let get = |k: &str| m.get(k).cloned().unwrap_or_default();
    TemplateInfo {
        name,
        title: get("title"),
        description: get("description"),
        category: get("category"),
        tags: csv("tags"),
        difficulty: get("difficulty"),
        features: csv("features"),
    }
}

/// Every template, by category (in [`CATEGORY_ORDER`]), then name.
pub fn all() -> Vec<TemplateInfo> {
    let rank = |c: &str| {
        CATEGORY_ORDER
            .iter()
            .position(|x| *x == c)
            .unwrap_or(usize::MAX)
    };
    let mut v: Vec<TemplateInfo> = TEXTS.iter().map(|(n, t)| meta(n, t)).collect();
    v.sort_by(|a, b| {
        rank(&a.category)
            .cmp(&rank(&b.category))
            .then(a.name.cmp(b.name))
    });
    v
}

/// `--list [--category C]`: the templates whose category contains `C` (any case).
pub fn list(category: Option<&str>) -> Vec<TemplateInfo> {
    let all = all();
    match category {
        None => all,
        Some(c) => {
            let c = c.to_lowercase();
            all.into_iter()
                .filter(|t| t.category.to_lowercase().contains(&c))
                .collect()
        }
    }
}

/// `--search Q`: every template with `Q` (any case) in its name, title, description,
/// category, tags or features; name matches first.
pub fn search(q: &str) -> Vec<TemplateInfo> {
    let q = q.to_lowercase();
    let (mut by_name, mut other) = (Vec::new(), Vec::new());
    for t in all() {
        let hit = std::iter::once(t.name.to_lowercase())
            .chain([
                t.title.to_lowercase(),
                t.description.to_lowercase(),
                t.category.to_lowercase(),
            ])
            .chain(t.tags.iter().map(|s| s.to_lowercase()))
            .chain(t.features.iter().map(|s| s.to_lowercase()))
            .any(|f| f.contains(&q));
        if !hit {
            continue;
        }
        if t.name.to_lowercase().contains(&q) {
            by_name.push(t);
        } else {
            other.push(t);
        }
    }
    by_name.extend(other);
    by_name
}

/// The listing as text: one block per category, `NAME  TITLE  DESCRIPTION` rows (with
/// `--verbose`, tags and difficulty too).
pub fn table(templates: &[TemplateInfo], verbose: bool) -> String {
    let width = templates
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = String::new();
    let mut cats: Vec<&str> = CATEGORY_ORDER.to_vec();
    for t in templates {
        if !cats.contains(&t.category.as_str()) {
            cats.push(&t.category);
        }
    }
    for cat in cats {
        let group: Vec<&TemplateInfo> = templates.iter().filter(|t| t.category == cat).collect();
        if group.is_empty() {
            continue;
        }
        out.push_str(cat);
        out.push('\n');
        for t in group {
            out.push_str(&format!(
                "  {:width$}  {} — {}",
                t.name, t.title, t.description
            ));
            if verbose {
                out.push_str(&format!(" [{}; {}]", t.tags.join(", "), t.difficulty));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The text of template `name` with `model` and `url` filled in, without its license
/// header; an unknown name lists the known ones.
pub fn render(name: &str, model: Option<&str>, url: Option<&str>) -> Result<String, String> {
    let Some((_, text)) = TEXTS.iter().find(|(n, _)| *n == name) else {
        let mut names: Vec<&str> = TEXTS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        return Err(format!(
            "unknown template '{name}'; available templates: {}",
            names.join(", ")
        ));
    };
    let mut out: String = text
        .lines()
        .skip_while(|l| l.starts_with("# SPDX-"))
        .map(|l| format!("{l}\n"))
        .collect();
    if let Some(m) = model {
        out = set_scalar(&out, "model", m);
    }
    if let Some(u) = url {
        out = set_scalar(&out, "url", u);
    }
    Ok(out)
}

/// The first `KEY: value` line (at any indentation) with its value replaced by `value`,
/// written plain when YAML reads it back as the same string, else single-quoted. The
/// templates give `model` and `endpoint.url` in this scalar form.
fn set_scalar(text: &str, key: &str, value: &str) -> String {
    let mut done = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if !done && trimmed.starts_with(&format!("{key}: ")) {
            let indent = &line[..line.len() - trimmed.len()];
            let shown = super::hooks::yaml(&serde_json::Value::String(value.into()));
            let shown = shown.trim_end();
            out.push_str(&format!("{indent}{key}: {shown}\n"));
            done = true;
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_its_metadata_in_a_known_category() {
        for t in all() {
            assert!(!t.title.is_empty(), "{}", t.name);
            assert!(!t.description.is_empty(), "{}", t.name);
            assert!(
                CATEGORY_ORDER.contains(&t.category.as_str()),
                "{}: {}",
                t.name,
                t.category
            );
            assert!(
                ["beginner", "intermediate", "advanced"].contains(&t.difficulty.as_str()),
                "{}",
                t.name
            );
            assert!(!t.tags.is_empty(), "{}", t.name);
        }
    }

    #[test]
    fn listing_is_by_category_order_then_name_and_search_puts_name_matches_first() {
        let names: Vec<&str> = all().iter().map(|t| t.name).collect();
        assert_eq!(names[0], "first_run");
        let cats: Vec<usize> = all()
            .iter()
            .map(|t| {
                CATEGORY_ORDER
                    .iter()
                    .position(|c| *c == t.category)
                    .unwrap()
            })
            .collect();
        assert!(cats.windows(2).all(|w| w[0] <= w[1]), "{cats:?}");
        // "rate" is in two names and in other templates' text.
        let hits: Vec<&str> = search("RATE").iter().map(|t| t.name).collect();
        assert_eq!(&hits[..2], &["warmup_then_rate", "rate_grid"]);
        assert!(
            list(Some("sweep"))
                .iter()
                .all(|t| t.category == "Sweep & Multi-Run")
        );
        assert!(search("no-such-word").is_empty());
    }

    #[test]
    fn render_fills_model_and_url_and_drops_the_license_header() {
        let t = render(
            "first_run",
            Some("org/m: v2"),
            Some("http://h:9/v1/chat/completions"),
        )
        .unwrap();
        assert!(!t.contains("SPDX"), "{t}");
        assert!(t.contains("  model: 'org/m: v2'\n"), "{t}");
        assert!(
            t.contains("    url: http://h:9/v1/chat/completions\n"),
            "{t}"
        );
        assert!(
            render("nope", None, None)
                .unwrap_err()
                .contains("first_run")
        );
    }
}
