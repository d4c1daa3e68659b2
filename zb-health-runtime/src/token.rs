//! The bearer token that lets a request see a tier's authorized details
//! (BE-HLTH-007; `spec/disclosure.md`): Spring's `show-details:
//! when-authorized`.
//!
//! The token is a secret of the deployment, so it comes from the
//! environment (`HEALTH_TOKEN`) or a file (`HEALTH_TOKEN_FILE`, e.g. a
//! mounted Kubernetes Secret), never from `health.yaml`, which is in the
//! repository. It is never logged: [`BearerToken`]'s `Debug` prints no byte
//! of it, and no error names it. A request is compared to it in constant
//! time ([`BearerToken::accepts`]), and a request without it, or with a
//! wrong one, gets the public answer, never a 401: kubelets and load
//! balancers cannot authenticate, and their verdict must not change.

use std::fmt;
use std::hint::black_box;

use actix_web::HttpRequest;
use actix_web::http::header;

/// The variable holding the token itself.
pub const TOKEN_VAR: &str = "HEALTH_TOKEN";
/// The variable holding the path of a file whose content is the token.
pub const TOKEN_FILE_VAR: &str = "HEALTH_TOKEN_FILE";

/// A configured bearer token. Built from a non-empty secret; its `Debug`
/// shows only that it is set.
#[derive(Clone)]
pub struct BearerToken {
    secret: Box<[u8]>,
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Neither the bytes nor the length: both help a guesser.
        f.write_str("BearerToken(<redacted>)")
    }
}

/// Why a token cannot be used; it never holds the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// The token is empty (or only white space): every request would
    /// carry it.
    Empty,
    /// The token holds a byte an HTTP header cannot carry (a control
    /// character or a space inside it), so no request could present it.
    NotAHeaderValue,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "the token is empty; set a long random value, e.g. `openssl rand -hex 32`",
            Self::NotAHeaderValue => {
                "the token holds a space or a control character, which `Authorization: Bearer` cannot carry; use a long random value, e.g. `openssl rand -hex 32`"
            }
        })
    }
}

impl std::error::Error for TokenError {}

impl BearerToken {
    /// The token `secret`, with surrounding white space (a file's trailing
    /// newline) removed.
    ///
    /// # Errors
    ///
    /// An empty token, or one no header can carry.
    pub fn new(secret: impl AsRef<str>) -> Result<Self, TokenError> {
        let secret = secret.as_ref().trim();
        if secret.is_empty() {
            return Err(TokenError::Empty);
        }
        if secret.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(TokenError::NotAHeaderValue);
        }
        Ok(Self {
            secret: secret.as_bytes().into(),
        })
    }

    /// Whether `request` carries this token as `Authorization: Bearer
    /// <token>`. No header, another scheme or a wrong token is `false`.
    pub fn authorizes(&self, request: &HttpRequest) -> bool {
        let Some(value) = request.headers().get(header::AUTHORIZATION) else {
            return false;
        };
        let value = value.as_bytes();
        // The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
        match value.split_at_checked(7) {
            Some((scheme, presented)) if scheme.eq_ignore_ascii_case(b"bearer ") => {
                self.accepts(presented)
            }
            _ => false,
        }
    }

    /// Whether `presented` is the token, in time that depends only on the
    /// length of `presented` (which its sender knows), never on how much
    /// of it matches or on the token's length.
    pub fn accepts(&self, presented: &[u8]) -> bool {
        constant_time_eq(&self.secret, presented)
    }
}

/// `secret == presented` without an early exit: every byte of `presented`
/// is compared (against the secret, cycled), and a length difference is
/// folded into the same accumulator.
fn constant_time_eq(secret: &[u8], presented: &[u8]) -> bool {
    // `secret` is never empty (`BearerToken::new`).
    let mut diff = u8::from(secret.len() != presented.len());
    for (i, byte) in presented.iter().enumerate() {
        diff |= secret[i % secret.len()] ^ byte;
    }
    // Keep the optimiser from turning the loop into an early-exit compare.
    black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_is_accepted() {
        let token = BearerToken::new("s3cret-token\n").unwrap();
        assert!(token.accepts(b"s3cret-token"));
        for wrong in [
            &b""[..],
            b"s3cret-toke",
            b"s3cret-tokenX",
            b"S3cret-token",
            b"x",
        ] {
            assert!(!token.accepts(wrong), "{wrong:?}");
        }
        // The secret cycled is not the secret.
        assert!(!token.accepts(b"s3cret-tokens3cret-token"));
    }

    #[test]
    fn empty_and_unsendable_tokens_are_refused() {
        assert_eq!(BearerToken::new(" \n").unwrap_err(), TokenError::Empty);
        assert_eq!(
            BearerToken::new("two words").unwrap_err(),
            TokenError::NotAHeaderValue
        );
    }

    #[test]
    fn debug_shows_no_byte_of_the_token() {
        let token = BearerToken::new("hunter2-hunter2").unwrap();
        let shown = format!("{token:?} {token:#?}");
        assert!(!shown.contains("hunter"), "{shown}");
        assert!(!shown.contains("15"), "not even its length: {shown}");
    }

    #[test]
    fn the_request_needs_the_bearer_scheme() {
        use actix_web::test::TestRequest;
        let token = BearerToken::new("abc").unwrap();
        let with = |v: &str| {
            TestRequest::default()
                .insert_header((header::AUTHORIZATION, v))
                .to_http_request()
        };
        assert!(token.authorizes(&with("Bearer abc")));
        assert!(token.authorizes(&with("bearer abc")));
        assert!(!token.authorizes(&with("Basic abc")));
        assert!(!token.authorizes(&with("Bearer abcd")));
        assert!(!token.authorizes(&with("Bearer")));
        assert!(!token.authorizes(&TestRequest::default().to_http_request()));
    }
}
