//! An API Gateway HTTP API (payload 2.0) request for `/console` or a file under it, answered
//! with [`aitasks_console::answer`]: the file, its content type, its `ETag` and the security
//! headers. Its routes need no token (the files hold no data; the console calls the API with
//! the user's own).

use aws_lambda_events::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use aws_lambda_events::encodings::Body;
use http::{HeaderMap, HeaderName, HeaderValue};

pub fn handle(request: &ApiGatewayV2httpRequest) -> ApiGatewayV2httpResponse {
    let method = request.request_context.http.method.as_str();
    let path = request.raw_path.as_deref().or(request.request_context.http.path.as_deref()).unwrap_or("/");
    let if_none_match = request.headers.get(http::header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    let answer = aitasks_console::answer(method, path, if_none_match).unwrap_or_else(not_found);
    let mut headers = HeaderMap::new();
    for (name, value) in answer.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    let mut response = ApiGatewayV2httpResponse::default();
    response.status_code = i64::from(answer.status);
    response.headers = headers;
    // Every file is UTF-8 text (HTML, CSS, JavaScript, SVG).
    response.body = Some(Body::Text(String::from_utf8_lossy(answer.body).into_owned()));
    response.is_base64_encoded = false;
    response
}

/// A path the routes sent here that is not the console's (they route only `/console...`).
fn not_found() -> aitasks_console::Answer {
    aitasks_console::answer("GET", "/console/-", None).unwrap_or(aitasks_console::Answer {
        status: 404,
        headers: Vec::new(),
        body: b"",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> ApiGatewayV2httpResponse {
        let mut request = ApiGatewayV2httpRequest::default();
        request.raw_path = Some(path.to_owned());
        request.request_context.http.method = http::Method::GET;
        handle(&request)
    }

    #[test]
    fn the_page_a_file_and_a_missing_one() {
        let page = get("/console");
        assert_eq!(page.status_code, 200);
        assert!(page.headers["content-security-policy"]
            .to_str()
            .unwrap_or_default()
            .contains("script-src 'self'"));
        assert!(matches!(&page.body, Some(Body::Text(text)) if text.contains("aitasks console")));
        let script = get("/console/js/main.js");
        assert_eq!(script.headers["content-type"], "text/javascript; charset=utf-8");
        assert_eq!(get("/console/missing.js").status_code, 404);
        assert_eq!(get("/v1/tasks").status_code, 404);
    }
}
