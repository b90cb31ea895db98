"""{{name}}: a Stop hook.

When the model ends its turn with an empty answer, keeps the turn going once: the follow-up
becomes the next user message. A turn that already continues because of a Stop hook
(stop_hook_active) is left to end, so it cannot loop; an agent that does not send the last
message is left alone.

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


def _decide(event: Event) -> Response:
    message = event.last_assistant_message
    if event.name != "Stop" or event.stop_hook_active or message is None or message.strip():
        return _none()
    response = _none()
    response.follow_up = "Your last answer was empty: give your final answer now, based on what you found."
    return response
