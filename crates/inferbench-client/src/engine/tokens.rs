//! Client-side token counts of a record.

use inferbench_core::record::Record;

use super::TokenCounter;

/// Client-side counts as AIPerf makes them: all output texts (content and tool calls)
/// concatenated with no separator and encoded once; the same for reasoning. Only for a
/// record without error. Public so that a caller can count off the client's thread (the
/// binary does it on the evidence writer's thread, keeping tokenization out of the loop
/// that stamps frames and issues requests).
pub fn count_tokens(counter: &dyn TokenCounter, rec: &mut Record, buf: &mut String) {
    if rec.error.is_some() {
        return;
    }
    buf.clear();
    let mut any_reasoning = false;
    for e in &rec.events {
        if let Some(c) = &e.content {
            buf.push_str(c);
        }
        if let Some(t) = &e.tool {
            buf.push_str(t);
        }
        any_reasoning |= e.reasoning.as_deref().is_some_and(|r| !r.is_empty());
    }
    rec.tokens.output = Some(counter.count(buf));
    if any_reasoning {
        buf.clear();
        for e in &rec.events {
            if let Some(r) = &e.reasoning {
                buf.push_str(r);
            }
        }
        rec.tokens.reasoning = Some(counter.count(buf));
    } else {
        rec.tokens.reasoning = Some(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::Event;

    struct Words;
    impl TokenCounter for Words {
        fn count(&self, text: &str) -> u64 {
            text.split_whitespace().count() as u64
        }
    }

    #[test]
    fn counts_output_and_reasoning_separately() {
        let mut rec = Record {
            events: vec![
                Event {
                    reasoning: Some(" a b".into()),
                    ..Default::default()
                },
                Event {
                    content: Some(" c".into()),
                    ..Default::default()
                },
                Event {
                    tool: Some(" f".into()),
                    content: Some(" d".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let mut buf = String::new();
        count_tokens(&Words, &mut rec, &mut buf);
        assert_eq!(rec.tokens.output, Some(3));
        assert_eq!(rec.tokens.reasoning, Some(2));
    }
}
