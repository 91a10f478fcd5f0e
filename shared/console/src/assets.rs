//! The console's files, compiled in: each with its path under `/console/` and content type.

/// One file of the console.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Its path under `/console/` (`index.html`, `js/main.js`).
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
    hash: u64,
}

impl Asset {
    /// A strong `ETag`: the hash of the body (FNV-1a, computed when compiled).
    pub fn etag(&self) -> String {
        format!("\"{:016x}\"", self.hash)
    }
}

const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const SVG: &str = "image/svg+xml";

macro_rules! assets {
    ($($path:literal => $type:expr),* $(,)?) => {
        /// Every file of the console.
        pub const ASSETS: &[Asset] = &[$(Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!("../assets/", $path)),
            hash: fnv1a(include_bytes!(concat!("../assets/", $path))),
        }),*];
    };
}

assets! {
    "index.html" => HTML,
    "console.css" => CSS,
    "charts.css" => CSS,
    "favicon.svg" => SVG,
    "js/main.js" => JS,
    "js/api.js" => JS,
    "js/dom.js" => JS,
    "js/format.js" => JS,
    "js/json-view.js" => JS,
    "js/charts/svg.js" => JS,
    "js/charts/scale.js" => JS,
    "js/charts/axes.js" => JS,
    "js/charts/bars.js" => JS,
    "js/charts/line.js" => JS,
    "js/charts/readout.js" => JS,
    "js/charts/figure.js" => JS,
    "js/session.js" => JS,
    "js/router.js" => JS,
    "js/dialog.js" => JS,
    "js/filters.js" => JS,
    "js/task-table.js" => JS,
    "js/task-filter.js" => JS,
    "js/selection.js" => JS,
    "js/bulk-actions.js" => JS,
    "js/live-output.js" => JS,
    "js/progress-bar.js" => JS,
    "js/run-progress.js" => JS,
    "js/pages/signin.js" => JS,
    "js/pages/runs.js" => JS,
    "js/pages/tasks.js" => JS,
    "js/pages/task.js" => JS,
    "js/pages/task-history.js" => JS,
    "js/pages/try.js" => JS,
    "js/pages/examples.js" => JS,
    "js/pages/summary.js" => JS,
    "js/pages/activity.js" => JS,
    "js/pages/activity-charts.js" => JS,
    "js/pages/operations.js" => JS,
    "js/pages/operation.js" => JS,
    "js/pages/holds.js" => JS,
}

/// The file at `path` (under `/console/`).
pub(crate) fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}
