#!/bin/sh
# Recipe 3: empty-answer rescue. Stop gets the flat payload: if the last assistant message is
# empty and this is not already a re-entry (stop_hook_active) or the iteration limit
# (at_max_iter), ask the loop to continue with a follow-up message. Otherwise say nothing.
payload=$(cat)
case "$payload" in
  *'"stop_hook_active":true'*|*'"at_max_iter":true'*) exit 0 ;;
esac
case "$payload" in
  *'"last_assistant_message":""'*|*'"last_assistant_message":null'*|*'"last_assistant_message":" '*)
    echo '{"decision":"block","reason":"Your last answer was empty. Please give your final answer based on the context so far."}' ;;
esac
exit 0
