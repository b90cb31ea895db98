//! Running an `http` rule (Claude Code's `"type": "http"`): the payload JSON POSTed to the
//! rule's URL by the runtime's [`HttpRunner`](hookbox_http::HttpRunner), within this host's
//! [`HttpPolicy`](hookbox_http::HttpPolicy) (any destination for a developer; for a tenant only
//! what its policy allow-lists, checked after DNS resolution) and admission. The answer is read
//! as a command hook's stdout on exit 0; a failure is `http_error` or `timeout`, and the rule's
//! fail mode decides.

use hookbox_core::output::RunOutput;
use hookbox_core::rule::{HttpSpec, Rule};
use hookbox_http::HttpRequest;

use crate::hook_report::{Ran, with_notes};
use crate::inner::Inner;
use crate::payloads::Payloads;
use crate::permits;

pub(crate) async fn run(inner: &Inner, rule: &Rule, spec: &HttpSpec, payloads: &Payloads) -> Ran {
    let payload = match payloads.get(rule.dialect) {
        Ok(p) => p,
        Err(f) => {
            return Ran::failure(f);
        }
    };
    let _permit = match permits::hook(inner).await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    // Header values may name environment variables (`allowedEnvVars`): a developer's host
    // reads its own environment, as Claude Code does; a tenant's hooks see none of it.
    let from_env = |name: &str| std::env::var(name).ok();
    let no_env = |_: &str| None;
    let env: &(dyn Fn(&str) -> Option<String> + Send + Sync) = if inner.policy.http_env {
        &from_env
    } else {
        &no_env
    };
    let req = HttpRequest { spec, payload, env };
    match inner.runtime.inner.http.run(&req, &inner.policy.http).await {
        Ok(run) => {
            let text = (!run.output.stdout.is_empty()).then(|| run.output.stdout.clone());
            Ran {
                text: with_notes(text, &run.notes),
                out: RunOutput::Command(run.output),
                fuel: None,
            }
        }
        Err(f) => Ran::failure(f),
    }
}
