//! Which methods each known path takes, so that a known path asked with another method is a
//! 405 with `Allow` (and an unknown path a 404), the same from every function.

use aitasks_runtime::ApiError;

/// A path pattern (`"{}"` matches any one segment) and the methods it takes.
pub struct Route {
    pub path: &'static [&'static str],
    pub allow: &'static [&'static str],
}

/// `Ok` when the first route whose pattern matches `segments` takes `method`. Routes are tried
/// in order, so a literal path listed before a pattern wins (`/v1/tasks/batch` before
/// `/v1/tasks/{taskId}`), as API Gateway prefers it.
pub fn check_method(routes: &[Route], method: &str, segments: &[&str]) -> Result<(), ApiError> {
    let matches = |route: &&Route| {
        route.path.len() == segments.len()
            && route
                .path
                .iter()
                .zip(segments)
                .all(|(pattern, segment)| *pattern == "{}" || pattern == segment)
    };
    match routes.iter().find(matches) {
        Some(route) if route.allow.contains(&method) => Ok(()),
        Some(route) => Err(ApiError::MethodNotAllowed { allow: route.allow }),
        None => Err(ApiError::NoRoute),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTES: &[Route] = &[
        Route { path: &["v1", "tasks", "batch"], allow: &["POST"] },
        Route { path: &["v1", "tasks", "{}"], allow: &["GET"] },
    ];

    #[test]
    fn a_literal_path_wins_over_a_pattern_and_a_wrong_method_names_the_right_ones() {
        assert!(check_method(ROUTES, "POST", &["v1", "tasks", "batch"]).is_ok());
        assert!(check_method(ROUTES, "GET", &["v1", "tasks", "abc"]).is_ok());
        let wrong = check_method(ROUTES, "GET", &["v1", "tasks", "batch"]).unwrap_err();
        assert!(matches!(wrong, ApiError::MethodNotAllowed { allow: ["POST"] }), "{wrong:?}");
        assert_eq!(wrong.status(), 405);
        assert!(matches!(check_method(ROUTES, "GET", &["v1", "nothing"]), Err(ApiError::NoRoute)));
        assert!(matches!(check_method(ROUTES, "GET", &["v1", "tasks", "a", "b"]), Err(ApiError::NoRoute)));
    }
}
