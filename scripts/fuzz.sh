#!/usr/bin/env bash
# Fuzz the parser (command lines and restore files) with libFuzzer under
# ASan/UBSan. Usage: scripts/fuzz.sh [seconds]   (default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
CC=clang cmake -S . -B build-fuzz -G Ninja -DBPFIPT_FUZZ=ON -DBPFIPT_SANITIZE=ON \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build build-fuzz --target fuzz_parser
corpus=build-fuzz/corpus
mkdir -p "$corpus"
# seeds: the upstream conformance rules and real-world dumps, when present
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
build-fuzz/fuzz_parser -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
	-print_final_stats=1 "$corpus"
