//! The request URL: the base URL (`--url`) joined with the endpoint's path, as AIPerf 0.13
//! joins them (its HTTP transport's path-overlap rule), so that a base URL written the way
//! OpenAI clients take it (`http://host:8000/v1`) reaches `/v1/chat/completions`, not
//! `/v1/v1/chat/completions`.
//!
//! The rule, on the base URL's path (trailing `/` removed) and the endpoint path (leading `/`
//! removed), whether the path is the endpoint type's or `--custom-endpoint`'s:
//! 1. the base path already ends with `/` + the endpoint path (the whole endpoint URL was
//!    given): the base path alone;
//! 2. the base path ends with `/v1` and the endpoint path starts with `v1/`: that `v1/` is
//!    dropped before joining;
//! 3. otherwise the two joined with one `/`.
//!
//! A query or fragment of the base URL stays after the joined path.

/// The request URL of `base` (an `http[s]://` URL) and `endpoint_path`.
pub fn join(base: &str, endpoint_path: &str) -> String {
    let (origin, path, tail) = split(base);
    let base_path = path.trim_end_matches('/');
    let mut sub = endpoint_path.trim_start_matches('/');
    let whole = base_path
        .strip_suffix(sub)
        .is_some_and(|p| p.ends_with('/'));
    let joined = if sub.is_empty() || whole {
        base_path.to_string()
    } else {
        if base_path.ends_with("/v1") && sub.starts_with("v1/") {
            sub = &sub["v1/".len()..];
        }
        format!("{base_path}/{sub}")
    };
    format!("{origin}{joined}{tail}")
}

/// `scheme://authority`, the path, and the `?query#fragment` after it.
fn split(url: &str) -> (&str, &str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path_at = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    let tail_at = url[path_at..]
        .find(['?', '#'])
        .map_or(url.len(), |i| path_at + i);
    (&url[..path_at], &url[path_at..tail_at], &url[tail_at..])
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn joins_as_aiperf_does() {
        let chat = "/v1/chat/completions";
        for (base, path, want) in [
            ("http://h:8000", chat, "http://h:8000/v1/chat/completions"),
            ("http://h:8000/", chat, "http://h:8000/v1/chat/completions"),
            // A base that ends with /v1: one v1.
            (
                "http://h:8000/v1",
                chat,
                "http://h:8000/v1/chat/completions",
            ),
            (
                "http://h:8000/v1",
                "/v1/embeddings",
                "http://h:8000/v1/embeddings",
            ),
            // v1 elsewhere in the base: joined as is.
            (
                "http://h:8000/v1/extra",
                chat,
                "http://h:8000/v1/extra/v1/chat/completions",
            ),
            (
                "http://h/api/inference",
                chat,
                "http://h/api/inference/v1/chat/completions",
            ),
            // The whole endpoint URL given: used as given.
            (
                "http://h/v1/chat/completions",
                chat,
                "http://h/v1/chat/completions",
            ),
            // Custom paths follow the same rule.
            ("http://h/v1", "/v1/custom", "http://h/v1/custom"),
            ("http://h/v1", "custom/x", "http://h/v1/custom/x"),
            ("http://h/v1", "/api/v1/custom", "http://h/v1/api/v1/custom"),
            (
                "http://h:1",
                "/generate_stream",
                "http://h:1/generate_stream",
            ),
            // No path to append (raw, template without --custom-endpoint).
            ("http://h:1/x", "", "http://h:1/x"),
            // The query stays after the path.
            (
                "http://h:1/x?key=a",
                chat,
                "http://h:1/x/v1/chat/completions?key=a",
            ),
            (
                "http://h:1?key=a",
                chat,
                "http://h:1/v1/chat/completions?key=a",
            ),
            (
                "https://[::1]:8443/v1",
                chat,
                "https://[::1]:8443/v1/chat/completions",
            ),
        ] {
            assert_eq!(join(base, path), want, "{base} + {path}");
        }
    }
}
