//! The page protocol's case loop, once: announce each case, measure it, stamp when it was sent,
//! send its result or its error, then say the plan is done. The catalogue's page, a bench target's
//! page, the bench binary and harness's in-process native worker differ only in where the events
//! go (a [`Sink`]) and in how a case is measured (a closure).

use crate::sampling::now_ms;
use crate::wire::{CaseMeasurement, PageError, PageEvent, Progress};
use crate::CaseSpec;
use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::Poll;

/// Where a case loop's events go: progress at once and synchronously (a page's callback to its
/// WebSocket, a channel, a line on stdout), everything else through an async send (an HTTP POST
/// from a page), whose error stops the loop.
pub trait Sink {
    /// Why an event could not be sent, which ends the loop (a page's failed POST).
    type Error;

    /// Sends a progress event; one that cannot be sent is dropped (progress is only for display).
    fn progress(&self, event: Progress);

    /// Sends an adapter report, the completion latency, a case's result or error, or the end of the
    /// plan.
    fn send(&mut self, event: PageEvent) -> impl Future<Output = Result<(), Self::Error>>;

    /// What became of a completion latency that could not be measured: an error ends the run (a
    /// page, which harness then reports failed), `Ok` goes on without it (natively, where a
    /// missing latency only sizes batches less well).
    #[cfg(feature = "gpu")]
    fn latency_unmeasured(&mut self, error: crate::gpu::GpuError) -> Result<(), Self::Error>;

    /// The message a case that panicked fails with, from the panic's payload.
    fn panic_message(&self, payload: Box<dyn Any + Send>) -> String {
        panic_message(payload.as_ref())
    }
}

/// Why a case ended without a measurement.
#[derive(Debug)]
pub enum Failure<E> {
    /// The case failed: reported as its error, and the loop goes on with the next.
    Case(PageError),
    /// The page cannot go on (a deliberate exception from a self-test): the loop ends with it.
    Stop(E),
}

impl<E> From<PageError> for Failure<E> {
    fn from(error: PageError) -> Self {
        Failure::Case(error)
    }
}

/// Measures `cases` in order with `measure`, which is given the case and a callback for each
/// finished sample, and sends each case's events to `sink`: `CaseStarted`, its `SampleDone`s, then
/// its result (with `sent_ms` stamped) or its error, and `Done` after the last. A case that panics
/// fails with the panic's message where panics unwind (natively; in WASM a panic aborts the
/// instance, and the page reports it).
pub async fn run_cases<S, M>(cases: &[CaseSpec], sink: &mut S, mut measure: M) -> Result<(), S::Error>
where
    S: Sink,
    M: AsyncFnMut(&CaseSpec, &dyn Fn(u32)) -> Result<CaseMeasurement, Failure<S::Error>>,
{
    for case in cases {
        sink.progress(Progress::CaseStarted { case_id: case.id.clone(), at_ms: now_ms() });
        let measured = {
            let on_sample = |done| sink.progress(Progress::SampleDone { case_id: case.id.clone(), done });
            let mut measuring = std::pin::pin!(measure(case, &on_sample));
            std::future::poll_fn(|cx| match catch_unwind(AssertUnwindSafe(|| measuring.as_mut().poll(cx))) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(measured)) => Poll::Ready(Ok(measured)),
                Err(payload) => Poll::Ready(Err(payload)),
            })
            .await
        };
        let event = match measured {
            Ok(Ok(mut measurement)) => {
                measurement.sent_ms = now_ms();
                PageEvent::Result(Box::new(measurement))
            }
            Ok(Err(Failure::Case(error))) => PageEvent::Error(error),
            Ok(Err(Failure::Stop(error))) => return Err(error),
            Err(payload) => PageEvent::Error(PageError::case(&case.id, sink.panic_message(payload))),
        };
        sink.send(event).await?;
    }
    sink.send(PageEvent::Done).await
}

/// Opens the GPU the cases run on and tells `sink` about it: its adapter (after `adapt` fitted the
/// device and the plan to each other), then its completion latency, measured with `nudge`. `None`
/// where there is no adapter, which `sink` was told as an unavailable adapter.
#[cfg(feature = "gpu")]
pub async fn open_gpu<S: Sink>(sink: &mut S, nudge: crate::Nudge, adapt: impl FnOnce(&mut crate::gpu::Gpu)) -> Result<Option<crate::gpu::Gpu>, S::Error> {
    let mut gpu = match crate::gpu::Gpu::new().await {
        Ok(gpu) => gpu,
        Err(e) => {
            let unavailable = crate::wire::AdapterReport { available: false, reason: Some(e.to_string()), ..Default::default() };
            sink.send(PageEvent::Adapter(unavailable)).await?;
            return Ok(None);
        }
    };
    adapt(&mut gpu);
    sink.send(PageEvent::Adapter(gpu.report())).await?;
    match gpu.measure_latency(nudge).await {
        Ok(latency) => sink.send(PageEvent::Latency(latency)).await?,
        Err(e) => sink.latency_unmeasured(e)?,
    }
    Ok(Some(gpu))
}

/// A panic's message, where its payload is text (as `panic!` makes it).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(message), _) => message.to_string(),
        (_, Some(message)) => message.clone(),
        _ => "the case panicked".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Every event in the order the loop gave it.
    #[derive(Default)]
    struct Recorder {
        events: RefCell<Vec<String>>,
        /// Sends fail from this many onwards.
        fail_after: Option<usize>,
    }

    impl Sink for Recorder {
        type Error = String;

        fn progress(&self, event: Progress) {
            let line = match event {
                Progress::CaseStarted { case_id, .. } => format!("started {case_id}"),
                Progress::SampleDone { case_id, done } => format!("sample {case_id} {done}"),
            };
            self.events.borrow_mut().push(line);
        }

        async fn send(&mut self, event: PageEvent) -> Result<(), String> {
            let line = match event {
                PageEvent::Result(m) => format!("result {} sent={}", m.case_id, m.sent_ms > 0.0),
                PageEvent::Error(e) => format!("error {} {}", e.case_id.unwrap_or_default(), e.message),
                PageEvent::Done => "done".into(),
                other => format!("{other:?}"),
            };
            let mut events = self.events.borrow_mut();
            if self.fail_after.is_some_and(|n| events.len() >= n) {
                return Err(format!("could not send: {line}"));
            }
            events.push(line);
            Ok(())
        }

        #[cfg(feature = "gpu")]
        fn latency_unmeasured(&mut self, error: crate::gpu::GpuError) -> Result<(), String> {
            Err(error.to_string())
        }
    }

    fn cases(ids: &[&str]) -> Vec<CaseSpec> {
        ids.iter().map(|id| CaseSpec { id: id.to_string(), ..CaseSpec::new("add", crate::Shape(vec![4]), 1) }).collect()
    }

    fn measured(case: &CaseSpec) -> CaseMeasurement {
        crate::wire::ColdMeasurement::of_marks(&[], 0.0).into_measurement(case.id.clone(), String::new())
    }

    #[test]
    fn events_come_in_order_with_each_sample_and_done_last() {
        let mut sink = Recorder::default();
        let cases = cases(&["a", "b"]);
        let ended = pollster::block_on(run_cases(&cases, &mut sink, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| {
            on_sample(1);
            on_sample(2);
            Ok(measured(case))
        }));
        assert_eq!(ended, Ok(()));
        let expected = ["started a", "sample a 1", "sample a 2", "result a sent=true", "started b", "sample b 1", "sample b 2", "result b sent=true", "done"];
        assert_eq!(sink.events.into_inner(), expected);
    }

    #[test]
    fn an_error_mid_case_is_that_case_s_and_the_next_case_still_runs() {
        let mut sink = Recorder::default();
        let cases = cases(&["a", "b"]);
        let ended = pollster::block_on(run_cases(&cases, &mut sink, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| {
            on_sample(1);
            match case.id.as_str() {
                "a" => Err(PageError::case(&case.id, "out of memory".into()).into()),
                _ => Ok(measured(case)),
            }
        }));
        assert_eq!(ended, Ok(()));
        assert_eq!(sink.events.into_inner(), ["started a", "sample a 1", "error a out of memory", "started b", "sample b 1", "result b sent=true", "done"]);
    }

    #[test]
    fn a_panicking_case_fails_with_its_message_and_the_rest_run() {
        let mut sink = Recorder::default();
        let cases = cases(&["a", "b"]);
        let ended = pollster::block_on(run_cases(&cases, &mut sink, async |case: &CaseSpec, _: &dyn Fn(u32)| {
            if case.id == "a" {
                panic!("index out of bounds in the bench");
            }
            Ok(measured(case))
        }));
        assert_eq!(ended, Ok(()));
        assert_eq!(sink.events.into_inner(), ["started a", "error a index out of bounds in the bench", "started b", "result b sent=true", "done"]);
    }

    #[test]
    fn a_stop_or_a_failed_send_ends_the_loop_with_its_error() {
        let cases = cases(&["a", "b"]);
        let mut sink = Recorder::default();
        let ended = pollster::block_on(run_cases(&cases, &mut sink, async |case: &CaseSpec, _: &dyn Fn(u32)| match case.id.as_str() {
            "a" => Err(Failure::Stop("deliberate exception".to_string())),
            _ => Ok(measured(case)),
        }));
        assert_eq!(ended, Err("deliberate exception".to_string()));
        assert_eq!(sink.events.into_inner(), ["started a"]);

        let mut sink = Recorder { fail_after: Some(1), ..Default::default() };
        let ended = pollster::block_on(run_cases(&cases, &mut sink, async |case: &CaseSpec, _: &dyn Fn(u32)| Ok(measured(case))));
        assert_eq!(ended, Err("could not send: result a sent=true".to_string()));
        assert_eq!(sink.events.into_inner(), ["started a"]);
    }
}
