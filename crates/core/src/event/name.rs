//! Event names: the twelve first-class events and every other Claude Code (≈ 2.1.317) and Codex
//! event, with what each one's matcher is tested against, whether it can block, and which
//! handler types it accepts. Events without typed fields keep their payload in `Event::extra`;
//! the fields each carries are listed on its variant.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! event_names {
    ($( $(#[$doc:meta])* $variant:ident ),* $(,)?) => {
        /// A hook event name, spelled exactly as in `hooks.json` (case-sensitive, as in Claude Code).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum EventName {
            $( $(#[$doc])* $variant, )*
        }

        impl EventName {
            /// Every event hookbox recognises, first-class ones first.
            pub const ALL: &'static [EventName] = &[ $( EventName::$variant, )* ];

            /// The name as written in `hooks.json` and in `hook_event_name`.
            pub fn as_str(self) -> &'static str {
                match self { $( EventName::$variant => stringify!($variant), )* }
            }
        }

        impl FromStr for EventName {
            type Err = UnknownEvent;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( stringify!($variant) => Ok(EventName::$variant), )*
                    _ => Err(UnknownEvent(s.to_owned())),
                }
            }
        }
    };
}

event_names! {
    /// A session starts (`source`: startup, resume, clear, compact).
    SessionStart,
    /// A session ends (`reason`).
    SessionEnd,
    /// The user submitted a prompt; hooks may add context or block the turn.
    UserPromptSubmit,
    /// A tool is about to run; hooks may allow, deny, ask, defer or rewrite its input.
    PreToolUse,
    /// A tool ran successfully.
    PostToolUse,
    /// A tool failed.
    PostToolUseFailure,
    /// The turn is about to stop; hooks may make the loop continue for another round.
    Stop,
    /// The context is about to be compacted; observe-only.
    PreCompact,
    /// A subagent starts.
    SubagentStart,
    /// A subagent is about to stop.
    SubagentStop,
    /// The agent shows a notification.
    Notification,
    /// The agent is about to ask the user for a permission.
    PermissionRequest,
    /// Claude Code: a permission was denied by the classifier.
    PermissionDenied,
    /// Claude Code: a batch of tool calls finished.
    PostToolBatch,
    /// Claude Code: a slash command expands into a prompt.
    UserPromptExpansion,
    /// Claude Code: the turn ended with an API error.
    StopFailure,
    /// Claude Code: the context was compacted.
    PostCompact,
    /// Claude Code: `--init` / maintenance setup.
    Setup,
    /// Claude Code: an instructions file (CLAUDE.md, rules) was loaded.
    InstructionsLoaded,
    /// Claude Code: a settings file changed.
    ConfigChange,
    /// Claude Code: the working directory changed.
    CwdChanged,
    /// Claude Code: a directory was added to the workspace.
    DirectoryAdded,
    /// Claude Code: a watched file changed.
    FileChanged,
    /// Claude Code: a worktree is being created.
    WorktreeCreate,
    /// Claude Code: a worktree is being removed.
    WorktreeRemove,
    /// Claude Code: an agent-team teammate is idle.
    TeammateIdle,
    /// Claude Code: a task was created.
    TaskCreated,
    /// Claude Code: a task completed.
    TaskCompleted,
    /// Claude Code: an MCP server asks the user for input.
    Elicitation,
    /// Claude Code: the user answered an MCP elicitation.
    ElicitationResult,
    /// Claude Code: a message is about to be displayed.
    MessageDisplay,
    /// Claude Code (≥ 2.1.251): a model switch was requested. Fields `from_model`, `to_model`
    /// (the matcher's subject), `source`, `context_tokens`, `prompt_cache_warm`, `cache_ttl`,
    /// `estimated_cache_write_usd`, `pricing`. Hooks may allow, deny or ask (as on
    /// `PreToolUse`); exit 2 and `decision: "block"` deny; a hook that times out blocks the
    /// switch unless its rule says `onFailure: "allow"`. Default timeout 30 s.
    PreModelSwitch,
    /// Claude Code (≥ 2.1.251): the session's model changed (a switch, a fallback, a resume).
    /// Same fields as `PreModelSwitch`; observe-only. Default timeout 30 s.
    PostModelSwitch,
    /// Codex: the user interrupted a turn (Esc). Common fields (and Codex's `turn_id`); no
    /// matcher; observe-only. Codex caps its hooks at 3 s.
    Interrupt,
}

/// An event name hookbox does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event `{0}`")]
pub struct UnknownEvent(pub String);

/// The kinds of handler a rule can declare (`type` in `hooks.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandlerType {
    /// A native process (`sh -c` or exec form).
    Command,
    /// Literal text attached as context (no model call).
    Prompt,
    /// A WebAssembly component run in hookbox's sandbox.
    Wasm,
    /// Claude Code's `http` hook: the payload POSTed to a URL, the answer read like a command's.
    Http,
}

impl HandlerType {
    /// The name as written in `hooks.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerType::Command => "command",
            HandlerType::Prompt => "prompt",
            HandlerType::Wasm => "wasm",
            HandlerType::Http => "http",
        }
    }

    /// Every handler type hookbox runs.
    pub const ALL: [HandlerType; 4] = [
        HandlerType::Command,
        HandlerType::Prompt,
        HandlerType::Wasm,
        HandlerType::Http,
    ];
}

/// Handler types that Claude Code knows but hookbox does not run (yet): recognised, warned, skipped.
pub const KNOWN_UNSUPPORTED_HOOK_TYPES: &[&str] = &["agent", "mcp_tool"];

impl EventName {
    /// The main source's eight events plus the four others with full semantics (SPEC §2).
    pub fn is_first_class(self) -> bool {
        use EventName::*;
        matches!(
            self,
            SessionStart
                | SessionEnd
                | UserPromptSubmit
                | PreToolUse
                | PostToolUse
                | PostToolUseFailure
                | Stop
                | PreCompact
                | SubagentStart
                | SubagentStop
                | Notification
                | PermissionRequest
        )
    }

    /// The payload field a string matcher is tested against, or `None` when the event has no
    /// matcher (Claude Code ignores a matcher there; hookbox warns).
    pub fn matcher_field(self) -> Option<&'static str> {
        use EventName::*;
        match self {
            PreToolUse | PermissionRequest | PermissionDenied | PostToolUse
            | PostToolUseFailure => Some("tool_name"),
            SubagentStart | SubagentStop => Some("agent_type"),
            StopFailure => Some("error"),
            // Claude Code compares a canonical name it derives from `to_model`; hookbox compares
            // `to_model` as the payload gives it.
            PreModelSwitch | PostModelSwitch => Some("to_model"),
            Notification => Some("notification_type"),
            SessionStart => Some("source"),
            SessionEnd => Some("reason"),
            PreCompact | PostCompact | Setup => Some("trigger"),
            InstructionsLoaded => Some("load_reason"),
            ConfigChange => Some("source"),
            DirectoryAdded => Some("trigger"),
            FileChanged => Some("file_path"),
            UserPromptExpansion => Some("command_name"),
            Elicitation | ElicitationResult => Some("mcp_server_name"),
            UserPromptSubmit | Stop | PostToolBatch | CwdChanged | WorktreeCreate
            | WorktreeRemove | TeammateIdle | TaskCreated | TaskCompleted | MessageDisplay
            | Interrupt => None,
        }
    }

    /// Whether a hook can block this event (Claude Code's exit-2 table, SPEC §2).
    /// `PreCompact` is observe-only in hookbox even though newer Claude Code lets it block.
    pub fn can_block(self) -> bool {
        use EventName::*;
        matches!(
            self,
            UserPromptSubmit
                | PreToolUse
                | Stop
                | SubagentStop
                | PostToolBatch
                | UserPromptExpansion
                | ConfigChange
                | WorktreeCreate
                | TeammateIdle
                | TaskCreated
                | TaskCompleted
                | Elicitation
                | ElicitationResult
                | PreModelSwitch
        )
    }

    /// Whether a decision on this event is a permission decision (allow, deny, ask, defer) and
    /// a block is a deny: `PreToolUse`, `PermissionRequest` and `PreModelSwitch`.
    pub fn takes_permission_decision(self) -> bool {
        matches!(
            self,
            EventName::PreToolUse | EventName::PermissionRequest | EventName::PreModelSwitch
        )
    }

    /// Whether a hook that times out on this event blocks it when its rule does not say
    /// otherwise (Claude Code: a `PreModelSwitch` hook cancelled at its timeout blocks the
    /// switch). Elsewhere a timeout renders no decision unless the rule fails closed.
    pub fn timeout_blocks(self) -> bool {
        self == EventName::PreModelSwitch
    }

    /// Whether Claude Code evaluates a handler's `if` condition on this event (tool events);
    /// elsewhere a hook with `if` never runs.
    pub fn evaluates_if(self) -> bool {
        use EventName::*;
        matches!(
            self,
            PreToolUse | PostToolUse | PostToolUseFailure | PermissionRequest | PermissionDenied
        )
    }

    /// Whether plain-text stdout on exit 0 becomes context (Claude Code: only these three).
    pub fn plain_stdout_is_context(self) -> bool {
        matches!(
            self,
            EventName::UserPromptSubmit | EventName::UserPromptExpansion | EventName::SessionStart
        )
    }

    /// Whether a hook of this type may be declared on this event (SPEC §1.2: `prompt` only on
    /// `UserPromptSubmit`; `command` and `wasm` everywhere).
    pub fn allows(self, handler: HandlerType) -> bool {
        match handler {
            HandlerType::Command | HandlerType::Wasm => true,
            HandlerType::Prompt => self == EventName::UserPromptSubmit,
            // Claude Code: SessionStart and Setup take `command` (and `mcp_tool`) only.
            HandlerType::Http => !matches!(self, EventName::SessionStart | EventName::Setup),
        }
    }

    /// The handler types the "Allowed for this event" warning lists: SPEC §1.2's allowlist
    /// (`command`, `prompt` on `UserPromptSubmit`, `wasm`), so the source document's text stays
    /// verbatim (`['command', 'wasm']` on `Stop`). `http` is not listed: it runs on every event
    /// but `SessionStart` and `Setup`, as in Claude Code, and its own warning says so.
    pub fn allowed_types(self) -> Vec<HandlerType> {
        [HandlerType::Command, HandlerType::Prompt, HandlerType::Wasm]
            .into_iter()
            .filter(|t| self.allows(*t))
            .collect()
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in EventName::ALL {
            assert_eq!(e.as_str().parse::<EventName>().unwrap(), *e);
        }
        assert_eq!(
            EventName::ALL.iter().filter(|e| e.is_first_class()).count(),
            12
        );
    }

    #[test]
    fn every_event_of_the_reference_notes_is_recognised() {
        // Claude Code's 33 events as of 2.1.303 (reference/claude-code-hooks.md), then Codex's
        // (reference notes: SessionStart … Interrupt, StopFailure, SessionEnd).
        let claude = "PreToolUse PostToolUse PostToolUseFailure PostToolBatch PermissionRequest \
            PermissionDenied Notification UserPromptSubmit UserPromptExpansion Stop StopFailure \
            SubagentStart SubagentStop PreCompact PostCompact Elicitation ElicitationResult \
            TeammateIdle TaskCreated TaskCompleted Setup InstructionsLoaded CwdChanged FileChanged \
            ConfigChange WorktreeCreate WorktreeRemove SessionStart SessionEnd PreModelSwitch \
            PostModelSwitch MessageDisplay DirectoryAdded";
        let codex = "SessionStart SubagentStart PreToolUse PermissionRequest PostToolUse PreCompact \
            PostCompact UserPromptSubmit SubagentStop Stop Interrupt StopFailure SessionEnd";
        assert_eq!(claude.split_whitespace().count(), 33);
        for name in claude.split_whitespace().chain(codex.split_whitespace()) {
            assert!(name.parse::<EventName>().is_ok(), "{name}");
        }
        assert_eq!(
            EventName::ALL.len(),
            34,
            "Claude Code's 33 and Codex's Interrupt"
        );
    }

    #[test]
    fn model_switch_events() {
        let pre = EventName::PreModelSwitch;
        assert!(pre.can_block() && pre.takes_permission_decision() && pre.timeout_blocks());
        assert_eq!(pre.matcher_field(), Some("to_model"));
        let post = EventName::PostModelSwitch;
        assert!(!post.can_block() && !post.timeout_blocks());
        assert_eq!(post.matcher_field(), Some("to_model"));
        assert_eq!(EventName::Interrupt.matcher_field(), None);
        assert!(!EventName::Interrupt.can_block());
    }

    #[test]
    fn names_are_case_sensitive() {
        assert!("pretooluse".parse::<EventName>().is_err());
        assert!("beforeShellExecution".parse::<EventName>().is_err());
    }

    #[test]
    fn prompt_only_on_user_prompt_submit() {
        assert!(EventName::UserPromptSubmit.allows(HandlerType::Prompt));
        assert!(!EventName::Stop.allows(HandlerType::Prompt));
        assert_eq!(
            EventName::Stop.allowed_types(),
            vec![HandlerType::Command, HandlerType::Wasm]
        );
    }
}
