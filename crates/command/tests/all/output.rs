//! What the hook prints: passed through unchanged, read concurrently, capped without hanging.

use hookbox_command::CommandLimits;

use crate::util::{Fixture, request, run_shell, shell};

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn plain_text_stdout_is_passed_through() {
    let run = run_shell("printf 'line one\\nline two\\n'").await;
    assert_eq!(run.output.stdout, "line one\nline two\n");
    assert_eq!(run.output.stderr, "");
}

#[tokio::test]
async fn json_stdout_is_passed_through_byte_for_byte() {
    let json = r#"{"decision":"block","reason":"no \"rm -rf\" here","n":[1,2.5,null]}"#;
    let fx = Fixture::new();
    let file = fx.file("answer.json", json);
    let run = fx
        .runner()
        .run(&request(shell(&format!("cat '{}'", file.display()))))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stdout, json);
}

#[tokio::test]
async fn invalid_utf8_is_decoded_lossily() {
    let run = run_shell("printf 'a\\377b'").await;
    assert_eq!(run.output.stdout, "a\u{fffd}b");
}

#[tokio::test]
async fn stdout_over_the_cap_is_truncated_and_reported() {
    let run = run_shell("yes | head -c 5242880; echo done >&2").await;
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stdout.len(), MIB);
    assert!(run.output.stdout.starts_with("y\ny\n"));
    assert!(run.output.stdout_truncated);
    assert!(!run.output.stderr_truncated);
    assert_eq!(run.output.stderr, "done\n");
    assert!(!run.output.timed_out);
    assert!(
        run.notes.iter().any(|n| n.contains("stdout cut")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn stderr_over_the_cap_is_truncated_and_reported() {
    let run = run_shell("yes | head -c 5242880 >&2; echo done").await;
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stderr.len(), MIB);
    assert!(run.output.stderr_truncated);
    assert_eq!(run.output.stdout, "done\n");
    assert!(
        run.notes.iter().any(|n| n == "stderr cut at 1048576 bytes"),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn both_streams_flooding_at_once_do_not_block_each_other() {
    // Each writer blocks on its full pipe unless both pipes are drained at the same time.
    let run =
        run_shell("yes out | head -c 3000000 & yes err | head -c 3000000 >&2; wait; exit 4").await;
    assert_eq!(run.output.exit_code, Some(4));
    assert!(run.output.stdout_truncated && run.output.stderr_truncated);
    assert!(run.output.stdout.starts_with("out\n") && run.output.stderr.starts_with("err\n"));
}

#[tokio::test]
async fn caps_are_configurable() {
    let fx = Fixture::new();
    let runner = fx.runner().with_limits(
        CommandLimits::default()
            .with_max_stdout_bytes(5)
            .with_max_stderr_bytes(0),
    );
    let run = runner
        .run(&request(shell("echo 0123456789; echo oops >&2")))
        .await
        .unwrap();
    assert_eq!(run.output.stdout, "01234");
    assert_eq!(run.output.stderr, "");
    assert!(run.output.stdout_truncated && run.output.stderr_truncated);
    assert_eq!(run.output.exit_code, Some(0));
}

#[tokio::test]
async fn output_within_the_cap_is_not_flagged() {
    let fx = Fixture::new();
    let runner = fx
        .runner()
        .with_limits(CommandLimits::default().with_max_stdout_bytes(3));
    let run = runner.run(&request(shell("printf abc"))).await.unwrap();
    assert_eq!(run.output.stdout, "abc");
    assert!(!run.output.stdout_truncated);
}
