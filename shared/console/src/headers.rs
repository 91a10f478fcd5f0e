//! The headers every console answer carries.

/// Scripts, styles and API calls from the console's own origin only; no inline script or
/// style, no plugin, no frame, no form posting anywhere, no `<base>`. What a model's output
/// might smuggle into the page could run nothing even if it were ever parsed as HTML (it never
/// is: the console writes data with `textContent`).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The files are not fingerprinted: a browser keeps them but asks again each time (a 304 when
/// its `ETag` still matches), so a new deploy is seen at once.
pub const CACHE_CONTROL: &str = "no-cache";

/// On every answer, a 404 and a 405 included.
pub const SECURITY_HEADERS: [(&str, &str); 5] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
];
