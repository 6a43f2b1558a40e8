use super::*;
use std::collections::BTreeMap;

/// A machine described in a test: files with their text, environment variables, the linker's
/// cache.
#[derive(Default, Clone)]
pub struct FakeMachine {
    files: BTreeMap<String, String>,
    env: BTreeMap<String, String>,
    cache: Vec<String>,
    /// What the linker says when a library of this name is loaded.
    load_errors: BTreeMap<String, String>,
}

impl FakeMachine {
    pub fn file(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.into(), text.into());
        self
    }
    pub fn without(mut self, path: &str) -> Self {
        self.files.remove(path);
        self
    }
    fn env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }
    pub fn failing_load(mut self, library: &str, error: &str) -> Self {
        self.load_errors.insert(library.into(), error.into());
        self
    }
}

impl Machine for FakeMachine {
    fn exists(&self, path: &str) -> bool {
        self.files.keys().any(|f| f == path || f.starts_with(&format!("{path}/")))
    }
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
    fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }
    fn list(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{dir}/");
        let mut out: Vec<String> = self
            .files
            .keys()
            .filter_map(|f| f.strip_prefix(&prefix).map(|rest| format!("{prefix}{}", rest.split('/').next().unwrap_or(""))))
            .collect();
        out.dedup();
        out
    }
    fn ld_cache(&self) -> Vec<String> {
        self.cache.clone()
    }
    fn load(&self, library: &str) -> Result<(), String> {
        self.load_errors.get(library).map_or(Ok(()), |e| Err(e.clone()))
    }
}

const NVIDIA_ICD: &str = r#"{"file_format_version": "1.0.1", "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.4.312"}}"#;
const LVP_ICD: &str = r#"{"ICD": {"library_path": "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"}}"#;

/// A machine like this one: no GPU, Mesa's software Vulkan driver.
pub fn software_only() -> FakeMachine {
    FakeMachine::default()
        .file("/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "")
        .file("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", LVP_ICD)
        .file("/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", "")
}

/// A machine like the H100 one of docs/hardware: NVIDIA's driver, its ICD in the driver's own
/// folder, libGLdispatch only in the driver's library folder.
pub fn h100() -> FakeMachine {
    FakeMachine::default()
        .file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build\n")
        .file("/proc/driver/nvidia/gpus/0000:1b:00.0/information", "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ: 100\n")
        .file("/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "")
        .file("/usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0", "")
        .file("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json", NVIDIA_ICD)
        .file("/usr/local/nvidia/lib64/libGLdispatch.so.0", "")
        .file("/usr/lib/x86_64-linux-gnu/libGLX.so.0", "")
        .file("/usr/lib/x86_64-linux-gnu/libEGL.so.1", "")
        .file("/usr/lib/x86_64-linux-gnu/libGL.so.1", "")
        .file("/usr/lib/x86_64-linux-gnu/libOpenGL.so.0", "")
        .file("/usr/lib/x86_64-linux-gnu/libGLESv2.so.2", "")
}

/// [`h100`] with only libvulkan1 and libglvnd0 of the desktop's libraries: libglvnd's GLX, EGL,
/// GL, OpenGL and GLES libraries gone, libGLdispatch where the loader finds it.
pub fn h200_two_packages() -> FakeMachine {
    ["libGLX.so.0", "libEGL.so.1", "libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2"]
        .iter()
        .fold(h100(), |m, file| m.without(&format!("/usr/lib/x86_64-linux-gnu/{file}")))
        .without("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json")
        .file("/usr/share/vulkan/icd.d/nvidia_icd.json", NVIDIA_ICD)
        .file("/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0", "")
}

fn state(links: &[Link], name: &str) -> (LinkState, String) {
    let l = links.iter().find(|l| l.name.starts_with(name)).unwrap_or_else(|| panic!("no link {name}: {links:?}"));
    (l.state, format!("{} {}", l.finding, l.fix.clone().unwrap_or_default()))
}

#[test]
fn a_software_only_machine_has_no_gpu_and_gets_no_fixes() {
    let m = software_only();
    let stack = GpuStack::detect(&m);
    assert!(!stack.has_gpu());
    assert!(stack.env_fixes(&m).is_empty(), "nothing changes without a GPU");
    let links = stack.links(&[]);
    assert_eq!(links[0].state, LinkState::Broken, "{links:?}");
    assert!(links[0].finding.contains("no hardware GPU"), "{links:?}");
    assert_eq!(state(&links, "Vulkan loader").0, LinkState::Ok);
    assert!(state(&links, "Vulkan driver").1.contains("lvp_icd"), "{links:?}");
}

#[test]
fn the_h100s_hidden_icd_and_library_are_found_and_fixed_for_harnesss_processes() {
    let m = h100();
    let stack = GpuStack::detect(&m);
    assert_eq!(stack.gpus, [HostGpu { vendor: Vendor::Nvidia, name: "NVIDIA H100 80GB HBM3 (nvidia 580.159.04)".into() }]);
    let fixes = stack.env_fixes(&m);
    let names: Vec<&str> = fixes.iter().map(|f| f.name).collect();
    assert_eq!(names, ["VK_DRIVER_FILES", "LD_LIBRARY_PATH"]);
    assert_eq!(fixes[0].value, "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json");
    assert_eq!(fixes[1].value, "/usr/local/nvidia/lib64");
    let links = stack.links(&fixes);
    assert_eq!(state(&links, "GPU driver").0, LinkState::Ok);
    assert_eq!(state(&links, "Vulkan driver").0, LinkState::Fixed, "{links:?}");
    assert_eq!(state(&links, "libGLdispatch").0, LinkState::Fixed, "{links:?}");
    // The user's library path is kept after the added folder.
    let fixes = stack.env_fixes(&m.clone().env("LD_LIBRARY_PATH", "/opt/mine"));
    assert_eq!(fixes[1].value, "/usr/local/nvidia/lib64:/opt/mine");
}

#[test]
fn an_icd_library_only_in_the_drivers_folder_is_added_to_the_library_path() {
    let m = h100().without("/usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0").file("/usr/local/nvidia/lib64/libGLX_nvidia.so.0", "");
    let stack = GpuStack::detect(&m);
    assert_eq!(stack.library_copies(), ["/usr/local/nvidia/lib64/libGLX_nvidia.so.0", "/usr/local/nvidia/lib64/libGLdispatch.so.0"]);
    let fixes = stack.env_fixes(&m);
    let path = fixes.iter().find(|f| f.name == "LD_LIBRARY_PATH").unwrap();
    assert_eq!(path.value, "/usr/local/nvidia/lib64", "one folder, once");
    assert_eq!(state(&stack.links(&fixes), "Vulkan driver").0, LinkState::Fixed);
    // Only NVIDIA's device files, as some containers show: still a GPU.
    let m = FakeMachine::default().file("/dev/nvidiactl", "");
    assert_eq!(GpuStack::detect(&m).gpus[0].vendor, Vendor::Nvidia);
}

#[test]
fn the_open_kernel_modules_version_line_is_read_too() {
    // As the H100 machine's /proc/driver/nvidia/version reads (docs/hardware/h100-chrome/).
    let m = h100().file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n");
    assert_eq!(GpuStack::detect(&m).gpus[0].name, "NVIDIA H100 80GB HBM3 (nvidia 580.159.04)");
}

#[test]
fn eight_gpus_of_one_maker_have_one_driver_to_find() {
    let mut m = h100();
    for i in 0x20..0x27 {
        m = m.file(&format!("/proc/driver/nvidia/gpus/0000:{i:x}:00.0/information"), "Model: \t\t NVIDIA H100 80GB HBM3\n");
    }
    let m = m.without("/usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0").file("/usr/local/nvidia/lib64/libGLX_nvidia.so.0", "");
    let stack = GpuStack::detect(&m);
    assert_eq!(stack.gpus.len(), 8);
    let fixes = stack.env_fixes(&m);
    assert_eq!(fixes[0].value, "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json", "the ICD once");
    assert_eq!(stack.library_copies(), ["/usr/local/nvidia/lib64/libGLX_nvidia.so.0", "/usr/local/nvidia/lib64/libGLdispatch.so.0"]);
    assert_eq!(stack.links(&fixes).iter().filter(|l| l.name.starts_with("Vulkan driver")).count(), 1, "one ICD link");
    assert!(stack.has_nvidia());
}

#[test]
fn a_gpu_without_an_icd_names_the_driver_package() {
    let m = h100().without("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json");
    let stack = GpuStack::detect(&m);
    assert!(stack.env_fixes(&m).iter().all(|f| f.name != "VK_DRIVER_FILES"));
    let (s, text) = state(&stack.links(&stack.env_fixes(&m)), "Vulkan driver");
    assert_eq!(s, LinkState::Broken);
    assert!(text.contains("no NVIDIA Vulkan driver file") && text.contains("nvidia-vulkan-icd"), "{text}");
}

#[test]
fn an_icd_whose_library_is_missing_is_broken_and_not_papered_over() {
    let m = h100().without("/usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0");
    let stack = GpuStack::detect(&m);
    let (s, text) = state(&stack.links(&stack.env_fixes(&m)), "Vulkan driver");
    assert_eq!(s, LinkState::Broken);
    assert!(text.contains("libGLX_nvidia.so.0, which is on no library path"), "{text}");
}

/// The H200 of docs/hardware with only libvulkan1 and libglvnd0 installed (h200-phases.md): every
/// file is where the loader looks and NVIDIA's ICD loads, yet the loader gets no vkCreateInstance
/// from it and wgpu finds no adapter, until libglvnd's other libraries are there. Their link names
/// the missing ones and their packages; with them there, it holds.
#[test]
fn libglvnds_missing_libraries_are_named_with_their_packages_on_an_nvidia_machine() {
    let m = h200_two_packages();
    let stack = GpuStack::detect(&m);
    let links = stack.links(&stack.env_fixes(&m));
    assert_eq!(state(&links, "Vulkan driver").0, LinkState::Ok, "the ICD itself loads");
    let (s, text) = state(&links, "libglvnd's");
    assert_eq!(s, LinkState::Broken);
    assert!(text.contains("libGLX.so.0, libEGL.so.1, libGL.so.1, libOpenGL.so.0, libGLESv2.so.2 on no library path"), "{text}");
    assert!(text.contains("`apt-get install libglx0 libegl1 libgl1 libopengl0 libgles2`"), "{text}");
    let mut m = m;
    for file in ["libGLX.so.0", "libEGL.so.1", "libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2"] {
        m = m.file(&format!("/usr/lib/x86_64-linux-gnu/{file}"), "");
    }
    assert_eq!(state(&GpuStack::detect(&m).links(&[]), "libglvnd's").0, LinkState::Ok);
    // No NVIDIA GPU, no such link.
    assert!(software_only_links().iter().all(|l| !l.name.starts_with("libglvnd's")));
}

fn software_only_links() -> Vec<Link> {
    GpuStack::detect(&software_only()).links(&[])
}

/// A GPU driver whose library does not load (as the Vulkan loader opens it) is broken, with the
/// linker's words and the package of the library it misses.
#[test]
fn an_icd_that_is_found_but_does_not_load_names_the_missing_library_and_its_package() {
    let missing = "libGLX.so.0: cannot open shared object file: No such file or directory";
    let m = h100()
        .without("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json")
        .file("/usr/share/vulkan/icd.d/nvidia_icd.json", NVIDIA_ICD)
        .file("/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0", "")
        .failing_load("libGLX_nvidia.so.0", missing);
    let stack = GpuStack::detect(&m);
    assert_eq!(stack.icds[0].load_error.as_deref(), Some(missing));
    let links = stack.links(&stack.env_fixes(&m));
    let (s, text) = state(&links, "Vulkan driver");
    assert_eq!(s, LinkState::Broken, "{text}");
    assert!(text.contains("libGLX_nvidia.so.0, which does not load: libGLX.so.0: cannot open shared object file"), "{text}");
    assert!(text.contains("`apt-get install libglx0` (libGLX.so.0)") && text.contains("libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2"), "{text}");
    assert_eq!(state(&links, "libGLdispatch").0, LinkState::Ok, "libGLdispatch itself is there");
    // Software drivers are not loaded: only the GPU's is asked about.
    let m = software_only().failing_load("/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", "not asked");
    assert!(GpuStack::detect(&m).icds.iter().all(|i| i.load_error.is_none()));
}

/// This machine's linker, asked as the Vulkan loader asks: a library that is there loads, one
/// that is not is named in the linker's own words.
#[cfg(target_os = "linux")]
#[test]
fn this_machines_linker_loads_what_is_there_and_names_what_is_not() {
    assert_eq!(ThisMachine.load("libc.so.6"), Ok(()));
    let err = ThisMachine.load("libharness-not-a-library.so.0").unwrap_err();
    assert!(err.contains("libharness-not-a-library.so.0"), "{err}");
}

#[test]
fn missing_libgldispatch_without_a_copy_names_libglvnd() {
    let m = h100().without("/usr/local/nvidia/lib64/libGLdispatch.so.0");
    let stack = GpuStack::detect(&m);
    assert!(stack.env_fixes(&m).iter().all(|f| f.name != "LD_LIBRARY_PATH"));
    let (s, text) = state(&stack.links(&[]), "libGLdispatch");
    assert_eq!(s, LinkState::Broken);
    assert!(text.contains("libglvnd0"), "{text}");
    // Found through the linker's cache, it holds.
    let mut m = m;
    m.cache.push("/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0".into());
    assert_eq!(state(&GpuStack::detect(&m).links(&[]), "libGLdispatch").0, LinkState::Ok);
}

#[test]
fn a_visible_icd_needs_no_fix_and_the_users_vk_driver_files_is_kept() {
    let m = h100()
        .without("/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json")
        .file("/usr/share/vulkan/icd.d/nvidia_icd.json", NVIDIA_ICD)
        .file("/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0", "");
    let stack = GpuStack::detect(&m);
    assert!(stack.env_fixes(&m).is_empty());
    assert_eq!(state(&stack.links(&[]), "Vulkan driver").0, LinkState::Ok);
    // The user's own VK_DRIVER_FILES wins, and one naming nothing there is broken.
    let m = h100().env("VK_DRIVER_FILES", "/nope/icd.json");
    let stack = GpuStack::detect(&m);
    assert!(stack.env_fixes(&m).iter().all(|f| f.name != "VK_DRIVER_FILES"));
    let (s, text) = state(&stack.links(&[]), "Vulkan driver");
    assert_eq!(s, LinkState::Broken);
    assert!(text.contains("names /nope/icd.json"), "{text}");
}

#[test]
fn display_only_and_virtual_drm_devices_are_no_gpu_but_amd_is() {
    let m = software_only()
        .file("/sys/class/drm/card0/device/uevent", "DRIVER=ast\nPCI_ID=1A03:2000\n")
        .file("/sys/class/drm/card0-VGA-1/status", "connected")
        .file("/sys/class/drm/card1/device/uevent", "DRIVER=virtio-pci\n");
    assert!(!GpuStack::detect(&m).has_gpu());
    let m = m.file("/sys/class/drm/card2/device/uevent", "DRIVER=amdgpu\nPCI_ID=1002:744C\n");
    let stack = GpuStack::detect(&m);
    assert_eq!(stack.gpus.len(), 1);
    assert_eq!(stack.gpus[0].name, "AMD GPU (amdgpu, PCI 1002:744C)");
    // Mesa's radeon ICD, visible, holds; lavapipe beside it is not the GPU's.
    let m = m.file("/usr/share/vulkan/icd.d/radeon_icd.x86_64.json", r#"{"ICD": {"library_path": "libvulkan_radeon.so"}}"#).file("/usr/lib/x86_64-linux-gnu/libvulkan_radeon.so", "");
    assert_eq!(state(&GpuStack::detect(&m).links(&[]), "Vulkan driver (ICD) for the AMD").0, LinkState::Ok);
}
