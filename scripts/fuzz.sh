#!/usr/bin/env bash
# Fuzz the parser (command lines and restore files) and the rule compiler with
# libFuzzer under ASan/UBSan (test/fuzz/fuzz_parser.c).
# Usage: scripts/fuzz.sh [seconds]   (default 600)
# FUZZ_BUILD_DIR: its own build directory (default build-fuzz), which keeps the
# corpus (corpus/) from one run to the next. A crash, leak or hang fails the
# script; libFuzzer writes the input as crash-*/leak-*/timeout-* in the current
# directory.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
bdir=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang cmake -S . -B "$bdir" -G Ninja -DBPFIPT_FUZZ=ON -DBPFIPT_SANITIZE=ON \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$bdir" --target fuzz_parser
corpus=$bdir/corpus
mkdir -p "$corpus"
# seeds: inputs that once failed (test/fuzz/regressions: run first, every time), the
# upstream conformance rules and real-world dumps, when present
cp "$(dirname "$0")"/../test/fuzz/regressions/* "$corpus"/ 2>/dev/null || true
conf=${CONFORMANCE_DIR:-../shared/conformance}
if [ -d "$conf" ]; then
	cp "$conf"/dumps/*.txt "$corpus"/ 2>/dev/null || true
	i=0
	for f in "$conf"/iptables-t/*.t; do
		grep -v '^[#:@%*]' "$f" | cut -d';' -f1 | while IFS= read -r rule; do
			[ -n "$rule" ] && printf -- '-A INPUT %s' "$rule" > "$corpus/t-$(basename "$f")-$((i++))"
		done
	done
fi
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
"$bdir"/fuzz_parser -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
	-print_final_stats=1 "$corpus"
