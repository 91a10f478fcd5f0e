//! Traces for AWS X-Ray: a `tracing` layer that sends the spans a task passes through
//! (create → store → send, then claim → provider call → settle) to the X-Ray daemon as segment
//! documents over UDP, the daemon's own protocol. On Lambda with `Tracing: Active` the daemon
//! runs beside every function (`AWS_XRAY_DAEMON_ADDRESS`); nothing is exported without it.
//!
//! Why X-Ray and not OpenTelemetry: OTLP from Lambda needs a collector layer (more cold start,
//! a flush before each answer, or spans lost when the instance freezes); a UDP datagram to the
//! daemon Lambda already runs costs one `sendto` and never waits. docs/architecture.md says more.
//!
//! One task is one trace, whichever invocations it crosses: create-task stores the trace
//! header on the task (`trace_header`), and the worker's `task` span takes it back after the
//! claim (recorded as its `trace_header` field), so its work is a segment downstream of the
//! create, in the create's trace, even when the sweeper re-sent its message.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::{LookupSpan, SpanRef};
use tracing_subscriber::Layer;

/// The spans that become segments or subsegments; every other span only passes its context on.
const TRACED: &[&str] =
    &["request", "store create", "send task message", "task", "claim", "provider call", "settle"];
/// The span the Lambda runtime opens per invocation; its `xrayTraceId` is Lambda's trace header.
const INVOCATION: &str = "Lambda runtime invoke";
/// Fields kept as annotations (X-Ray indexes them: `annotation.task_id = "..."`).
const ANNOTATED: &[&str] = &["task_id", "route", "tenant", "attempt", "kind", "model_id", "status"];

static ENABLED: AtomicBool = AtomicBool::new(false);

/// An X-Ray trace header: `Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: String,
    pub parent_id: Option<String>,
    pub sampled: bool,
}

impl TraceContext {
    /// Parse a header; `None` without a well-formed `Root`.
    pub fn parse(header: &str) -> Option<TraceContext> {
        let mut context = TraceContext { trace_id: String::new(), parent_id: None, sampled: true };
        for part in header.split(';') {
            match part.trim().split_once('=') {
                Some(("Root", root)) if is_trace_id(root) => context.trace_id = root.to_owned(),
                Some(("Parent", parent)) if is_hex(parent, 16) => context.parent_id = Some(parent.to_owned()),
                Some(("Sampled", sampled)) => context.sampled = sampled != "0",
                _ => {}
            }
        }
        (!context.trace_id.is_empty()).then_some(context)
    }

    /// A new sampled trace, as Lambda starts one for an invocation (the dev server's part).
    pub fn new_root() -> TraceContext {
        let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        TraceContext {
            trace_id: format!("1-{:08x}-{}", seconds as u32, random_hex(12)),
            parent_id: Some(random_hex(8)),
            sampled: true,
        }
    }

    pub fn header(&self) -> String {
        let mut header = format!("Root={}", self.trace_id);
        if let Some(parent) = &self.parent_id {
            header.push_str(";Parent=");
            header.push_str(parent);
        }
        header.push_str(if self.sampled { ";Sampled=1" } else { ";Sampled=0" });
        header
    }
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_trace_id(text: &str) -> bool {
    let mut parts = text.split('-');
    matches!((parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("1"), Some(time), Some(random), None) if is_hex(time, 8) && is_hex(random, 24))
}

fn random_hex(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes * 2);
    while out.len() < bytes * 2 {
        out.push_str(&uuid::Uuid::new_v4().simple().to_string());
    }
    out.truncate(bytes * 2);
    out
}

fn now_seconds() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or_default()
}

/// True once an exporting layer is installed: without one, nothing here costs anything.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The trace header of the current span, with the current segment or subsegment as its parent:
/// what a task stores so that its worker continues the trace. `None` when not tracing.
pub fn current_header() -> Option<String> {
    if !enabled() {
        return None;
    }
    tracing::Span::current()
        .with_subscriber(|(id, dispatch)| {
            let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
            let span = registry.span(id)?;
            let (context, parent) = resolve(&span, true)?;
            Some(TraceContext { parent_id: parent.or(context.parent_id), ..context }.header())
        })
        .flatten()
}

/// What the layer keeps on each span it follows.
struct Traced {
    id: String,
    name: String,
    start: f64,
    exported: bool,
    /// The span's own trace context: Lambda's (the invocation span) or a stored one (`trace_header`).
    context: Option<TraceContext>,
    annotations: Map<String, Value>,
    error: bool,
}

/// The trace and parent for `span`: walking up from it (from its parent when `include_self` is
/// false), the first exported span is the parent and the first context found is the trace.
fn resolve<S>(span: &SpanRef<'_, S>, include_self: bool) -> Option<(TraceContext, Option<String>)>
where
    S: for<'a> LookupSpan<'a>,
{
    let mut parent: Option<String> = None;
    for (depth, ancestor) in span.scope().enumerate() {
        let extensions = ancestor.extensions();
        let Some(traced) = extensions.get::<Traced>() else { continue };
        if (depth > 0 || include_self) && parent.is_none() && traced.exported {
            parent = Some(traced.id.clone());
        }
        if let Some(context) = &traced.context {
            return Some((context.clone(), parent));
        }
    }
    None
}

struct Fields<'a>(&'a mut Traced);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "xrayTraceId" | "trace_header" => {
                self.0.context = TraceContext::parse(value).or(self.0.context.take())
            }
            "route" => {
                self.0.name = value.to_owned();
                self.0.annotations.insert("route".into(), value.into());
            }
            name if ANNOTATED.contains(&name) => {
                self.0.annotations.insert(name.into(), value.into());
            }
            "error_code" => {
                self.0.error = true;
                self.0.annotations.insert("error_code".into(), value.into());
            }
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if ANNOTATED.contains(&field.name()) {
            self.0.annotations.insert(field.name().into(), value.into());
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if ANNOTATED.contains(&field.name()) {
            self.0.annotations.insert(field.name().into(), value.into());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

/// The layer that exports to the daemon.
pub struct XrayLayer {
    socket: UdpSocket,
    daemon: SocketAddr,
    service: String,
}

impl XrayLayer {
    /// From `AWS_XRAY_DAEMON_ADDRESS` (`host:port`, or Lambda's `tcp:…  udp:host:port` form);
    /// `None` when it is not set or cannot be used. Installing it turns [`current_header`] on.
    pub fn from_env() -> Option<XrayLayer> {
        let address = std::env::var("AWS_XRAY_DAEMON_ADDRESS").ok().filter(|a| !a.is_empty())?;
        let udp = address
            .split_whitespace()
            .find_map(|part| part.strip_prefix("udp:"))
            .unwrap_or_else(|| address.split_whitespace().next().unwrap_or_default());
        let daemon = udp.to_socket_addrs().ok()?.next()?;
        let bind: SocketAddr = if daemon.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(bind).ok()?;
        socket.set_nonblocking(true).ok()?;
        let service = std::env::var("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_else(|_| "aitasks".into());
        ENABLED.store(true, Ordering::Relaxed);
        Some(XrayLayer { socket, daemon, service })
    }

    /// The callsites the layer needs: the spans it exports and the invocation span.
    pub fn wants(metadata: &tracing::Metadata<'_>) -> bool {
        metadata.is_span() && (TRACED.contains(&metadata.name()) || metadata.name() == INVOCATION)
    }

    fn send(&self, document: &Value) {
        let datagram = format!("{{\"format\": \"json\", \"version\": 1}}\n{document}");
        // A trace that cannot be sent is not worth failing, or slowing, the work it describes.
        let _ = self.socket.send_to(datagram.as_bytes(), self.daemon);
    }
}

impl<S> Layer<S> for XrayLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let name = attrs.metadata().name();
        let exported = TRACED.contains(&name);
        if !exported && name != INVOCATION {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let mut traced = Traced {
            id: random_hex(8),
            name: name.to_owned(),
            start: now_seconds(),
            exported,
            context: None,
            annotations: Map::new(),
            error: false,
        };
        attrs.record(&mut Fields(&mut traced));
        span.extensions_mut().insert(traced);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(traced) = extensions.get_mut::<Traced>() {
            values.record(&mut Fields(traced));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some((context, parent)) = resolve(&span, false) else { return };
        let extensions = span.extensions();
        let Some(traced) = extensions.get::<Traced>() else { return };
        if !traced.exported || !context.sampled {
            return;
        }
        let own = traced.context.is_some();
        let mut document = json!({
            "name": if own { self.service.as_str() } else { traced.name.as_str() },
            "id": traced.id,
            "trace_id": context.trace_id,
            "start_time": traced.start,
            "end_time": now_seconds(),
        });
        // A span with a context of its own is a segment downstream of that context's parent (the
        // worker under the create); the others are subsegments of their parent span.
        let parent = if own { context.parent_id } else { parent.or(context.parent_id) };
        if let Some(parent) = parent {
            document["parent_id"] = parent.into();
        }
        if own {
            document["origin"] = "AWS::Lambda::Function".into();
        } else {
            document["type"] = "subsegment".into();
        }
        if traced.name == "provider call" {
            document["namespace"] = "remote".into();
        }
        if traced.error {
            document["error"] = true.into();
        }
        if !traced.annotations.is_empty() {
            document["annotations"] = Value::Object(traced.annotations.clone());
        }
        self.send(&document);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_bad_ones_are_refused() {
        let header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
        let context = TraceContext::parse(header).unwrap();
        assert_eq!(context.trace_id, "1-5759e988-bd862e3fe1be46a994272793");
        assert_eq!(context.parent_id.as_deref(), Some("53995c3f42cd8ad8"));
        assert!(context.sampled);
        assert_eq!(context.header(), header);
        assert!(!TraceContext::parse("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0").unwrap().sampled);
        for bad in
            ["", "Parent=53995c3f42cd8ad8", "Root=2-5759e988-bd862e3fe1be46a994272793", "Root=1-xyz-abc"]
        {
            assert_eq!(TraceContext::parse(bad), None, "{bad}");
        }
        let minted = TraceContext::new_root();
        assert_eq!(TraceContext::parse(&minted.header()), Some(minted));
    }
}
