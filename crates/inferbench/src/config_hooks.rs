//! `profile --config`: what the config asks for around each run besides its flags
//! (`artifacts.userFiles`, `artifacts.autoPlot`; aiperf_config/hooks.rs), and
//! `--auto-plot`/`--plot-required`, as an observer
//! wrapped around the printer: each run's files and charts once its directory is written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use inferbench_run::{Event, Failure, Observer};

use crate::aiperf_config::{Options, RunHooks};
use crate::cli::ProfileArgs;

pub struct Hooked {
    inner: Arc<dyn Observer>,
    /// The config's user files (None: no config, or none asked for).
    hooks: Option<RunHooks>,
    /// Draw the charts after each run: Some(a failure fails the command).
    auto_plot: Option<bool>,
    model: String,
    url: Mutex<String>,
    failure: Mutex<Option<String>>,
}

/// The observer to run with, and the hooks it carries (to ask for their failure after).
type Wrapped = (Arc<dyn Observer>, Option<Arc<Hooked>>);

/// The printer, wrapped when `--config` asks for run hooks or `--auto-plot` is given; the
/// config's hooks are checked here (user files rendered once) before any request is sent.
pub fn wrap(a: &ProfileArgs, inner: Arc<dyn Observer>) -> Result<Wrapped, Failure> {
    let hooks = match &a.aiperf.config {
        None => None,
        Some(path) => {
            let opts = Options {
                scenario: a.aiperf.scenario.clone(),
                simulated: a.aiperf.simulated,
                cli: true,
            };
            RunHooks::from_config(Path::new(path), &opts).map_err(Failure::input)?
        }
    };
    // The command line's --auto-plot / --no-auto-plot / --plot-required over the config's
    // autoPlot / plotRequired.
    let s = &a.service;
    let config_plot = hooks.as_ref().and_then(|h| h.auto_plot);
    let auto_plot = if s.no_auto_plot {
        None
    } else if s.auto_plot {
        Some(s.plot_required || config_plot == Some(true))
    } else {
        config_plot.map(|required| required || s.plot_required)
    };
    if s.plot_required && auto_plot.is_none() && crate::log_level::notes() {
        eprintln!(
            "inferbench: note: --plot-required: no effect without --auto-plot (no charts are drawn)"
        );
    }
    if hooks.is_none() && auto_plot.is_none() {
        return Ok((inner, None));
    }
    let model = a.model.first().cloned().unwrap_or_default();
    let url = a
        .url
        .first()
        .map(|u| crate::cli::without_url_credentials(u))
        .unwrap_or_default();
    if let Some(h) = &hooks {
        let planned = PathBuf::from(a.artifact_dir.as_deref().unwrap_or("artifacts"));
        h.preflight(&planned, &model, &url)
            .map_err(Failure::input)?;
    }
    let h = Arc::new(Hooked {
        inner,
        hooks,
        auto_plot,
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
        if let Some(h) = &self.hooks {
            h.write_user_files(dir, &self.model, &url)?;
        }
        if let Some(required) = self.auto_plot {
            let args = crate::cli::PlotArgs {
                dirs: vec![dir.to_path_buf()],
                out_dir: None,
                format: crate::cli::PlotFormat::Both,
            };
            if let Err(e) = crate::plot_cmd::run(&args) {
                let msg = format!("--auto-plot (autoPlot): {}", e.message);
                if required {
                    return Err(format!("{msg} (--plot-required)"));
                }
                if crate::log_level::warnings() {
                    eprintln!("inferbench: warning: {msg}");
                }
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
