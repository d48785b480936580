# Sourced by the benches that trace (from the tree's root).

# bench_netstage: root (tracing needs it) and build/netstage built; NS
# names it.
bench_netstage() {
	[ "$(id -u)" -eq 0 ] ||
		{ echo "bench: tracing needs root" >&2; exit 1; }
	NS=build/netstage
	[ -x $NS ] || make -s || exit 1
}

# bench_other OTHER: -o's binary, another build measured beside this
# one, if one was given, is one.
bench_other() {
	[ -z "$1" ] || [ -x "$1" ] ||
		{ echo "bench: -o $1: not an executable" >&2; exit 2; }
}

# bench_bare OUTFILE NAME [-s] TRACEPOINT... -- CMD...: run CMD while
# another process (bench/bare-hooks.c, `make bench-tools`) holds empty
# programs on those tracepoints: what entering them costs, whatever the
# programs do. If they cannot be attached, says why for NAME instead.
bench_bare() {
	local out=$1 name=$2 tps=() pid

	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		tps+=("$1")
		shift
	done
	shift
	build/bench/bare-hooks build/bench/bare-hooks.bpf.o "${tps[@]}" \
		> "$out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q attached "$out" && break
		kill -0 $pid 2> /dev/null || break
		sleep 0.05
	done
	if grep -q attached "$out"; then
		"$@"
	else
		echo "  $name: $(cat "$out")" >&2
	fi
	kill $pid 2> /dev/null
	wait $pid 2> /dev/null
}
