#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and builds examples/consumer against it with
# find_package(mimorx): the exported package must be usable by a user's project.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/examples/consumer" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/b" >/dev/null
"$tmp/b/consumer"
