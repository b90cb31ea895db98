#!/bin/sh
# Recipe 4: compaction audit. Appends one line per compaction to the plugin's per-session data
# folder, then asks to block — which PreCompact ignores: compaction is observe-only.
payload=$(cat)
type=$(printf '%s' "$payload" | sed -n 's/.*"compaction_type":"\([a-z_]*\)".*/\1/p')
trigger=$(printf '%s' "$payload" | sed -n 's/.*"trigger":"\([a-z]*\)".*/\1/p')
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) compaction type=${type:-unknown} trigger=${trigger:-unknown}" >> "$PLUGIN_DATA/compactions.log"
echo "compaction-audit: recorded a compaction (type ${type:-unknown}); please avoid compacting during a deploy" >&2
exit 2
