//! What a request with the bearer token sees: the authorized disclosure
//! levels, decided before any probe runs (BE-HLTH-007).

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponseBuilder};

use crate::token::BearerToken;
use crate::writer::BodyStyle;

/// What a request with the bearer token sees instead of the public body.
#[derive(Clone)]
pub(super) struct Authorized {
    /// The body style it unlocks; `None` when the tier shows everyone the
    /// same.
    pub(super) style: Option<BodyStyle>,
    /// The token; `None` leaves every request at the public level.
    pub(super) token: Option<Arc<BearerToken>>,
}

impl Authorized {
    /// Whether the answer depends on the request's `Authorization`, so a
    /// cache must key on it (`Vary`).
    pub(super) fn varies(&self) -> bool {
        self.style.is_some() && self.token.is_some()
    }

    /// The authorized style when `request` carries the token. A missing or
    /// wrong token is the public answer, never a 401: kubelets and load
    /// balancers cannot authenticate.
    pub(super) fn style_for(&self, request: &HttpRequest) -> Option<&BodyStyle> {
        let (style, token) = (self.style.as_ref()?, self.token.as_deref()?);
        token.authorizes(request).then_some(style)
    }

    /// `Vary: Authorization` on `response` when the answer depends on it.
    pub(super) fn mark(&self, response: &mut HttpResponseBuilder) {
        if self.varies() {
            response.insert_header((header::VARY, HeaderValue::from_static("authorization")));
        }
    }
}
