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
    /// The config's AIPerf plot specifications, drawn with the charts.
    plot: Option<inferbench_report::plot_spec::PlotConfig>,
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
                // Every scenario of the file as cells: the hooks are the first's (user files
                // and plots are not per scenario in AIPerf's templates).
                scenario: a
                    .aiperf
                    .scenario
                    .clone()
                    .or_else(|| a.aiperf.config_scenarios.first().cloned()),
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
    let plot = hooks.as_ref().and_then(|h| h.plot.clone());
    let h = Arc::new(Hooked {
        inner,
        hooks,
        auto_plot,
        plot,
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
                config: None,
            };
            let specs = match &self.plot {
                Some(p) => crate::plot_specs::draw_single(p, dir),
                None => Ok(Vec::new()),
            };
            self.plotted(required, crate::plot_cmd::run(&args).and(specs))?;
        }
        Ok(())
    }

    /// After a sweep: the config's multi-run plot specifications over its runs.
    /// `dir` is the sweep's aggregate directory (`ROOT/sweep_aggregate`, or with repeated
    /// trials `ROOT/aggregate/sweep_aggregate`); the charts go to `ROOT/plots`.
    fn after_sweep(&self, dir: &Path) -> Result<(), String> {
        let Some(mut root) = dir.parent() else {
            return Ok(());
        };
        if root.file_name().is_some_and(|n| n == "aggregate")
            && let Some(up) = root.parent()
        {
            root = up;
        }
        if let (Some(required), Some(p)) = (self.auto_plot, &self.plot) {
            self.plotted(required, crate::plot_specs::draw_multi(p, root))?;
        }
        Ok(())
    }

    /// Prints the notes of charts skipped; a failure is a warning, or with --plot-required
    /// the command's error.
    fn plotted(&self, required: bool, r: Result<Vec<String>, Failure>) -> Result<(), String> {
        match r {
            Ok(notes) => {
                for n in notes.iter().filter(|_| crate::log_level::notes()) {
                    eprintln!("inferbench: note: {n}");
                }
                Ok(())
            }
            Err(e) => {
                let msg = format!("--auto-plot (autoPlot): {}", e.message);
                if required {
                    return Err(format!("{msg} (--plot-required)"));
                }
                if crate::log_level::warnings() {
                    eprintln!("inferbench: warning: {msg}");
                }
                Ok(())
            }
        }
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
        let (done, sweep) = match &event {
            Event::RunDone(r) => (Some(r.dir.clone()), None),
            Event::SweepWritten { dir } => (None, Some(dir.to_path_buf())),
            _ => (None, None),
        };
        self.inner.event(event);
        let result = match (done, sweep) {
            (Some(dir), _) => self.after_run(&dir),
            (None, Some(dir)) => self.after_sweep(&dir),
            (None, None) => Ok(()),
        };
        if let Err(e) = result {
            eprintln!("inferbench: error: {e}");
            if let Ok(mut f) = self.failure.lock()
                && f.is_none()
            {
                *f = Some(e);
            }
        }
    }
}
