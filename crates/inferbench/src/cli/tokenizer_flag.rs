//! `--tokenizer-revision`, checked for the plan (docs/workload.md, "Tokenizer revision").

use inferbench_core::plan::TokenizerSpec;

use super::ProfileArgs;

/// The revision asked for, once the tokenizer's local files are shown to be it. Without the
/// flag nothing is checked (AIPerf's default `main` names no local fact to check).
pub fn tokenizer_revision(
    a: &ProfileArgs,
    tokenizer: &TokenizerSpec,
) -> Result<Option<String>, String> {
    let Some(rev) = &a.aiperf.tokenizer_revision else {
        return Ok(None);
    };
    match tokenizer {
        TokenizerSpec::Builtin => Err(format!(
            "--tokenizer-revision {rev}: the builtin tokenizer (tiktoken o200k_base, embedded) has no revision: give --tokenizer PATH in a Hugging Face cache snapshot"
        )),
        TokenizerSpec::HuggingFace { path } => {
            inferbench_workload::tokenizer_revision::check_revision(path, rev)?;
            Ok(Some(rev.clone()))
        }
    }
}
