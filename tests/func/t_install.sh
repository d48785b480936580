# make install and what it installs (sourced by run.sh): into a DESTDIR
# of the test's own, with the build the tests run.

REPO=$PWD

t_make_install_and_uninstall() {
	local build san="" wl o missing="" out

	# The build the tests run. A sanitized one is build-san, which the
	# Makefile names itself: a BUILD given would override its choice.
	case $(dirname "$NETSTAGE") in
	*-san) san="SANITIZE=1" build="" ;;
	*) build="BUILD=$(dirname "$NETSTAGE")" ;;
	esac
	make -s -C "$REPO" $build $san install DESTDIR="$PWD/root" \
		PREFIX=/usr > make.out 2>&1 || fail "$(tail -5 make.out)"
	expect_eq "$(readlink root/usr/bin/tcp_rr)" netstage "workload link"
	expect_eq "$(root/usr/bin/tcp_rr --version)" \
		"$("$NETSTAGE" --version)" "installed binary"
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
		COMP_WORDS=(tcp_rr --trace-m); COMP_CWORD=1; _netstage
		echo "${COMPREPLY[*]}"
		COMP_WORDS=(netstage udp_rr --rat); COMP_CWORD=2; _netstage
		echo "[${COMPREPLY[*]}]"
		COMP_WORDS=(netstage udp_rr --bur); COMP_CWORD=2; _netstage
		echo "[${COMPREPLY[*]}]"')
	# --rate belongs to tcp_rr alone; --burst to udp_rr too.
	expect_eq "$out" "tcp_rr tcp_crr tcp_stream
--trace-max-records
[]
[--burst]" "completions"
	make -s -C "$REPO" $build $san uninstall DESTDIR="$PWD/root" \
		PREFIX=/usr > make.out 2>&1 || fail "$(tail -5 make.out)"
	expect_eq "$(find root -type f -o -type l | wc -l)" 0 "left installed"
}
