//! The page's side of the harness HTTP API: the catalogue's page and a user's bench both speak
//! it.

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, Response};

/// The harness server the page came from, with the run's token.
pub struct Api {
    token: String,
}

impl Api {
    /// The API of the run identified by `token`.
    pub fn new(token: String) -> Self {
        Api { token }
    }

    fn url(&self, path: &str) -> String {
        format!("/api/{path}?token={}", self.token)
    }

    async fn fetch(&self, request: Request) -> Result<Response, JsValue> {
        let window = web_sys::window().ok_or("no window")?;
        let response: Response = JsFuture::from(window.fetch_with_request(&request)).await?.dyn_into()?;
        if !response.ok() {
            return Err(JsValue::from_str(&format!("{} answered HTTP {}", request.url(), response.status())));
        }
        Ok(response)
    }

    /// GETs `/api/{path}` and parses the JSON answer.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, JsValue> {
        let request = Request::new_with_str(&self.url(path))?;
        let response = self.fetch(request).await?;
        let text = JsFuture::from(response.text()?).await?;
        let text = text.as_string().ok_or("response body is not text")?;
        serde_json::from_str(&text).map_err(|e| JsValue::from_str(&format!("bad JSON from /api/{path}: {e}")))
    }

    /// GETs `/api/{path}` (which may carry its own query) as bytes.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, JsValue> {
        Ok(self.get_array(path).await?.to_vec())
    }

    /// GETs `/api/{path}` as bytes left in JavaScript's memory: a model handed to another engine
    /// need not pass through the page's WASM memory.
    pub async fn get_array(&self, path: &str) -> Result<js_sys::Uint8Array, JsValue> {
        let url = match path.split_once('?') {
            Some((p, q)) => format!("{}&{q}", self.url(p)),
            None => self.url(path),
        };
        let response = self.fetch(Request::new_with_str(&url)?).await?;
        let buffer = JsFuture::from(response.array_buffer()?).await?;
        Ok(js_sys::Uint8Array::new(&buffer))
    }

    /// POSTs `body` as JSON to `/api/{path}`.
    pub async fn post<T: Serialize>(&self, path: &str, body: &T) -> Result<(), JsValue> {
        let json = serde_json::to_string(body).map_err(|e| JsValue::from_str(&e.to_string()))?;
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_body(&JsValue::from_str(&json));
        let request = Request::new_with_str_and_init(&self.url(path), &init)?;
        request.headers().set("content-type", "application/json")?;
        self.fetch(request).await.map(drop)
    }
}

/// The harness's clock probe, asked over HTTP: whether the GPU clock has settled.
pub struct ServerClock<'a>(pub &'a Api);

impl crate::sampling::ClockGate for ServerClock<'_> {
    async fn steady(&mut self) -> Option<bool> {
        #[derive(serde::Deserialize)]
        struct Answer {
            steady: Option<bool>,
        }
        self.0.get::<Answer>("clock").await.ok().and_then(|a| a.steady)
    }
}

/// Where a page's case loop sends its events: progress to `progress` (the page's script, which
/// forwards it over the WebSocket) as JSON, the rest POSTed to harness. The adapter is the page
/// script's to report (it asked for it), so only an adapter that could not be had is sent, as the
/// failure that stops the page.
pub struct PageSink<'a> {
    /// The harness server the page came from.
    pub api: &'a Api,
    /// The page script's progress callback.
    pub progress: &'a js_sys::Function,
}

impl crate::case_loop::Sink for PageSink<'_> {
    type Error = JsValue;

    fn progress(&self, event: crate::wire::Progress) {
        if let Ok(json) = serde_json::to_string(&event) {
            let _ = self.progress.call1(&JsValue::NULL, &JsValue::from_str(&json));
        }
    }

    async fn send(&mut self, event: crate::wire::PageEvent) -> Result<(), JsValue> {
        use crate::wire::PageEvent;
        match event {
            PageEvent::Adapter(adapter) if !adapter.available => Err(js_sys::Error::new(&adapter.reason.unwrap_or_default()).into()),
            PageEvent::Adapter(_) | PageEvent::Done => Ok(()),
            PageEvent::Progress(progress) => {
                crate::case_loop::Sink::progress(self, progress);
                Ok(())
            }
            PageEvent::Latency(latency) => self.api.post("latency", &latency).await,
            PageEvent::Result(measurement) => self.api.post("result", &measurement).await,
            PageEvent::Error(error) => self.api.post("error", &error).await,
        }
    }

    fn latency_unmeasured(&mut self, error: crate::gpu::GpuError) -> Result<(), JsValue> {
        Err(js_sys::Error::new(&error.to_string()).into())
    }
}
