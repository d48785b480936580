#!/bin/sh
# Install the Debian packages netstage needs. Idempotent: installs only
# what is missing, so `make run` costs nothing the second time. Runs as
# root, or through sudo when it is available.
#
#   scripts/install-deps.sh [run|all]    run: to build and run (make run);
#                                        all (default): and to test
#   scripts/install-deps.sh --list run|all   the packages, one a line
set -e

LIST=0
[ "${1:-}" != "--list" ] || { LIST=1; shift; }
MODE=${1:-all}
case $MODE in
run|all) ;;
*) echo "install-deps: run or all, not '$MODE'" >&2; exit 2 ;;
esac

BUILD="make gcc libc6-dev pkg-config liblua5.3-dev libsodium-dev libcap-dev libmicrohttpd-dev libjansson-dev"
# liblua5.3-dev: --script. libsodium-dev: --auth-key's HMAC and random challenges. libcap-dev: dropping privileges once BPF is loaded. libmicrohttpd-dev: observe --listen serves /metrics. libjansson-dev: netstage merge reads runs' JSON results. Tracing: clang builds the BPF object, bpftool its skeleton, libbpf loads it.
BPF="clang bpftool libbpf-dev libelf-dev zlib1g-dev"
# libFuzzer's runtime for clang (make fuzz, and a short run in make check).
FUZZ="libclang-rt-dev"
# Test tools: python3 parses the CSV and JSON outputs; iproute2 gives ss
# and ip netns; nftables drops a known share of packets in a test netns;
# memcached, socat and haproxy are the real servers and forwarders --raw,
# observe and join are tested on; valgrind 3.19 lacks epoll_pwait2, the
# real refusal the engine's fallback is tested against.
# chromium renders the --report HTML headless (its script must run clean);
# python3-jsonschema validates every JSON document against docs/.
# nodejs runs Chrome's trace engine on the --perfetto file (below).
# strace shows which socket options a data socket gets before connect().
# prometheus scrapes observe --listen and answers histogram_quantile().
# libcmocka-dev: the unit tests.
# ansible-core runs deploy/ansible/fleet.yml against "hosts" that are
# network namespaces, each with its own sshd (openssh-server; Debian's
# policy starts no service of it here).
TEST="libcmocka-dev python3 python3-jsonschema iproute2 procps nftables memcached socat \
haproxy valgrind chromium nodejs strace prometheus ansible-core \
openssh-server"
# Debian ships npm apart from nodejs; NodeSource's nodejs has it inside.
command -v npm > /dev/null || TEST="$TEST npm"
# Running needs the build's packages alone: no browser, node, real
# servers or Ansible.
if [ "$MODE" = run ]; then
	PKGS="$BUILD $BPF ${EXTRA_PKGS:-}"
else
	PKGS="$BUILD $BPF $FUZZ $TEST ${EXTRA_PKGS:-}"
fi
if [ "$LIST" = 1 ]; then
	printf '%s\n' $PKGS
	exit 0
fi

# Chrome DevTools' trace engine, the parser behind its Performance panel
# (published on npm by a Chrome developer; not in Debian): a test loads
# the --perfetto file with it, as a viewer would. Into build-node/.
TRACE_ENGINE="@paulirish/trace_engine@0.0.65"
NODE_DIR="$(cd "$(dirname "$0")/.." && pwd)/build-node"

# Only a test needs it: without the npm registry netstage still builds
# and runs, and that test fails saying what is missing.
install_trace_engine() {
	[ "$MODE" = all ] || return 0
	[ -f "$NODE_DIR/node_modules/@paulirish/trace_engine/package.json" ] &&
		return 0
	echo "installing: $TRACE_ENGINE (npm, into build-node/)"
	mkdir -p "$NODE_DIR"
	npm install --prefix "$NODE_DIR" --no-audit --no-fund --omit=dev \
		--loglevel=error "$TRACE_ENGINE" > /dev/null ||
		echo "install-deps: npm could not install $TRACE_ENGINE; t_trace_perfetto will fail without it" >&2
}

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	install_trace_engine
	exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing > /dev/null
install_trace_engine
