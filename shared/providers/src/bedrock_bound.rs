//! ConverseStream's response body held to [`MAX_RESPONSE_BYTES`] as it is read, as a streamed
//! HTTP answer is. The bound sits under the SDK's event-stream decoder, on the body's bytes:
//! the decoder holds a frame whole before it is an event, whatever length the frame declares,
//! so a bound on the events alone would come after the memory was spent.

use std::pin::Pin;
use std::task::{Context, Poll};

use aws_sdk_bedrockruntime::config::interceptors::BeforeDeserializationInterceptorContextMut;
use aws_sdk_bedrockruntime::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;

use crate::wire::MAX_RESPONSE_BYTES;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Wraps a call's response body in a [`Bounded`] one.
#[derive(Debug)]
pub(crate) struct BoundBody;

impl Intercept for BoundBody {
    fn name(&self) -> &'static str {
        "BoundBody"
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let response = context.response_mut();
        let inner = response.take_body();
        *response.body_mut() = SdkBody::from_body_1_x(Bounded { inner, read: 0 });
        Ok(())
    }
}

/// Why a bounded body stopped: the reader finds it in the error's sources ([`too_long`]).
#[derive(Debug, thiserror::Error)]
#[error("the streamed answer is over {MAX_RESPONSE_BYTES} bytes; the rest was not read")]
pub(crate) struct TooLong;

/// Whether `error` is a body that went past the bound.
pub(crate) fn too_long(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<TooLong>() {
            return true;
        }
        cause = error.source();
    }
    false
}

struct Bounded {
    inner: SdkBody,
    read: usize,
}

impl http_body::Body for Bounded {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        let polled = http_body::Body::poll_frame(Pin::new(&mut self.inner), cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            self.read += frame.data_ref().map_or(0, Bytes::len);
            if self.read > MAX_RESPONSE_BYTES {
                return Poll::Ready(Some(Err(Box::new(TooLong))));
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::Body::size_hint(&self.inner)
    }
}
