//! The per-tenant admin locks and the operations made under one: every operation that changes a
//! tenant (add, put, reload, approve, reject, disable, enable, remove) holds **that tenant's**
//! lock, so none is lost to another on the same tenant, while operations on different tenants
//! run side by side — one tenant's slow compile never holds another's `disable`.
//!
//! [`TenantAdmin`] is the lock held: an embedder that must do more than one step under it (the
//! server reads a tenant's `tenant.toml`, loads it and records the outcome as one step) takes it
//! with [`Tenants::admin`] and calls the operations on it. Taking it waits for the operation in
//! progress on the same tenant, so it is blocking: async code takes it on the blocking pool.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use hookbox_trust::Digest;

use crate::tenant_id::TenantId;

use super::Tenants;
use super::error::TenantError;
use super::spec::{Removed, TenantAttachment, TenantInfo, TenantSpec};
use super::tenant::Tenant;

/// The tenants an operation is in progress on. Cheap: an operation inserts its tenant's id and
/// removes it when done, waking whoever waits.
#[derive(Debug, Default)]
pub(super) struct AdminLocks {
    busy: Mutex<HashSet<TenantId>>,
    freed: Condvar,
}

/// One tenant's admin lock, held; let go when dropped.
#[derive(Debug)]
pub(super) struct AdminGuard {
    locks: Arc<AdminLocks>,
    id: TenantId,
}

impl AdminLocks {
    /// Holds `id`'s lock, waiting for the operation in progress on it (if any).
    ///
    /// # Blocking
    /// For as long as that operation takes.
    pub(super) fn lock(self: &Arc<Self>, id: &TenantId) -> AdminGuard {
        self.free(id).insert(id.clone());
        AdminGuard {
            locks: self.clone(),
            id: id.clone(),
        }
    }

    /// Holds `id`'s lock if no operation holds it now.
    pub(super) fn try_lock(self: &Arc<Self>, id: &TenantId) -> Option<AdminGuard> {
        let mut busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        busy.insert(id.clone()).then(|| AdminGuard {
            locks: self.clone(),
            id: id.clone(),
        })
    }

    /// Waits until no operation holds `id`'s lock (without taking it).
    ///
    /// # Blocking
    /// For as long as that operation takes.
    fn wait_free(&self, id: &TenantId) {
        drop(self.free(id));
    }

    /// The set of busy tenants, once `id` is not in it.
    ///
    /// # Blocking
    /// For as long as the operation on `id` takes.
    fn free(&self, id: &TenantId) -> MutexGuard<'_, HashSet<TenantId>> {
        let mut busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        while busy.contains(id) {
            busy = self
                .freed
                .wait(busy)
                .unwrap_or_else(PoisonError::into_inner);
        }
        busy
    }
}

impl Drop for AdminGuard {
    fn drop(&mut self) {
        self.locks
            .busy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        self.locks.freed.notify_all();
    }
}

/// Tenant `id`'s admin lock, held: the operations that change the tenant, each made under it.
/// Dropping it lets the next operation on the tenant go on.
pub struct TenantAdmin<'a, A = ()> {
    pub(super) tenants: &'a Tenants<A>,
    pub(super) id: TenantId,
    _held: AdminGuard,
}

impl<A> std::fmt::Debug for TenantAdmin<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantAdmin")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<A: TenantAttachment> Tenants<A> {
    /// Holds tenant `id`'s admin lock (the tenant need not exist: `put` may add it).
    ///
    /// # Blocking
    /// Waits for the operation in progress on the same tenant (a load compiling: seconds):
    /// call it from `spawn_blocking` in async code. Operations on other tenants never make it
    /// wait.
    pub fn admin(&self, id: &TenantId) -> TenantAdmin<'_, A> {
        TenantAdmin {
            _held: self.admin.lock(id),
            tenants: self,
            id: id.clone(),
        }
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
        let t = loop {
            if let Some(held) = self.admin.try_lock(id) {
                break self.take_out(id, held)?;
            }
            // Another operation on the tenant holds the lock: wait for it to be let go on a
            // blocking thread, then try again (another may have taken it meanwhile).
            let (locks, busy) = (self.admin.clone(), id.clone());
            let _ = tokio::task::spawn_blocking(move || locks.wait_free(&busy)).await;
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

    /// Takes tenant `id` out of the map (new dispatches find it no more, its stream ends), its
    /// admin lock `_held`.
    fn take_out(&self, id: &TenantId, _held: AdminGuard) -> Result<Arc<Tenant<A>>, TenantError> {
        let t = self
            .map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
            .ok_or_else(|| TenantError::NotFound(id.clone()))?;
        t.host.set_enabled(false);
        t.host.close_fired();
        Ok(t)
    }
}

impl<A: TenantAttachment> TenantAdmin<'_, A> {
    /// The tenant whose lock this is.
    pub fn id(&self) -> &TenantId {
        &self.id
    }

    /// [`Tenants::add`], under this lock. `spec.id` must be this lock's tenant.
    ///
    /// # Blocking
    /// Reads the tenant's files and may compile its components.
    pub fn add(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        self.check(&spec.id)?;
        self.tenants.add_held(spec)
    }

    /// [`Tenants::put`], under this lock. `spec.id` must be this lock's tenant.
    ///
    /// # Blocking
    /// Reads the tenant's files and may compile its components.
    pub fn put(&self, spec: TenantSpec<A>) -> Result<TenantInfo, TenantError> {
        self.check(&spec.id)?;
        self.tenants.put_held(spec)
    }

    /// [`Tenants::reload`], under this lock.
    ///
    /// # Blocking
    /// Reads the tenant's files and may compile its components.
    pub fn reload(&self, paths: Option<Vec<PathBuf>>) -> Result<TenantInfo, TenantError> {
        self.tenants.reload_held(&self.id, paths)
    }

    /// [`Tenants::approve`], under this lock.
    ///
    /// # Blocking
    /// Writes the tenant's record (two `fsync`s).
    pub fn approve(&self, digest: &Digest) -> Result<TenantInfo, TenantError> {
        self.tenants.approve_held(&self.id, digest)
    }

    /// [`Tenants::reject`], under this lock.
    pub fn reject(&self, digest: Option<&Digest>) -> Result<TenantInfo, TenantError> {
        self.tenants.reject_held(&self.id, digest)
    }

    /// [`Tenants::disable`] or [`Tenants::enable`], under this lock.
    pub fn set_enabled(&self, enabled: bool) -> Result<TenantInfo, TenantError> {
        let t = self.tenants.get(&self.id)?;
        t.host.set_enabled(enabled);
        Ok(t.info())
    }

    fn check(&self, id: &TenantId) -> Result<(), TenantError> {
        if *id == self.id {
            Ok(())
        } else {
            Err(TenantError::NotHeld {
                held: self.id.clone(),
                asked: id.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{HookRuntime, RuntimeSettings};

    fn tenants() -> (tempfile::TempDir, Arc<Tenants>) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = HookRuntime::new(RuntimeSettings::default()).unwrap();
        let tenants = Arc::new(Tenants::new(runtime, dir.path().join("state")));
        (dir, tenants)
    }

    fn add(tenants: &Tenants, root: &std::path::Path, id: &str) -> TenantId {
        let id = TenantId::new(id).unwrap();
        let folder = root.join(id.as_str());
        std::fs::create_dir_all(&folder).unwrap();
        tenants
            .add(TenantSpec {
                id: id.clone(),
                folder,
                policy: crate::TenantPolicy::default(),
                plugins: None,
                attached: (),
            })
            .unwrap();
        id
    }

    /// Issue 32: an operation on one tenant held at a barrier (a reload compiling, say) does not
    /// delay another tenant's `disable`, and the same tenant's `disable` waits for it. Ordering,
    /// not timing: `b`'s disable completes while `a`'s lock is still held; `a`'s completes only
    /// after it is let go. With one lock for every tenant, `b`'s disable never completes here.
    #[test]
    fn a_slow_operation_on_one_tenant_does_not_delay_another_tenants_disable() {
        let (dir, tenants) = tenants();
        let a = add(&tenants, dir.path(), "a");
        let b = add(&tenants, dir.path(), "b");
        let (held_tx, held_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let order = Arc::new(Mutex::new(Vec::new()));
        let slow = std::thread::spawn({
            let (tenants, a, order) = (tenants.clone(), a.clone(), order.clone());
            move || {
                let admin = tenants.admin(&a);
                held_tx.send(()).unwrap();
                // The barrier: held until the test lets go (bounded only against a hang).
                let _ = release_rx.recv_timeout(Duration::from_secs(120));
                order.lock().unwrap().push("a's slow operation ends");
                admin.reload(None).unwrap();
            }
        });
        held_rx.recv().unwrap();
        let (a_done_tx, a_done_rx) = std::sync::mpsc::channel();
        let same = std::thread::spawn({
            let (tenants, a, order) = (tenants.clone(), a.clone(), order.clone());
            move || {
                tenants.disable(&a).unwrap();
                order.lock().unwrap().push("a disabled");
                a_done_tx.send(()).unwrap();
            }
        });
        // Another tenant's disable completes while `a` is held.
        tenants.disable(&b).unwrap();
        order.lock().unwrap().push("b disabled");
        assert!(
            a_done_rx.try_recv().is_err(),
            "a's disable went past a's held lock"
        );
        release_tx.send(()).unwrap();
        a_done_rx.recv_timeout(Duration::from_secs(120)).unwrap();
        slow.join().unwrap();
        same.join().unwrap();
        assert_eq!(
            *order.lock().unwrap(),
            ["b disabled", "a's slow operation ends", "a disabled"]
        );
        assert_eq!(
            tenants.info(&a).unwrap().state,
            super::super::TenantState::Disabled
        );
    }

    /// The admin lock held by another operation (a load compiling) keeps `remove` waiting, but
    /// on a blocking thread: the async thread it was called on goes on serving its other tasks.
    /// Without the fix the one thread of this runtime blocks in `remove` until the holder gives
    /// up after its bound, and the order below is reversed.
    #[test]
    fn remove_waits_for_the_admin_lock_off_the_async_thread() {
        let (_dir, tenants) = tenants();
        let id = TenantId::new("acme").unwrap();
        let (taken_tx, taken_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn({
            let (tenants, id) = (tenants.clone(), id.clone());
            move || {
                let _held = tenants.admin(&id);
                taken_tx.send(()).unwrap();
                // A bound on a hang, not a timing: the test releases it long before.
                let _ = release_rx.recv_timeout(Duration::from_secs(60));
            }
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
