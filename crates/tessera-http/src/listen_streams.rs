//! Long-lived streams (`subscriptions/listen`, an initialize-era session's
//! standalone GET stream), bounded per client.
//!
//! A client is its principal when authenticated, else the address it
//! connects from (behind `serve`; an endpoint mounted elsewhere knows no
//! address, and bounds only authenticated callers). A stream past the
//! client's bound is refused with 429. Each stream marks its connection as
//! listening, so at the connection cap the oldest stream of the client
//! holding the most gives way first (see `connections`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::request::Parts;
use http::{Response, StatusCode};

use crate::McpBody;
use crate::connections::ConnectionSlot;

/// Long-lived streams one client may hold open at once, unless configured.
pub const DEFAULT_LISTEN_STREAMS_PER_CLIENT: usize = 16;

/// The open streams, per client.
#[derive(Default)]
pub(crate) struct ListenStreams {
    open: Mutex<HashMap<Arc<str>, usize>>,
}

/// One open stream, counted until dropped (with the handler that serves it):
/// in `tessera.listen.streams` always, and against its client when the
/// client can be told apart.
pub(crate) struct OpenStream {
    streams: Arc<ListenStreams>,
    client: Option<Arc<str>>,
}

impl ListenStreams {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a stream of the caller of `head` (its
    /// [`caller_key`](tessera_server::RequestFacts::caller_key): the
    /// principal, else the client address), or refuses it when the caller
    /// has `most` open. A caller that cannot be told apart (anonymous, no
    /// address) is not bounded.
    pub(crate) fn open(
        self: &Arc<Self>,
        head: &Parts,
        caller: Option<String>,
        most: usize,
    ) -> Result<OpenStream, TooManyStreams> {
        let slot = head.extensions.get::<ConnectionSlot>();
        let Some(client) = caller else {
            tessera_server::telemetry::metrics::listen_streams(1);
            return Ok(OpenStream {
                streams: Arc::clone(self),
                client: None,
            });
        };
        let client: Arc<str> = client.into();
        {
            let mut open = self.lock();
            let count = open.entry(Arc::clone(&client)).or_default();
            if *count >= most {
                return Err(TooManyStreams(most));
            }
            *count += 1;
        }
        if let Some(slot) = slot {
            slot.listening(Arc::clone(&client));
        }
        tessera_server::telemetry::metrics::listen_streams(1);
        Ok(OpenStream {
            streams: Arc::clone(self),
            client: Some(client),
        })
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        tessera_server::telemetry::metrics::listen_streams(-1);
        let Some(client) = &self.client else {
            return;
        };
        let mut open = self.streams.lock();
        if let Some(count) = open.get_mut(client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(client);
            }
        }
    }
}

/// The caller holds as many streams as one may (this many).
pub(crate) struct TooManyStreams(usize);

impl TooManyStreams {
    /// 429 with `Retry-After`, saying why (to request `id`, when there is one).
    pub(crate) fn response(self, id: Option<tessera_protocol::RequestId>) -> Response<McpBody> {
        too_many(self.0, id)
    }
}

fn too_many(most: usize, id: Option<tessera_protocol::RequestId>) -> Response<McpBody> {
    let mut response = crate::reject::error(
        StatusCode::TOO_MANY_REQUESTS,
        id,
        tessera_protocol::TRANSPORT_ERROR,
        format!(
            "Too Many Requests: this client already holds {most} open listen streams, as many as one client may; close one first"
        ),
        None,
    );
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, http::HeaderValue::from(5u64));
    response
}
