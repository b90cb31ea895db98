//! What one hook's effect may carry ([`TextLimits`]): its text cut to a budget — reasons and
//! decisions first, then the system message, warnings, contexts (at most `rule_contexts` of
//! them) and a failure's message — and its `updatedInput` refused when its JSON is over
//! `updated_input_bytes`.

use serde_json::Value;

use super::effect::Effect;
use super::failure::{FailureClass, HookFailure};
use crate::event::EventName;
use crate::limits::{Budget, Scope, TextLimits};
use crate::rule::FailMode;

impl Effect {
    /// Bytes of text this effect carries (every string field together).
    pub fn text_len(&self) -> usize {
        let one = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        one(&self.block)
            + one(&self.permission_reason)
            + one(&self.stop)
            + one(&self.follow_up)
            + one(&self.system_message)
            + self.contexts.iter().map(String::len).sum::<usize>()
            + self.warnings.iter().map(String::len).sum::<usize>()
            + self.failure.as_ref().map_or(0, |f| f.message.len())
    }

    /// Whether the effect is within `limits` for one rule as it is (no copy needed).
    pub(crate) fn within(&self, limits: &TextLimits) -> bool {
        self.text_len() <= limits.rule_text_bytes && self.contexts.len() <= limits.rule_contexts
    }

    /// Cuts this effect's text to `budget` (see the module); a warning says what was cut.
    pub(crate) fn bound_text(&mut self, mut budget: Budget, limits: &TextLimits) {
        budget.reserve_notes();
        budget.take_opt(&mut self.block);
        budget.take_opt(&mut self.permission_reason);
        budget.take_opt(&mut self.stop);
        budget.take_opt(&mut self.follow_up);
        budget.take_opt(&mut self.system_message);
        // Warnings before contexts: a runner's note ("stdout truncated at 1 MiB") must survive
        // the context it is about.
        budget.take_list(&mut self.warnings, usize::MAX, "warnings");
        budget.take_list(&mut self.contexts, limits.rule_contexts, "contexts");
        if let Some(f) = &mut self.failure {
            budget.take(&mut f.message);
        }
        if let Some(w) = budget.warning() {
            self.warnings.push(w);
        }
    }

    /// This effect within `limits` for one rule: its text cut to `rule_text_bytes` and
    /// `rule_contexts`, and — when its `updatedInput` is over `updated_input_bytes` — a failure
    /// of the hook (`invalid_output`) under `fail_mode` instead: a rewrite cannot be cut, and
    /// dropping it silently would run the call unrewritten.
    pub(crate) fn bounded(
        mut self,
        limits: &TextLimits,
        fail_mode: FailMode,
        event: EventName,
    ) -> Effect {
        if let Some(size) = self
            .updated_input
            .as_ref()
            .map(json_len)
            .filter(|&n| n > limits.updated_input_bytes)
        {
            let failure = HookFailure::new(
                FailureClass::InvalidOutput,
                format!(
                    "updatedInput is {size} bytes of JSON, over the limit of {} bytes (updated_input_bytes)",
                    limits.updated_input_bytes
                ),
            );
            return Effect::from_failure(failure, fail_mode, event);
        }
        if !self.within(limits) {
            self.bound_text(Budget::new(limits.rule_text_bytes, Scope::Rule), limits);
        }
        self
    }
}

/// The size of `v` as compact JSON, counted without building the text.
pub(crate) fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::CUT_MARKER;
    use crate::output::PermissionDecision;
    use serde_json::json;

    fn limits(rule: usize) -> TextLimits {
        TextLimits {
            rule_text_bytes: rule,
            ..TextLimits::default()
        }
    }

    #[test]
    fn an_effect_within_limits_is_unchanged() {
        let e = Effect {
            contexts: vec!["a".into(), "b".into()],
            block: Some("no".into()),
            ..Effect::default()
        };
        assert_eq!(
            e.clone()
                .bounded(&TextLimits::default(), FailMode::Allow, EventName::Stop),
            e
        );
    }

    #[test]
    fn reasons_are_kept_before_contexts() {
        // A 1 MiB context cannot push a deny's reason out.
        let e = Effect {
            contexts: vec!["c".repeat(1 << 20)],
            permission: Some(PermissionDecision::Deny),
            permission_reason: Some("rm -rf is not allowed".into()),
            ..Effect::default()
        };
        let b = e.bounded(&limits(2000), FailMode::Allow, EventName::PreToolUse);
        assert_eq!(b.permission, Some(PermissionDecision::Deny));
        assert_eq!(
            b.permission_reason.as_deref(),
            Some("rm -rf is not allowed")
        );
        assert!(b.contexts[0].starts_with(&"c".repeat(1000)));
        assert!(b.contexts[0].contains(CUT_MARKER));
        assert_eq!(b.warnings.len(), 1);
        assert!(
            b.warnings[0].ends_with(
                "bytes of this hook's text were cut: a rule's text is capped at 2000 bytes (rule_text_bytes)"
            ),
            "{:?}",
            b.warnings
        );
        // Markers and warning included, the effect is within its limit.
        assert!(b.text_len() <= 2000, "{}", b.text_len());
    }

    #[test]
    fn a_runners_note_survives_the_context_it_is_about() {
        let e = Effect {
            contexts: vec!["a".repeat(1 << 20)],
            warnings: vec!["stdout truncated at 1048576 bytes".into()],
            ..Effect::default()
        };
        let b = e.bounded(&TextLimits::default(), FailMode::Allow, EventName::Stop);
        assert_eq!(b.warnings[0], "stdout truncated at 1048576 bytes");
        assert!(
            b.warnings[1].contains("(rule_text_bytes)"),
            "{:?}",
            b.warnings
        );
        assert!(b.contexts[0].contains(CUT_MARKER));
    }

    #[test]
    fn a_cut_effect_is_within_its_limit_and_cutting_it_again_changes_nothing() {
        // The host's aggregation bounds what `effect_of` already bounded: it must not cut the
        // marker of the first cut.
        let limits = TextLimits::default();
        let huge = "x".repeat(3 << 20);
        for e in [
            Effect {
                block: Some(huge.clone()),
                ..Effect::default()
            },
            Effect {
                contexts: vec![huge.clone(), huge.clone()],
                warnings: vec!["stdout truncated at 1 MiB".into()],
                ..Effect::default()
            },
            Effect {
                stop: Some(huge.clone()),
                system_message: Some(huge.clone()),
                contexts: vec!["a".into(); 1000],
                warnings: vec![huge.clone(); 10],
                ..Effect::default()
            },
        ] {
            let once = e.bounded(&limits, FailMode::Allow, EventName::Stop);
            assert!(once.within(&limits), "{}", once.text_len());
            let twice = once
                .clone()
                .bounded(&limits, FailMode::Allow, EventName::Stop);
            assert_eq!(twice, once);
        }
    }

    #[test]
    fn many_small_contexts_are_capped_by_count() {
        let e = Effect {
            contexts: (0..200_000).map(|_| "a".to_owned()).collect(),
            ..Effect::default()
        };
        let b = e.bounded(&TextLimits::default(), FailMode::Allow, EventName::Stop);
        assert_eq!(b.contexts.len(), 64);
        assert!(
            b.contexts[63].contains("199936 more contexts"),
            "{}",
            b.contexts[63]
        );
    }

    #[test]
    fn an_oversized_rewrite_fails_the_hook_under_its_fail_mode() {
        let big = json!({"command": "x".repeat(2 << 20)});
        let e = Effect {
            updated_input: Some(big),
            contexts: vec!["kept?".into()],
            ..Effect::default()
        };
        let open = e.clone().bounded(
            &TextLimits::default(),
            FailMode::Allow,
            EventName::PreToolUse,
        );
        assert_eq!(open.updated_input, None);
        assert_eq!(open.failure.unwrap().class, FailureClass::InvalidOutput);
        assert!(
            open.warnings[0].contains("updated_input_bytes"),
            "{:?}",
            open.warnings
        );
        let closed = e.bounded(
            &TextLimits::default(),
            FailMode::Block,
            EventName::PreToolUse,
        );
        assert_eq!(closed.permission, Some(PermissionDecision::Deny));
        assert_eq!(closed.updated_input, None);
    }

    #[test]
    fn json_is_measured_as_written() {
        let v = json!({"a": [1, "é"]});
        assert_eq!(json_len(&v), serde_json::to_string(&v).unwrap().len());
    }
}
