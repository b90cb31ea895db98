//! Hook reports and attachments: the record of one hook run (which rule, how long, what it asked
//! for) and the main source's four attachment types derived from it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{EventName, HandlerType};
use crate::output::{Effect, PermissionDecision};

/// The four attachment types of the main source (stable: no others are added).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentType {
    /// "Please add this to the conversation."
    HookAdditionalContext,
    /// "I ran; nothing to add." (audit/observability)
    HookSuccess,
    /// "Do not let the turn go on as it would" (Stop's force-continue, `continue: false`).
    HookStoppedContinuation,
    /// "Raise this as an error" (a block: `[Blocked by hook]` on UserPromptSubmit).
    HookBlockingError,
}

impl AttachmentType {
    /// The wire spelling (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            AttachmentType::HookAdditionalContext => "hook_additional_context",
            AttachmentType::HookSuccess => "hook_success",
            AttachmentType::HookStoppedContinuation => "hook_stopped_continuation",
            AttachmentType::HookBlockingError => "hook_blocking_error",
        }
    }
}

/// Which attachments an effect yields, without their texts: what [`HookReport::attachments`]
/// would build, by kind and in order ([`AttachmentKinds::types`]). Small and `Copy`, so a
/// record that lists the kinds need not keep the effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachmentKinds {
    contexts: usize,
    blocking: bool,
    stopped: bool,
}

impl AttachmentKinds {
    /// The kinds `e` yields.
    pub fn of(e: &Effect) -> AttachmentKinds {
        AttachmentKinds {
            contexts: e.contexts.len(),
            blocking: e.block.is_some() || e.permission == Some(PermissionDecision::Deny),
            stopped: e.follow_up.is_some() || e.stop.is_some(),
        }
    }

    /// One type per attachment, in the order [`HookReport::attachments`] makes them: a context
    /// each, then a block, then a stop, and `hook_success` when there is none of those.
    pub fn types(self) -> impl Iterator<Item = AttachmentType> {
        let contexts = std::iter::repeat_n(AttachmentType::HookAdditionalContext, self.contexts);
        let blocking = self.blocking.then_some(AttachmentType::HookBlockingError);
        let stopped = self
            .stopped
            .then_some(AttachmentType::HookStoppedContinuation);
        let success = (self.contexts == 0 && !self.blocking && !self.stopped)
            .then_some(AttachmentType::HookSuccess);
        contexts.chain(blocking).chain(stopped).chain(success)
    }
}

/// Which rule a report or attachment is about.
///
/// The names are shared (`Arc<str>`): a host makes them once per rule when it loads, and every
/// report and attachment of that rule holds them without a copy — they were two allocations per
/// report and two more per attachment, on every event (docs/performance.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRef {
    /// The rule's position in load order.
    pub rule_index: usize,
    /// The plugin's name.
    pub plugin: Arc<str>,
    /// A label: the command, the prompt's first words or the component path.
    pub hook_name: Arc<str>,
    /// `command`, `prompt` or `wasm`.
    pub handler_type: HandlerType,
    /// The event.
    pub hook_event: EventName,
}

/// The record of one hook run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookReport {
    /// Which rule.
    #[serde(flatten)]
    pub hook: HookRef,
    /// What it asked for.
    pub effect: Effect,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: f64,
    /// Its exit code, for command-style hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What it printed (stdout, then stderr), for logs and replay; not cut here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Wasm fuel (≈ instructions) it consumed, when the host meters fuel: what a platform
    /// throttles and bills on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_consumed: Option<u64>,
}

/// One attachment: what the main source's `HookAttachmentRecord` carries, plus the structured
/// fields that ride on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// The type.
    pub attachment_type: AttachmentType,
    /// The text: context, block reason, stop reason, follow-up or warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Which rule.
    #[serde(flatten)]
    pub hook: HookRef,
    /// A permission decision riding on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<PermissionDecision>,
    /// Replacement tool input riding on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// True when it asks the Stop loop to continue.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub force_continue: bool,
    /// The hook's `systemMessage` (for the user), riding on its first attachment whatever
    /// else the hook decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Wall time of the hook run, in milliseconds.
    pub duration_ms: f64,
}

impl HookReport {
    /// The attachments this run yields: one per context, one for a block (or deny), one for a
    /// stop or force-continue, and `hook_success` when it yields none of those.
    pub fn attachments(&self) -> Vec<Attachment> {
        let mut out = Vec::new();
        self.attachments_into(&mut out);
        out
    }

    /// The types of [`HookReport::attachments`], in order, without building them (no text or
    /// name is copied): what a replay record lists per hook.
    pub fn attachment_types(&self) -> impl Iterator<Item = AttachmentType> + use<> {
        AttachmentKinds::of(&self.effect).types()
    }

    /// [`HookReport::attachments`] appended to `out`: aggregation gathers every report's into
    /// one vector, without a vector of its own per report.
    pub fn attachments_into(&self, all: &mut Vec<Attachment>) {
        let first = all.len();
        let e = &self.effect;
        let make = |t: AttachmentType, content: Option<String>| Attachment {
            attachment_type: t,
            content,
            hook: self.hook.clone(),
            permission_decision: None,
            updated_input: None,
            force_continue: false,
            system_message: None,
            duration_ms: self.duration_ms,
        };
        let out = all;
        out.extend(
            e.contexts
                .iter()
                .map(|c| make(AttachmentType::HookAdditionalContext, Some(c.clone()))),
        );
        let denied = e.permission == Some(PermissionDecision::Deny);
        if let Some(reason) = e
            .block
            .clone()
            .or_else(|| denied.then(|| e.permission_reason.clone().unwrap_or_default()))
        {
            let mut a = make(AttachmentType::HookBlockingError, Some(reason));
            a.permission_decision = e.permission;
            out.push(a);
        }
        if let Some(text) = e.follow_up.clone() {
            let mut a = make(AttachmentType::HookStoppedContinuation, Some(text));
            a.force_continue = true;
            out.push(a);
        } else if let Some(reason) = e.stop.clone() {
            out.push(make(AttachmentType::HookStoppedContinuation, Some(reason)));
        }
        if out.len() == first {
            let content = e
                .warnings
                .first()
                .cloned()
                .or_else(|| e.system_message.clone());
            let mut a = make(AttachmentType::HookSuccess, content);
            a.permission_decision = e.permission;
            out.push(a);
        }
        let head = &mut out[first];
        if let Some(u) = &e.updated_input {
            head.updated_input = Some(u.clone());
            if head.permission_decision.is_none() {
                head.permission_decision = e.permission;
            }
        }
        head.system_message = e.system_message.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(effect: Effect) -> HookReport {
        HookReport {
            hook: HookRef {
                rule_index: 0,
                plugin: "p".into(),
                hook_name: "h".into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::PreToolUse,
            },
            effect,
            duration_ms: 1.0,
            exit_code: Some(0),
            output: None,
            fuel_consumed: None,
        }
    }

    #[test]
    fn empty_effect_is_one_success() {
        let a = report(Effect::default()).attachments();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].attachment_type, AttachmentType::HookSuccess);
    }

    #[test]
    fn a_deciding_hook_keeps_its_system_message() {
        // hookify: deny, with the explanation only in `systemMessage`.
        let e = Effect {
            permission: Some(PermissionDecision::Deny),
            system_message: Some("rm -rf is blocked by rule 'no-rm'".into()),
            ..Effect::default()
        };
        let a = report(e).attachments();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].attachment_type, AttachmentType::HookBlockingError);
        assert_eq!(
            a[0].system_message.as_deref(),
            Some("rm -rf is blocked by rule 'no-rm'")
        );
    }

    #[test]
    fn contexts_block_and_stop_each_yield_one() {
        let e = Effect {
            contexts: vec!["a".into(), "b".into()],
            permission: Some(PermissionDecision::Deny),
            permission_reason: Some("no".into()),
            stop: Some("halt".into()),
            ..Effect::default()
        };
        let types: Vec<_> = report(e)
            .attachments()
            .iter()
            .map(|a| a.attachment_type)
            .collect();
        assert_eq!(
            types,
            vec![
                AttachmentType::HookAdditionalContext,
                AttachmentType::HookAdditionalContext,
                AttachmentType::HookBlockingError,
                AttachmentType::HookStoppedContinuation
            ]
        );
    }

    /// `attachment_types` lists what `attachments` builds, for every combination of what makes
    /// an attachment, and `as_str` is each type's serde name.
    #[test]
    fn attachment_types_are_the_attachments_types_for_every_effect() {
        let mut seen = 0;
        for bits in 0u32..128 {
            let on = |b: u32| bits & (1 << b) != 0;
            let e = Effect {
                contexts: (0..usize::from(on(0)) * 2).map(|i| i.to_string()).collect(),
                block: on(1).then(|| "blocked".into()),
                permission: if on(2) {
                    Some(PermissionDecision::Deny)
                } else if on(3) {
                    Some(PermissionDecision::Allow)
                } else {
                    None
                },
                follow_up: on(4).then(|| "go on".into()),
                stop: on(5).then(|| "halt".into()),
                warnings: if on(6) { vec!["w".into()] } else { vec![] },
                ..Effect::default()
            };
            let r = report(e);
            let built: Vec<_> = r.attachments().iter().map(|a| a.attachment_type).collect();
            let listed: Vec<_> = r.attachment_types().collect();
            assert_eq!(listed, built, "effect bits {bits:07b}");
            seen += built.len();
        }
        assert!(seen > 128, "most combinations yield more than one");
        for t in [
            AttachmentType::HookAdditionalContext,
            AttachmentType::HookSuccess,
            AttachmentType::HookStoppedContinuation,
            AttachmentType::HookBlockingError,
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
    }

    #[test]
    fn attachments_gathered_into_one_vector_are_each_report_s_own() {
        let first = report(Effect {
            contexts: vec!["a".into()],
            system_message: Some("first".into()),
            ..Effect::default()
        });
        let second = report(Effect {
            updated_input: Some(serde_json::json!({"command": "ls"})),
            permission: Some(PermissionDecision::Allow),
            system_message: Some("second".into()),
            ..Effect::default()
        });
        let mut all = Vec::new();
        first.attachments_into(&mut all);
        second.attachments_into(&mut all);
        let mut each = first.attachments();
        each.extend(second.attachments());
        assert_eq!(all, each);
        // The second report's input and message ride on its own first attachment.
        assert_eq!(all[0].system_message.as_deref(), Some("first"));
        assert_eq!(all[0].updated_input, None);
        assert_eq!(all[1].system_message.as_deref(), Some("second"));
        assert_eq!(all[1].permission_decision, Some(PermissionDecision::Allow));
        assert!(all[1].updated_input.is_some());
    }
}
