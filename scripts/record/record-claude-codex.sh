#!/usr/bin/env bash
# Records the Claude Code and Codex fixtures: the real @anthropic-ai/claude-code and @openai/codex
# (pinned in scripts/record/claude-codex/package.json, own lockfile, not dependencies of the
# extension) against the scripted provider scripts/record/fake-provider.mjs (--script hosts) on
# 127.0.0.1.   Usage: [CAPTURE=1] scripts/record/record-claude-codex.sh OUTDIR [claude-code] [codex]
# Writes OUTDIR/claude-code and OUTDIR/codex (see test/fixtures/<host>/README.md). Unattended (no
# stdin); exits non-zero with a message on failure. Needs node >= 20 and the npm registry.
set -euo pipefail
if [ $# -lt 1 ]; then echo "usage: $0 OUTDIR [claude-code] [codex]" >&2; exit 2; fi
HERE="$(cd "$(dirname "$0")/claude-codex" && pwd)"
command -v node >/dev/null || { echo "record-claude-codex: node is required" >&2; exit 1; }
want() { node -p "require('$HERE/package.json').dependencies['$1']"; }
have() { node -p "try { require('$HERE/node_modules/$1/package.json').version } catch { '' }"; }
if [ "$(have @anthropic-ai/claude-code)" != "$(want @anthropic-ai/claude-code)" ] || [ "$(have @openai/codex)" != "$(want @openai/codex)" ] \
  || [ ! -x "$HERE/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  # --ignore-scripts: Claude Code's postinstall only copies its platform binary over a stub;
  # record.mjs runs the platform binary (@anthropic-ai/claude-code-linux-x64/claude) directly.
  echo "record-claude-codex: installing the pinned hosts (npm ci in $HERE)"
  (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || { echo "record-claude-codex: npm ci failed" >&2; exit 1; }
fi
# CAPTURE=1 (the capture proxy between host and provider, see record.mjs) needs the built CLI.
if [ "${CAPTURE:-}" = 1 ] && [ ! -f "$HERE/../../../dist/cli.js" ]; then
  (cd "$HERE/../../.." && node scripts/build.mjs >/dev/null) || { echo "record-claude-codex: build failed" >&2; exit 1; }
fi
exec node "$HERE/record.mjs" "$@" < /dev/null
