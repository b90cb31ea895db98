//! The per-tenant admin locks (every operation on one tenant holds its own; operations on
//! different tenants run side by side) and a tenant's removal.

use std::sync::{Arc, Mutex, PoisonError, TryLockError};
use std::time::Duration;

use crate::tenant_id::TenantId;

use super::Tenants;
use super::error::TenantError;
use super::spec::Removed;
use super::tenant::Tenant;

impl<A: Clone + Send + Sync + 'static> Tenants<A> {
    /// The admin lock of tenant `id` (held by every operation on it).
    pub(super) fn admin_lock(&self, id: &TenantId) -> Arc<Mutex<()>> {
        let mut locks = self.admin.lock().unwrap_or_else(PoisonError::into_inner);
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        locks.entry(id.clone()).or_default().clone()
    }

    /// Removes a tenant: new dispatches find no such tenant at once, its HookFired stream ends;
    /// hooks in flight get up to `grace` to finish (each also ends at its dispatch's deadline).
    /// Its folder stays; its state folder (data, replay) is deleted only with `delete_state`.
    /// The wait for hooks in flight is woken by the last one ending; the replay flush and the
    /// folder's removal do not block the calling thread.
    ///
    /// It takes the tenant's admin lock first, so it waits for an operation on the same tenant
    /// in progress (a load compiling) — on a blocking thread, never on the async one: the lock is
    /// only ever tried here, and while another operation holds it a `spawn_blocking` task waits
    /// for it to be let go.
    pub async fn remove(
        &self,
        id: &TenantId,
        grace: Duration,
        delete_state: bool,
    ) -> Result<Removed, TenantError> {
        let lock = self.admin_lock(id);
        let t = loop {
            if let Some(t) = self.take_out_if_free(&lock, id)? {
                break t;
            }
            // Another operation on the tenant holds the lock: wait for it to be let go on a
            // blocking thread, then try again (another may have taken it meanwhile).
            let busy = lock.clone();
            let _ = tokio::task::spawn_blocking(move || {
                drop(busy.lock().unwrap_or_else(PoisonError::into_inner));
            })
            .await;
        };
        // Woken when its last hook ends (no polling); the flush and the folder's removal wait
        // off this thread.
        let still_running = t
            .host
            .hooks_finished(tokio::time::Instant::now() + grace)
            .await;
        self.runtime.replay_flushed().await;
        let state_deleted = delete_state && {
            let dir = t.state_dir.clone();
            tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir).is_ok())
                .await
                .unwrap_or(false)
        };
        Ok(Removed {
            still_running,
            state_deleted,
        })
    }

    /// Takes tenant `id` out of the map (new dispatches find it no more, its stream ends) if
    /// its admin lock `lock` is free now; `None`, changing nothing, while an operation holds it.
    fn take_out_if_free(
        &self,
        lock: &Mutex<()>,
        id: &TenantId,
    ) -> Result<Option<Arc<Tenant<A>>>, TenantError> {
        let _held = match lock.try_lock() {
            Ok(held) => held,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(None),
        };
        let t = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .ok_or_else(|| TenantError::NotFound(id.clone()))?;
        t.host.set_enabled(false);
        t.host.close_fired();
        Ok(Some(t))
    }
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{HookRuntime, RuntimeSettings};

    /// The admin lock held by another operation (a load compiling) keeps `remove` waiting, but
    /// on a blocking thread: the async thread it was called on goes on serving its other tasks.
    /// Without the fix the one thread of this runtime blocks in `remove` until the holder gives
    /// up after its bound, and the order below is reversed.
    #[test]
    fn remove_waits_for_the_admin_lock_off_the_async_thread() {
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let state = tempfile::tempdir().unwrap();
        let tenants: Arc<Tenants> = Arc::new(Tenants::new(runtime, state.path()));
        let id = TenantId::new("acme").unwrap();
        let lock = tenants.admin_lock(&id);
        let (taken_tx, taken_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let _held = lock.lock().unwrap();
            taken_tx.send(()).unwrap();
            // A bound on a hang, not a timing: the test releases it long before.
            let _ = release_rx.recv_timeout(Duration::from_secs(60));
        });
        taken_rx.recv().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let removing = tokio::spawn({
                let (tenants, id, order) = (tenants.clone(), id.clone(), order.clone());
                async move {
                    let removed = tenants.remove(&id, Duration::ZERO, false).await;
                    order.lock().unwrap().push("removed");
                    removed
                }
            });
            // The remove runs first and meets the held lock.
            tokio::task::yield_now().await;
            order
                .lock()
                .unwrap()
                .push("the async thread served another task");
            // (Without the fix the holder gave up long ago: nobody is listening.)
            let _ = release_tx.send(());
            let removed = removing.await.unwrap();
            assert!(
                matches!(removed, Err(TenantError::NotFound(_))),
                "{removed:?}"
            );
        });
        holder.join().unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            ["the async thread served another task", "removed"]
        );
    }
}
