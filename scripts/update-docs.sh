#!/usr/bin/env bash
# Copies the reference docs generated from the ODS sources into
# docs/generated/ (the test `docs-up-to-date` fails when they differ).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${FP8_BUILD_DIR:-$root/build}}
cmake --build "$build" --target fp8-doc
for f in "$build"/docs/generated/*.md; do
  cp "$f" "$root/docs/generated/$(basename "$f")"
done
echo "docs/generated updated from $build"
