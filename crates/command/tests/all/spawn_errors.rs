//! Hooks that cannot be started at all: a `SpawnError` failure with a message that helps.

use hookbox_core::output::FailureClass;

use crate::util::{Fixture, exec, request, shell};

#[tokio::test]
async fn missing_program_in_exec_form_is_a_spawn_error() {
    let fx = Fixture::new();
    let err = fx
        .runner()
        .run(&request(exec(&["/nonexistent/hookbox-hook", "x"])))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert_eq!(
        err.message,
        "cannot run `/nonexistent/hookbox-hook`: No such file or directory (os error 2); check the path or install it"
    );
}

#[tokio::test]
async fn missing_program_on_path_is_a_spawn_error() {
    let fx = Fixture::new();
    let err = fx
        .runner()
        .run(&request(exec(&["hookbox-no-such-command-x9"])))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(
        err.message
            .starts_with("cannot run `hookbox-no-such-command-x9`"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn non_executable_program_in_exec_form_says_how_to_fix_it() {
    let fx = Fixture::new();
    let script = fx.file("plain.sh", "echo never\n");
    let err = fx
        .runner()
        .run(&request(exec(&[script.to_str().unwrap()])))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(err.message.contains("chmod +x"), "{}", err.message);
}

#[tokio::test]
async fn empty_args_are_a_spawn_error() {
    let fx = Fixture::new();
    let err = fx.runner().run(&request(exec(&[]))).await.unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(err.message.contains("`args` is empty"), "{}", err.message);
}

#[tokio::test]
async fn missing_working_directory_is_named() {
    let fx = Fixture::new();
    let cwd = fx.path().join("gone");
    let err = fx
        .runner()
        .run(&request(shell("true")).with_cwd(&cwd))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::SpawnError);
    assert!(
        err.message.contains(&cwd.display().to_string()),
        "{}",
        err.message
    );
    assert!(err.message.contains("working directory"), "{}", err.message);
}
