//! The verdict for people: console lines and the Markdown acceptance packet.

use super::verdict::Verdict;

impl Verdict {
    /// One line per rule, then the overall verdict.
    pub fn console(&self) -> String {
        let mut s = String::new();
        for r in &self.rules {
            s.push_str(&format!(
                "{:<13} {:<28} {}\n",
                r.verdict.as_str(),
                r.id,
                r.reason
            ));
        }
        s.push_str(&format!(
            "gate {}: {}\n",
            self.gate.name,
            self.verdict.as_str()
        ));
        s
    }
}
