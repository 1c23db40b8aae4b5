//! `profile --config`: what the config asks for around each run besides its flags
//! (`artifacts.userFiles`, `artifacts.autoPlot`; aiperf_config/hooks.rs), as an observer
//! wrapped around the printer: each run's files and charts once its directory is written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use inferbench_run::{Event, Failure, Observer};

use crate::aiperf_config::{Options, RunHooks};
use crate::cli::ProfileArgs;

pub struct Hooked {
    inner: Arc<dyn Observer>,
    hooks: RunHooks,
    model: String,
    url: Mutex<String>,
    failure: Mutex<Option<String>>,
}

/// The observer to run with, and the hooks it carries (to ask for their failure after).
type Wrapped = (Arc<dyn Observer>, Option<Arc<Hooked>>);

/// The printer, wrapped when `--config` asks for run hooks; the hooks are checked here
/// (user files rendered once) before any request is sent.
pub fn wrap(a: &ProfileArgs, inner: Arc<dyn Observer>) -> Result<Wrapped, Failure> {
    let Some(path) = &a.aiperf.config else {
        return Ok((inner, None));
    };
    let opts = Options {
        scenario: a.aiperf.scenario.clone(),
        simulated: a.aiperf.simulated,
        cli: true,
    };
    let Some(hooks) = RunHooks::from_config(Path::new(path), &opts).map_err(Failure::input)? else {
        return Ok((inner, None));
    };
    let model = a.model.first().cloned().unwrap_or_default();
    let url = a
        .url
        .first()
        .map(|u| crate::cli::without_url_credentials(u))
        .unwrap_or_default();
    let planned = PathBuf::from(a.artifact_dir.as_deref().unwrap_or("artifacts"));
    hooks
        .preflight(&planned, &model, &url)
        .map_err(Failure::input)?;
    let h = Arc::new(Hooked {
        inner,
        hooks,
        model,
        url: Mutex::new(url),
        failure: Mutex::new(None),
    });
    Ok((h.clone(), Some(h)))
}

impl Hooked {
    /// The first hook that failed (a user file not written, a required plot not drawn).
    pub fn failure(&self) -> Option<Failure> {
        self.failure
            .lock()
            .ok()
            .and_then(|f| f.clone())
            .map(Failure::run)
    }

    fn after_run(&self, dir: &Path) -> Result<(), String> {
        let url = self.url.lock().map(|u| u.clone()).unwrap_or_default();
        self.hooks.write_user_files(dir, &self.model, &url)?;
        if let Some(required) = self.hooks.auto_plot {
            let args = crate::cli::PlotArgs {
                dirs: vec![dir.to_path_buf()],
                out_dir: None,
                format: crate::cli::PlotFormat::Both,
            };
            if let Err(e) = crate::plot_cmd::run(&args) {
                let msg = format!("autoPlot: {}", e.message);
                if required {
                    return Err(format!("{msg} (plotRequired: true)"));
                }
                eprintln!("inferbench: warning: {msg}");
            }
        }
        Ok(())
    }
}

impl Observer for Hooked {
    fn event(&self, event: Event<'_>) {
        if let Event::SimulatedServer { url, .. } = &event
            && let Ok(mut u) = self.url.lock()
            && u.is_empty()
        {
            *u = url.to_string();
        }
        let done = match &event {
            Event::RunDone(r) => Some(r.dir.clone()),
            _ => None,
        };
        self.inner.event(event);
        if let Some(dir) = done
            && let Err(e) = self.after_run(&dir)
        {
            eprintln!("inferbench: error: {e}");
            if let Ok(mut f) = self.failure.lock()
                && f.is_none()
            {
                *f = Some(e);
            }
        }
    }
}
