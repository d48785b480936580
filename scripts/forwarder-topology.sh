#!/bin/bash
# A TCP forwarder between a netstage client and server, in three network
# namespaces of our own, and where each request's time goes hop by hop.
#
#   client ns  192.0.2.1 --veth-- 192.0.2.2  fwd ns  198.51.100.1 --veth--
#   198.51.100.2  server ns
#
# The forwarder (socat, or haproxy with FWD=haproxy) listens in its
# namespace on the control and data ports and connects on to the server.
# The client and the server run with --trace, `netstage observe` watches
# the forwarder's data port, and `netstage join` lines the three records
# up on the clock they share: client send, wire, forwarder in, forwarder
# to server, the server's stages, server to forwarder, forwarder out,
# wire, client receive.
#
#   scripts/forwarder-topology.sh run [-l SECONDS] [CLIENT OPTIONS...]
#   scripts/forwarder-topology.sh up | down
#
# Root; needs iproute2 and socat (or haproxy). Everything it made is
# removed on exit, on error and on Ctrl-C. Output files go to $OUT
# (default: a new directory under /tmp): cli.csv, fwd.csv, srv.csv,
# joined.csv and each program's output.
set -euo pipefail
# Run by sudo, netstage would become the invoking user (docs/usage.md,
# "Privileges"), who cannot write the root-owned directories used here.
unset SUDO_UID SUDO_GID SUDO_USER

NETSTAGE=${NETSTAGE:-$(dirname "$0")/../build/netstage}
NETSTAGE=$(readlink -f "$NETSTAGE")
# NS_TAG: what names this run's namespaces (default: its pid).
TAG=${NS_TAG:-$$}
NS_CLI=nsfw-cli$TAG NS_FWD=nsfw-fwd$TAG NS_SRV=nsfw-srv$TAG
CTL=12866 DATA=12867
FWD=${FWD:-socat}
FWD_PIDS=()

down() {
	local p

	for p in "${FWD_PIDS[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	for p in $NS_CLI $NS_FWD $NS_SRV; do
		ip netns pids "$p" 2> /dev/null | xargs -r kill 2> /dev/null || true
		ip netns del "$p" 2> /dev/null || true
	done
}

# link NS_A IF_A NS_B IF_B NET: a veth pair, NET.1 on A and NET.2 on B.
link() {
	local a=$1 ia=$2 b=$3 ib=$4 net=$5

	ip link add "$ia" netns "$a" type veth peer name "$ib" netns "$b"
	ip -n "$a" addr add "$net.1/24" dev "$ia"
	ip -n "$b" addr add "$net.2/24" dev "$ib"
	ip -n "$a" link set "$ia" up
	ip -n "$b" link set "$ib" up
}

up() {
	local n

	for n in $NS_CLI $NS_FWD $NS_SRV; do
		ip netns add "$n"
		ip -n "$n" link set lo up
	done
	link "$NS_CLI" vcli "$NS_FWD" vfwd0 192.0.2
	link "$NS_FWD" vfwd1 "$NS_SRV" vsrv 198.51.100
}

wait_listen() {
	local n=$1 port=$2 i

	for i in $(seq 100); do
		ip netns exec "$n" ss -ltn "sport = :$port" | grep -q LISTEN &&
			return 0
		sleep 0.05
	done
	echo "forwarder-topology: nothing listens on $port in $n" >&2
	return 1
}

# The forwarder: both ports, on to the server.
start_forwarder() {
	local port

	if [ "$FWD" = haproxy ]; then
		cat > "$OUT/haproxy.cfg" <<-EOF
		defaults
		    mode tcp
		    timeout connect 5s
		    timeout client 60s
		    timeout server 60s
		frontend ctl
		    bind 192.0.2.2:$CTL
		    default_backend ctl
		backend ctl
		    server s 198.51.100.2:$CTL
		frontend data
		    bind 192.0.2.2:$DATA
		    default_backend data
		backend data
		    server s 198.51.100.2:$DATA
		EOF
		ip netns exec "$NS_FWD" haproxy -f "$OUT/haproxy.cfg" -db \
			> "$OUT/fwd.log" 2>&1 &
		FWD_PIDS+=($!)
	else
		for port in $CTL $DATA; do
			ip netns exec "$NS_FWD" socat \
				"TCP-LISTEN:$port,bind=192.0.2.2,reuseaddr,fork" \
				"TCP:198.51.100.2:$port,nodelay" \
				> "$OUT/fwd.$port.log" 2>&1 &
			FWD_PIDS+=($!)
		done
	fi
	wait_listen "$NS_FWD" $CTL
	wait_listen "$NS_FWD" $DATA
}

run() {
	local len=3 srv obs

	if [ "${1:-}" = -l ]; then
		len=$2
		shift 2
	fi
	OUT=${OUT:-$(mktemp -d /tmp/netstage-forwarder.XXXXXX)}
	mkdir -p "$OUT"
	up
	ip netns exec "$NS_SRV" timeout $((len + 30)) "$NETSTAGE" tcp_rr \
		-L 198.51.100.2 -q --trace --trace-records "$OUT/srv.csv" \
		> "$OUT/srv.out" 2> "$OUT/srv.err" &
	srv=$!
	wait_listen "$NS_SRV" $CTL
	start_forwarder
	ip netns exec "$NS_FWD" timeout $((len + 30)) "$NETSTAGE" observe \
		--port $DATA -l $((len + 3)) -q --logtostderr \
		--trace-records "$OUT/fwd.csv" > "$OUT/fwd.out" \
		2> "$OUT/fwd.err" &
	obs=$!
	# Its programs load before it says so: on a loaded machine that
	# can take seconds, and a client started before would go unseen.
	for _ in $(seq 600); do
		grep -q 'observing pid' "$OUT/fwd.err" && break
		sleep 0.05
	done
	grep -q 'observing pid' "$OUT/fwd.err" || {
		echo "forwarder-topology: observe did not start in 30 s:" \
			"$(tail -3 "$OUT/fwd.err")" >&2
		exit 1
	}
	ip netns exec "$NS_CLI" timeout $((len + 30)) "$NETSTAGE" tcp_rr -c \
		-H 192.0.2.2 -l "$len" -q --trace --trace-records "$OUT/cli.csv" \
		"$@" > "$OUT/cli.out" 2> "$OUT/cli.err"
	wait "$srv" "$obs"
	"$NETSTAGE" join "$OUT/cli.csv" fwd="$OUT/fwd.csv" \
		server="$OUT/srv.csv" --records "$OUT/joined.csv" \
		| tee "$OUT/join.out"
	echo "forwarder-topology: files in $OUT" >&2
}

trap down EXIT
trap 'exit 130' INT TERM
case "${1:-}" in
up)
	up
	trap - EXIT
	echo "namespaces: $NS_CLI $NS_FWD $NS_SRV (down: ip netns del each)"
	;;
down)
	trap - EXIT
	for n in $(ip netns list | awk '/^nsfw-/ { print $1 }'); do
		ip netns pids "$n" | xargs -r kill 2> /dev/null || true
		ip netns del "$n"
	done
	;;
run)
	shift
	run "$@"
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
