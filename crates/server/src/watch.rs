//! Replicas converge by themselves (issue 29): with a control store (`[control] dir`), every
//! `control.poll_interval_secs` a replica looks at the tenants folder and the control store —
//! a bounded poll, since the shared volumes replicas run on (NFS) have no inotify — and
//!
//! - reloads a tenant whose files changed (validate-then-swap, held where `[trust]` says: the
//!   same load as `PUT /v1/tenants/{id}`), adds a new tenant folder, removes a tenant whose
//!   folder is gone;
//! - acts on an approval or a rejection another replica wrote
//!   ([`Tenants::sync_control`](hookbox_host::Tenants::sync_control)): the held load is put in
//!   place or dropped, and a tenant whose approved set is one this replica does not have is
//!   reloaded from its folder.
//!
//! Where inotify works ([`inotify`]: a local file system), a change under the tenants folder or
//! the control store wakes the poll at once; the poll's ticker runs all the same, the fallback
//! where it does not (NFS, whose inotify does not see other machines' writes).
//!
//! "Changed files" is a fingerprint of each tenant folder: every entry's relative path, type,
//! size, modification and change times and inode, read without following symlinks, at most
//! [`MAX_WATCHED_ENTRIES`] entries (a bigger folder is reloaded only by `PUT` or SIGHUP, and
//! the poll says so once). A fingerprint decides only *whether* to load; what is served is
//! decided by the load itself and the control store, never by the fingerprint.

use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hookbox_host::{ControlSync, TenantId};

use crate::app::App;
use crate::{loader, tenant_file};

mod inotify;

/// How long the poll waits after an inotify wake before it looks: a burst of writes (a tenant
/// folder copied file by file, a record and its rename) is then seen in one look.
const WAKE_SETTLE: std::time::Duration = std::time::Duration::from_millis(50);

/// The least time between two looks an inotify wake starts: a quarter of the poll interval,
/// at least [`WAKE_SETTLE`] and at most [`MAX_WAKE_GAP`]. A tenant writing into its folder
/// without end then wakes the poll at most this often — a reload (and its compile) at most
/// twice a second at the default 2 s interval, not one per write — so one tenant's churn
/// cannot keep the replica reloading at the expense of the others. A single change is still
/// seen at once.
const WAKE_GAP_DIVISOR: u32 = 4;

/// The longest [`WAKE_GAP_DIVISOR`]'s gap gets (a long poll interval must not slow wakes).
const MAX_WAKE_GAP: std::time::Duration = std::time::Duration::from_millis(500);

/// The least time between two looks inotify wakes, for a poll every `poll_interval`.
fn wake_gap(poll_interval: std::time::Duration) -> std::time::Duration {
    (poll_interval / WAKE_GAP_DIVISOR).clamp(WAKE_SETTLE, MAX_WAKE_GAP)
}

/// Resolves when inotify reports a change; never without inotify.
async fn woken(wake: Option<&inotify::Wake>) {
    match wake {
        Some(w) => w.changed().await,
        None => std::future::pending().await,
    }
}

/// Most entries of one tenant folder the poll looks at.
pub(crate) const MAX_WATCHED_ENTRIES: usize = 10_000;

/// A tenant folder's fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    hash: u64,
    /// More than [`MAX_WATCHED_ENTRIES`]: changes past them are not seen.
    truncated: bool,
}

/// The fingerprints of every tenant folder of `dir` (by id), `None` when the folder cannot be
/// listed.
fn fingerprints(dir: &Path) -> Option<HashMap<TenantId, Fingerprint>> {
    let scan = tenant_file::scan(dir).ok()?;
    Some(
        scan.tenants
            .into_iter()
            .map(|(id, folder)| (id, fingerprint(&folder)))
            .collect(),
    )
}

/// One tenant folder's fingerprint (see the module doc).
fn fingerprint(folder: &Path) -> Fingerprint {
    let mut h = DefaultHasher::new();
    let mut seen = 0usize;
    let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(folder.join(&rel)) else {
            rel.hash(&mut h);
            "unreadable".hash(&mut h);
            continue;
        };
        // At most the entries still allowed (and one more, to know the cap was passed): a
        // folder of millions of names must not be listed into memory before the cap applies.
        let room = MAX_WATCHED_ENTRIES.saturating_sub(seen) + 1;
        let mut names: Vec<_> = entries.filter_map(Result::ok).take(room).collect();
        names.sort_by_key(std::fs::DirEntry::file_name);
        for e in names {
            seen += 1;
            if seen > MAX_WATCHED_ENTRIES {
                return Fingerprint {
                    hash: h.finish(),
                    truncated: true,
                };
            }
            let path = rel.join(e.file_name());
            path.hash(&mut h);
            // `DirEntry::metadata` does not follow a symlink.
            if let Ok(m) = e.metadata() {
                (m.file_type().is_dir(), m.file_type().is_symlink()).hash(&mut h);
                (
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec(),
                )
                    .hash(&mut h);
                m.ino().hash(&mut h);
                if m.file_type().is_dir() {
                    stack.push(path);
                }
            }
        }
    }
    Fingerprint {
        hash: h.finish(),
        truncated: false,
    }
}

/// Loads every tenant, then polls until the shutdown: what a replica with a control store
/// runs in place of the single load at start.
pub(crate) async fn load_then_poll(app: Arc<App>) {
    let dir = app.config.tenants_dir.clone();
    // Watched from before the load too: a change made while it runs wakes the first poll.
    let mut roots = vec![dir.clone()];
    roots.extend(app.config.control.dir.clone());
    let wake = if app.config.control.inotify {
        tokio::task::spawn_blocking(move || inotify::watch(roots))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    // Taken before the load, so a change made while it runs is seen at the first poll.
    let mut seen = tokio::task::spawn_blocking(move || fingerprints(&dir))
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    let summary = loader::load_all(&app).await;
    app.loaded.store(true, Ordering::Release);
    tracing::info!(
        loaded = summary.loaded.len(),
        failed = summary.failed.len(),
        skipped = summary.skipped.len(),
        "tenants loaded: ready"
    );
    let mut shutdown = app.shutdown.clone();
    let mut ticker = tokio::time::interval(app.config.control.poll_interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    let mut warned = BTreeSet::new();
    let wake_gap = wake_gap(app.config.control.poll_interval);
    let mut last_look = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = woken(wake.as_ref()) => {
                let earliest = (last_look + wake_gap).max(tokio::time::Instant::now() + WAKE_SETTLE);
                tokio::time::sleep_until(earliest).await;
            }
            _ = shutdown.changed() => return,
        }
        last_look = tokio::time::Instant::now();
        if app.draining.load(Ordering::Acquire) {
            return;
        }
        poll_once(&app, &mut seen, &mut warned).await;
    }
}

/// One look at the tenants folder and the control store.
async fn poll_once(
    app: &Arc<App>,
    seen: &mut HashMap<TenantId, Fingerprint>,
    warned: &mut BTreeSet<TenantId>,
) {
    let dir = app.config.tenants_dir.clone();
    let Some(now) = tokio::task::spawn_blocking(move || fingerprints(&dir))
        .await
        .ok()
        .flatten()
    else {
        // An unreadable folder (a volume mid-remount) must not empty the replica.
        tracing::error!(dir = %app.config.tenants_dir.display(), "cannot read the tenants folder; nothing changed");
        return;
    };
    for id in app.tenants.ids() {
        if !now.contains_key(&id) {
            loader::remove_one(app, &id).await;
        }
    }
    seen.retain(|id, _| now.contains_key(id));
    for (id, print) in now {
        if print.truncated && warned.insert(id.clone()) {
            tracing::warn!(tenant = %id, max = MAX_WATCHED_ENTRIES, "tenant folder has more entries than the poll looks at: changes past them are seen only by PUT or SIGHUP");
        }
        if seen.get(&id) != Some(&print) {
            seen.insert(id.clone(), print);
            tracing::info!(tenant = %id, "tenant folder changed: reloading");
            let _ = loader::load_one(app, &id).await;
            continue;
        }
        if app.tenants.tenant(&id).is_none() {
            continue;
        }
        let (tenants, tid) = (app.tenants.clone(), id.clone());
        match tokio::task::spawn_blocking(move || tenants.sync_control(&tid)).await {
            Ok(Ok(ControlSync::Unchanged)) => {}
            Ok(Ok(ControlSync::Applied)) => {
                tracing::info!(tenant = %id, generation = ?app.tenants.info(&id).ok().and_then(|i| i.generation), "acted on the control store");
            }
            Ok(Ok(ControlSync::Reload)) => {
                tracing::info!(tenant = %id, "the control store approved rules this replica does not have: reloading");
                let _ = loader::load_one(app, &id).await;
            }
            Ok(Err(e)) => {
                tracing::warn!(tenant = %id, error = %e, "cannot act on the control store")
            }
            Err(e) => tracing::error!(tenant = %id, error = %e, "a control poll task failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tenant writing without end wakes at most one look per gap: a quarter of the poll
    /// interval, never under the settle time, never over half a second (an hour's interval
    /// must not make wakes slow).
    #[test]
    fn wakes_are_spaced_by_a_bounded_share_of_the_poll_interval() {
        use std::time::Duration;
        assert_eq!(wake_gap(Duration::from_secs(2)), Duration::from_millis(500));
        assert_eq!(
            wake_gap(Duration::from_millis(500)),
            Duration::from_millis(125)
        );
        assert_eq!(wake_gap(Duration::from_millis(100)), WAKE_SETTLE);
        assert_eq!(wake_gap(Duration::from_secs(3600)), MAX_WAKE_GAP);
    }

    #[test]
    fn a_folder_past_the_cap_is_fingerprinted_as_truncated_and_one_within_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_WATCHED_ENTRIES {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert!(!fingerprint(dir.path()).truncated);
        std::fs::write(dir.path().join("one-more"), "").unwrap();
        assert!(fingerprint(dir.path()).truncated);
    }
}
