# make install and what it installs (sourced by run.sh): into a DESTDIR
# of the test's own, with the build the tests run.

REPO=$PWD

t_make_install_and_uninstall() {
	local build san="" wl o missing="" out

	# The build the tests run. A sanitized one is build-san, which the
	# Makefile names itself: a BUILD given would override its choice.
	# Relative to the tree, as make's own: an absolute one rewrote the
	# objects' dependency files under names make never looks up, and
	# the next build in the tree missed every changed header.
	case $(dirname "$NETSTAGE") in
	*-san) san="SANITIZE=1" build="" ;;
	*) build="BUILD=$(realpath --relative-to="$REPO" \
		"$(dirname "$NETSTAGE")")" ;;
	esac
	make -s -C "$REPO" $build $san install DESTDIR="$PWD/root" \
		PREFIX=/usr > make.out 2>&1 || fail "$(tail -5 make.out)"
	# Links that cannot clash with neper's tcp_rr and the rest.
	expect_eq "$(readlink root/usr/bin/netstage-tcp_rr)" netstage \
		"workload link"
	[ ! -e root/usr/bin/tcp_rr ] || fail "a link of neper's name"
	expect_eq "$(root/usr/bin/netstage-tcp_rr --version)" \
		"$("$NETSTAGE" --version)" "installed binary"
	expect_eq "$(timeout 10 root/usr/bin/netstage-udp_stream --dry-run |
		grep '^workload=')" "workload=udp_stream" "the link's workload"
	# The JSON schema, where the man page says it is.
	cmp root/usr/share/netstage/netstage.schema.json \
		"$REPO"/docs/netstage.schema.json || fail "schema"
	grep -q 'share/netstage/netstage.schema.json' \
		root/usr/share/man/man1/netstage.1 || fail "man: no schema"
	# Sections on the outputs and each side's stages, every stage in.
	for o in OUTPUT STAGES; do
		grep -q "^.SH $o" root/usr/share/man/man1/netstage.1 ||
			fail "man: no $o"
	done
	for o in send_call tcp_tx remote softirq_rx wakeup app send_return \
		 connect_call accept_wait udp_rx; do
		grep -q "^$o (\|, $o (" root/usr/share/man/man1/netstage.1 ||
			fail "man: no stage $o"
	done
	# An option of a name per workload (-B) is one entry, and the
	# workloads are not repeated under each option.
	expect_eq "$(grep -c '^\\fB\\-B\\fR' root/usr/share/man/man1/netstage.1)" 1 \
		"-B entries"
	expect_eq "$(grep -c '^\\fB\\-P\\fR' root/usr/share/man/man1/netstage.1)" 1 \
		"-P entries"
	! grep -q '^Workloads:' root/usr/share/man/man1/netstage.1 ||
		fail "man: Workloads: lines"
	expect_eq "$(ls root/usr/share/netstage/examples | wc -l)" \
		"$(ls "$REPO"/examples/*.lua | wc -l)" "examples"
	# The man page has every option of every workload, as --help has.
	for wl in tcp_rr tcp_crr udp_rr tcp_stream udp_stream observe; do
		for o in $("$NETSTAGE" $wl --help | grep -oE -- '--[a-z0-9-]+'); do
			grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" \
				root/usr/share/man/man1/netstage.1 ||
				missing="$missing $o"
		done
	done
	expect_eq "$missing" "" "options missing from the man page"
	if command -v groff > /dev/null; then
		out=$(groff -man -ww -z root/usr/share/man/man1/netstage.1 2>&1)
		expect_eq "$out" "" "groff warnings"
	fi
	# Completion: workloads, then a workload's options from its --help.
	out=$(PATH="$PWD/root/usr/bin:$PATH" bash -c '
		. root/usr/share/bash-completion/completions/netstage
		COMP_WORDS=(netstage tcp_); COMP_CWORD=1; _netstage
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(netstage-tcp_rr --trace-m); COMP_CWORD=1; _netstage
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(netstage udp_rr --rat); COMP_CWORD=2; _netstage
		echo "[${COMPREPLY[*]}]"
		COMP_WORDS=(netstage udp_rr --bur); COMP_CWORD=2; _netstage
		echo "[${COMPREPLY[*]}]"
		COMP_WORDS=(netstage tcp_rr --trace); COMP_CWORD=2; _netstage
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(netstage m); COMP_CWORD=1; _netstage
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(netstage co); COMP_CWORD=1; _netstage
		echo "${COMPREPLY[*]}"')
	# --rate belongs to tcp_rr alone; --burst to udp_rr too. Each option
	# once (--trace was offered four times, from other options' texts).
	expect_eq "$out" "tcp_rr tcp_crr tcp_stream
--trace-max-records
[]
[--burst]
--trace --trace-control --trace-max-records --trace-records --trace-sample --trace-sched
merge
compare" "completions"
	make -s -C "$REPO" $build $san uninstall DESTDIR="$PWD/root" \
		PREFIX=/usr > make.out 2>&1 || fail "$(tail -5 make.out)"
	expect_eq "$(find root -type f -o -type l | wc -l)" 0 "left installed"
	# LINK_PREFIX= for a host without neper: the bare names.
	make -s -C "$REPO" $build $san install uninstall DESTDIR="$PWD/bare" \
		PREFIX=/usr LINK_PREFIX= > make.out 2>&1 &&
		make -s -C "$REPO" $build $san install DESTDIR="$PWD/bare" \
		PREFIX=/usr LINK_PREFIX= > make.out 2>&1 ||
		fail "$(tail -5 make.out)"
	expect_eq "$(readlink bare/usr/bin/tcp_rr)" netstage "a bare link"
}

# make run installs what building and running need, not the test tools
# (issue 44): the browser, node, the real servers and cmocka come with
# make check only.
t_make_run_installs_only_what_running_needs() {
	local deps=$REPO/scripts/install-deps.sh run all p

	run=$("$deps" --list run)
	all=$("$deps" --list all)
	for p in clang bpftool libbpf-dev liblua5.3-dev libjansson-dev; do
		echo "$run" | grep -qx "$p" || fail "run lacks $p"
	done
	for p in chromium nodejs prometheus memcached libcmocka-dev \
		 ansible-core valgrind libclang-rt-dev; do
		! echo "$run" | grep -qx "$p" || fail "run installs $p"
		echo "$all" | grep -qx "$p" || fail "all lacks $p"
	done
	for p in $run; do
		echo "$all" | grep -qx "$p" || fail "all lacks run's $p"
	done
	make -C "$REPO" -n run | grep -q 'scripts/install-deps.sh run$' ||
		fail "make run does not install for running alone"
	make -C "$REPO" -n check | grep -q 'scripts/install-deps.sh all$' ||
		fail "make check does not install everything"
	rc=0
	"$deps" bogus > out 2> err || rc=$?
	expect_eq "$rc" 2 "bogus mode: status"
	expect_eq "$(cat err)" "install-deps: run or all, not 'bogus'" "bogus"
}

# make in the tree the other tests run from.
solo t_make_install_and_uninstall t_make_run_installs_only_what_running_needs
