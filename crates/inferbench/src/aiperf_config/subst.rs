//! AIPerf's environment substitution, done on the text before it is read as YAML:
//! `${NAME}` is the variable's value, `${NAME:default}` the default when it is unset.

/// `text` with every `${…}` replaced; an unset variable without a default names its line.
pub fn env(
    file: &str,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(j) = after.find('}') else {
                return Err(format!(
                    "{file}:{}: \"${{\" without a closing \"}}\"",
                    n + 1
                ));
            };
            let inner = &after[..j];
            let (name, default) = match inner.split_once(':') {
                Some((a, b)) => (a, Some(b)),
                None => (inner, None),
            };
            let valid =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(format!(
                    "{file}:{}: \"${{{inner}}}\": not an environment variable name",
                    n + 1
                ));
            }
            match (lookup(name), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {
                    return Err(format!(
                        "{file}:{}: ${{{name}}}: the environment variable is not set and has no default",
                        n + 1
                    ));
                }
            }
            rest = &after[j + 1..];
        }
        out.push_str(rest);
    }
    Ok(out)
}
