#!/bin/sh
# {{name}}: a Stop hook. When the model ends its turn with an empty answer, keeps the turn going
# once (`decision: block` with a reason: the reason becomes the next user message). A turn that
# already continues because of a Stop hook (stop_hook_active) is left to end, so it cannot loop.
# Plain sh, no jq: hookbox sends compact JSON, so the fields are matched as text.
payload=$(cat)
case "$payload" in
  *'"stop_hook_active":true'*) exit 0 ;;
esac
case "$payload" in
  *'"last_assistant_message":""'*)
    echo '{"decision":"block","reason":"Your last answer was empty: give your final answer now, based on what you found."}' ;;
esac
exit 0
