//! The snapshot store against a real folder: layout and modes kept, content deduplicated,
//! links recorded and never followed, limits refused with the largest files named, a tree
//! read-only and whole, collection removing what nothing keeps.

use std::collections::HashSet;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use hookbox_trust::{Base, EntryKind};
use rustix::fs::{Mode, OFlags};

use super::*;

fn write(root: &Path, rel: &str, body: &str, mode: u32) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn open_dir(p: &Path) -> OwnedFd {
    rustix::fs::open(
        p,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap()
}

struct Fixture {
    plugin: tempfile::TempDir,
    _state: tempfile::TempDir,
    store: SnapshotStore,
}

impl Fixture {
    fn new() -> Fixture {
        let plugin = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let dir = open_dir(state.path());
        let store = SnapshotStore::open_in(dir.as_fd(), state.path(), true)
            .unwrap()
            .unwrap();
        Fixture {
            plugin,
            _state: state,
            store,
        }
    }

    fn take(&self, limits: &SnapshotLimits) -> Result<Snapshot, SnapshotError> {
        let base = open_dir(self.plugin.path());
        self.store.take(
            &[SnapshotSource {
                base: Base::Plugin,
                path: String::new(),
                single_file: false,
                base_dir: base.as_fd(),
                base_path: self.plugin.path(),
            }],
            limits,
        )
    }
}

const LIMITS: SnapshotLimits = SnapshotLimits {
    max_files: 100,
    max_bytes: 1 << 20,
    max_file_bytes: 1 << 20,
};

#[test]
fn a_snapshot_keeps_the_layout_the_execute_bit_and_links_and_dedupes_content() {
    let f = Fixture::new();
    let p = f.plugin.path();
    write(
        p,
        "hooks/g.sh",
        "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n",
        0o755,
    );
    write(p, "hooks/lib.sh", "echo lib\n", 0o644);
    write(p, "hooks/copy.sh", "echo lib\n", 0o600);
    write(p, "hooks/hooks.json", "{}", 0o644);
    write(p, ".git/HEAD", "ref: x", 0o644);
    symlink("lib.sh", p.join("hooks/alias.sh")).unwrap();
    symlink("/etc/passwd", p.join("outside")).unwrap();
    let s = f.take(&LIMITS).unwrap();
    let tree = s.base_dir(Base::Plugin);
    assert_eq!(
        std::fs::read_to_string(tree.join("hooks/g.sh")).unwrap(),
        "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n"
    );
    let mode = |rel: &str| std::fs::symlink_metadata(tree.join(rel)).unwrap().mode() & 0o777;
    assert_eq!(mode("hooks/g.sh"), 0o500, "executable stays executable");
    assert_eq!(mode("hooks/lib.sh"), 0o400);
    assert_eq!(mode("hooks"), 0o500);
    assert_eq!(mode(""), 0o500);
    // Same content and bit: one object, two links.
    let ino = |rel: &str| std::fs::metadata(tree.join(rel)).unwrap().ino();
    assert_eq!(ino("hooks/lib.sh"), ino("hooks/copy.sh"));
    // Links are recorded as what they are, never followed.
    assert_eq!(
        std::fs::read_link(tree.join("hooks/alias.sh")).unwrap(),
        Path::new("lib.sh")
    );
    assert_eq!(
        std::fs::read_link(tree.join("outside")).unwrap(),
        Path::new("/etc/passwd")
    );
    assert!(
        !tree.join(".git").exists(),
        "version control data is not copied"
    );
    // A script run from the tree finds its neighbour through $0.
    let out = std::process::Command::new(tree.join("hooks/g.sh"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "lib\n");
    // The same files make the same snapshot; opened back, it is the same.
    let again = f.take(&LIMITS).unwrap();
    assert_eq!(again.id, s.id);
    let opened = f.store.open(s.id).unwrap();
    assert_eq!(opened.manifest, s.manifest);
    let root = &opened.manifest.roots[0];
    let kinds: Vec<(&str, &EntryKind)> = root
        .entries
        .iter()
        .map(|e| (e.path.as_str(), &e.kind))
        .collect();
    assert!(kinds.iter().any(|(p, k)| *p == "hooks/alias.sh"
        && matches!(k, EntryKind::Symlink { target } if target == "lib.sh")));
}

#[test]
fn limits_are_refused_before_anything_is_read_naming_the_largest_files() {
    let f = Fixture::new();
    let p = f.plugin.path();
    write(p, "small.sh", "x", 0o644);
    write(p, "big.bin", &"b".repeat(3000), 0o644);
    write(p, "mid.bin", &"m".repeat(2000), 0o644);
    let e = f
        .take(&SnapshotLimits {
            max_bytes: 4000,
            ..LIMITS
        })
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("trust.max_snapshot_bytes"), "{msg}");
    let big = msg.find("big.bin").unwrap();
    let mid = msg.find("mid.bin").unwrap();
    assert!(big < mid, "largest first: {msg}");
    let e = f
        .take(&SnapshotLimits {
            max_files: 2,
            ..LIMITS
        })
        .unwrap_err();
    assert!(e.to_string().contains("trust.max_snapshot_files"), "{e}");
    let e = f
        .take(&SnapshotLimits {
            max_file_bytes: 2500,
            ..LIMITS
        })
        .unwrap_err();
    assert!(e.to_string().contains("big.bin"), "{e}");
    assert!(e.to_string().contains("trust.max_pinned_file_bytes"), "{e}");
    // Nothing was stored by the refusals.
    assert!(
        list(f.store.folder(OBJECTS, true).unwrap().unwrap().as_fd())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_root_reached_through_a_link_and_fifos_are_never_followed() {
    let f = Fixture::new();
    let p = f.plugin.path();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.sh", "secret", 0o644);
    symlink(outside.path(), p.join("hooks")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p.join("fifo"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let base = open_dir(p);
    let e = f
        .store
        .take(
            &[SnapshotSource {
                base: Base::Plugin,
                path: "hooks".into(),
                single_file: false,
                base_dir: base.as_fd(),
                base_path: p,
            }],
            &LIMITS,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            SnapshotError::Root {
                reason: RootProblem::Link,
                ..
            }
        ),
        "{e}"
    );
    // The whole plugin: the link is recorded as a link, the FIFO skipped (and said).
    let s = f.take(&LIMITS).unwrap();
    assert!(
        s.skipped
            .iter()
            .any(|(path, kind)| path.ends_with("fifo") && *kind == "a FIFO")
    );
    // Nothing behind the link was copied: it is in the tree as the link it is.
    assert!(s.manifest.find(Base::Plugin, "hooks/secret.sh").is_none());
    assert!(matches!(
        s.manifest.find(Base::Plugin, "hooks"),
        Some((_, e)) if matches!(e.kind, EntryKind::Symlink { .. })
    ));
    let hooks = s.base_dir(Base::Plugin).join("hooks");
    assert!(
        std::fs::symlink_metadata(&hooks)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn collection_removes_what_no_approval_keeps_and_nothing_else() {
    let f = Fixture::new();
    let p = f.plugin.path();
    write(p, "a.sh", "v1", 0o755);
    let v1 = f.take(&LIMITS).unwrap();
    write(p, "a.sh", "v2", 0o755);
    write(p, "b.sh", "shared", 0o644);
    let v2 = f.take(&LIMITS).unwrap();
    assert_ne!(v1.id, v2.id);
    let removed = f.store.collect(&HashSet::from([v2.id])).unwrap();
    assert_eq!(removed, 1);
    assert!(matches!(
        f.store.open(v1.id),
        Err(SnapshotError::Missing { .. })
    ));
    let kept = f.store.open(v2.id).unwrap();
    assert_eq!(
        std::fs::read_to_string(kept.base_dir(Base::Plugin).join("a.sh")).unwrap(),
        "v2"
    );
    let objects = list(f.store.folder(OBJECTS, false).unwrap().unwrap().as_fd()).unwrap();
    assert_eq!(objects.len(), 2, "{objects:?}");
    f.store.collect(&HashSet::new()).unwrap();
    assert!(
        list(f.store.folder(OBJECTS, false).unwrap().unwrap().as_fd())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_edited_manifest_or_a_missing_tree_is_refused() {
    let f = Fixture::new();
    write(f.plugin.path(), "a.sh", "v1", 0o755);
    let s = f.take(&LIMITS).unwrap();
    let manifest = f
        .store
        .path()
        .join("manifests")
        .join(format!("{}.json", s.id));
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(
        &manifest,
        text.replace("\"executable\":true", "\"executable\":false"),
    )
    .unwrap();
    assert!(matches!(
        f.store.open(s.id),
        Err(SnapshotError::Manifest { .. })
    ));
    std::fs::write(&manifest, text).unwrap();
    f.store.open(s.id).unwrap();
    let trees = open_dir(&f.store.path().join("trees"));
    tree::remove(trees.as_fd(), &s.id.to_string()).unwrap();
    assert!(matches!(
        f.store.open(s.id),
        Err(SnapshotError::Missing { .. })
    ));
}

#[test]
fn binds_pair_each_root_of_the_tree_with_its_live_path() {
    let f = Fixture::new();
    write(f.plugin.path(), ".claude/hooks/g.sh", "#!/bin/sh\n", 0o755);
    write(f.plugin.path(), "top.sh", "#!/bin/sh\n", 0o755);
    write(f.plugin.path(), "data.txt", "user data\n", 0o644);
    let base = open_dir(f.plugin.path());
    let source = |path: &str, single_file| SnapshotSource {
        base: Base::Project,
        path: path.into(),
        single_file,
        base_dir: base.as_fd(),
        base_path: f.plugin.path(),
    };
    let snap = f
        .store
        .take(
            &[source(".claude/hooks", false), source("top.sh", true)],
            &SnapshotLimits {
                max_files: 10,
                max_bytes: 1 << 20,
                max_file_bytes: 1 << 20,
            },
        )
        .unwrap();
    let project = Path::new("/live/project");
    let binds = snap.binds(|b| (b == Base::Project).then(|| project.to_owned()));
    assert_eq!(
        binds,
        [
            SnapshotBind {
                tree: snap.tree.join("project/.claude/hooks"),
                live: project.join(".claude/hooks"),
                single_file: false,
            },
            SnapshotBind {
                tree: snap.tree.join("project/top.sh"),
                live: project.join("top.sh"),
                single_file: true,
            },
        ]
    );
    // The tree holds those two roots, never the rest of the project.
    assert!(snap.tree.join("project/.claude/hooks/g.sh").is_file());
    assert!(snap.tree.join("project/top.sh").is_file());
    assert!(!snap.tree.join("project/data.txt").exists());
    // No live folder for a base: its roots are left out.
    assert!(snap.binds(|_| None).is_empty());
}

/// The digest cache never stands for other bytes: a file whose settled version was hashed is
/// taken from the cache, but a same-size edit (a new version) is read again, and so is a file
/// whose object went missing from the store.
#[test]
fn a_cached_file_edited_in_place_or_missing_its_object_is_read_again() {
    let f = Fixture::new();
    let p = f.plugin.path();
    write(p, "hooks/words.txt", "rm -rf\n", 0o644);
    // Old enough to be cached (file_version::SETTLE): a second and a little.
    std::thread::sleep(super::super::file_version::SETTLE + std::time::Duration::from_millis(100));
    let first = f.take(&LIMITS).unwrap();
    let version = FileVersion::of(&std::fs::metadata(p.join("hooks/words.txt")).unwrap());
    let old = Digest::of(b"rm -rf\n");
    assert_eq!(
        FILE_DIGESTS.get(&version),
        Some(old),
        "a settled version is cached"
    );
    assert_eq!(
        f.take(&LIMITS).unwrap().id,
        first.id,
        "the same files, the same snapshot"
    );

    // The same size, other bytes, written now: another version, read again, never the cache.
    write(p, "hooks/words.txt", "rm -rX\n", 0o644);
    let edited = f.take(&LIMITS).unwrap();
    assert_ne!(edited.id, first.id);
    let text = std::fs::read_to_string(edited.tree.join("plugin/hooks/words.txt")).unwrap();
    assert_eq!(text, "rm -rX\n");

    // A cached version whose object is gone from the store: read and stored again.
    write(p, "hooks/words.txt", "rm -rf\n", 0o644);
    std::thread::sleep(super::super::file_version::SETTLE + std::time::Duration::from_millis(100));
    let again = f.take(&LIMITS).unwrap();
    assert_eq!(again.id, first.id);
    let objects = f.store.path().join(OBJECTS);
    let object = objects.join(object_name(old, false));
    std::fs::set_permissions(&objects, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_file(&object).unwrap();
    let third = f.take(&LIMITS).unwrap();
    assert_eq!(third.id, first.id);
    assert_eq!(
        std::fs::read(&object).unwrap(),
        b"rm -rf\n",
        "the object is back"
    );
}
