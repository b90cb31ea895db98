"""Dangerous-shell guard (recipe 2) in Python, as a hookbox typed hook.

On `PreToolUse` with a `command` in the tool input, denies what `rules.check` objects to (the
reason is shown to the model) and otherwise answers no decision at all: a guard that found
nothing wrong has not approved anything, so the agent's own permission flow still applies.

componentize-py generates the `wit_world` bindings from hookbox's `wit/` (world `hook`) at build
time: the class `Handler` implements the exported `handler` interface; raising
`componentize_py_types.Err(message)` returns the WIT `err` (a failed hook, class `trap`).
The component has no WASI at all (`--stub-wasi`): no `print`, no clock, no files; `host.log`
is the way to say something.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host
from wit_world.imports.types import Event, Permission, PermissionDecision, Response

import rules


def _none():
    """A response with nothing to add: every field of the WIT `response` record, empty."""
    return Response(
        additional_contexts=[],
        block_reason=None,
        stop_reason=None,
        permission=None,
        updated_input=None,
        follow_up=None,
        suppress_output=False,
        system_message=None,
    )


class Handler(exports.Handler):
    def handle(self, event: Event) -> Response:
        # Built with `--stub-wasi` (see README.md): an exception escaping here would be printed
        # to a stderr that traps, and the host would only see "unreachable". Every failure leaves
        # as the WIT `err` instead, with its message.
        try:
            return _decide(event)
        except Err:
            raise
        except Exception as e:
            raise Err(f"shell-guard (python): {type(e).__name__}: {e}")


def _decide(event: Event) -> Response:
    if event.name != "PreToolUse" or event.tool_input is None:
        return _none()
    command = json.loads(event.tool_input).get("command")
    if not isinstance(command, str):
        return _none()
    config = json.loads(host.config()) or {}
    reason = rules.check(command, config.get("deny", ()))
    if reason is None:
        return _none()
    host.log(host.Level.INFO, f"shell-guard (python): denied: {reason}")
    response = _none()
    response.permission = Permission(
        decision=PermissionDecision.DENY,
        reason=f"shell-guard: the command {reason}",
    )
    return response
