//! The plugin data folder: created once per plugin and session, inside the data root.

use hookbox_command::{CommandRequest, HookContext};
use hookbox_core::Dialect;

use crate::util::{Fixture, shell};

#[tokio::test]
async fn the_data_folder_is_created_sanitised_and_writable_by_the_hook() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let dir = fx.data_dir("my plugin", "../../x");
    assert!(dir.is_dir());
    let root = fx.path().join("data").canonicalize().unwrap();
    assert!(
        dir.starts_with(&root),
        "{} escaped {}",
        dir.display(),
        root.display()
    );
    assert_eq!(
        dir.parent().unwrap().parent().unwrap(),
        root,
        "exactly <root>/<plugin>/<session>"
    );
    assert!(!fx.path().join("x").exists());

    let ctx = HookContext::new(Dialect::Ghast).with_plugin_data(&dir);
    let req = CommandRequest::new(
        shell("echo state > \"$PLUGIN_DATA/state.txt\" && echo \"${CLAUDE_PLUGIN_DATA}\""),
        ctx,
    );
    let run = runner.run(&req).await.unwrap();
    assert_eq!(run.output.exit_code, Some(0), "{run:?}");
    assert_eq!(run.output.stdout.trim_end(), dir.display().to_string());
    assert_eq!(
        std::fs::read_to_string(dir.join("state.txt")).unwrap(),
        "state\n"
    );

    // The same plugin and session get the same folder back; another session another one.
    assert_eq!(fx.data_dir("my plugin", "../../x"), dir);
    assert_ne!(fx.data_dir("my plugin", "other"), dir);
}
