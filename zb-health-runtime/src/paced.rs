//! A large body handed to actix in slices, so a keep-alive connection
//! keeps no write buffer the size of a large tier's body
//! ([`ZbHealth::pace_large_bodies`](crate::http::ZbHealth::pace_large_bodies)).
//!
//! actix-http copies a response body into its connection's write buffer
//! and keeps that buffer's capacity for the life of the connection (up to
//! 128 KiB). A body given whole grows the buffer to the body's size, and
//! every keep-alive connection that ever received it keeps that much.
//! Given in slices, the dispatcher
//! copies slices until its buffer holds `h1_write_buffer_size` (32 KiB by
//! default), writes them to the socket and goes on, whatever the body's
//! size. The slices share the one `Bytes` (no copy of ours); the
//! `Content-Length` stays.
//!
//! The slice is that default size exactly. The buffer (8 KiB when the
//! connection opens) then grows once, straight to the head plus one slice,
//! the least that holds a full buffer's worth, and the next answer of the
//! same head fits it again. Smaller slices would cross 32 KiB part-way
//! through one and double the buffer to 64 KiB.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use actix_web::web::Bytes;

/// actix-http's default `h1_write_buffer_size`: a dispatcher fills its
/// buffer until it holds this much before it writes to the socket.
pub(crate) const SLICE: usize = 32 * 1024;

/// `body` in [`SLICE`]s.
pub(crate) struct Paced {
    rest: Bytes,
}

impl Paced {
    /// Paces `body` (a body of at most one slice goes out whole anyway).
    pub(crate) fn new(body: Bytes) -> Self {
        Self { rest: body }
    }
}

impl MessageBody for Paced {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        // Exact before the first slice is taken, which is when actix asks.
        BodySize::Sized(self.rest.len() as u64)
    }

    fn poll_next(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        if this.rest.is_empty() {
            return Poll::Ready(None);
        }
        let n = this.rest.len().min(SLICE);
        Poll::Ready(Some(Ok(this.rest.split_to(n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    #[actix_web::test]
    async fn a_paced_body_gives_every_byte_in_order_with_its_length() {
        let body: Bytes = (0..SLICE * 3 + 17).map(|i| (i % 251) as u8).collect();
        let paced = Paced::new(body.clone());
        assert_eq!(paced.size(), BodySize::Sized(body.len() as u64));
        assert_eq!(to_bytes(paced).await.unwrap(), body);
    }
}
