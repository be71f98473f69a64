#!/usr/bin/env bash
# Records the OpenCode fixtures: real opencode-ai (pinned in scripts/record/opencode/package.json)
# against a scripted provider on 127.0.0.1. Usage: [CAPTURE=1] scripts/record/record-opencode.sh OUTDIR
# CAPTURE=1 puts the capture proxy (`prefix-lens capture`, dist/cli.js, built when missing) between
# OpenCode and the provider and fails unless it saved exactly the bytes the provider received.
# Unattended (no stdin, CI=true); exits non-zero with a message on failure. Needs node >= 20,
# git and the npm registry (for `npm ci` and OpenCode's own background plugin install).
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 OUTDIR" >&2; exit 2; fi
HERE="$(cd "$(dirname "$0")/opencode" && pwd)"
command -v node >/dev/null || { echo "record-opencode: node is required" >&2; exit 1; }
command -v git >/dev/null || { echo "record-opencode: git is required" >&2; exit 1; }
if [ ! -x "$HERE/node_modules/opencode-ai/bin/opencode.exe" ]; then
  # `npm install` with the lockfile, not `npm ci`: the lockfile can only list the platform
  # packages this registry serves (linux-x64), and `npm ci` rejects a lock without the others.
  # opencode-ai pins its platform binaries exactly; --no-save leaves the lockfile untouched.
  echo "record-opencode: installing opencode-ai as pinned in scripts/record/opencode/package-lock.json"
  (cd "$HERE" && npm install --no-save --no-audit --no-fund) || { echo "record-opencode: npm install failed" >&2; exit 1; }
fi
if [ "${CAPTURE:-}" = 1 ] && [ ! -f "$HERE/../../../dist/cli.js" ]; then
  (cd "$HERE/../../.." && node scripts/build.mjs >/dev/null) || { echo "record-opencode: build failed" >&2; exit 1; }
fi
exec node "$HERE/record.mjs" "$1" < /dev/null
