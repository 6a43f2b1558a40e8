//! A browser session: the driver started (unless the WebDriver is remote), the browser launched
//! with its flags and a fresh profile, the page loaded in it, whether it is still there, the GPU
//! diagnostics page read, and everything ended again.

use super::{BrowserRunRequest, Restart};
use crate::measure::browser::{seed::ProfileSeed, LaunchOptions};
use crate::measure::driver::Driver;
use crate::measure::events::{Reporter, RunEvent};
use crate::measure::gpu_stack;
use crate::measure::server::Server;
use anyhow::{anyhow, bail, Context, Result};
use kernels::RunPlan;
use reports::{BrowserInfo, DriverInfo, PlatformRun};
use std::path::PathBuf;
use std::time::Duration;

/// How long the browser may take to answer the check that it is still there
/// ([`Restart::check_alive`]) before it counts as busy (a hang is the case timeout's to judge),
/// not gone.
const LIVENESS_ANSWER: Duration = Duration::from_secs(5);

/// A browser session: the driver harness started (none with a remote WebDriver), the WebDriver
/// session, and the scratch folder (the profile, the driver's log), which outlives the browser.
pub(super) struct Session<'a> {
    server: &'a Server,
    /// The page's address.
    pub(super) url: String,
    /// The WebDriver session.
    pub(super) client: fantoccini::Client,
    driver: Option<Driver>,
    driver_name: String,
    scratch: Option<tempfile::TempDir>,
    /// The profile's seed and the profile, kept as the seed after a clean quit where there is none.
    seed: Option<(ProfileSeed, PathBuf)>,
}

impl Restart for Session<'_> {
    async fn restart(&mut self, plan: RunPlan) -> Result<()> {
        self.server.set_plan(plan);
        navigate(&self.client, &self.url).await
    }

    fn process_group(&self) -> Option<i32> {
        self.driver.as_ref().map(Driver::process_group)
    }

    async fn check_alive(&mut self) -> Result<(), String> {
        let exited = self.driver.as_mut().and_then(Driver::exit_status);
        let answer = tokio::time::timeout(LIVENESS_ANSWER, self.client.window()).await;
        let said = match (answer, &exited) {
            // It answered, or it is busy: a hang is the case timeout's to judge.
            (Ok(Ok(_)) | Err(_), None) => return Ok(()),
            (Ok(Err(e)), _) => format!("the WebDriver session failed: {e}"),
            (_, Some(_)) => "the WebDriver session is gone".to_string(),
        };
        Err(self.leftovers(&said, exited))
    }
}

impl Session<'_> {
    /// What the browser and driver left behind: what WebDriver `said`, how the driver ended (or
    /// that it still runs) and the end of its log.
    fn leftovers(&self, said: &str, exited: Option<String>) -> String {
        let Some(driver) = &self.driver else { return format!("{said} (a remote WebDriver: its logs are on its machine)") };
        let state = exited.map_or_else(|| "is still running".to_string(), |status| format!("ended: {status}"));
        let tail = driver.log_tail(8);
        format!("{said}; {} {state}; its log ends:\n{tail}", self.driver_name)
    }

    /// Closes the WebDriver session and stops the driver (and with it the browser), keeps the
    /// profile's seed where the browser quit cleanly, then removes the scratch folder.
    pub(super) async fn end(self) {
        let closed = matches!(tokio::time::timeout(Duration::from_secs(10), self.client.close()).await, Ok(Ok(())));
        if let Some(d) = self.driver {
            let _ = tokio::task::spawn_blocking(move || d.stop()).await;
        }
        if let Some((seed, profile)) = self.seed.filter(|_| closed) {
            let _ = tokio::task::spawn_blocking(move || seed.keep(&profile)).await;
        }
        drop(self.scratch);
    }
}

/// Starts the driver (unless the WebDriver is remote) and a browser session, and records them in
/// `run`.
pub(super) async fn start_session<'a>(req: &BrowserRunRequest, server: &'a Server, run: &mut PlatformRun, reporter: &mut dyn Reporter) -> Result<Session<'a>> {
    let spec = req.browser.spec();
    let remote = req.webdriver_url.is_some();
    // A remote browser's path (if given) is a path on its machine, so it is not checked here.
    let binary = match remote {
        true => req.browser_path.clone(),
        false => Some(spec.find_browser(req.browser_path.as_deref())?),
    };
    let driver_path = match remote {
        true => None,
        false => Some(spec.find_driver(req.driver_path.as_deref())?),
    };
    // The driver's and its browser's temporary folder: the profile is made in it.
    let scratch = match remote {
        true => None,
        false => Some(tempfile::Builder::new().prefix("harness-").tempdir()?),
    };
    let profile_dir = scratch.as_ref().map(|s| s.path().join("profile"));
    if let Some(profile) = &profile_dir {
        std::fs::create_dir_all(profile)?;
    }
    let options = LaunchOptions {
        binary: binary.clone(),
        headless: req.headless,
        profile_dir,
        webnn: req.platform.on_webnn(),
        gpu: req.gpu_flags.resolve(cfg!(target_os = "linux"), gpu_stack::this_machine().has_gpu(), remote),
        nvidia: gpu_stack::this_machine().has_nvidia(),
    };
    // The fresh profile starts with what the browser compiled of itself in an earlier session.
    let seed = profile_seed(req).zip(options.profile_dir.clone());
    let seeded = seed.as_ref().is_some_and(|(seed, profile)| seed.plant(profile));
    let mut flags = (spec.flags)(&options);
    // What the GPU flags added: the flags against the same launch without them.
    let gpu_share = match options.gpu {
        true => {
            let without = (spec.flags)(&LaunchOptions { gpu: false, ..options.clone() }).describe();
            flags.describe().into_iter().filter(|f| !without.contains(f)).collect()
        }
        false => Vec::new(),
    };
    flags.merge(&req.user_flags);
    let capabilities = (spec.capabilities)(&options, &flags);

    let (endpoint, driver) = match (&req.webdriver_url, driver_path, &scratch) {
        (Some(url), _, _) => {
            reporter.event(RunEvent::Step(&format!("asking {url} for a {} session", spec.display)));
            run.driver = Some(DriverInfo { name: "remote WebDriver".into(), version: "unknown".into(), path: Some(url.clone()) });
            (url.clone(), None)
        }
        (None, Some(path), Some(scratch)) => {
            reporter.event(RunEvent::Step(&format!("starting {} and {}", path.display(), spec.display)));
            let (launch_path, launch_scratch) = (path.clone(), scratch.path().to_path_buf());
            let driver = tokio::task::spawn_blocking(move || Driver::launch(&launch_path, &launch_scratch)).await??;
            run.driver = Some(DriverInfo {
                name: spec.driver_names[0].to_string(),
                version: driver.version.clone(),
                path: Some(path.display().to_string()),
            });
            (driver.url.clone(), Some(driver))
        }
        (None, _, _) => unreachable!("a local run always has a driver path and a scratch folder"),
    };
    let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&endpoint)
        .await;
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            let log = driver.as_ref().map(|d| d.log_tail(20)).unwrap_or_default();
            if let Some(d) = driver {
                tokio::task::spawn_blocking(move || d.stop()).await?;
            }
            let browser = binary.map(|b| format!(" ({})", b.display())).unwrap_or_default();
            bail!("{endpoint} could not start {}{browser}: {e}\n{log}", spec.display);
        }
    };
    let caps = client.capabilities().cloned().unwrap_or_default();
    let cap_str = |k: &str| caps.get(k).and_then(|v| v.as_str()).unwrap_or("unknown").to_string();
    run.browser_info = Some(BrowserInfo {
        name: cap_str("browserName"),
        version: cap_str("browserVersion"),
        path: binary.map(|b| b.display().to_string()),
        flags: flags.describe(),
        user_flags: req.user_flags.describe(),
        gpu_flags: gpu_share,
        environment: if remote { Vec::new() } else { gpu_stack::applied_environment() },
        profile_seed: seed.as_ref().filter(|_| seeded).map(|(seed, _)| format!("{} from {}", spec.profile_seed.join(" and "), seed.dir().display())),
    });
    let driver_name = spec.driver_names[0].to_string();
    Ok(Session { server, url: server.page_url(), client, driver, driver_name, scratch, seed })
}

/// The seed of the fresh profiles of `req`'s browser, where it is started here and has one.
pub(super) fn profile_seed(req: &BrowserRunRequest) -> Option<ProfileSeed> {
    let spec = req.browser.spec();
    let binary = spec.find_browser(req.browser_path.as_deref()).ok().filter(|_| req.webdriver_url.is_none())?;
    ProfileSeed::of(spec.key, &binary, spec.profile_seed)
}

/// The GPU-related lines of a diagnostics page; empty when the browser will not show it.
pub(super) async fn read_diagnostics(client: &fantoccini::Client, url: &str) -> Vec<String> {
    const WORDS: [&str; 12] = [
        "gpu", "vulkan", "webgpu", "renderer", "adapter", "driver", "swiftshader", "llvmpipe", "lavapipe", "angle", "vendor", "device",
    ];
    // chrome://gpu renders into nested shadow roots, which innerText skips: walk them. Both
    // pages fill in their data after load.
    let script = r#"let out = '';
        const walk = (n) => {
          if (n.shadowRoot) walk(n.shadowRoot);
          for (const c of n.childNodes) {
            if (c.nodeType === 3) out += c.textContent;
            else if (c.nodeType === 1 || c.nodeType === 11) {
              if (c.tagName === 'TD' || c.tagName === 'TH') out += ' ';
              walk(c);
              if (/^(DIV|TR|P|LI|H[1-6]|TABLE|BR|UL)$/.test(c.tagName)) out += '\n';
            }
          }
        };
        walk(document.documentElement);
        return out;"#;
    // Not a warning: the evidence says the page could not be read (Firefox 153 refuses about:
    // pages to WebDriver), and -v shows why.
    if let Err(e) = navigate(client, url).await {
        tracing::info!("could not open {url}: {e:#}");
        return Vec::new();
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let text = match client.execute(script, Vec::new()).await {
        Ok(v) => {
            tracing::debug!("{url}: {} characters of text", v.as_str().map(str::len).unwrap_or(0));
            v.as_str().unwrap_or_default().to_string()
        }
        Err(e) => {
            tracing::info!("could not read {url}: {e}");
            return Vec::new();
        }
    };
    text.lines()
        .map(str::trim)
        // Style rules come along with chrome://gpu's shadow roots.
        .filter(|l| !l.is_empty() && !l.contains('{') && !l.contains('}'))
        .filter(|l| WORDS.iter().any(|w| l.to_lowercase().contains(w)))
        .map(|l| l.chars().take(200).collect())
        .take(40)
        .collect()
}

/// Loads `url` in the browser of `client`, within 60 s.
pub(super) async fn navigate(client: &fantoccini::Client, url: &str) -> Result<()> {
    tokio::time::timeout(Duration::from_secs(60), client.goto(url))
        .await
        .map_err(|_| anyhow!("the browser did not load the page within 60 s"))?
        .with_context(|| format!("the browser could not load {url}"))
}
