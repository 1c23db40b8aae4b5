use super::*;

#[test]
fn escape_covers_markup_and_quotes() {
    assert_eq!(
        escape(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    assert_eq!(escape("plain ✓"), "plain ✓");
}

#[test]
fn table_and_pre_escape_what_they_are_given() {
    let t = table(&["a<b"], &[vec![escape("<script>")]]);
    assert!(t.contains("<th>a&lt;b</th>"));
    assert!(t.contains("<td>&lt;script&gt;</td>"));
    assert!(!t.contains("<script>"));
    assert_eq!(pre("\nx < y\n"), "<pre>x &lt; y</pre>\n");
}

#[test]
fn no_directory_is_bad_input() {
    let e = build(&ReportSpec::default()).unwrap_err();
    assert_eq!(e.code, 2);
    let e = build(&ReportSpec {
        dirs: vec!["/nonexistent/inferbench-report-dir".into()],
        ..ReportSpec::default()
    })
    .unwrap_err();
    assert_eq!(e.code, 2);
    assert!(
        e.message.contains("/nonexistent/inferbench-report-dir"),
        "{}",
        e.message
    );
}
