//! Host and executable identity for the manifest (Linux `/proc` where available).

use inferbench_core::manifest::{HostIdentity, ToolIdentity};

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

pub fn host_identity() -> HostIdentity {
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    HostIdentity {
        hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        os,
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        arch: std::env::consts::ARCH.to_string(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
        merged_hosts: None,
    }
}

/// The commit and build profile of the executable, as the binary's build script found them.
#[derive(Clone, Debug)]
pub struct BuildInfo {
    pub commit: String,
    pub profile: String,
}

static BUILD: std::sync::OnceLock<BuildInfo> = std::sync::OnceLock::new();

/// Called once by the binary at start, so that every manifest names the build (a library's
/// own build cannot know the executable's commit without rebuilding on every commit).
pub fn set_build(info: BuildInfo) {
    let _ = BUILD.set(info);
}

pub fn tool_identity() -> ToolIdentity {
    // Hashed once per process, streamed: reading the executable whole held it in memory
    // (30 MB for a release build, 170 MB with debug info), which was most of a run's peak RSS.
    static BINARY_SHA256: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let binary_sha256 = BINARY_SHA256
        .get_or_init(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| crate::self_hash::binary_sha256(&p))
        })
        .clone();
    ToolIdentity {
        name: inferbench_core::TOOL_NAME.to_string(),
        version: inferbench_core::TOOL_VERSION.to_string(),
        binary_sha256,
        commit: BUILD.get().map(|b| b.commit.clone()),
        build_profile: BUILD.get().map(|b| b.profile.clone()),
    }
}

/// The manifest's record of the chat template ISL was counted through
/// (`--apply-chat-template`), or None.
pub fn chat_template_identity(
    tok: &inferbench_workload::Tokenizer,
) -> Option<inferbench_core::manifest::ChatTemplateIdentity> {
    let t = tok.chat_template()?;
    let probe = inferbench_workload::chat_template::probe_messages("PROMPT", 1);
    let rendered = t.render(&probe, true).unwrap_or_default();
    let (fixed, wrap) = tok.chat_template_overheads();
    Some(inferbench_core::manifest::ChatTemplateIdentity {
        source: t.source().to_string(),
        sha256: t.sha256().to_string(),
        rendered_probe_sha256: inferbench_core::seed::sha256_hex(rendered.as_bytes()),
        rendered_probe: rendered,
        per_request_fixed_tokens: fixed,
        per_message_wrap_tokens: wrap,
    })
}
