//! Shell completions and man pages come from the flag definitions.

use std::process::Command;

use crate::common::{bin, run, stderr, tmpdir};

/// The scripts are larger than a pipe holds: read the output while the child runs.
fn completions(shell: &str) -> std::process::Output {
    bin()
        .args(["completions", shell])
        .output()
        .expect("run inferbench")
}

#[test]
fn bash_completion_loads_and_knows_the_profile_flags() {
    let o = completions("bash");
    assert!(o.status.success(), "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(
        script.contains("--request-rate"),
        "no profile flag in the script"
    );
    assert!(
        script.contains("mock-server"),
        "no subcommand in the script"
    );
    let dir = tmpdir("completions");
    let path = dir.join("inferbench.bash");
    std::fs::write(&path, &script).unwrap();
    // Sourcing it registers a completion function for the command (a script with a syntax
    // error, or one that registers nothing, fails here).
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p inferbench",
            path.display()
        ))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("inferbench"));
}

#[test]
fn zsh_and_fish_scripts_name_the_subcommands() {
    for shell in ["zsh", "fish"] {
        let o = completions(shell);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let s = String::from_utf8(o.stdout).unwrap();
        for sub in ["profile", "compare", "gate", "qualify"] {
            assert!(s.contains(sub), "{shell} script lacks {sub}");
        }
    }
    let o = completions("tcsh");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

#[test]
fn man_pages_one_per_command() {
    let o = bin().arg("man").output().expect("run inferbench");
    assert!(o.status.success(), "{}", stderr(&o));
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH inferbench 1"),
        "{page:.200}"
    );
    assert!(page.contains(env!("CARGO_PKG_VERSION")));

    let dir = tmpdir("man");
    let o = run(&["man", "--out-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = std::fs::read_to_string(dir.join("inferbench-profile.1")).unwrap();
    // roff escapes the hyphens of a long flag.
    assert!(profile.contains(r"\-\-request\-rate"), "{profile:.300}");
    assert!(dir.join("inferbench-ledger-add.1").exists());
}
