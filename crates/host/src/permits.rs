//! A hook's permits: this host's quota first, then the runtime's shared bound, each waited for
//! at most the runtime's `admission_wait`; a permit not given is the rule's `overloaded`
//! failure naming the setting to raise.

use hookbox_core::output::FailureClass;

use crate::admission::Unit;
use crate::hook_report::Ran;
use crate::inner::Inner;

/// Takes a hook permit: this host's quota, then the runtime's shared bound (a bounded wait).
pub(crate) async fn hook(inner: &Inner) -> Result<Unit, Ran> {
    let rt = &inner.runtime.inner;
    rt.hooks
        .take(&inner.live.hooks_quota, rt.settings.admission_wait)
        .await
        .map_err(|r| {
            Ran::failed(
                FailureClass::Overloaded,
                r.describe(
                    "hooks in flight",
                    "max_hooks_in_flight",
                    "max_hooks_in_flight",
                ),
            )
        })
}

/// Takes a wasm instance-pool slot, as for hook permits: the one gate a wasm run passes for
/// a slot (the wasm runtime keeps none of its own).
pub(crate) async fn slot(inner: &Inner) -> Result<Unit, Ran> {
    let rt = &inner.runtime.inner;
    rt.slots
        .take(&inner.live.slots_quota, rt.settings.admission_wait)
        .await
        .map_err(|r| {
            Ran::failed(
                FailureClass::Overloaded,
                r.describe("wasm pool slots", "max_pool_slots", "wasm.pool.slots"),
            )
        })
}
