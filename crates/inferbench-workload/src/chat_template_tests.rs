use super::*;
use serde_json::json;

/// A fresh directory, removed when the guard drops.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("inferbench-chat-template-{name}-"))
        .tempdir()
        .unwrap()
}

fn template(text: &str) -> ChatTemplate {
    let mut tokens = Map::new();
    tokens.insert("bos_token".into(), json!("<s>"));
    ChatTemplate::new(Path::new("t.jinja"), text.to_string(), tokens).unwrap()
}

/// A ChatML-style template written as Hugging Face models ship them: block tags on their
/// own lines (trim_blocks and lstrip_blocks make them vanish; the newline after a `{{ }}`
/// stays, as in Jinja2), Python string methods, `raise_exception` and `bos_token`.
const CHATML: &str = "{{ bos_token }}
{% for m in messages %}
    {% if m['role'] not in ['system', 'user', 'assistant'] %}
        {{ raise_exception('bad role ' + m['role']) }}
    {% endif %}
<|im_start|>{{ m['role'] }}
{{ m['content'].strip() }}<|im_end|>
{% endfor %}
{% if add_generation_prompt %}
<|im_start|>assistant
{% endif %}";

#[test]
fn renders_as_transformers_does() {
    let t = template(CHATML);
    let msgs = vec![
        json!({"role": "system", "content": "  Be brief. "}),
        json!({"role": "user", "content": "Hi"}),
    ];
    assert_eq!(
        t.render(&msgs, true).unwrap(),
        "<s>\n<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(
        t.render(&msgs[1..], false).unwrap(),
        "<s>\n<|im_start|>user\nHi<|im_end|>\n"
    );
    let e = t
        .render(&[json!({"role": "tool", "content": "x"})], true)
        .unwrap_err();
    assert!(e.contains("bad role tool"), "{e}");
}

#[test]
fn python_methods_and_tojson_follow_python() {
    let t = template(
        "{% set m = messages[0] %}{{ m['content'].startswith(('x', 'He')) }} \
         {{ m['content'].split(',') | length }} {{ m.get('missing', 'dflt') }} \
         {% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}",
    );
    let msgs = vec![json!({"role": "user", "content": "Hello, world"})];
    assert_eq!(
        t.render(&msgs, false).unwrap(),
        "True 2 dflt role=user;content=Hello, world;"
    );
    // Python's json.dumps: ", " and ": " separators, keys in their order, no ASCII escapes.
    let t = template("{{ messages[0] | tojson }}");
    assert_eq!(
        t.render(&[json!({"b": [1, 2], "a": "é<"})], false).unwrap(),
        "{\"b\": [1, 2], \"a\": \"é<\"}"
    );
    let t = template("{{ messages[0] | tojson(sort_keys=True) }}");
    assert_eq!(
        t.render(&[json!({"b": {"z": 1, "y": 2}, "a": 0})], false)
            .unwrap(),
        "{\"a\": 0, \"b\": {\"y\": 2, \"z\": 1}}"
    );
    let t = template("{{ messages[0] | tojson(indent=2) }}");
    assert_eq!(
        t.render(&[json!({"a": [1], "b": {}})], false).unwrap(),
        "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}"
    );
}

#[test]
fn strftime_formats_a_known_instant() {
    // 1,700,000,000 s after the epoch is Tuesday 14 November 2023, 22:13:20 UTC.
    assert_eq!(
        strftime(1_700_000_000, "%d %b %Y %H:%M:%S %A %a %B %m %y %-d %% %Q"),
        "14 Nov 2023 22:13:20 Tuesday Tue November 11 23 14 % %Q"
    );
    assert_eq!(strftime(0, "%Y-%m-%d %A"), "1970-01-01 Thursday");
    // A leap day.
    assert_eq!(strftime(951_782_400, "%Y-%m-%d"), "2000-02-29");
}

#[test]
fn find_follows_transformers_order() {
    let guard = tmp("find");
    let d = guard.path();
    let dir = d.to_str().unwrap();
    assert!(ChatTemplate::find(dir).unwrap().is_none());
    std::fs::write(
        d.join("tokenizer_config.json"),
        r#"{"bos_token": {"content": "<B>"}, "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "{{ bos_token }}D"}]}"#,
    )
    .unwrap();
    let t = ChatTemplate::find(dir).unwrap().unwrap();
    assert_eq!(t.render(&[], true).unwrap(), "<B>D");
    assert!(t.source().ends_with("tokenizer_config.json"));
    assert_eq!(t.sha256(), sha256_hex(b"{{ bos_token }}D"));
    std::fs::write(d.join("chat_template.json"), r#"{"chat_template": "J"}"#).unwrap();
    assert_eq!(
        ChatTemplate::find(dir)
            .unwrap()
            .unwrap()
            .render(&[], true)
            .unwrap(),
        "J"
    );
    std::fs::write(d.join("chat_template.jinja"), "F{{ bos_token }}").unwrap();
    let t = ChatTemplate::find(&format!("{dir}/tokenizer.json"))
        .unwrap()
        .unwrap();
    assert_eq!(t.render(&[], true).unwrap(), "F<B>");
    // Errors name the file and what is wrong.
    std::fs::write(d.join("chat_template.jinja"), "{% for %}").unwrap();
    let e = ChatTemplate::find(dir).unwrap_err().to_string();
    assert!(
        e.contains("chat_template.jinja: not a valid template"),
        "{e}"
    );
    std::fs::remove_file(d.join("chat_template.jinja")).unwrap();
    std::fs::remove_file(d.join("chat_template.json")).unwrap();
    std::fs::write(
        d.join("tokenizer_config.json"),
        r#"{"chat_template": [{"name": "tool_use", "template": "T"}]}"#,
    )
    .unwrap();
    let e = ChatTemplate::find(dir).unwrap_err().to_string();
    assert!(
        e.contains(
            "tokenizer_config.json: chat_template: a list of named templates with no \"default\""
        ),
        "{e}"
    );
    std::fs::write(d.join("tokenizer_config.json"), "{").unwrap();
    let e = ChatTemplate::find(dir).unwrap_err().to_string();
    assert!(e.contains("tokenizer_config.json: not JSON"), "{e}");
}

#[test]
fn the_chat_view_and_tool_texts_are_aiperfs() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": "b"}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            {"type": "function_call_output", "output": "out"}
        ],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
    });
    let body = body.as_object().unwrap();
    assert_eq!(
        messages_view(body),
        vec![
            json!({"role": "user", "content": "ab"}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}),
        ]
    );
    assert_eq!(
        tool_texts(body),
        vec!["out", "f", "d", "{\"type\":\"object\"}"]
    );
}

#[test]
fn counts_and_costs_on_a_real_tokenizer() {
    // The fixture tokenizer's `<|endoftext|>` is a special added token: it is one token
    // wherever it appears and splits the text around it, so the counts below are exact.
    const E: &str = "<|endoftext|>";
    let tok = crate::tokenizer::tests::fixture();
    let t = template(&format!(
        "{{% for m in messages %}}{E}{{{{ m['content'] }}}}{E}{{% endfor %}}\
         {{% if add_generation_prompt %}}{E}{E}{E}{{% endif %}}"
    ));
    // Per message 2 tokens of wrap; per request 3 of generation prompt; the fixture adds
    // no special token of its own (its post-processor is a bare sequence).
    assert_eq!(tok.prompt_special_tokens(), 0);
    assert_eq!(overheads(&tok, &t), (3, 2));
    let body = json!({"messages": [{"role": "user", "content": "hello world"}],
                      "tools": [{"function": {"name": "lookup"}}]});
    let n = count_input(&tok, &t, body.as_object().unwrap()).unwrap();
    assert_eq!(
        n as usize,
        tok.count("hello world") + 5 + tok.count("lookup")
    );
    // No chat view: the caller counts plain text.
    assert_eq!(
        count_input(&tok, &t, json!({"prompt": "x"}).as_object().unwrap()),
        None
    );
    // A template that gives a negative cost makes none (AIPerf's guard).
    let shrinking = template("{% if messages | length == 1 %}x y z w v u{% endif %}");
    assert_eq!(overheads(&tok, &shrinking), (0, 0));
}

#[test]
fn the_flag_needs_a_template() {
    use inferbench_core::plan::TokenizerSpec;
    let e = Tokenizer::load_for(&TokenizerSpec::Builtin, true)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--apply-chat-template needs a Hugging Face tokenizer"),
        "{e}"
    );
    let fixture = crate::tokenizer::tests::fixture_path();
    let spec = TokenizerSpec::HuggingFace {
        path: fixture.clone(),
    };
    let tok = Tokenizer::load_for(&spec, true).unwrap();
    // The fixture ships `chat_template.jinja`: "role: content" lines, then "assistant:".
    let t = tok.chat_template().unwrap();
    assert_eq!(
        t.render(&probe_messages("PROMPT", 1), true).unwrap(),
        "user: PROMPT\nassistant:"
    );
    assert!(
        Tokenizer::load_for(&spec, false)
            .unwrap()
            .chat_template()
            .is_none()
    );
    let guard = tmp("none");
    let d = guard.path();
    std::fs::copy(
        format!("{fixture}/tokenizer.json"),
        d.join("tokenizer.json"),
    )
    .unwrap();
    let spec = TokenizerSpec::HuggingFace {
        path: d.to_str().unwrap().into(),
    };
    let e = Tokenizer::load_for(&spec, true).unwrap_err().to_string();
    assert!(e.contains("no chat template here"), "{e}");
}

#[test]
fn synthetic_prompts_are_shortened_as_aiperf_does() {
    use crate::dataset::synth::template_compensated as c;
    assert_eq!(c(100, true, (3, 2), false), 95);
    assert_eq!(c(100, false, (3, 2), false), 98);
    assert_eq!(c(4, true, (3, 2), false), 1);
    assert_eq!(c(4, true, (3, 2), true), 0);
    assert_eq!(c(7, true, (0, 0), false), 7);
}
