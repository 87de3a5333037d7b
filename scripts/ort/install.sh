#!/usr/bin/env bash
# Installs onnxruntime-node (CPU), the reference for the random-input model
# tests (test/ORT), from scripts/ort/package-lock.json into PREFIX/node_modules.
#   usage: scripts/ort/install.sh [PREFIX]     (default: <repo>/build/ort)
# npm runs with --ignore-scripts: onnxruntime-node's install script downloads
# extra (GPU) files and fails offline; its CPU binary is in the package.
# Quiet and quick when the locked version is already there; exits 1 with a
# message when node/npm are missing or the registry cannot be reached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=${1:-$(dirname "$(dirname "$here")")/build/ort}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
stamp="$prefix/.fp8-ort-installed"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: scripts/ort/install.sh: '$tool' not found (scripts/setup.sh installs Node.js and npm)" >&2
    exit 1
  fi
done

# Already installed from this very lock file: nothing to do.
if [[ -f "$stamp" && -f "$prefix/node_modules/onnxruntime-node/package.json" ]] &&
   cmp -s "$stamp" "$here/package-lock.json"; then
  exit 0
fi

cp "$here/package.json" "$here/package-lock.json" "$prefix/"
rm -f "$stamp"
registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
echo "installing onnxruntime-node into $prefix (npm ci --ignore-scripts, from $registry)"
log="$prefix/npm-install.log"
if ! (cd "$prefix" && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund \
        --fetch-retries=1 --fetch-timeout=60000 >"$log" 2>&1); then
  tail -n 20 "$log" >&2
  echo "error: scripts/ort/install.sh: npm could not install onnxruntime-node into $prefix" \
       "(is $registry reachable? full log: $log)" >&2
  exit 1
fi
# The CPU binary must be there (it ships in the package for linux/x64).
if ! (cd "$prefix" && node -e "require('./node_modules/onnxruntime-node')" >>"$log" 2>&1); then
  tail -n 20 "$log" >&2
  echo "error: scripts/ort/install.sh: onnxruntime-node was installed but does not load (log: $log)" >&2
  exit 1
fi
cp "$here/package-lock.json" "$stamp"
echo "onnxruntime-node $(node -p "require('$prefix/node_modules/onnxruntime-node/package.json').version") ready in $prefix"
