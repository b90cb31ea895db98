"""{{name}}: a guard on shell commands (PreToolUse, matcher Bash).

When the command contains one of the patterns of DENY, answers a deny with its reason (the agent
shows the model the reason); otherwise no decision, so the agent's own permission flow applies.

componentize-py generates the `wit_world` bindings from wit/ (world `hook`) at build time:
the class `Handler` implements the exported `handler` interface; raising
`componentize_py_types.Err(message)` returns the WIT `err` (a failed hook: its rule's fail mode
decides). Built with `--stub-wasi` (build.sh): no `print`, clock or files; `host.log` is the way
to say something, and every exception leaves as `Err` with its message.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host
from wit_world.imports.types import Event, Permission, PermissionDecision, Response


def _none() -> Response:
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
        # An exception escaping here would be printed to a stderr that traps (--stub-wasi), and
        # the host would only see "unreachable": every failure leaves as the WIT `err` instead.
        try:
            return _decide(event)
        except Err:
            raise
        except Exception as e:
            raise Err(f"{{name}}: {type(e).__name__}: {e}")


# The commands {{name}} refuses: patterns matched as plain text inside the command.
DENY = ["rm -rf /", "git push --force", "mkfs"]


def _decide(event: Event) -> Response:
    if event.name != "PreToolUse" or event.tool_input is None:
        return _none()
    command = json.loads(event.tool_input).get("command")
    if not isinstance(command, str):
        return _none()
    pattern = next((p for p in DENY if p in command), None)
    if pattern is None:
        return _none()
    response = _none()
    response.permission = Permission(
        decision=PermissionDecision.DENY,
        reason=f"{{name}}: `{pattern}` is not allowed here",
    )
    return response
