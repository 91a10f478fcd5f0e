//! Reading an `EXPLAIN (ANALYZE, FORMAT JSON)` plan, for the tests that bound a statement's work
//! by what its plan read rather than by its time.

use serde_json::Value;

/// The rows every node of an `EXPLAIN ANALYZE` plan read and dropped, summed.
pub(crate) fn rows_looked_at_and_dropped(node: &Value) -> u64 {
    let own: u64 = ["Rows Removed by Filter", "Rows Removed by Join Filter", "Rows Removed by Index Recheck"]
        .iter()
        .filter_map(|key| node[key].as_u64())
        .sum();
    let below: u64 =
        node["Plans"].as_array().map_or(0, |plans| plans.iter().map(rows_looked_at_and_dropped).sum());
    own + below
}
