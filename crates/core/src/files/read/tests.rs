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
        read_bounded(f, 100),
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
