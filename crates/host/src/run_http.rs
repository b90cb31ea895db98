//! Running an `http` rule (Claude Code's `"type": "http"`): the payload POSTed to the rule's URL.
//! The runner (`hookbox-http`) is wired in with the hardening of http hooks; until then such a
//! rule fails with `http_error`, and its fail mode decides.

use hookbox_core::output::FailureClass;
use hookbox_core::rule::{HttpSpec, Rule};

use crate::dispatch::Ran;
use crate::host::Inner;
use crate::payloads::Payloads;

impl Inner {
    pub(crate) async fn run_http(
        &self,
        _rule: &Rule,
        spec: &HttpSpec,
        _payloads: &Payloads,
    ) -> Ran {
        Ran::failed(
            FailureClass::HttpError,
            format!(
                "http hooks are not run by this build (POST to {})",
                spec.url
            ),
        )
    }
}
