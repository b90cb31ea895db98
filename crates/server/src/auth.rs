//! Who a request is, from its `Authorization: Bearer <token>` header, and what that opens:
//! a tenant's token opens that tenant's routes only, the admin token the admin routes only,
//! the metrics token (or the admin token) `/metrics`. A tenant route that names another tenant,
//! an unknown one or an invalid id is answered the same 404, so a token learns nothing about
//! tenants it does not open.

use axum::http::{HeaderMap, header};

use crate::api_error::ApiError;
use crate::app::App;
use crate::registry::{Access, Serving};
use crate::token::TokenHash;

/// The digest of the request's bearer token; 401 without a usable one.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<TokenHash, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized(
            "missing `Authorization: Bearer <token>` header",
        ));
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::unauthorized("the Authorization header is not ASCII text"))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::unauthorized(
            "the Authorization header must be `Bearer <token>`",
        ));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(ApiError::unauthorized("the bearer token is empty"));
    }
    Ok(TokenHash::of_token(token))
}

/// The tenant `id` names, if the request's token is that tenant's.
pub(crate) fn tenant(app: &App, id: &str, headers: &HeaderMap) -> Result<Serving, ApiError> {
    let token = bearer(headers)?;
    match app.registry.authorize(&app.tenants, id, &token) {
        Access::Granted(s) => Ok(s),
        Access::Unavailable => Err(ApiError::unavailable(format!(
            "tenant `{id}` is not being served: its files did not load; the operator sees why in GET /v1/tenants/{id}"
        ))),
        Access::Denied => Err(no_such_tenant(id)),
    }
}

/// The one answer for a tenant route this token does not open.
pub(crate) fn no_such_tenant(id: &str) -> ApiError {
    let shown: String = id
        .chars()
        .take(80)
        .collect::<String>()
        .escape_default()
        .to_string();
    ApiError::not_found(format!("no tenant `{shown}` for this token"))
}

/// Admin routes: the admin token, and only it.
pub(crate) fn admin(app: &App, headers: &HeaderMap) -> Result<(), ApiError> {
    let token = bearer(headers)?;
    let Some(admin) = &app.config.admin_token_sha256 else {
        return Err(ApiError::forbidden(
            "the admin API is off: set admin_token_sha256 in the server configuration",
        ));
    };
    if admin.matches(&token) {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "this token does not open the admin API",
        ))
    }
}

/// `/metrics`: the metrics token or the admin token.
pub(crate) fn metrics(app: &App, headers: &HeaderMap) -> Result<(), ApiError> {
    let token = bearer(headers)?;
    // Both comparisons always run, so which token matched (if any) takes the same time.
    let by_metrics = app
        .config
        .metrics_token_sha256
        .as_ref()
        .is_some_and(|t| t.matches(&token));
    let by_admin = app
        .config
        .admin_token_sha256
        .as_ref()
        .is_some_and(|t| t.matches(&token));
    if by_metrics | by_admin {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "this token does not open /metrics: use the metrics or the admin token",
        ))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(auth: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(a) = auth {
            h.insert(header::AUTHORIZATION, HeaderValue::from_str(a).unwrap());
        }
        h
    }

    #[test]
    fn only_a_bearer_token_is_a_token() {
        assert!(
            bearer(&headers(Some("Bearer abc")))
                .unwrap()
                .matches(&TokenHash::of_token("abc"))
        );
        assert!(
            bearer(&headers(Some("bearer  abc ")))
                .unwrap()
                .matches(&TokenHash::of_token("abc"))
        );
        for bad in [
            None,
            Some("Basic YWJjOmRlZg=="),
            Some("Bearer"),
            Some("Bearer   "),
            Some("abc"),
        ] {
            let e = bearer(&headers(bad)).unwrap_err();
            assert_eq!(e.status(), 401, "{bad:?}");
        }
    }
}
