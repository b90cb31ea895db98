//! One runner shared by many concurrent runs.

use std::sync::Arc;

use tokio::task::JoinSet;

use crate::util::{Fixture, request, shell};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_hooks_run_concurrently_on_one_runner() {
    let fx = Fixture::new();
    let runner = Arc::new(fx.runner());
    let mut set = JoinSet::new();
    for i in 0..24 {
        let runner = Arc::clone(&runner);
        set.spawn(async move {
            let req = request(shell(&format!("cat; echo \" {i}\"; exit {}", i % 3)))
                .with_stdin(b"hook".to_vec());
            (i, runner.run(&req).await.unwrap())
        });
    }
    let mut seen = 0;
    while let Some(joined) = set.join_next().await {
        let (i, run) = joined.unwrap();
        assert_eq!(run.output.stdout, format!("hook {i}\n"));
        assert_eq!(run.output.exit_code, Some(i % 3));
        seen += 1;
    }
    assert_eq!(seen, 24);
}
