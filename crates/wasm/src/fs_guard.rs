//! Host-side guards around `wasi:filesystem/types`, installed by shadowing wasmtime-wasi's own
//! definitions of a few `descriptor` methods in the linker (`Linker::allow_shadowing`): each
//! shadow checks, then calls wasmtime-wasi's implementation, so its capability checks (paths
//! stay beneath the mount, `ro` refuses writes) are untouched.
//!
//! - **Only regular files and folders are opened.** `open-at` first stats the target (no
//!   file is opened for that) and refuses a FIFO, socket or device with `unsupported`: opening a
//!   FIFO blocks in the kernel until a peer opens the other end, on a blocking thread no deadline
//!   can reach, and a device such as `/dev/zero` never ends. Remaining race, for SECURITY.md:
//!   another process of the host swapping a regular file for a FIFO between the stat and the
//!   open. The guest itself cannot (WASI has no `mkfifo`, and a guest's calls are sequential).
//! - **The per-event write budget** ([`WriteQuota`]): `write`, `set-size` (growth), and the
//!   streams of `write-via-stream` / `append-via-stream` charge bytes; `open-at` creating a new
//!   file, `create-directory-at`, `symlink-at` and `link-at` charge one file each.
//! - **Symbolic links only where the rule allows them** ([`MountLinks`]): `symlink-at`, and
//!   `link-at` or `rename-at` of an existing link, answer `not-permitted` unless the destination
//!   folder is in a mount with `"symlinks": true`.

use std::os::fd::AsFd;
use std::sync::Arc;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, DescriptorType, ErrorCode, Filesize, Host as _, HostDescriptor, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::p2::{DynOutputStream, FsError, FsResult};

use crate::links::MountLinks;
use crate::quota::{OverQuota, QuotaStream, WriteQuota};
use crate::state::StoreState;

/// The interface whose methods are shadowed, exactly as wasmtime-wasi 48.0.8 names it when it
/// links `wasi:filesystem/types` (guests importing any `0.2.x` resolve to it).
pub(crate) const FS_TYPES: &str = "wasi:filesystem/types@0.2.12";

impl From<OverQuota> for FsError {
    fn from(_: OverQuota) -> FsError {
        ErrorCode::InsufficientSpace.into()
    }
}

/// A second handle on a borrowed descriptor, for a call made before the one that consumes it.
fn again(fd: &Resource<Descriptor>) -> Resource<Descriptor> {
    Resource::new_borrow(fd.rep())
}

/// Whether `err` is the guest-visible error `code` (not a trap).
fn is(err: &FsError, code: ErrorCode) -> bool {
    err.downcast_ref().is_some_and(|c: &ErrorCode| *c == code)
}

/// The filesystem view and the write budget of a store.
fn parts<'a>(
    store: &'a mut StoreContextMut<'_, StoreState>,
) -> (
    wasmtime_wasi::filesystem::WasiFilesystemCtxView<'a>,
    Arc<WriteQuota>,
) {
    let (view, quota, _) = with_links(store);
    (view, quota)
}

/// [`parts`], and the mounts that allow symbolic links (`None`: none does).
fn with_links<'a>(
    store: &'a mut StoreContextMut<'_, StoreState>,
) -> (
    wasmtime_wasi::filesystem::WasiFilesystemCtxView<'a>,
    Arc<WriteQuota>,
    Option<Arc<MountLinks>>,
) {
    let state = store.data_mut();
    let quota = state.quota.clone();
    let links = state.links.clone();
    (state.filesystem(), quota, links)
}

/// `FsResult` → what the guest receives: an error code, or a trap for a host-side failure.
fn lower<T>(
    view: &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    r: FsResult<T>,
) -> wasmtime::Result<(Result<T, ErrorCode>,)> {
    Ok((match r {
        Ok(v) => Ok(v),
        Err(e) => Err(view.convert_error_code(e)?),
    },))
}

/// Shadows the guarded `descriptor` methods of [`FS_TYPES`] in `linker`, which must already
/// hold wasmtime-wasi's definitions.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    shadow(&mut linker.instance(FS_TYPES)?)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Defines the guarded methods in `inst`, the reopened `wasi:filesystem/types` instance.
fn shadow(inst: &mut wasmtime::component::LinkerInstance<'_, StoreState>) -> wasmtime::Result<()> {
    inst.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, path_flags, path, oflags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            Box::new(async move {
                let (mut view, quota) = parts(&mut store);
                let r = open_at(&mut view, &quota, fd, path_flags, path, oflags, flags).await;
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.write",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, buf, offset): (Resource<Descriptor>, Vec<u8>, Filesize)| {
            Box::new(async move {
                let (mut view, quota) = parts(&mut store);
                let r = match quota.charge_bytes(buf.len() as u64) {
                    Ok(()) => view.write(fd, buf, offset).await,
                    Err(over) => Err(over.into()),
                };
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.set-size",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, size): (Resource<Descriptor>, Filesize)| {
            Box::new(async move {
                let (mut view, quota) = parts(&mut store);
                let r = set_size(&mut view, &quota, fd, size).await;
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.create-directory-at",
        |mut store: StoreContextMut<'_, StoreState>, (fd, path): (Resource<Descriptor>, String)| {
            Box::new(async move {
                let (mut view, quota) = parts(&mut store);
                let r = creating(&quota, view.create_directory_at(fd, path)).await;
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.symlink-at",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, old, new): (Resource<Descriptor>, String, String)| {
            Box::new(async move {
                let (mut view, quota, links) = with_links(&mut store);
                let r = match links_allowed(&view, links.as_deref(), &fd) {
                    Ok(true) => creating(&quota, view.symlink_at(fd, old, new)).await,
                    Ok(false) => Err(ErrorCode::NotPermitted.into()),
                    Err(e) => Err(e),
                };
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, flags, old, new_fd, new): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| {
            Box::new(async move {
                let (mut view, quota, links) = with_links(&mut store);
                let r = match moves_a_link_out_of_bounds(&mut view, links, &fd, &old, &new_fd).await
                {
                    true => Err(ErrorCode::NotPermitted.into()),
                    false => creating(&quota, view.link_at(fd, flags, old, new_fd, new)).await,
                };
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap_async(
        "[method]descriptor.rename-at",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, old, new_fd, new): (Resource<Descriptor>, String, Resource<Descriptor>, String)| {
            Box::new(async move {
                let (mut view, _, links) = with_links(&mut store);
                let r = match moves_a_link_out_of_bounds(&mut view, links, &fd, &old, &new_fd)
                    .await
                {
                    true => Err(ErrorCode::NotPermitted.into()),
                    false => view.rename_at(fd, old, new_fd, new).await,
                };
                lower(&mut view, r)
            })
        },
    )?;
    inst.func_wrap(
        "[method]descriptor.write-via-stream",
        |mut store: StoreContextMut<'_, StoreState>,
         (fd, offset): (Resource<Descriptor>, Filesize)| {
            let (mut view, quota) = parts(&mut store);
            let r = view.write_via_stream(fd, offset);
            let r = r.and_then(|s| charged_stream(&mut view, s, quota));
            lower(&mut view, r)
        },
    )?;
    inst.func_wrap(
        "[method]descriptor.append-via-stream",
        |mut store: StoreContextMut<'_, StoreState>, (fd,): (Resource<Descriptor>,)| {
            let (mut view, quota) = parts(&mut store);
            let r = view.append_via_stream(fd);
            let r = r.and_then(|s| charged_stream(&mut view, s, quota));
            lower(&mut view, r)
        },
    )?;
    Ok(())
}

/// Refuses to open anything but a regular file or a folder, and charges a newly created file.
async fn open_at(
    view: &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    quota: &WriteQuota,
    fd: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
    oflags: OpenFlags,
    flags: DescriptorFlags,
) -> FsResult<Resource<Descriptor>> {
    let mut creates = false;
    match view.stat_at(again(&fd), path_flags, path.clone()).await {
        Ok(stat) => openable(stat.type_)?,
        // Creating a new file: within the budget. Any other failure (outside the mount, a
        // loop, not permitted) is left for `open-at` itself to report, as it always did.
        Err(e) if oflags.contains(OpenFlags::CREATE) && is(&e, ErrorCode::NoEntry) => {
            quota.check_file()?;
            creates = true;
        }
        Err(_) => {}
    }
    let opened = view.open_at(fd, path_flags, path, oflags, flags).await?;
    if creates {
        quota.charge_file();
    }
    Ok(opened)
}

/// Whether links may be made in the folder `dir` (a guest descriptor): only in a mount with
/// `"symlinks": true`. A file descriptor is `not-directory`, as wasmtime-wasi would answer.
fn links_allowed(
    view: &wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    links: Option<&MountLinks>,
    dir: &Resource<Descriptor>,
) -> FsResult<bool> {
    let Some(links) = links else {
        return Ok(false);
    };
    match view.table.get(dir)? {
        Descriptor::Dir(d) => Ok(links.allowed_in(d.dir.as_fd())),
        Descriptor::File(_) => Err(ErrorCode::NotDirectory.into()),
    }
}

/// Whether `link-at` / `rename-at` of `path` (beneath `fd`) into the folder `to` would put an
/// existing symbolic link where links are not allowed: moving or hard-linking a relative link
/// changes what it points at. Anything but a link, or a path that cannot be read (the call
/// itself then reports why), is left to the call.
async fn moves_a_link_out_of_bounds(
    view: &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    links: Option<Arc<MountLinks>>,
    fd: &Resource<Descriptor>,
    path: &str,
    to: &Resource<Descriptor>,
) -> bool {
    match view
        .stat_at(again(fd), PathFlags::empty(), path.to_owned())
        .await
    {
        Ok(stat) if stat.type_ == DescriptorType::SymbolicLink => {
            !matches!(links_allowed(view, links.as_deref(), to), Ok(true))
        }
        _ => false,
    }
}

/// Regular files, folders, and symlinks (which are only opened when not followed, and then
/// fail with `loop`) may be opened; nothing else.
fn openable(ty: DescriptorType) -> FsResult<()> {
    match ty {
        DescriptorType::RegularFile | DescriptorType::Directory | DescriptorType::SymbolicLink => {
            Ok(())
        }
        DescriptorType::Fifo
        | DescriptorType::Socket
        | DescriptorType::CharacterDevice
        | DescriptorType::BlockDevice
        | DescriptorType::Unknown => Err(ErrorCode::Unsupported.into()),
    }
}

/// Charges the growth of a file by `set-size` (a shrink is free).
async fn set_size(
    view: &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    quota: &WriteQuota,
    fd: Resource<Descriptor>,
    size: Filesize,
) -> FsResult<()> {
    let current = view.stat(again(&fd)).await?.size;
    if size > current {
        quota.charge_bytes(size - current)?;
    }
    view.set_size(fd, size).await
}

/// Runs a call that creates one file, folder or link: refused at once when no file is left in
/// the budget, charged when it succeeded.
async fn creating(quota: &WriteQuota, call: impl Future<Output = FsResult<()>>) -> FsResult<()> {
    quota.check_file()?;
    call.await?;
    quota.charge_file();
    Ok(())
}

/// Replaces the stream `s` just pushed by wasmtime-wasi with the same stream charging `quota`.
fn charged_stream(
    view: &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    s: Resource<DynOutputStream>,
    quota: Arc<WriteQuota>,
) -> FsResult<Resource<DynOutputStream>> {
    let inner: DynOutputStream = view.table.delete(s)?;
    Ok(view.table.push(QuotaStream::wrap(inner, quota))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_and_folders_are_openable() {
        assert!(openable(DescriptorType::RegularFile).is_ok());
        assert!(openable(DescriptorType::Directory).is_ok());
        for ty in [
            DescriptorType::Fifo,
            DescriptorType::Socket,
            DescriptorType::CharacterDevice,
            DescriptorType::BlockDevice,
            DescriptorType::Unknown,
        ] {
            let e = openable(ty).unwrap_err();
            assert!(is(&e, ErrorCode::Unsupported), "{ty:?}");
        }
    }
}
