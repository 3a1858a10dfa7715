#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and builds examples/consumer against it with
# find_package(mimorx), as a user's project on a machine without CUDA, Eigen or fmt would: those
# packages are made unfindable for the consumer. Also checks what the package holds: no CUDA,
# Eigen, fmt or OpenMP in its CMake files, no CUDA/Eigen/fmt include in its headers, no CUDA
# runtime among libmimorx's shared-library dependencies, and mimorx/mimorx.hpp listing every
# installed header.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install.consumer: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null
cmakedir=$(dirname "$(find "$prefix" -name mimorxConfig.cmake | head -1)")
[ -d "$cmakedir" ] || fail "no mimorxConfig.cmake installed"
if sed 's/#.*//' "$cmakedir"/*.cmake | grep -nE 'CUDA|Eigen|fmt|OpenMP'; then
  fail "the installed package names a build dependency (above)"
fi
if grep -rnE '#include *[<"](Eigen|unsupported/Eigen|fmt|cuda|cub|thrust|omp)' "$prefix/include"; then
  fail "an installed header includes a build dependency (above)"
fi
lib=$(find "$prefix" -name 'libmimorx.so' | head -1)
[ -n "$lib" ] || fail "no libmimorx.so installed"
if readelf -d "$lib" | grep -E 'NEEDED.*(cudart|libfmt)'; then
  fail "libmimorx.so needs the CUDA runtime or fmt at run time (above)"
fi
for h in $(cd "$prefix/include" && find mimorx -name '*.hpp' ! -name mimorx.hpp | sort); do
  grep -q "#include \"$h\"" "$prefix/include/mimorx/mimorx.hpp" || fail "mimorx/mimorx.hpp misses $h"
done
cmake -S "$src/examples/consumer" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDA=ON -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON --no-warn-unused-cli \
  >/dev/null
cmake --build "$tmp/b" >/dev/null
"$tmp/b/consumer"
