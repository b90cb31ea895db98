//! Every way a hook can end on its own: exit codes, a signal, a shell that cannot find it.

use crate::util::{Fixture, exec, request, run_shell};

#[tokio::test]
async fn exit_codes_and_both_streams_are_reported() {
    for code in [0, 1, 2, 3, 126, 255] {
        let run = run_shell(&format!("echo out; echo err >&2; exit {code}")).await;
        assert_eq!(run.output.exit_code, Some(code), "{run:?}");
        assert_eq!(run.output.stdout, "out\n");
        assert_eq!(run.output.stderr, "err\n");
        assert!(
            !run.output.timed_out && !run.output.stdout_truncated && !run.output.stderr_truncated
        );
        assert_eq!(run.signal, None);
        assert!(run.pid.is_some());
    }
}

#[tokio::test]
async fn exec_form_reports_the_exit_code() {
    let fx = Fixture::new();
    let run = fx
        .runner()
        .run(&request(exec(&["/bin/sh", "-c", "echo hi; exit 2"])))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(2));
    assert_eq!(run.output.stdout, "hi\n");
}

#[tokio::test]
async fn killed_by_a_signal_has_no_exit_code_and_a_note() {
    let run = run_shell("echo before; kill -TERM $$; echo after").await;
    assert_eq!(run.output.exit_code, None);
    assert_eq!(run.signal, Some(15));
    assert!(!run.output.timed_out);
    assert_eq!(run.output.stdout, "before\n");
    assert!(
        run.notes.iter().any(|n| n.contains("SIGTERM")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn missing_command_in_shell_form_is_exit_127_with_a_note() {
    let run = run_shell("hookbox-no-such-command-x9 --flag").await;
    assert_eq!(run.output.exit_code, Some(127));
    assert!(
        run.output.stderr.contains("hookbox-no-such-command-x9"),
        "{:?}",
        run.output.stderr
    );
    assert!(
        run.notes.iter().any(|n| n.contains("127")),
        "{:?}",
        run.notes
    );
}

#[tokio::test]
async fn non_executable_script_in_shell_form_is_exit_126_with_a_note() {
    let fx = Fixture::new();
    let script = fx.file("plain.sh", "echo never\n");
    let run = fx
        .runner()
        .run(&request(crate::util::shell(&format!(
            "'{}'",
            script.display()
        ))))
        .await
        .unwrap();
    assert_eq!(run.output.exit_code, Some(126));
    assert!(
        run.notes.iter().any(|n| n.contains("126")),
        "{:?}",
        run.notes
    );
}
