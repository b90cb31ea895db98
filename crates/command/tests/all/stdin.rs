//! The payload on stdin: seen whole by hooks that read it, harmless for hooks that do not.

use hookbox_command::CommandLimits;

use crate::util::{Fixture, request, shell};

#[tokio::test]
async fn the_hook_sees_the_payload() {
    let fx = Fixture::new();
    let payload =
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    let run = fx
        .runner()
        .run(&request(shell("cat")).with_stdin(&payload[..]))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stdout.as_bytes(), payload);
}

#[tokio::test]
async fn stdin_is_closed_when_the_payload_is_empty() {
    let fx = Fixture::new();
    let run = fx
        .runner()
        .run(&request(shell("cat; echo end")))
        .await
        .unwrap();
    assert_eq!(run.output.stdout, "end\n");
    assert!(!run.output.timed_out);
}

#[tokio::test]
async fn a_large_payload_is_written_while_output_is_read() {
    // 2 MiB in and out through `cat`: far beyond both pipe buffers, so this only finishes if
    // writing stdin and reading stdout happen concurrently.
    let fx = Fixture::new();
    let payload: Vec<u8> = (0..2 * 1024 * 1024)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let runner = fx
        .runner()
        .with_limits(CommandLimits::default().with_max_stdout_bytes(4 * 1024 * 1024));
    let run = runner
        .run(&request(shell("cat")).with_stdin(payload.clone()))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert!(!run.output.stdout_truncated);
    assert_eq!(run.output.stdout.as_bytes(), &payload[..]);
}

#[tokio::test]
async fn a_hook_that_ignores_a_large_payload_is_fine() {
    let fx = Fixture::new();
    let payload = vec![b'x'; 1024 * 1024];
    let run = fx
        .runner()
        .run(&request(shell("echo ignored; exit 0")).with_stdin(payload))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(0));
    assert_eq!(run.output.stdout, "ignored\n");
    assert!(!run.output.timed_out);
}
