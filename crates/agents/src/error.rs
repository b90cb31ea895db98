//! Why an agent's payload could not become an event: each error names the agent and the field
//! as that agent spells it, so the message points at what the agent (or a test) sent.

use hookbox_core::event::PayloadError;

use super::Agent;

/// A payload an adapter refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// More bytes than [`MAX_PAYLOAD_BYTES`](super::limits::MAX_PAYLOAD_BYTES).
    #[error("the {agent} payload is over {max} bytes; refused unread")]
    TooLarge {
        /// Whose payload.
        agent: &'static str,
        /// The limit.
        max: usize,
    },
    /// Not JSON (or not UTF-8).
    #[error("the {agent} payload is not JSON: {message}")]
    NotJson {
        /// Whose payload.
        agent: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// Nested deeper than [`MAX_PAYLOAD_DEPTH`](super::limits::MAX_PAYLOAD_DEPTH).
    #[error("the {agent} payload{at} nests deeper than {max} levels; refused")]
    TooDeep {
        /// Whose payload.
        agent: &'static str,
        /// ` in field \`x\`` when the nesting was inside a JSON string field, else empty.
        at: String,
        /// The limit.
        max: usize,
    },
    /// Not a JSON object.
    #[error("the {agent} payload must be a JSON object, found {found}")]
    NotAnObject {
        /// Whose payload.
        agent: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// No event name in the payload and none on the command line.
    #[error("the {agent} payload names no event (no `{field}`); pass --event NAME{hint}")]
    NoEvent {
        /// Whose payload.
        agent: &'static str,
        /// The field that would name it.
        field: &'static str,
        /// What to do about it.
        hint: &'static str,
    },
    /// An event name the agent does not have, or one hookbox has no equivalent for.
    #[error("{agent} event `{name}` {why}")]
    UnknownEvent {
        /// Whose payload.
        agent: &'static str,
        /// The name.
        name: String,
        /// `is not a … event`, or what it would need.
        why: String,
    },
    /// `--event` and the payload's own event name disagree.
    #[error("--event says `{given}` but the {agent} payload's `{field}` is `{payload}`")]
    EventMismatch {
        /// Whose payload.
        agent: &'static str,
        /// The payload's field.
        field: &'static str,
        /// The command line's event.
        given: String,
        /// The payload's event.
        payload: String,
    },
    /// A field with the wrong JSON type.
    #[error("{agent} payload field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// Whose payload.
        agent: &'static str,
        /// The field, dotted when nested (`tool_info.command_line`).
        field: String,
        /// What it should be.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A field the event needs is missing.
    #[error("{agent} `{event}` payload needs field `{field}`")]
    MissingField {
        /// Whose payload.
        agent: &'static str,
        /// The event as the agent names it.
        event: String,
        /// The field, dotted when nested.
        field: String,
    },
    /// The event built from the payload is refused by hookbox's event model.
    #[error("the {agent} payload does not make a hookbox event: {source}")]
    Event {
        /// Whose payload.
        agent: &'static str,
        /// Why.
        #[source]
        source: PayloadError,
    },
}

impl AgentError {
    /// The event model's refusal, attributed to `agent`.
    pub(crate) fn event(agent: Agent, source: PayloadError) -> AgentError {
        AgentError::Event {
            agent: agent.display_name(),
            source,
        }
    }
}
