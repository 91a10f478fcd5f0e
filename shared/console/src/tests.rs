use super::*;

fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a str> {
    answer.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
}

#[test]
fn the_page_and_its_files_are_served_with_their_types() {
    for path in ["/console", "/console/"] {
        let page = answer("GET", path, None).expect("the console's path");
        assert_eq!(page.status, 200);
        assert_eq!(header(&page, "content-type"), Some("text/html; charset=utf-8"));
        assert!(std::str::from_utf8(page.body).expect("utf-8").contains("<title>aitasks console</title>"));
    }
    let script = answer("GET", "/console/js/main.js", None).expect("a file");
    assert_eq!(
        (script.status, header(&script, "content-type")),
        (200, Some("text/javascript; charset=utf-8"))
    );
    let style = answer("GET", "/console/console.css", None).expect("a file");
    assert_eq!(header(&style, "content-type"), Some("text/css; charset=utf-8"));
}

#[test]
fn other_paths_are_not_the_consoles() {
    for path in ["/", "/consoles", "/console.css", "/v1/tasks", "/healthz"] {
        assert!(answer("GET", path, None).is_none(), "{path}");
    }
}

#[test]
fn every_answer_carries_the_security_headers() {
    let answers = [
        answer("GET", "/console", None),
        answer("GET", "/console/js/api.js", None),
        answer("GET", "/console/nothing.js", None),
        answer("GET", "/console/../Cargo.toml", None),
        answer("POST", "/console", None),
    ];
    for answer in answers.into_iter().map(|a| a.expect("the console's path")) {
        let csp = header(&answer, "content-security-policy").expect("a CSP");
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(directive), "{directive} in {csp}");
        }
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(header(&answer, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&answer, "referrer-policy"), Some("no-referrer"));
    }
}

#[test]
fn a_missing_file_is_404_and_another_method_405() {
    let missing = answer("GET", "/console/../Cargo.toml", None).expect("under /console");
    assert_eq!(missing.status, 404);
    assert_eq!(answer("GET", "/console/js/nope.js", None).map(|a| a.status), Some(404));
    let post = answer("POST", "/console/js/main.js", None).expect("under /console");
    assert_eq!((post.status, header(&post, "allow")), (405, Some("GET, HEAD")));
}

#[test]
fn a_matching_etag_is_304_and_head_has_no_body() {
    let first = answer("GET", "/console/js/main.js", None).expect("a file");
    let etag = header(&first, "etag").expect("an etag").to_owned();
    assert_eq!(header(&first, "cache-control"), Some("no-cache"));
    let again = answer("GET", "/console/js/main.js", Some(&etag)).expect("a file");
    assert_eq!((again.status, again.body.len()), (304, 0));
    let stale = answer("GET", "/console/js/main.js", Some("\"0000000000000000\"")).expect("a file");
    assert_eq!(stale.status, 200);
    let head = answer("HEAD", "/console/js/main.js", None).expect("a file");
    assert_eq!((head.status, head.body.len()), (200, 0));
}

/// Every module a file imports and every file the page links is served.
#[test]
fn every_referenced_file_exists() {
    let page = std::str::from_utf8(ASSETS[0].body).expect("utf-8");
    for reference in page.split('"').filter(|s| s.starts_with("/console/")) {
        assert!(answer("GET", reference, None).is_some_and(|a| a.status == 200), "{reference}");
    }
    for asset in ASSETS.iter().filter(|a| a.path.ends_with(".js")) {
        let text = std::str::from_utf8(asset.body).expect("utf-8");
        let folder = asset.path.rsplit_once('/').map_or("", |(folder, _)| folder);
        for line in text.lines().filter(|l| l.starts_with("import ")) {
            let target = line.split('"').nth(1).expect("a quoted module");
            let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
            for part in target.split('/') {
                match part {
                    "." => {}
                    ".." => {
                        parts.pop();
                    }
                    name => parts.push(name),
                }
            }
            let path = format!("/console/{}", parts.join("/"));
            assert!(
                answer("GET", &path, None).is_some_and(|a| a.status == 200),
                "{} imports {target}",
                asset.path
            );
        }
    }
}

/// Data becomes text only: no script of the console parses HTML, evaluates code or logs.
#[test]
fn no_script_parses_html_or_logs() {
    for asset in ASSETS.iter().filter(|a| a.path.ends_with(".js")) {
        let text = std::str::from_utf8(asset.body).expect("utf-8");
        for banned in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "console.",
            "localStorage",
            "setAttribute(\"style\"",
            "javascript:",
        ] {
            assert!(!text.contains(banned), "{} uses {banned}", asset.path);
        }
    }
    for asset in ASSETS.iter().filter(|a| a.path.ends_with(".html")) {
        let text = std::str::from_utf8(asset.body).expect("utf-8");
        assert!(
            !text.contains("style=") && !text.contains("<script>") && !text.contains("http"),
            "{}",
            asset.path
        );
    }
}
