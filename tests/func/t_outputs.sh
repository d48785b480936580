# Output files as a hostile or careless user meets them (sourced by
# run.sh): what is not a regular file is written in place, a symlink
# through to its target, a directory is refused before the test, and no
# temporary file is left on any exit netstage controls.

CHECK_SCHEMA=$PWD/tests/func/check_schema.py
SCHEMA=$PWD/docs/netstage.schema.json

# Temporary files this test's runs left: beside an output (NAME.XXXXXX)
# or, as --local once made them, in $TMPDIR.
stray_files() {
	find . "${TMPDIR:-/tmp}" -maxdepth 1 -type f -newer "$TMP/.started" \
		\( -name '*.json.??????' -o -name '*.csv.??????' \
		-o -name 'netstage-client.??????' \
		-o -name 'netstage-server.??????' \)
}

t_output_to_a_device_is_written_in_place() {
	local rc=0

	# /dev/full takes nothing: ENOSPC is a failure, and the node stays.
	ns tcp_rr --local -l 1 -q --json /dev/full > out 2> err || rc=$?
	expect_eq "$rc" 1 "status writing /dev/full"
	grep -q "cannot write '/dev/full': No space left on device" err
	[ -c /dev/full ] || fail "/dev/full is no longer a device"
	# /dev/stdout is the descriptor the user gave, here a pipe.
	rc=0
	start_server tcp_rr
	ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -P "$DPORT" -l 1 -q \
		--all-samples=/dev/stdout 2> err | cat > piped || rc=$?
	wait "$SRV_PID"
	expect_eq "$rc" 0 "status writing /dev/stdout"
	grep -q '^time,tid,flow_id,' piped || fail "no CSV through the pipe"
	grep -q '^throughput=' piped || fail "no results through the pipe"
	[ -L /dev/stdout ] || fail "/dev/stdout is no longer a symlink"
	# A fifo with a reader gets the document; the reader is there
	# before netstage starts (it opens without waiting for a writer).
	mkfifo f.json
	python3 - f.json from_fifo <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open("reader_ready", "w").close()
data = b""
while True:
    try:
        b = os.read(fd, 65536)
    except BlockingIOError:
        b = None
    if b:
        data += b
    elif b == b"" and data:
        break
    else:
        time.sleep(0.01)
open(sys.argv[2], "wb").write(data)
PY
	while ! [ -e reader_ready ]; do sleep 0.01; done
	ns tcp_rr --local -l 1 -q --json f.json > out 2> err
	wait
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' from_fifo
	[ -p f.json ] || fail "the fifo was replaced"
}

t_output_through_a_symlink_keeps_the_link() {
	mkdir -p sub
	echo old > sub/real.json
	ln -s sub/real.json link.json
	ns tcp_rr --local -l 1 -q --json link.json > out 2> err
	[ -L link.json ] || fail "link.json is no longer a symlink"
	python3 -c 'import json; json.load(open("sub/real.json"))'
	expect_eq "$(stray_files | wc -l)" 0 "temporary files left"
	expect_eq "$(find sub -type f | wc -l)" 1 "files beside the target"
}

# A link to a file not there yet is written through, as a shell's >
# writes: the target is created, the link stays. Links in a loop fail.
t_output_through_a_dangling_symlink_creates_its_target() {
	local rc=0

	mkdir -p dsub
	ln -s dsub/real.json dlink.json
	ln -s ../dlink.json dsub/hop.json
	ns tcp_rr --local -l 1 -q --json dsub/hop.json > out 2> err
	[ -L dlink.json ] || fail "dlink.json is no longer a symlink"
	[ -L dsub/hop.json ] || fail "dsub/hop.json is no longer a symlink"
	python3 -c 'import json; json.load(open("dsub/real.json"))'
	expect_eq "$(stray_files | wc -l)" 0 "temporary files left"
	ln -s loop2 loop1
	ln -s loop1 loop2
	ns tcp_rr --local -l 1 -q --json loop1 > out 2> err || rc=$?
	expect_eq "$rc" 1 "links in a loop: status"
	expect_eq "$(cat err)" "netstage: cannot write 'loop1': Too many levels of symbolic links" "links in a loop"
}

# A path that is not UTF-8 still makes JSON every parser reads: the
# byte becomes U+FFFD.
t_json_of_a_path_that_is_not_utf8() {
	local dir

	dir=$(printf 'bad\xffdir')
	mkdir -p "$dir"
	echo 'run()' > "$dir/s.lua"
	ns tcp_rr --local -l 1 -q --script "$dir/s.lua" --json u.json \
		> out 2> err
	python3 -c 'import json, sys
d = json.load(open("u.json", encoding="utf-8"))
assert d["client"]["options"]["script"] == "bad\ufffddir/s.lua", d["client"]["options"]'
}

t_output_directory_is_refused_before_the_test() {
	local rc=0 t0

	mkdir d
	t0=$(date +%s)
	ns tcp_rr --local -l 30 -q --all-samples=d > out 2> err || rc=$?
	expect_eq "$rc" 1 "status"
	grep -q "cannot write 'd': it is a directory" err
	expect_le $(($(date +%s) - t0)) 5 "seconds before refusing"
	[ -d d ] || fail "the directory is gone"
}

# --local's server hands its results over a pipe: no temporary file,
# so a $TMPDIR that does not exist changes nothing.
t_local_needs_no_temporary_directory() {
	TMPDIR=$PWD/none ns tcp_rr --local -l 1 -q --json t.json > out \
		2> err || fail "$(cat err)"
	python3 - t.json <<'PY' || fail "t.json: $(head -c 300 t.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["client"]["netstage"]["role"] == "client", d["client"]["netstage"]
assert d["server"]["netstage"]["role"] == "server", d["server"]["netstage"]
assert d["server"]["results"]["num_transactions"] >= \
    d["client"]["results"]["num_transactions"] > 0
PY
}

# No temporary file is left by a failure, --suicide-length (which
# _exits from its signal handler) or a script's os.exit.
t_no_temporary_file_is_left_behind() {
	local rc=0 i

	ns tcp_rr --local -l 10 -q -s 1 --json s.json --all-samples=s.csv > out 2> err ||
		rc=$?
	expect_eq "$rc" 1 "--suicide-length status"
	# Its server, a child, ends when the control connection does.
	for i in $(seq 100); do
		pgrep -f -- "--json s.json --all-samples=s.csv" > /dev/null || break
		sleep 0.1
	done
	expect_eq "$(stray_files | wc -l)" 0 "after --suicide-length: $(stray_files)"
	printf 'run()\nos.exit(3)\n' > x.lua
	rc=0
	ns tcp_rr --local -l 1 -q --script x.lua --json x.json > out 2> err ||
		rc=$?
	expect_eq "$rc" 3 "os.exit status"
	expect_eq "$(stray_files | wc -l)" 0 "after os.exit: $(stray_files)"
}

# Every JSON document netstage writes validates against the schema in
# docs/ (python3-jsonschema, Debian's: /usr/bin/python3), and its
# nested stages are its stage keys (issue 12).
t_json_schema_validates_every_document() {
	local py=/usr/bin/python3

	$py -c 'import jsonschema' 2> /dev/null ||
		{ echo "no python3-jsonschema"; exit "$SKIP"; }
	ns tcp_stream --local -l 1 -q --json stream.json > out
	ns tcp_rr --local -l 1 -q --output-format json > stdout.json
	set -- stream.json stdout.json
	if [ "$(id -u)" -eq 0 ]; then
		ns tcp_rr --local -l 1 -q --trace --json traced.json > out
		ns udp_rr --local -l 1 -q --trace=hist --json hist.json > out
		ns tcp_crr --local -l 1 -q --trace --output-format json > crr.json
		set -- "$@" traced.json hist.json crr.json
		python3 - traced.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "wakeup" in d["client"]["stages"] and "app" in d["server"]["stages"]
assert d["waterfall"]["transactions"] > 0
PY
	fi
	$py "$CHECK_SCHEMA" "$SCHEMA" "$@" > schema.out || fail "$(cat schema.out)"
}
