//! The allocator setting a long run needs (docs/architecture.md, "Memory").
//!
//! A run's columns are vectors that grow by doubling for its whole length. glibc's malloc
//! raises its mmap threshold each time a large mmapped block is freed (up to 32 MiB), so after
//! the first few reallocations a growing column is moved inside the heap instead: each
//! doubling copies it and leaves the old, touched block behind as free heap memory that stays
//! resident. With a fixed threshold every block above it is its own mapping, grown in place
//! by `mremap` and returned to the system when freed. Measured: peak RSS of a 300,000-request
//! streaming run 345 and 336 MB before, 266 and 265 MB after, CPU unchanged.

/// The fixed threshold: glibc's own starting value, kept from moving.
const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Fixes glibc's mmap threshold unless the user set one (`MALLOC_MMAP_THRESHOLD_`, or
/// `glibc.malloc.mmap_threshold` in `GLIBC_TUNABLES`), whose choice then stands.
pub fn tune() {
    let tunables = std::env::var("GLIBC_TUNABLES").ok();
    if !user_chose(
        std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some(),
        tunables.as_deref(),
    ) {
        fix_threshold();
    }
}

/// Whether the environment already sets the threshold.
fn user_chose(threshold_var: bool, tunables: Option<&str>) -> bool {
    threshold_var
        || tunables.is_some_and(|t| {
            t.split(':')
                .any(|kv| kv.split('=').next() == Some("glibc.malloc.mmap_threshold"))
        })
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fix_threshold() {
    // SAFETY: mallopt only sets a malloc parameter; it is called before any other thread
    // exists, and a refusal (return 0) leaves glibc's default behaviour.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fix_threshold() {
    // Other allocators do not move large blocks into the heap this way.
    let _ = MMAP_THRESHOLD;
}

#[cfg(test)]
mod tests {
    use super::user_chose;

    #[test]
    fn a_threshold_the_user_set_stands() {
        assert!(!user_chose(false, None));
        assert!(user_chose(true, None));
        assert!(user_chose(
            false,
            Some("glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536")
        ));
        // Other tunables, or a name that only contains the word, are not a choice.
        assert!(!user_chose(false, Some("glibc.malloc.arena_max=2")));
        assert!(!user_chose(false, Some("x.mmap_threshold_note=1")));
    }
}
