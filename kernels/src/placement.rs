//! Where onnxruntime-web placed a session's nodes: how many each execution provider took, and
//! which ones fell back to its CPU provider. A WebGPU run that quietly runs some of its nodes on
//! WASM is the usual surprise, and ORT's API has no call that tells: its verbose log does. Before
//! it creates the measured session, the page creates the same session once more with
//! `logSeverityLevel: 0`, releases it, and hands over the log lines of
//! `VerifyEachNodeIsAssignedToAnEp` (onnxruntime's `session_state.cc`), read here; the measured
//! session logs nothing while it is timed. It does so where it asked for a provider other than the
//! CPU's: every node placed on the CPU is then a fallback (ORT also places shape computations there
//! on purpose).

use serde::{Deserialize, Serialize};

/// The nodes one execution provider took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderNodes {
    /// ORT's name of the provider (`WebGpuExecutionProvider`, `JsExecutionProvider`,
    /// `CPUExecutionProvider`).
    pub provider: String,
    /// How many nodes of the optimized graph it runs.
    pub nodes: u32,
    /// Each of them as ORT names it (`Shape (/embeddings/Shape)`: op, then node), where ORT listed
    /// them: it does when the nodes are split between providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<String>,
}

/// ORT's own name of its CPU execution provider.
pub const CPU_PROVIDER: &str = "CPUExecutionProvider";

/// The tag of the log lines that say where nodes went.
const TAG: &str = "VerifyEachNodeIsAssignedToAnEp]";

/// Reads the node placement out of ORT's verbose log `lines` (every line ORT wrote while a
/// session was created; others are skipped): one entry per provider, in ORT's order, or empty
/// where the log has none (a build or level that does not write it).
pub fn from_log<S: AsRef<str>>(lines: &[S]) -> Vec<ProviderNodes> {
    let mut placed: Vec<ProviderNodes> = Vec::new();
    for line in lines {
        let Some((_, text)) = line.as_ref().split_once(TAG) else { continue };
        let text = text.trim_end();
        let head = text.trim_start();
        if let Some(rest) = head.strip_prefix("All nodes placed on [").or_else(|| head.strip_prefix("Node(s) placed on [")) {
            let Some((provider, count)) = rest.split_once("]. Number of nodes: ") else { continue };
            placed.push(ProviderNodes { provider: provider.to_string(), nodes: count.trim().parse().unwrap_or(0), listed: Vec::new() });
        } else if text.starts_with("  ") && !head.is_empty() {
            if let Some(last) = placed.last_mut() {
                last.listed.push(head.to_string());
            }
        }
    }
    placed
}

/// The nodes of `placed` on the CPU provider: the fallback of the GPU or WebNN provider the
/// session asked for, all of its nodes where that provider took none.
pub fn cpu_fallback(placed: &[ProviderNodes]) -> Option<&ProviderNodes> {
    placed.iter().find(|p| p.provider == CPU_PROVIDER && p.nodes > 0)
}

/// The CPU fallback of `placed` in words, for a report's cell or the terminal (`2 of 57 nodes on
/// the CPU: Cast ×2`), or `None` where there is none.
pub fn fallback_words(placed: &[ProviderNodes]) -> Option<String> {
    let cpu = cpu_fallback(placed)?;
    let total: u32 = placed.iter().map(|p| p.nodes).sum();
    let mut ops: Vec<(&str, u32)> = Vec::new();
    for node in &cpu.listed {
        let op = node.split_once(" (").map_or(node.as_str(), |(op, _)| op);
        match ops.iter_mut().find(|(o, _)| *o == op) {
            Some((_, n)) => *n += 1,
            None => ops.push((op, 1)),
        }
    }
    let named: Vec<String> = ops.iter().map(|&(op, n)| if n > 1 { format!("{op} ×{n}") } else { op.to_string() }).collect();
    let which = if named.is_empty() { String::new() } else { format!(": {}", named.join(", ")) };
    Some(format!("{} of {total} nodes on the CPU{which}", cpu.nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as onnxruntime-web 1.30 writes them to the console (seen in Chromium 156).
    const SPLIT: [&str; 7] = [
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1377 VerifyEachNodeIsAssignedToAnEp] Node placements",
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1387 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [CPUExecutionProvider]. Number of nodes: 2",
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1389 VerifyEachNodeIsAssignedToAnEp]   Shape (/Shape)",
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1389 VerifyEachNodeIsAssignedToAnEp]   Gather (/Gather_1)",
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1387 VerifyEachNodeIsAssignedToAnEp]  Node(s) placed on [WebGpuExecutionProvider]. Number of nodes: 3",
        "2026-12-03 10:42:29.866999 [V:onnxruntime:, session_state.cc:1389 VerifyEachNodeIsAssignedToAnEp]   MatMul (/MatMul)",
        "2026-12-03 10:42:29.866999 [I:onnxruntime:, inference_session.cc:2610 Initialize] Initializing session.",
    ];

    #[test]
    fn a_split_placement_lists_each_provider_with_its_nodes() {
        let placed = from_log(&SPLIT);
        assert_eq!(placed.len(), 2);
        assert_eq!((placed[0].provider.as_str(), placed[0].nodes, placed[0].listed.clone()), (CPU_PROVIDER, 2, vec!["Shape (/Shape)".to_string(), "Gather (/Gather_1)".into()]));
        assert_eq!((placed[1].provider.as_str(), placed[1].nodes, placed[1].listed.len()), ("WebGpuExecutionProvider", 3, 1));
        assert_eq!(cpu_fallback(&placed).map(|c| c.nodes), Some(2));
        assert_eq!(fallback_words(&placed).as_deref(), Some("2 of 5 nodes on the CPU: Shape, Gather"));
    }

    #[test]
    fn all_nodes_on_one_provider_are_listed_by_count() {
        let line = |ep: &str| format!("2026-12-03 [V:onnxruntime:, session_state.cc:1380 VerifyEachNodeIsAssignedToAnEp]  All nodes placed on [{ep}]. Number of nodes: 5");
        let gpu = from_log(&[line("WebGpuExecutionProvider")]);
        assert_eq!(gpu, vec![ProviderNodes { provider: "WebGpuExecutionProvider".into(), nodes: 5, listed: vec![] }]);
        assert!(fallback_words(&gpu).is_none(), "all on the GPU: no fallback");
        // A WebNN session whose provider took nothing: every node fell back.
        assert_eq!(fallback_words(&from_log(&[line(CPU_PROVIDER)])).as_deref(), Some("5 of 5 nodes on the CPU"));
        assert!(from_log(&["unrelated", "[W:onnxruntime:, x] Some nodes were not assigned"]).is_empty());
    }
}
