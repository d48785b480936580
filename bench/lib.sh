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
