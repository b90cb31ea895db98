//! The reader against what an attacker plants: FIFOs, devices, symlinks at every place on the
//! way, escapes, oversize and growing files, invalid UTF-8.

use super::*;

#[cfg(unix)]
fn fifo(path: &Path) {
    use rustix::fs::{FileType, Mode, mknodat};
    mknodat(
        rustix::fs::CWD,
        path,
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

#[test]
fn invalid_utf8_is_located() {
    let mut bytes = b"{\n  \"a\": \"\xc3\xa9".to_vec();
    bytes.extend_from_slice(b"\xff\"}");
    match decode_utf8(bytes) {
        Err(ReadErrorKind::InvalidUtf8 {
            offset,
            line,
            column,
        }) => {
            // `  "a": "é` is 9 characters: the bad byte is the 10th.
            assert_eq!((offset, line, column), (12, 2, 10));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn size_is_checked_before_and_while_reading() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.json");
    std::fs::write(&p, vec![b' '; 2048]).unwrap();
    let e = read_file(&p, 1024, Symlinks::Follow).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ReadErrorKind::TooLarge {
                size: 2048,
                max: 1024
            }
        ),
        "{e:?}"
    );
    assert!(read_file(&p, 4096, Symlinks::Refuse).is_ok());
    let e = read_file(dir.path(), 4096, Symlinks::Refuse).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ReadErrorKind::NotAFile {
                kind: "a directory"
            }
        ),
        "{e:?}"
    );
    let e = read_file(&dir.path().join("nope"), 1, Symlinks::Refuse).unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    // A file that lies about its size (or grows) is cut at the limit and refused.
    let f = std::fs::File::open(&p).unwrap();
    assert!(matches!(
        read_bounded(f, 2048, 100),
        Err(ReadErrorKind::TooLarge {
            size: 101,
            max: 100
        })
    ));
}

#[test]
fn errors_quote_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tenant.toml");
    std::fs::write(&p, vec![b'x'; 10]).unwrap();
    let e = read_file(&p, 4, Symlinks::Refuse).unwrap_err();
    assert_eq!(e.path, p);
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read `{}`: file is 10 bytes, over the limit of 4 bytes",
            p.display()
        )
    );
    let e = read_file_beneath(dir.path(), Path::new("sub/none.json"), 4).unwrap_err();
    assert_eq!(e.path, dir.path().join("sub/none.json"));
    assert!(e.to_string().ends_with("none.json`: no such file"), "{e}");
}

#[cfg(unix)]
#[test]
fn files_are_opened_without_blocking() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("settings.json"), "{}").unwrap();
    let file = open_beneath(root.path(), Path::new("settings.json")).unwrap();
    let flags = rustix::fs::fcntl_getfl(&file).unwrap();
    assert!(flags.contains(rustix::fs::OFlags::NONBLOCK), "{flags:?}");
    // So a FIFO with no writer opens at once, and the opened file's type refuses it.
    fifo(&root.path().join("pipe"));
    let file = open_beneath(root.path(), Path::new("pipe")).unwrap();
    let e = read_opened(file, Path::new("pipe"), 100).unwrap_err();
    assert!(
        matches!(e.kind, ReadErrorKind::NotAFile { kind: "a FIFO" }),
        "{e:?}"
    );
    let file = open_path(&root.path().join("pipe"), Symlinks::Refuse).unwrap();
    assert!(read_opened(file, Path::new("pipe"), 100).is_err());
}

#[cfg(unix)]
#[test]
fn read_file_beneath_refuses_fifos_devices_symlinks_escapes_and_oversize() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("project");
    std::fs::create_dir_all(root.join(".hookbox")).unwrap();
    std::fs::write(outer.path().join("outside.json"), "{}").unwrap();
    std::fs::write(root.join(".hookbox/ok.json"), "{\"replay\": {}}").unwrap();
    std::fs::write(root.join(".hookbox/big.json"), vec![b' '; 2048]).unwrap();
    fifo(&root.join(".hookbox/settings.json"));
    std::os::unix::fs::symlink("/dev/zero", root.join(".hookbox/zero.json")).unwrap();
    std::os::unix::fs::symlink("../../outside.json", root.join(".hookbox/out.json")).unwrap();
    // A symlink that stays inside is refused too: nothing beneath the root is followed.
    std::os::unix::fs::symlink("ok.json", root.join(".hookbox/inside.json")).unwrap();
    let read = |rel: &str| read_file_beneath(&root, Path::new(rel), 1024);
    assert_eq!(read(".hookbox/ok.json").unwrap(), "{\"replay\": {}}");
    let e = read(".hookbox/settings.json").unwrap_err();
    assert!(
        matches!(e.kind, ReadErrorKind::NotAFile { kind: "a FIFO" }),
        "{e:?}"
    );
    assert_eq!(e.kind.to_string(), "not a regular file (a FIFO)");
    for rel in [
        ".hookbox/zero.json",
        ".hookbox/out.json",
        ".hookbox/inside.json",
    ] {
        let e = read(rel).unwrap_err();
        match &e.kind {
            ReadErrorKind::Symlink { at } => assert_eq!(at, Path::new(rel)),
            other => panic!("{rel}: {other:?}"),
        }
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
    for rel in [
        "../outside.json",
        "/etc/passwd",
        ".hookbox/../../outside.json",
    ] {
        let e = read(rel).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Escapes), "{rel}: {e:?}");
    }
    assert!(matches!(
        read(".hookbox/big.json").unwrap_err().kind,
        ReadErrorKind::TooLarge {
            size: 2048,
            max: 1024
        }
    ));
    assert!(read(".hookbox/none.json").unwrap_err().is_not_found());
    assert!(matches!(
        read("").unwrap_err().kind,
        ReadErrorKind::NotAFile {
            kind: "a directory"
        }
    ));
}

#[cfg(unix)]
#[test]
fn a_symlinked_folder_on_the_way_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("tenant");
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::create_dir_all(outer.path().join("other/.hookbox")).unwrap();
    std::fs::write(outer.path().join("other/.hookbox/settings.json"), "{}").unwrap();
    std::fs::write(root.join("real/settings.json"), "{}").unwrap();
    // `.hookbox` is a link to another tenant's folder; `alias` one to a folder inside.
    std::os::unix::fs::symlink(outer.path().join("other/.hookbox"), root.join(".hookbox")).unwrap();
    std::os::unix::fs::symlink("real", root.join("alias")).unwrap();
    for (rel, at) in [
        (".hookbox/settings.json", ".hookbox"),
        ("alias/settings.json", "alias"),
    ] {
        let e = read_file_beneath(&root, Path::new(rel), 1024).unwrap_err();
        match &e.kind {
            ReadErrorKind::Symlink { at: link } => assert_eq!(link, Path::new(at), "{rel}"),
            other => panic!("{rel}: {other:?}"),
        }
    }
    assert_eq!(
        read_file_beneath(&root, Path::new("real/settings.json"), 1024).unwrap(),
        "{}"
    );
    // The root itself is the caller's: a root reached through a link is fine.
    std::os::unix::fs::symlink(&root, outer.path().join("root-link")).unwrap();
    assert!(
        read_file_beneath(
            &outer.path().join("root-link"),
            Path::new("real/settings.json"),
            1024
        )
        .is_ok()
    );
}

#[cfg(unix)]
#[test]
fn a_folder_handle_keeps_reading_where_it_was_opened() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("settings.json"), "kept").unwrap();
    let handle = std::fs::File::open(&root).unwrap();
    // The folder is renamed and another put in its place: the handle still reads the first.
    std::fs::rename(&root, outer.path().join("moved")).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("settings.json"), "planted").unwrap();
    let file = open_beneath_dir(&handle, Path::new("settings.json"), Path::new("s")).unwrap();
    assert_eq!(read_text(file, Path::new("s"), 100).unwrap(), "kept");
    let e = open_beneath_dir(&handle, Path::new("../x"), Path::new("x")).unwrap_err();
    assert!(matches!(e.kind, ReadErrorKind::Escapes), "{e:?}");
}

#[cfg(unix)]
#[test]
fn open_path_refuses_or_follows_a_final_symlink() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.toml"), "a = 1").unwrap();
    let link = dir.path().join("tenant.toml");
    std::os::unix::fs::symlink("real.toml", &link).unwrap();
    let e = read_file(&link, 100, Symlinks::Refuse).unwrap_err();
    assert!(
        matches!(&e.kind, ReadErrorKind::Symlink { at } if at == &link),
        "{e:?}"
    );
    assert_eq!(read_file(&link, 100, Symlinks::Follow).unwrap(), "a = 1");
    // Followed or not, a link to a device is never read.
    let zero = dir.path().join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let e = read_file(&zero, 100, Symlinks::Follow).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ReadErrorKind::NotAFile {
                kind: "a character device"
            }
        ),
        "{e:?}"
    );
    assert!(matches!(
        read_file(&zero, 100, Symlinks::Refuse).unwrap_err().kind,
        ReadErrorKind::Symlink { .. }
    ));
}

/// Runs `f` on a thread and waits at most a minute for it: a read that blocks fails the test
/// instead of hanging it (no timing is asserted; a minute is only a bound on a hang).
#[cfg(unix)]
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the reader blocked")
}

#[cfg(unix)]
#[test]
fn the_metadata_kept_is_the_descriptors_not_a_new_stat_of_the_path() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("hook.sh");
    std::fs::write(&path, "#!/bin/sh\necho checked\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let opened = std::fs::metadata(&path).unwrap();
    let file = open_beneath(root.path(), Path::new("hook.sh")).unwrap();
    // Swapped after the open: another file renamed over the path, with other bytes and mode.
    let other = root.path().join("other.sh");
    std::fs::write(&other, "#!/bin/sh\necho swapped in\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let at_path = std::fs::metadata(&path).unwrap();
    assert_ne!((at_path.ino(), at_path.len()), (opened.ino(), opened.len()));
    let checked = CheckedFile::new(file, &path, 1024).unwrap();
    let meta = checked.metadata();
    assert_eq!((meta.dev(), meta.ino()), (opened.dev(), opened.ino()));
    assert_eq!(meta.mode() & 0o7777, 0o750);
    assert_eq!(meta.len(), opened.len());
    assert_eq!(checked.path(), path);
    assert_eq!(checked.read().unwrap(), b"#!/bin/sh\necho checked\n");
}

#[cfg(unix)]
#[test]
fn a_fifo_swapped_in_is_refused_or_never_reached_and_nothing_blocks() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("settings.json");
    std::fs::write(&path, "{}").unwrap();
    // Opened, then a FIFO swapped in at the path: the read is of the file opened.
    let file = open_beneath(root.path(), Path::new("settings.json")).unwrap();
    std::fs::remove_file(&path).unwrap();
    fifo(&path);
    let shown = path.clone();
    let bytes = within_a_minute(move || CheckedFile::new(file, &shown, 100).unwrap().read());
    assert_eq!(bytes.unwrap(), b"{}");
    // The FIFO itself, through every way to open: opened at once, refused by its type.
    let dir =
        cap_std::fs::Dir::open_ambient_dir(root.path(), cap_std::ambient_authority()).unwrap();
    let (beneath, rel) = (root.path().to_path_buf(), Path::new("settings.json"));
    let e = within_a_minute(move || {
        let opened = [
            open_beneath(&beneath, rel).unwrap(),
            open_path(&beneath.join(rel), Symlinks::Refuse).unwrap(),
            open_within(&dir, rel, rel).unwrap(),
        ];
        opened
            .into_iter()
            .map(|f| CheckedFile::new(f, rel, 100).unwrap_err())
            .collect::<Vec<_>>()
    });
    for e in e {
        assert!(
            matches!(e.kind, ReadErrorKind::NotAFile { kind: "a FIFO" }),
            "{e:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_is_refused_beneath_a_root_and_followed_within_a_plugin_only_inside_it() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("plugin");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("real.wasm"), "bytes").unwrap();
    std::fs::write(outer.path().join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink("real.wasm", root.join("inside.wasm")).unwrap();
    std::os::unix::fs::symlink("../secret", root.join("out.wasm")).unwrap();
    let dir = std::fs::File::open(&root).unwrap();
    for rel in ["inside.wasm", "out.wasm"] {
        let e = open_beneath_dir(&dir, Path::new(rel), Path::new(rel)).unwrap_err();
        assert!(
            matches!(&e.kind, ReadErrorKind::Symlink { at } if at == Path::new(rel)),
            "{e:?}"
        );
    }
    let plugin = cap_std::fs::Dir::open_ambient_dir(&root, cap_std::ambient_authority()).unwrap();
    let inside = open_within(&plugin, Path::new("inside.wasm"), Path::new("inside.wasm")).unwrap();
    assert_eq!(
        CheckedFile::new(inside, Path::new("inside.wasm"), 10)
            .unwrap()
            .read()
            .unwrap(),
        b"bytes"
    );
    let e = open_within(&plugin, Path::new("out.wasm"), Path::new("out.wasm")).unwrap_err();
    assert!(
        matches!(e.kind, ReadErrorKind::Escapes | ReadErrorKind::Io(_)),
        "{e:?}"
    );
    let e = open_within(&plugin, Path::new("../secret"), Path::new("../secret")).unwrap_err();
    assert!(matches!(e.kind, ReadErrorKind::Escapes), "{e:?}");
}

#[test]
fn over_the_limit_is_refused_naming_the_limit_before_and_after_the_check() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");
    std::fs::write(&p, vec![b'x'; 2048]).unwrap();
    let e = CheckedFile::new(open_path(&p, Symlinks::Refuse).unwrap(), &p, 1024).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ReadErrorKind::TooLarge {
                size: 2048,
                max: 1024
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().ends_with("over the limit of 1024 bytes"),
        "{e}"
    );
    // Within the limit when checked, over it when read: cut at the limit plus one, refused.
    let p = dir.path().join("grows");
    std::fs::write(&p, vec![b'x'; 10]).unwrap();
    let checked = CheckedFile::new(open_path(&p, Symlinks::Refuse).unwrap(), &p, 20).unwrap();
    let mut w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    w.write_all(&[b'y'; 100]).unwrap();
    let e = checked.read().unwrap_err();
    assert!(
        matches!(e.kind, ReadErrorKind::TooLarge { size: 21, max: 20 }),
        "{e:?}"
    );
    assert_eq!(e.path, p);
}
