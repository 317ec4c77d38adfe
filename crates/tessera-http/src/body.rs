//! The response body: a complete JSON document, or an event stream that owns the handler.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::stream::EventStream;

/// The body of an endpoint response.
pub struct McpBody(Kind);

enum Kind {
    Full(Option<Bytes>),
    Stream(Box<EventStream>),
}

impl McpBody {
    /// A complete body.
    pub fn full(bytes: Bytes) -> Self {
        Self(Kind::Full(Some(bytes)))
    }

    /// No body.
    pub fn empty() -> Self {
        Self(Kind::Full(None))
    }

    pub(crate) fn stream(stream: EventStream) -> Self {
        Self(Kind::Stream(Box::new(stream)))
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.0 {
            Kind::Full(bytes) => Poll::Ready(
                bytes
                    .take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            Kind::Stream(stream) => stream.poll_event(cx).map(|e| e.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Full(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
            Kind::Stream(stream) => stream.is_finished(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Kind::Full(b) => write!(
                f,
                "McpBody::Full({} bytes)",
                b.as_ref().map_or(0, Bytes::len)
            ),
            Kind::Stream(_) => f.write_str("McpBody::Stream"),
        }
    }
}
