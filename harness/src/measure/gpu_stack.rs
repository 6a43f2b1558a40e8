//! What this machine offers a GPU-backed WebGPU on Linux: its GPUs (as the kernel driver
//! exposes them), the Vulkan loader, the driver (ICD) files the loader sees, and the library
//! NVIDIA's ICD needs. From it follow Chrome's GPU flags (a hardware GPU is here), the
//! environment harness gives the processes it starts (an ICD or library the loader cannot see,
//! where a copy is on the machine), and the first links of `harness doctor`.

use serde::Serialize;
use std::sync::OnceLock;

/// A view of the machine, so tests can describe one.
pub trait Machine {
    /// Whether `path` exists.
    fn exists(&self, path: &str) -> bool;
    /// The text of the file at `path`.
    fn read(&self, path: &str) -> Option<String>;
    /// An environment variable, unset or empty as `None`.
    fn env(&self, name: &str) -> Option<String>;
    /// The entries of folder `dir`, as full paths, sorted.
    fn list(&self, dir: &str) -> Vec<String>;
    /// The libraries the dynamic linker's cache knows (`ldconfig -p`), as full paths.
    fn ld_cache(&self) -> Vec<String>;
    /// Loads the shared library `library` (a name the linker searches for, or a path) as the
    /// Vulkan loader loads a driver (every symbol bound at once), then unloads it: what the
    /// linker said, where it failed (a library it needs that is missing, say).
    fn load(&self, library: &str) -> Result<(), String>;
}

/// This machine.
pub struct ThisMachine;

impl Machine for ThisMachine {
    fn exists(&self, path: &str) -> bool {
        std::path::Path::new(path).exists()
    }
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
    fn list(&self, dir: &str) -> Vec<String> {
        let mut entries: Vec<String> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path().display().to_string()).collect())
            .unwrap_or_default();
        entries.sort();
        entries
    }
    fn ld_cache(&self) -> Vec<String> {
        let out = ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
            .iter()
            .find_map(|l| std::process::Command::new(l).arg("-p").output().ok().filter(|o| o.status.success()));
        out.map(|o| {
            String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| l.split(" => ").nth(1)).map(|p| p.trim().to_string()).collect()
        })
        .unwrap_or_default()
    }
    #[cfg(unix)]
    fn load(&self, library: &str) -> Result<(), String> {
        let name = std::ffi::CString::new(library).map_err(|_| format!("{library}: not a library name"))?;
        // SAFETY: dlopen with a valid C string, the handle closed at once; dlerror's text is
        // copied before any other dl call. RTLD_NOW | RTLD_LOCAL is how the Vulkan loader opens
        // an ICD, so a library the ICD needs that is missing fails here as it fails there.
        unsafe {
            let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if handle.is_null() {
                let error = libc::dlerror();
                return Err(match error.is_null() {
                    true => format!("{library} could not be loaded"),
                    false => std::ffi::CStr::from_ptr(error).to_string_lossy().into_owned(),
                });
            }
            libc::dlclose(handle);
        }
        Ok(())
    }
    #[cfg(not(unix))]
    fn load(&self, _library: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Who makes a GPU, which decides its Vulkan driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA's proprietary driver.
    Nvidia,
    /// AMD (amdgpu).
    Amd,
    /// Intel (i915, xe).
    Intel,
}

impl Vendor {
    /// The vendor whose Vulkan driver library is `library` (an ICD's `library_path`).
    fn of_library(library: &str) -> Option<Vendor> {
        let l = library.to_lowercase();
        match () {
            _ if l.contains("nvidia") => Some(Vendor::Nvidia),
            _ if l.contains("radeon") || l.contains("amdvlk") => Some(Vendor::Amd),
            _ if l.contains("intel") => Some(Vendor::Intel),
            _ => None,
        }
    }

    /// The vendor's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Nvidia => "NVIDIA",
            Vendor::Amd => "AMD",
            Vendor::Intel => "Intel",
        }
    }

    /// How its Vulkan driver is installed.
    fn icd_install(self) -> &'static str {
        match self {
            Vendor::Nvidia => "install the NVIDIA driver's Vulkan part (Debian: `apt-get install nvidia-vulkan-icd`; Ubuntu: libnvidia-gl-<version>)",
            Vendor::Amd | Vendor::Intel => "install Mesa's Vulkan drivers (`apt-get install mesa-vulkan-drivers`)",
        }
    }
}

/// A hardware GPU the kernel driver exposes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostGpu {
    /// Its maker.
    pub vendor: Vendor,
    /// Its name and driver, such as `NVIDIA H100 80GB HBM3 (nvidia 580.159.04)`.
    pub name: String,
}

/// A Vulkan driver (ICD) file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Icd {
    /// The json file.
    pub path: String,
    /// Its `library_path`; empty when the file could not be read.
    pub library: String,
    /// Whether the Vulkan loader reads it: in a folder it searches, or named by `VK_DRIVER_FILES`.
    pub visible: bool,
    /// Whether its library is found: on the library path, or at the path it names.
    pub library_found: bool,
    /// A copy of its library in a driver's folder on no library path, where it is not found.
    pub library_copy: Option<String>,
    /// What the dynamic linker said when the library, found on the library path, was loaded
    /// as the Vulkan loader loads it, where that failed: a driver that is there but cannot load
    /// (NVIDIA's needs libglvnd's libGLX.so.0) offers no GPU. Tried for the GPUs' drivers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_error: Option<String>,
}

impl Icd {
    /// The GPU maker it drives; `None` for software drivers (lavapipe, SwiftShader) and unknown ones.
    pub fn vendor(&self) -> Option<Vendor> {
        Vendor::of_library(&self.library)
    }
}

/// libGLdispatch (libglvnd), which NVIDIA's ICD needs: without it the loader finds no
/// `vkCreateInstance` in the ICD and the GPU is not offered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GlDispatch {
    /// Where the dynamic linker finds it.
    pub on_path: Option<String>,
    /// A copy elsewhere on the machine, when it is on no library path.
    pub copy: Option<String>,
}

/// What this machine offers a GPU-backed WebGPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuStack {
    /// Hardware GPUs the kernel driver exposes.
    pub gpus: Vec<HostGpu>,
    /// The Vulkan loader library.
    pub loader: Option<String>,
    /// `VK_DRIVER_FILES` (or `VK_ICD_FILENAMES`) as the user set it.
    pub named: Option<String>,
    /// The ICD files the loader reads, and those in a driver's own folder that it does not.
    pub icds: Vec<Icd>,
    /// libGLdispatch, where an NVIDIA GPU needs it.
    pub gldispatch: Option<GlDispatch>,
    /// libglvnd's other libraries (GLX, EGL, GL, OpenGL, GLES) that are on no library path, where
    /// an NVIDIA GPU needs them: its ICD loads without them, yet gives the Vulkan loader no
    /// `vkCreateInstance` (the H200 with only libvulkan1 and libglvnd0 installed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub glvnd_missing: Vec<&'static str>,
}

/// A variable harness sets for the processes it starts, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvFix {
    /// The variable.
    pub name: &'static str,
    /// Its value.
    pub value: String,
    /// Why, in words.
    pub why: String,
}

impl EnvFix {
    /// `NAME=value (why)`, for the report.
    pub fn describe(&self) -> String {
        format!("{}={} ({})", self.name, self.value, self.why)
    }
}

/// Where shared libraries live on Linux besides the linker's cache.
const LIB_DIRS: [&str; 6] = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/local/lib"];

/// Folders a driver installs into that are on no library path: NVIDIA's container toolkit and
/// Debian's alternatives.
const DRIVER_LIB_DIRS: [&str; 4] = ["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/x86_64-linux-gnu/nvidia/current", "/usr/lib64/nvidia"];

/// Folders holding a driver's own ICD file, which the Vulkan loader does not search (NVIDIA's
/// container layout: the H100 machine of docs/hardware has its ICD there).
const DRIVER_ICD_DIRS: [&str; 2] = ["/usr/local/nvidia/share/vulkan/icd.d", "/usr/local/nvidia/etc/vulkan/icd.d"];

impl GpuStack {
    /// Reads `m`.
    pub fn detect(m: &dyn Machine) -> GpuStack {
        let gpus = gpus(m);
        let lib_dirs = lib_dirs(m);
        let cache = m.ld_cache();
        let on_path = |name: &str| {
            lib_dirs.iter().map(|d| format!("{d}/{name}")).find(|p| m.exists(p)).or_else(|| cache.iter().find(|p| p.ends_with(&format!("/{name}"))).cloned())
        };
        let named = m.env("VK_DRIVER_FILES").or_else(|| m.env("VK_ICD_FILENAMES"));
        let json = |dir: &str| m.list(dir).into_iter().filter(|p| p.ends_with(".json")).collect::<Vec<_>>();
        let files: Vec<(String, bool)> = match &named {
            Some(list) => list.split(':').filter(|p| !p.is_empty()).map(|p| (p.to_string(), m.exists(p))).collect(),
            None => loader_icd_dirs(m)
                .iter()
                .flat_map(|d| json(d))
                .map(|p| (p, true))
                .chain(DRIVER_ICD_DIRS.iter().flat_map(|d| json(d)).map(|p| (p, false)))
                .collect(),
        };
        let mut icds: Vec<Icd> = Vec::new();
        for (path, visible) in files {
            if icds.iter().any(|i| i.path == path) {
                continue;
            }
            let library = m.read(&path).and_then(|t| icd_library(&t)).unwrap_or_default();
            let library_found = match library.contains('/') {
                true => m.exists(&library),
                false => !library.is_empty() && on_path(&library).is_some(),
            };
            let library_copy = (!library_found && !library.is_empty() && !library.contains('/')).then(|| driver_copy(m, &library)).flatten();
            let of_gpu = Vendor::of_library(&library).is_some_and(|v| gpus.iter().any(|g| g.vendor == v));
            let load_error = (of_gpu && library_found).then(|| m.load(&library).err()).flatten();
            icds.push(Icd { path, library, visible, library_found, library_copy, load_error });
        }
        let nvidia = gpus.iter().any(|g| g.vendor == Vendor::Nvidia);
        let gldispatch = nvidia.then(|| {
            let name = "libGLdispatch.so.0";
            let on_path = on_path(name);
            let copy = on_path.is_none().then(|| driver_copy(m, name)).flatten();
            GlDispatch { on_path, copy }
        });
        let glvnd_missing = match nvidia {
            true => GLVND.iter().copied().filter(|file| on_path(file).is_none()).collect(),
            false => Vec::new(),
        };
        GpuStack { gpus, loader: on_path("libvulkan.so.1"), named, icds, gldispatch, glvnd_missing }
    }

    /// Whether the machine has a hardware GPU with a kernel driver.
    pub fn has_gpu(&self) -> bool {
        !self.gpus.is_empty()
    }

    /// Whether one of its GPUs is NVIDIA's.
    pub fn has_nvidia(&self) -> bool {
        self.vendors().contains(&Vendor::Nvidia)
    }

    /// The makers of its GPUs, each once, in the order found: a machine of eight H100s has one
    /// Vulkan driver to find, not eight.
    pub fn vendors(&self) -> Vec<Vendor> {
        unique(self.gpus.iter().map(|g| g.vendor))
    }

    /// The ICD files of `vendor`'s GPUs.
    fn icds_of(&self, vendor: Vendor) -> impl Iterator<Item = &Icd> {
        self.icds.iter().filter(move |i| i.vendor() == Some(vendor))
    }

    /// The libraries the GPUs' Vulkan drivers need that are on no library path but have a copy
    /// in a driver's folder: the ICDs' own libraries and libGLdispatch.
    pub fn library_copies(&self) -> Vec<&str> {
        let icds = self.vendors().into_iter().flat_map(|v| self.icds_of(v)).filter_map(|i| i.library_copy.as_deref());
        unique(icds.chain(self.gldispatch.as_ref().and_then(|g| g.copy.as_deref())))
    }

    /// What harness sets for the driver and browser it starts (and itself) so the Vulkan loader
    /// finds this machine's GPU: `VK_DRIVER_FILES` when a GPU's ICD sits only in its driver's
    /// own folder, `LD_LIBRARY_PATH` when a library the driver needs (its ICD's, libGLdispatch)
    /// is on no library path but a copy is in a driver's folder. Nothing when the user set
    /// `VK_DRIVER_FILES` (theirs is kept) or nothing is missing.
    pub fn env_fixes(&self, m: &dyn Machine) -> Vec<EnvFix> {
        let mut fixes = Vec::new();
        if self.named.is_none() {
            let hidden: Vec<&Icd> = self
                .vendors()
                .into_iter()
                .filter(|&v| !self.icds_of(v).any(|i| i.visible))
                .flat_map(|v| self.icds_of(v).filter(|i| !i.visible))
                .collect();
            if !hidden.is_empty() {
                let files: Vec<&str> = hidden.iter().map(|i| i.path.as_str()).chain(self.icds.iter().filter(|i| i.visible).map(|i| i.path.as_str())).collect();
                fixes.push(EnvFix {
                    name: "VK_DRIVER_FILES",
                    value: files.join(":"),
                    why: format!("{} sits in the driver's own folder, which the Vulkan loader does not search", hidden.iter().map(|i| i.path.as_str()).collect::<Vec<_>>().join(", ")),
                });
            }
        }
        let copies = self.library_copies();
        if !copies.is_empty() {
            let mut dirs: Vec<&str> = copies.iter().map(|c| c.rsplit_once('/').map(|(d, _)| d).unwrap_or(c)).collect();
            dirs.dedup();
            let value = dirs.iter().map(|d| d.to_string()).chain(m.env("LD_LIBRARY_PATH")).collect::<Vec<_>>().join(":");
            fixes.push(EnvFix {
                name: "LD_LIBRARY_PATH",
                value,
                why: format!("the GPU's Vulkan driver needs {}, on no library path", copies.join(", ")),
            });
        }
        fixes
    }

    /// The links from the GPU to the Vulkan loader, in order, each with its state and fix;
    /// `fixes` are those harness applies.
    pub fn links(&self, fixes: &[EnvFix]) -> Vec<Link> {
        let mut links = Vec::new();
        links.push(match self.gpus.is_empty() {
            false => Link::ok("GPU driver", self.gpus.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("; ")),
            true => Link::broken(
                "GPU driver",
                "no hardware GPU: no NVIDIA driver (/proc/driver/nvidia) and no amdgpu, i915 or xe device under /sys/class/drm",
                "WebGPU on this machine runs on software adapters (SwiftShader, lavapipe, llvmpipe): enough to check that code runs, not to measure speed. Use a machine with a GPU and its driver",
            ),
        });
        links.push(match &self.loader {
            Some(p) => Link::ok("Vulkan loader", format!("found {p}")),
            None => Link::broken("Vulkan loader", "libvulkan.so.1 is on no library path", "`apt-get install libvulkan1`, or add its folder to LD_LIBRARY_PATH"),
        });
        for vendor in self.vendors() {
            links.push(self.icd_link(vendor, fixes));
        }
        if self.gpus.is_empty() {
            let visible: Vec<&str> = self.icds.iter().filter(|i| i.visible).map(|i| i.path.as_str()).collect();
            links.push(Link::info("Vulkan driver (ICD) files", if visible.is_empty() { "none".into() } else { visible.join(", ") }));
        }
        if let Some(g) = &self.gldispatch {
            let name = "libGLdispatch (NVIDIA's ICD needs it)";
            links.push(match (&g.on_path, &g.copy) {
                (Some(p), _) => Link::ok(name, format!("found {p}")),
                (None, Some(copy)) => Link::fixed(name, format!("on no library path; harness adds the folder of {copy} to LD_LIBRARY_PATH for the processes it starts")),
                (None, None) => Link::broken(
                    name,
                    "libGLdispatch.so.0 (libglvnd) is on no library path: NVIDIA's ICD then loads without vkCreateInstance and the GPU is not offered",
                    "`apt-get install libglvnd0`, or add the folder of a copy to LD_LIBRARY_PATH",
                ),
            });
            let name = "libglvnd's GLX, EGL, GL, OpenGL and GLES (NVIDIA's ICD needs them)";
            let package = |file: &'static str| DRIVER_NEEDS.iter().find(|(f, _)| *f == file).map_or(file, |(_, p)| *p);
            links.push(match self.glvnd_missing.as_slice() {
                [] => Link::ok(name, "all on the library path"),
                missing => Link::broken(
                    name,
                    format!("{} on no library path: NVIDIA's ICD then loads, yet gives the Vulkan loader no vkCreateInstance, and the GPU is not offered", missing.join(", ")),
                    format!("`apt-get install {}`", missing.iter().map(|f| package(f)).collect::<Vec<_>>().join(" ")),
                ),
            });
        }
        links
    }

    fn icd_link(&self, vendor: Vendor, fixes: &[EnvFix]) -> Link {
        let name = format!("Vulkan driver (ICD) for the {} GPU", vendor.name());
        let icds: Vec<&Icd> = self.icds_of(vendor).collect();
        if let Some(named) = &self.named {
            if !icds.iter().any(|i| i.visible) {
                return Link::broken(&name, format!("VK_DRIVER_FILES (or VK_ICD_FILENAMES) names {named}, and no {} driver file there exists", vendor.name()), "point VK_DRIVER_FILES at the driver's ICD json, or unset it and let harness find it");
            }
        }
        let Some(icd) = icds.iter().find(|i| i.visible).or(icds.first()) else {
            return Link::broken(&name, format!("no {} Vulkan driver file (ICD json) found", vendor.name()), vendor.icd_install());
        };
        let libs_fixed = fixes.iter().any(|f| f.name == "LD_LIBRARY_PATH");
        if let (false, Some(copy), true) = (icd.library_found, &icd.library_copy, libs_fixed) {
            return Link::fixed(&name, format!("{} names {}, on no library path; harness adds the folder of {copy} to LD_LIBRARY_PATH for the processes it starts", icd.path, icd.library));
        }
        if !icd.library_found {
            return Link::broken(
                &name,
                format!("{} names {}, which is on no library path", icd.path, icd.library),
                "install the driver's user-space libraries, or add their folder to LD_LIBRARY_PATH",
            );
        }
        if let Some(error) = &icd.load_error {
            return Link::broken(&name, format!("{} names {}, which does not load: {error}", icd.path, icd.library), driver_fix(Some(vendor), error));
        }
        match icd.visible {
            true => Link::ok(&name, format!("{} ({})", icd.path, icd.library)),
            false if fixes.iter().any(|f| f.name == "VK_DRIVER_FILES") => Link::fixed(
                &name,
                format!("{} sits in the driver's own folder, which the Vulkan loader does not search; harness sets VK_DRIVER_FILES for the processes it starts", icd.path),
            ),
            false => Link::broken(&name, format!("{} is not where the Vulkan loader looks", icd.path), format!("VK_DRIVER_FILES={}", icd.path)),
        }
    }
}

/// One link of the chain from the GPU to a browser's adapter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// What it is.
    pub name: String,
    /// Whether it holds.
    pub state: LinkState,
    /// What was found.
    pub finding: String,
    /// How to mend it, where it is broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// Whether a link holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    /// It holds.
    Ok,
    /// It was broken and harness mends it for the processes it starts.
    Fixed,
    /// It is broken: what follows it cannot reach the GPU.
    Broken,
    /// Said for information; neither holds nor breaks anything.
    Info,
}

impl Link {
    /// A link that holds.
    pub fn ok(name: &str, finding: impl Into<String>) -> Link {
        Link { name: name.into(), state: LinkState::Ok, finding: finding.into(), fix: None }
    }
    /// A link harness mends.
    pub fn fixed(name: &str, finding: impl Into<String>) -> Link {
        Link { name: name.into(), state: LinkState::Fixed, finding: finding.into(), fix: None }
    }
    /// A broken link with its fix.
    pub fn broken(name: &str, finding: impl Into<String>, fix: impl Into<String>) -> Link {
        Link { name: name.into(), state: LinkState::Broken, finding: finding.into(), fix: Some(fix.into()) }
    }
    /// A finding only.
    pub fn info(name: &str, finding: impl Into<String>) -> Link {
        Link { name: name.into(), state: LinkState::Info, finding: finding.into(), fix: None }
    }
}

/// libglvnd's libraries besides libGLdispatch, which NVIDIA's ICD needs together with it.
const GLVND: [&str; 5] = ["libGLX.so.0", "libEGL.so.1", "libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2"];

/// The Debian packages of the libraries a GPU's Vulkan driver links, by file name: NVIDIA's ICD
/// is its OpenGL library (libGLX_nvidia), which needs libglvnd's dispatch libraries.
const DRIVER_NEEDS: [(&str, &str); 8] = [
    ("libGLX.so.0", "libglx0"),
    ("libGLdispatch.so.0", "libglvnd0"),
    ("libEGL.so.1", "libegl1"),
    ("libGL.so.1", "libgl1"),
    ("libOpenGL.so.0", "libopengl0"),
    ("libGLESv2.so.2", "libgles2"),
    ("libX11.so.6", "libx11-6"),
    ("libXext.so.6", "libxext6"),
];

/// How to mend a GPU's driver that the linker (or the Vulkan loader) could not load, from what
/// it `said`: the package of the library it names as missing, where it is one of
/// [`DRIVER_NEEDS`]; for NVIDIA's, libglvnd's whole set, which its ICD needs together.
pub fn driver_fix(vendor: Option<Vendor>, said: &str) -> String {
    let missing = |file: &str| said.split(|c: char| c.is_whitespace() || c == ':' || c == '\'' || c == '"' || c == '/').any(|w| w == file);
    let package = DRIVER_NEEDS.iter().find(|(file, _)| missing(file)).map(|(file, package)| format!("`apt-get install {package}` ({file})"));
    let glvnd = (vendor == Some(Vendor::Nvidia)).then_some("NVIDIA's ICD needs libglvnd's libraries together: `apt-get install libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2`");
    match (package, glvnd) {
        (Some(p), Some(g)) => format!("{p}; {g}"),
        (Some(p), None) => p,
        (None, Some(g)) => format!("install what the linker names as missing; {g}"),
        (None, None) => "install what the linker names as missing, or add its folder to LD_LIBRARY_PATH".into(),
    }
}

/// `name` in a driver's folder that is on no library path, where it is there.
fn driver_copy(m: &dyn Machine, name: &str) -> Option<String> {
    DRIVER_LIB_DIRS.iter().map(|d| format!("{d}/{name}")).find(|p| m.exists(p))
}

/// The hardware GPUs of `m`: NVIDIA's from its driver's /proc files, AMD's and Intel's from the
/// DRM devices with their kernel drivers (display-only chips such as a server's ASPEED are not
/// counted: they have no compute).
fn gpus(m: &dyn Machine) -> Vec<HostGpu> {
    let mut gpus = Vec::new();
    if let Some(version) = m.read("/proc/driver/nvidia/version") {
        // "… Kernel Module  580.159.04 …", or "… Open Kernel Module for x86_64  580.159.04 …".
        let driver = version
            .split_whitespace()
            .skip_while(|w| *w != "Module")
            .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or("")
            .to_string();
        let models: Vec<String> = m
            .list("/proc/driver/nvidia/gpus")
            .iter()
            .filter_map(|d| m.read(&format!("{d}/information")))
            .filter_map(|info| info.lines().find_map(|l| l.strip_prefix("Model:")).map(|v| v.trim().to_string()))
            .collect();
        let models = if models.is_empty() { vec!["NVIDIA GPU".to_string()] } else { models };
        for model in models {
            gpus.push(HostGpu { vendor: Vendor::Nvidia, name: format!("{model} (nvidia {driver})").replace(" )", ")") });
        }
    } else if m.exists("/dev/nvidiactl") {
        // A container may show NVIDIA's device files without its /proc files.
        gpus.push(HostGpu { vendor: Vendor::Nvidia, name: "NVIDIA GPU (/dev/nvidiactl)".into() });
    }
    for card in m.list("/sys/class/drm") {
        let is_card = card.rsplit('/').next().and_then(|n| n.strip_prefix("card")).is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        let Some(uevent) = is_card.then(|| m.read(&format!("{card}/device/uevent"))).flatten() else { continue };
        let field = |k: &str| uevent.lines().find_map(|l| l.strip_prefix(k)).unwrap_or("").to_string();
        let vendor = match field("DRIVER=").as_str() {
            "amdgpu" => Vendor::Amd,
            "i915" | "xe" => Vendor::Intel,
            _ => continue,
        };
        gpus.push(HostGpu { vendor, name: format!("{} GPU ({}, PCI {})", vendor.name(), field("DRIVER="), field("PCI_ID=")) });
    }
    gpus
}

/// The folders the dynamic linker searches: `LD_LIBRARY_PATH`, then the usual ones.
fn lib_dirs(m: &dyn Machine) -> Vec<String> {
    let user = m.env("LD_LIBRARY_PATH").unwrap_or_default();
    user.split(':').filter(|d| !d.is_empty()).map(str::to_string).chain(LIB_DIRS.iter().map(|d| d.to_string())).collect()
}

/// The folders the Vulkan loader reads ICD files from on Linux, as the loader's documentation
/// lists them (XDG config and data folders, and /etc).
fn loader_icd_dirs(m: &dyn Machine) -> Vec<String> {
    let config = m.env("XDG_CONFIG_DIRS").unwrap_or_else(|| "/etc/xdg".into());
    let home = m.env("XDG_DATA_HOME").or_else(|| m.env("HOME").map(|h| format!("{h}/.local/share")));
    let data = m.env("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    let mut dirs: Vec<String> = config.split(':').map(str::to_string).collect();
    dirs.push("/etc".into());
    dirs.extend(home);
    dirs.extend(data.split(':').map(str::to_string));
    dirs.into_iter().filter(|d| !d.is_empty()).map(|d| format!("{d}/vulkan/icd.d")).collect()
}

/// An ICD file's `ICD.library_path`.
fn icd_library(text: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    json["ICD"]["library_path"].as_str().map(str::to_string)
}

/// `items` each once, in the order first met (several GPUs of one maker share one driver).
fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// This machine's stack and the fixes harness applied to itself, read once.
static APPLIED: OnceLock<(GpuStack, Vec<EnvFix>)> = OnceLock::new();

/// Reads this machine's GPU stack and applies its [`GpuStack::env_fixes`] to this process, so
/// the driver and browser it starts (and its own native wgpu) inherit them; says so on stderr.
/// Must run before any other thread starts: it changes the environment.
pub fn prepare_this_process() {
    read(true);
}

/// This machine's stack and the fixes applied, read on the first call: with `apply`, the fixes
/// are applied to this process; without, the stack is only read, and nothing is applied later
/// either (the environment may change only before other threads exist).
fn read(apply: bool) -> &'static (GpuStack, Vec<EnvFix>) {
    APPLIED.get_or_init(|| {
        if !cfg!(target_os = "linux") {
            return (GpuStack::default(), Vec::new());
        }
        let stack = GpuStack::detect(&ThisMachine);
        if !apply {
            return (stack, Vec::new());
        }
        let fixes = stack.env_fixes(&ThisMachine);
        for fix in &fixes {
            eprintln!("harness: {}={} for the processes it starts: {}", fix.name, fix.value, fix.why);
            // SAFETY: called from `main` before the runtime or any other thread exists.
            unsafe { std::env::set_var(fix.name, &fix.value) };
        }
        // libGLdispatch, last in the list, before the ICD that needs it.
        for copy in stack.library_copies().into_iter().rev() {
            preload(copy);
        }
        (stack, fixes)
    })
}

/// Loads `library` into this process, so that a later load of it by name (the Vulkan loader
/// opening NVIDIA's ICD for this process's native wgpu, the ICD needing libGLdispatch) finds it:
/// the linker reads `LD_LIBRARY_PATH` only at start.
#[cfg(unix)]
fn preload(library: &str) {
    let Ok(path) = std::ffi::CString::new(library) else { return };
    // SAFETY: dlopen with a valid C string; the handle is kept for the process's life.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        tracing::warn!("could not load {library}");
    }
}

#[cfg(not(unix))]
fn preload(_library: &str) {}

/// This machine's GPU stack, as read by [`prepare_this_process`] (read now, changing nothing,
/// if it did not run).
pub fn this_machine() -> &'static GpuStack {
    &read(false).0
}

/// The environment harness set for the processes it starts (none where
/// [`prepare_this_process`] did not run).
pub fn applied_fixes() -> &'static [EnvFix] {
    &read(false).1
}

/// [`applied_fixes`] as `NAME=value (why)`, for the report.
pub fn applied_environment() -> Vec<String> {
    applied_fixes().iter().map(EnvFix::describe).collect()
}

#[cfg(test)]
pub(crate) mod tests;
