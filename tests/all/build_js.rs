//! `hookbox build-js`: a JavaScript hook built with the QuickJS runtime the binary carries, then
//! dispatched as a plugin's rule; a module that cannot build (a Node API at top level, a loop
//! that never ends) fails with its reason and writes nothing; a source that is not a regular
//! file is refused before it is read.

use std::path::Path;

use crate::util::{Dir, Run, hookbox, hookbox_with_state, repo_root};

/// `hookbox build-js SOURCE -o OUT`.
fn build(source: &Path, out: &Path) -> Run {
    hookbox([
        "build-js".as_ref(),
        source.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
}

hookbox_test_artifacts::polyglot_test! {
    /// The example's source, built by hookbox alone, answers through `dispatch`.
    #[test]
    fn a_built_hook_answers_through_dispatch() {
        assert_eq!(hookbox(["build-js", "--check"]).code, Some(0));
        let d = Dir::new();
        d.write(
            "plugin/hooks/hooks.json",
            r#"{"hooks": {"UserPromptSubmit": [{"type": "wasm", "component": "hooks/context.wasm", "config": {"context": "Project ATLAS"}}]}}"#,
        );
        let source = repo_root().join("guest-examples/js/context-injection/context-injection.js");
        let out = d.path().join("plugin/hooks/context.wasm");
        let built = build(&source, &out);
        assert_eq!(built.code, Some(0), "{built:?}");
        assert!(built.stderr.contains("built "), "{}", built.stderr);
        let plugin = d.path().join("plugin");
        let run = hookbox_with_state(
            [
                "dispatch",
                "--project-dir",
                d.path().to_str().unwrap(),
                "--event",
                "UserPromptSubmit",
                "--plugin",
                plugin.to_str().unwrap(),
                "--prompt",
                "Can I deploy?",
                "--no-replay",
                "--json",
            ],
            d.state(),
        );
        assert_eq!(run.code, Some(0), "{run:?}");
        let v = run.json();
        assert_eq!(v["verdict"]["additional_contexts"][0], "Project ATLAS", "{v}");
    }

    /// Node's `process` is not there at build time (QuickJS has no Node APIs), and a loop at top
    /// level runs out of the build's fuel: each fails with its reason, exit 1, nothing written.
    #[test]
    fn a_module_that_cannot_build_fails_with_its_reason_and_writes_nothing() {
        let d = Dir::new();
        for (name, source, reason) in [
            (
                "node.js",
                "const home = process.env.HOME;\nexport const handler = { handle() { return {}; } };",
                "ReferenceError",
            ),
            (
                "loop.js",
                "for (;;) {}\nexport const handler = { handle() { return {}; } };",
                "ran out of fuel",
            ),
        ] {
            let src = d.write(name, source);
            let out = d.path().join(format!("{name}.wasm"));
            let run = build(&src, &out);
            assert_eq!(run.code, Some(1), "{name}: {run:?}");
            assert!(run.stderr.contains(reason), "{name}: {}", run.stderr);
            assert!(!out.exists(), "{name}: an output was written");
        }
    }

    /// The output sits in a plugin folder that may come from a checkout: a link planted where
    /// the component goes, or beside it where a temporary file used to be written
    /// (`OUT.wasm.partial`), is never written through; a planted output link is refused, named.
    #[test]
    fn a_link_planted_at_or_beside_the_output_is_never_written_through() {
        let d = Dir::new();
        let src = d.write(
            "hook.js",
            "export const handler = { handle() { return {}; } };",
        );
        let victim = d.write("victim.txt", "precious\n");
        let out = d.path().join("hooks/hook.wasm");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("hooks/hook.wasm.partial")).unwrap();
        let run = build(&src, &out);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(!std::fs::symlink_metadata(&out).unwrap().is_symlink());
        // A link at the output itself: refused, the victim untouched, the link left as it was.
        let linked = d.path().join("hooks/linked.wasm");
        std::os::unix::fs::symlink(&victim, &linked).unwrap();
        let run = build(&src, &linked);
        assert_ne!(run.code, Some(0), "{run:?}");
        assert!(run.stderr.contains("symlink"), "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(std::fs::symlink_metadata(&linked).unwrap().is_symlink());
    }

    /// A folder, a FIFO or an oversized file as the source is a usage error, before anything is
    /// read (a FIFO would block a plain open until a writer came).
    #[test]
    fn a_source_that_is_not_a_regular_file_is_refused() {
        let d = Dir::new();
        let run = hookbox(["build-js".as_ref(), d.path().as_os_str()]);
        assert_eq!(run.code, Some(2), "{run:?}");
        let fifo = d.path().join("hook.js");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let run = hookbox(["build-js".as_ref(), fifo.as_os_str()]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
        // Over the 4 MiB bound of a source: refused as read, nothing written.
        let big = d.write("big.js", &"x".repeat((4 << 20) + 1));
        let out = d.path().join("big.wasm");
        let run = build(&big, &out);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains("over the limit"), "{}", run.stderr);
        assert!(!out.exists());
    }
}
