"""{{name}}: an audit of tool calls (PostToolUse, every tool).

Logs one line per call through the host's `log` (hookbox shows it with HOOKBOX_LOG=info, tagged
with the rule) and says nothing to the agent. The sandbox grants no files.

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
    if event.name == "PostToolUse":
        # json.dumps: a tool name with a newline in it cannot forge a second line.
        host.log(host.Level.INFO, f"{{name}}: {json.dumps(event.tool_name or 'unknown')} was called")
    return _none()
