//! Running a wasm rule through the sandbox. (Wired to hookbox-wasm when that crate lands.)

use std::sync::Arc;

use hookbox_core::event::Event;
use hookbox_core::output::{FailureClass, HookFailure, RunOutput};
use hookbox_core::rule::Rule;

use crate::host::{Inner, Loaded};
use crate::payloads::Payloads;

impl Inner {
    pub(crate) async fn run_wasm(
        &self,
        _loaded: &Loaded,
        _rule: &Rule,
        _event: &Arc<Event>,
        _payloads: &Payloads,
    ) -> (RunOutput, Option<String>) {
        (
            RunOutput::Failed(HookFailure::new(
                FailureClass::IncompatibleComponent,
                "wasm hooks are not wired into this host build yet",
            )),
            None,
        )
    }
}
