//! `chat --url`: the chat-completions URL a user's base URL stands for, resolved as AIPerf
//! 0.13's `aiperf chat` resolves it.

/// The chat-completions URL for `url`: a URL without `://` gets `http://` in front; then a
/// URL already ending in `/chat/completions` is kept, one ending in `/v1` gets
/// `/chat/completions`, and any other (a bare host, or a server mounted under a sub-path)
/// gets `/v1/chat/completions`. Trailing slashes are dropped first. Only `http` and `https`
/// are accepted, and the URL must name a host: the error is one line naming `--url`.
pub fn chat_completions_url(url: &str) -> Result<String, String> {
    let given = url.trim();
    let full = if given.contains("://") {
        given.to_string()
    } else {
        format!("http://{given}")
    };
    let base = full.trim_end_matches('/');
    let scheme = base.split("://").next().unwrap_or_default();
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!(
            "--url {given}: only http:// and https:// URLs are supported"
        ));
    }
    let resolved = if base.ends_with("/chat/completions") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    let uri: http::Uri = resolved
        .parse()
        .map_err(|e| format!("--url {given}: not a valid URL: {e}"))?;
    match uri.host() {
        Some(h) if !h.is_empty() => Ok(resolved),
        _ => Err(format!("--url {given}: no host")),
    }
}

#[cfg(test)]
mod tests {
    use super::chat_completions_url as resolve;

    #[test]
    fn a_bare_host_gets_the_whole_openai_path() {
        assert_eq!(
            resolve("http://localhost:8000").unwrap(),
            "http://localhost:8000/v1/chat/completions"
        );
        assert_eq!(
            resolve("http://localhost:8000/").unwrap(),
            "http://localhost:8000/v1/chat/completions"
        );
    }

    #[test]
    fn a_v1_base_gets_only_chat_completions() {
        assert_eq!(
            resolve("https://api.example.com/v1").unwrap(),
            "https://api.example.com/v1/chat/completions"
        );
        assert_eq!(
            resolve("https://api.example.com/v1/").unwrap(),
            "https://api.example.com/v1/chat/completions"
        );
    }

    #[test]
    fn a_full_chat_completions_path_is_kept() {
        assert_eq!(
            resolve("http://h:1/v1/chat/completions").unwrap(),
            "http://h:1/v1/chat/completions"
        );
        // A proxy's own prefix in front of the standard path is kept as well.
        assert_eq!(
            resolve("http://h/openai/deployments/x/chat/completions/").unwrap(),
            "http://h/openai/deployments/x/chat/completions"
        );
    }

    #[test]
    fn a_sub_path_mount_is_joined_like_profile_joins_it() {
        assert_eq!(
            resolve("http://h:8000/openai").unwrap(),
            "http://h:8000/openai/v1/chat/completions"
        );
    }

    #[test]
    fn a_url_without_a_scheme_gets_http() {
        assert_eq!(
            resolve("localhost:8000").unwrap(),
            "http://localhost:8000/v1/chat/completions"
        );
        assert_eq!(
            resolve("  10.0.0.7:9000/v1 ").unwrap(),
            "http://10.0.0.7:9000/v1/chat/completions"
        );
    }

    #[test]
    fn other_schemes_and_hostless_urls_are_refused_in_one_line() {
        let e = resolve("ftp://h/v1").unwrap_err();
        assert_eq!(
            e,
            "--url ftp://h/v1: only http:// and https:// URLs are supported"
        );
        let e = resolve("http://").unwrap_err();
        assert!(e.starts_with("--url http://: "), "{e}");
        let e = resolve("http://bad host:80").unwrap_err();
        assert!(
            e.starts_with("--url http://bad host:80: not a valid URL"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
