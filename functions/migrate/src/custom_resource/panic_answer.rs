//! A panic still answers CloudFormation. The panic hook runs before anything unwinds (and before
//! the runtime reports the invocation failed), and sends `FAILED` for the request being handled,
//! on a thread of its own with a blocking client: whatever panicked may hold the async runtime.

use std::sync::Mutex;

use super::{CustomResourceRequest, ResponseStatus};

static ARMED: Mutex<Option<CustomResourceRequest>> = Mutex::new(None);

/// Install the hook once per process (before the runtime loop). Earlier hooks still run.
pub fn install_panic_answer() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let armed = ARMED.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(request) = armed {
            let reason = format!("the function panicked: {info}");
            let sent = std::thread::spawn(move || {
                reqwest::blocking::Client::new()
                    .put(&request.response_url)
                    .body(request.response_body(ResponseStatus::Failed, &reason))
                    .send()
                    .and_then(|r| r.error_for_status())
            })
            .join();
            if !matches!(sent, Ok(Ok(_))) {
                eprintln!("could not answer CloudFormation after a panic: {sent:?}");
            }
        }
        previous(info);
    }));
}

/// While the guard lives, a panic answers `FAILED` to this request.
pub struct Armed(());

impl Drop for Armed {
    fn drop(&mut self) {
        ARMED.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

pub fn arm_panic_answer(request: &CustomResourceRequest) -> Armed {
    *ARMED.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.clone());
    Armed(())
}
