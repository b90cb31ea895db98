//! `build_js`: a JavaScript hook pre-initialised with the QuickJS runtime the binary carries —
//! the example's source gives a hook with the QuickJS toolchain's answers, and a hostile or
//! broken module fails the build with its reason instead of hanging it, exhausting memory or
//! producing a hook that fails at every event.

use hookbox_test_artifacts::{QUICKJS_RUNTIME, polyglot_test};
use hookbox_wasm::{JsBuildError, JsBuildLimits, build_js};

use crate::common::tmp_dir;
use crate::polyglot::check_context_injection;

const CONTEXT_INJECTION: &str =
    include_str!("../../../../guest-examples/js/context-injection/context-injection.js");

fn runtime() -> Vec<u8> {
    let path = QUICKJS_RUNTIME.expect("the polyglot guests were built, so the runtime was");
    std::fs::read(path).unwrap()
}

/// The build's error for `source` under `limits`, which must fail.
fn refused(source: &str, limits: &JsBuildLimits) -> JsBuildError {
    match build_js(&runtime(), source, limits) {
        Ok(_) => panic!("built, but must fail: {source}"),
        Err(e) => e,
    }
}

polyglot_test! {
    /// The example's source, built here, answers as the QuickJS toolchain's build does.
    #[tokio::test]
    async fn the_example_builds_into_a_hook_with_the_toolchains_answers() {
        let component = build_js(&runtime(), CONTEXT_INJECTION, &JsBuildLimits::default()).unwrap();
        let dir = tmp_dir("build-js");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("context_injection.wasm");
        std::fs::write(&path, component).unwrap();
        check_context_injection(path.to_str().unwrap()).await;
    }

    /// A top-level loop that never ends runs out of the build's fuel.
    #[test]
    fn a_top_level_loop_ends_the_build_out_of_fuel() {
        let limits = JsBuildLimits { fuel: 2_000_000_000, ..JsBuildLimits::default() };
        let e = refused("while (true) {}\nexport const handler = { handle() {} };", &limits);
        assert!(matches!(e, JsBuildError::Module(_)), "{e:?}");
        assert!(e.to_string().contains("ran out of fuel"), "{e}");
    }

    /// A module that grows its heap without end stops at the build's memory limit.
    #[test]
    fn a_top_level_allocation_bomb_stops_at_the_memory_limit() {
        let limits = JsBuildLimits { memory_bytes: 64 << 20, ..JsBuildLimits::default() };
        let e = refused(
            "const hoard = []; for (;;) hoard.push('x'.repeat(1 << 20) + hoard.length);\n\
             export const handler = { handle() {} };",
            &limits,
        );
        assert!(matches!(e, JsBuildError::Module(_)), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("memory"), "{msg}");
        assert!(!msg.contains("fuel"), "{msg}");
    }

    /// The host is not there at build time: a top-level `config()` fails the build and says
    /// where to call it.
    #[test]
    fn calling_the_host_at_top_level_fails_the_build_and_says_where_to_call_it() {
        let e = refused(
            "import { config } from 'hookbox:hook/host@0.1.0';\nconst c = config();\n\
             export const handler = { handle() {} };",
            &JsBuildLimits::default(),
        );
        let msg = e.to_string();
        assert!(msg.contains("called the host") && msg.contains("inside `handle`"), "{msg}");
    }

    /// A syntax error and a module without `handler.handle` are refused, named.
    #[test]
    fn a_broken_module_is_refused_with_its_reason() {
        let e = refused("export const handler = {", &JsBuildLimits::default());
        assert!(matches!(e, JsBuildError::Module(_)), "{e:?}");
        assert!(e.to_string().to_lowercase().contains("syntax"), "{e}");
        let e = refused("export const other = 1;", &JsBuildLimits::default());
        assert!(e.to_string().contains("handler"), "{e}");
    }

    /// A source over the limit is refused before anything runs.
    #[test]
    fn a_source_over_the_limit_is_refused_before_it_runs() {
        let limits = JsBuildLimits { max_source_bytes: 64, ..JsBuildLimits::default() };
        let e = refused(CONTEXT_INJECTION, &limits);
        assert!(matches!(e, JsBuildError::SourceTooLarge { max: 64, .. }), "{e:?}");
    }
}
