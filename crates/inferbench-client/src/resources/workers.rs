//! The client's worker threads: the runtime that drives every connection, with one thread by
//! default or `--workers-max N`, and the registry of their Linux thread ids that the sampler
//! reads `/proc/self/task/<tid>/schedstat` of.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::procfs::current_tid;

/// One client worker thread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerThread {
    /// `client-worker-<i>` (also the thread's kernel name on a multi-thread runtime).
    pub name: String,
    pub tid: u32,
}

/// The registry of a runtime's worker threads, shared with the sampler.
#[derive(Clone, Default)]
pub struct WorkerThreads(Arc<Mutex<Vec<WorkerThread>>>);

impl std::fmt::Debug for WorkerThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WorkerThreads").field(&self.list()).finish()
    }
}

thread_local! {
    /// The registry of the runtime this thread belongs to or drives.
    static CURRENT: RefCell<Option<WorkerThreads>> = const { RefCell::new(None) };
    /// Whether this thread registered itself as a worker already.
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
}

impl WorkerThreads {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<WorkerThread>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds the calling thread as `client-worker-<i>` (i = its place in the registry) and
    /// returns the name; a thread already in it is not added twice.
    pub fn register_current(&self) -> String {
        let tid = current_tid();
        self.with(|v| {
            if let Some(w) = v.iter().find(|w| w.tid == tid) {
                return w.name.clone();
            }
            let name = format!("client-worker-{}", v.len());
            v.push(WorkerThread {
                name: name.clone(),
                tid,
            });
            name
        })
    }

    fn unregister(&self, tid: u32) {
        self.with(|v| v.retain(|w| w.tid != tid));
    }

    pub fn list(&self) -> Vec<WorkerThread> {
        self.with(|v| v.clone())
    }

    /// The registry of the runtime the calling thread belongs to (a worker of a
    /// [`ClientRuntime`], or the thread inside [`ClientRuntime::enter`]).
    pub fn current() -> Option<WorkerThreads> {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// [`WorkerThreads::current`], or else a registry of the calling thread alone: a
    /// current-thread runtime made elsewhere (a test's) is driven by the thread that asks.
    pub fn current_or_this_thread() -> WorkerThreads {
        Self::current().unwrap_or_else(|| {
            let w = WorkerThreads::new();
            w.register_current();
            w
        })
    }
}

/// The runtime that drives the client's connections.
pub struct ClientRuntime {
    runtime: tokio::runtime::Runtime,
    workers: WorkerThreads,
    multi: bool,
}

impl ClientRuntime {
    /// `workers_max` None or 1: a current-thread runtime; the thread that drives it (the one
    /// inside [`ClientRuntime::enter`]) is the one worker. That is the default because one
    /// thread stamping every connection's frames needs no cross-thread wake-up per frame (a
    /// futex call each, and a hand-off delay on the frame's timestamp), which is most of what
    /// a multi-thread runtime costs here. N > 1: N worker threads, `client-worker-<i>`, for
    /// a workload one thread cannot keep up with (AIPerf's `--workers-max`).
    pub fn new(workers_max: Option<usize>) -> std::io::Result<Self> {
        let workers = WorkerThreads::new();
        let n = workers_max.unwrap_or(1).max(1);
        let runtime = if n == 1 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
        } else {
            let (on_start, on_park) = (workers.clone(), workers.clone());
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(n)
                .enable_all()
                // Blocking-pool threads get this name too; workers rename themselves below.
                .thread_name("client-runtime")
                .on_thread_start(move || {
                    CURRENT.with(|c| *c.borrow_mut() = Some(on_start.clone()));
                })
                // Only worker threads park (the blocking pool does not), and every worker
                // parks once at start, when there is no work yet: so this registers the
                // workers and nothing else.
                .on_thread_park(move || {
                    if !REGISTERED.get() {
                        REGISTERED.set(true);
                        let name = on_park.register_current();
                        set_kernel_thread_name(&name);
                    }
                })
                .build()?
        };
        Ok(ClientRuntime {
            runtime,
            workers,
            multi: n > 1,
        })
    }

    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }

    pub fn workers(&self) -> &WorkerThreads {
        &self.workers
    }

    /// Makes this runtime's registry the calling thread's [`WorkerThreads::current`] until
    /// the guard drops; on a current-thread runtime the calling thread, which drives it, is
    /// registered as its worker for that time.
    pub fn enter(&self) -> EnterGuard {
        let previous = CURRENT.with(|c| c.borrow_mut().replace(self.workers.clone()));
        let driver = (!self.multi).then(|| {
            self.workers.register_current();
            current_tid()
        });
        EnterGuard {
            previous,
            driver,
            workers: self.workers.clone(),
        }
    }
}

/// See [`ClientRuntime::enter`].
pub struct EnterGuard {
    previous: Option<WorkerThreads>,
    driver: Option<u32>,
    workers: WorkerThreads,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        if let Some(tid) = self.driver {
            self.workers.unregister(tid);
        }
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Sets the calling thread's kernel name (what `/proc/<pid>/task/<tid>/comm`, `top -H` and
/// `ps -L` show; at most 15 bytes).
fn set_kernel_thread_name(name: &str) {
    #[cfg(target_os = "linux")]
    {
        let mut buf = [0u8; 16];
        let n = name.len().min(15);
        buf[..n].copy_from_slice(&name.as_bytes()[..n]);
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes, which `buf`
        // is; it renames only the calling thread.
        unsafe {
            libc::prctl(libc::PR_SET_NAME, buf.as_ptr() as libc::c_ulong, 0, 0, 0);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = name;
}
