//! Harness's own batches timed by the page's GPU timer (`page/static/gpu-timer.js`) instead of
//! harness's own timestamps (`--gpu-timer page`): each batch's submit in a window of the timer.
//! Natively there is no page: `measure_work` keeps harness's own timestamps there, and these
//! functions answer with an error.

use super::error::GpuError;
use crate::gpu_timer::WindowTimes;

#[cfg(target_arch = "wasm32")]
mod js {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// Opens a window: the command buffers submitted until `closePacked` are its work.
        #[wasm_bindgen(catch, js_namespace = harnessGpuTimer, js_name = open)]
        pub fn open() -> Result<(), JsValue>;
        /// Closes the window; resolves to its packed times once its work is done.
        #[wasm_bindgen(catch, js_namespace = harnessGpuTimer, js_name = closePacked)]
        pub fn close_packed() -> Result<js_sys::Promise, JsValue>;
        /// Turns the timer's timestamps on or off for the passes recorded from now on.
        #[wasm_bindgen(catch, js_namespace = harnessGpuTimer, js_name = enable)]
        pub fn enable(on: bool) -> Result<(), JsValue>;
    }
}

/// A closed window whose times are read once its work is done.
#[cfg(target_arch = "wasm32")]
pub struct Window(wasm_bindgen_futures::JsFuture);

/// A closed window: none natively.
#[cfg(not(target_arch = "wasm32"))]
pub enum Window {}

#[cfg(target_arch = "wasm32")]
fn timer_error(what: &str, e: impl std::fmt::Debug) -> GpuError {
    GpuError::Wait(format!("the page's GPU timer (static/gpu-timer.js) could not {what}: {e:?}"))
}

/// Turns the page's timer on or off: passes recorded while it is on get its timestamps.
pub fn enable(on: bool) -> Result<(), GpuError> {
    #[cfg(target_arch = "wasm32")]
    return js::enable(on).map_err(|e| timer_error("be turned on", e));
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = on;
        Err(GpuError::Wait("the page's GPU timer runs in a browser only".into()))
    }
}

/// Opens a window of the page's timer: what is submitted until [`close`] is its work.
pub fn open() -> Result<(), GpuError> {
    #[cfg(target_arch = "wasm32")]
    return js::open().map_err(|e| timer_error("open a window", e));
    #[cfg(not(target_arch = "wasm32"))]
    Err(GpuError::Wait("the page's GPU timer runs in a browser only".into()))
}

/// Closes the window [`open`] opened.
pub fn close() -> Result<Window, GpuError> {
    #[cfg(target_arch = "wasm32")]
    return js::close_packed().map(|p| Window(wasm_bindgen_futures::JsFuture::from(p))).map_err(|e| timer_error("close its window", e));
    #[cfg(not(target_arch = "wasm32"))]
    Err(GpuError::Wait("the page's GPU timer runs in a browser only".into()))
}

/// Runs `submit` in a window of the page's timer and returns the window.
pub fn around<T>(submit: impl FnOnce() -> T) -> Result<(T, Window), GpuError> {
    open()?;
    let out = submit();
    Ok((out, close()?))
}

impl Window {
    /// The window's times, once its work is done.
    pub async fn times(self) -> Result<WindowTimes, GpuError> {
        #[cfg(target_arch = "wasm32")]
        {
            let packed = self.0.await.map_err(|e| timer_error("read its window", e))?;
            WindowTimes::unpack(&js_sys::Float64Array::new(&packed).to_vec()).ok_or_else(|| timer_error("read its window", "too few times"))
        }
        #[cfg(not(target_arch = "wasm32"))]
        match self {}
    }
}
