# deploy/ansible/fleet.yml run for real (issue 43): "hosts" made of
# network namespaces on one bridge, each with its own sshd and address,
# driven by the real ansible-playbook from a namespace of its own.

FLEET_DIR=$PWD/deploy/ansible

# fleet_up N: a controller namespace holding a bridge (10.89.0.1), and
# hosts h1..hN on it at 10.89.0.11..., each running sshd with a host
# key and a root key made here. Everything goes when the test ends.
fleet_up() {
	local n=$1 i ns

	# Two plays at once on two CPUs launch their clients too slowly.
	exclusive ansible
	FLEET_NS=fc$$
	FLEET_PIDS=""
	rm -f fleet_id fleet_id.pub host_key host_key.pub
	rm -rf results hosts .ansible
	ssh-keygen -q -t ed25519 -N '' -f fleet_id
	ssh-keygen -q -t ed25519 -N '' -f host_key
	mkdir -p /run/sshd
	ip netns add "$FLEET_NS"
	trap 'fleet_down' EXIT
	ip -n "$FLEET_NS" link set lo up
	ip -n "$FLEET_NS" link add br0 type bridge
	ip -n "$FLEET_NS" addr add 10.89.0.1/24 dev br0
	ip -n "$FLEET_NS" link set br0 up
	for i in $(seq "$n"); do
		ns=fh$$-$i
		ip netns add "$ns"
		ip -n "$FLEET_NS" link add "v$i" type veth peer name eth0 \
			netns "$ns"
		ip -n "$FLEET_NS" link set "v$i" master br0 up
		ip -n "$ns" addr add "10.89.0.$((10 + i))/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		cat > "sshd_$i.conf" <<-EOF
		ListenAddress 10.89.0.$((10 + i))
		HostKey $PWD/host_key
		AuthorizedKeysFile $PWD/fleet_id.pub
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PidFile none
		Subsystem sftp /usr/lib/openssh/sftp-server
		EOF
		ip netns exec "$ns" /usr/sbin/sshd -D -e -f "$PWD/sshd_$i.conf" \
			> "sshd_$i.log" 2>&1 &
		FLEET_PIDS="$FLEET_PIDS $!"
	done
	for i in $(seq "$n"); do
		wait_port 22 "10.89.0.$((10 + i))" "fh$$-$i"
	done
}

# Everything the test ran in its namespaces goes with them: sshd, and
# what Ansible left running there (a server whose clients never came).
fleet_down() {
	local ns

	for ns in $(ip netns list | awk '{print $1}' |
		    grep -E "^(fc$$|fh$$-[0-9]+)$"); do
		ip netns pids "$ns" | xargs -r kill -9 2> /dev/null
		ip netns del "$ns"
	done
	# shellcheck disable=SC2086
	wait $FLEET_PIDS 2> /dev/null || true
}

# fleet_inventory SERVERS CLIENTS: hN lists ("1 2"); a client's server in
# pairs is the server of its position.
fleet_inventory() {
	local s c i=0 servers=($1)

	{
		echo "[servers]"
		for s in $1; do
			echo "h$s ansible_host=10.89.0.$((10 + s))"
		done
		echo "[clients]"
		for c in $2; do
			echo "h$c ansible_host=10.89.0.$((10 + c))" \
				"netstage_server=h${servers[$((i % ${#servers[@]}))]}"
			i=$((i + 1))
		done
		echo "[all:vars]"
		echo "ansible_user=root"
		echo "ansible_ssh_private_key_file=$PWD/fleet_id"
		echo "ansible_python_interpreter=/usr/bin/python3"
		echo "ansible_ssh_common_args=-o StrictHostKeyChecking=no" \
			"-o UserKnownHostsFile=/dev/null"
	} > inv.ini
}

# fleet_run [-e NAME=VALUE]...: the playbook from the controller's
# namespace, each host working in a folder of its own (they share one
# file system), results under ./results; its status in FLEET_RC.
fleet_run() {
	FLEET_RC=0
	# ssh's shared connections of this test alone: a master left by
	# an earlier one to the same address would run the commands in
	# that test's namespaces.
	ANSIBLE_CONFIG=$FLEET_DIR/ansible.cfg \
	ANSIBLE_LOCAL_TEMP=$PWD/.ansible/local \
	ANSIBLE_REMOTE_TEMP=$PWD/.ansible/remote \
	ANSIBLE_SSH_CONTROL_PATH_DIR=$PWD/.ansible/cp \
	ANSIBLE_NOCOLOR=1 \
		ip netns exec "$FLEET_NS" timeout -k 5 240 ansible-playbook \
		-i inv.ini "$FLEET_DIR/fleet.yml" \
		-e "netstage_bin=$NETSTAGE" -e "netstage_results=$PWD/results" \
		-e "netstage_dir=$PWD/hosts/{{ inventory_hostname }}" \
		-e netstage_install_deps=false -e netstage_length=1 \
		"$@" > play.log 2>&1 ||
		FLEET_RC=$?
	echo "ansible-playbook: status $FLEET_RC, $(grep -c 'changed=\|ok=' play.log) hosts in its recap"
}

# fleet_counts CLIENTS...: the merged count is the sum of those hosts'
# own results, and the merge names them all.
fleet_counts() {
	python3 - results "$@" <<'PY'
import json, sys
d = sys.argv[1]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(d + "/merged.txt")
          if "=" in l)
hosts = sys.argv[2:]
runs = [json.load(open(f"{d}/{h}/client.json")) for h in hosts]
runs = [r.get("client", r) for r in runs]
tx = sum(r["results"]["num_transactions"] for r in runs)
assert int(kv["merge_runs"]) == len(hosts), kv["merge_runs"]
assert int(kv["num_transactions"]) == tx, (kv["num_transactions"], tx)
assert kv["merge_kind"] == "concurrent", kv["merge_kind"]
files = sorted(v for k, v in kv.items() if k.endswith(".file"))
assert files == sorted(f"{h}/client.json" for h in hosts), files
print(f"merged {tx} transactions of {len(hosts)} hosts")
PY
}

t_fleet_fans_four_clients_into_one_server() {
	need_root
	command -v ansible-playbook > /dev/null || { echo "no ansible"; exit "$SKIP"; }
	[ -x /usr/sbin/sshd ] || { echo "no sshd (openssh-server)"; exit "$SKIP"; }

	fleet_up 5
	fleet_inventory "1" "2 3 4 5"
	fleet_run -e netstage_trace=true
	expect_eq "$FLEET_RC" 0 "ansible-playbook status: $(tail -20 play.log)"
	fleet_counts h2 h3 h4 h5
	# Every host's CPU beside the merge, the server's too.
	expect_eq "$(awk '{ print $1, $2 }' results/hosts.txt | tr '\n' ' ')" \
		"h1 server h2 client h3 client h4 client h5 client " "hosts"
	awk '{ split($4, c, "="); if (c[2] !~ /^[0-9.]+$/) exit 1 }' \
		results/hosts.txt || fail "a host's CPU: $(cat results/hosts.txt)"
	# The server served the four at once: its count is theirs, but
	# for the answers at the stop a client did not count (one a flow).
	python3 - results <<'PY'
import json, sys
d = sys.argv[1]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(d + "/merged.txt")
          if "=" in l)
srv = json.load(open(d + "/h1/server.json"))
s = srv.get("server", srv)["results"]["num_transactions"]
m = int(kv["num_transactions"])
assert 0 <= s - m <= 4, (s, m)
print(f"server {s}, clients merged {m}")
PY
	# Every transaction's own record, from all four hosts at once: the
	# merged p50 and p99 are theirs within a bucket of the histogram.
	python3 - results h2 h3 h4 h5 <<'PY'
import csv, sys
d = sys.argv[1]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(d + "/merged.txt")
          if "=" in l)
lat = sorted(int(r["APP_DONE"]) - int(r["APP_SEND"])
             for h in sys.argv[2:]
             for r in csv.DictReader(open(f"{d}/{h}/records.csv")))
assert len(lat) > 1000, len(lat)
for q in (50, 99):
    want = lat[max(0, -(-q * len(lat) // 100) - 1)] / 1e3
    got = float(kv[f"latency_p{q}_us"])
    # A bucket is 1/128 of its value wide; the records leave out the
    # few transactions traced incomplete.
    assert abs(got - want) <= 2 * want / 128 + 0.01, (q, got, want)
    print(f"p{q}: merged {got:.3f} us, from {len(lat)} records {want:.3f} us")
PY
	# Traced: the fleet's stages merged, every one a client has; each
	# client joined 99% or more of its records with the server's.
	python3 - results h2 h3 h4 h5 <<'PY'
import json, sys
d = sys.argv[1]
kv = dict(l.rstrip("\n").split("=", 1) for l in open(d + "/merged.txt")
          if "=" in l)
for h in sys.argv[2:]:
    c = json.load(open(f"{d}/{h}/client.json"))
    stages = c.get("client", c)["stages"]
    assert stages, h
    for s in stages:
        assert f"stage_{s}_p50_us" in kv, (h, s)
    out = dict(l.rstrip("\n").split("=", 1)
               for l in open(f"{d}/{h}/client.out") if "=" in l)
    # A server's record traced incomplete (rare) has no partner; past
    # --trace-max-records the client's records are a sample.
    j, t = int(out["waterfall.transactions"]), int(out["waterfall.client_transactions"])
    assert 100 * j >= 99 * t, (h, j, t)
print(f"{len(stages)} stages merged; each client's records joined")
PY
}

t_fleet_runs_pairs_and_names_a_host_that_failed() {
	need_root
	command -v ansible-playbook > /dev/null || { echo "no ansible"; exit "$SKIP"; }
	[ -x /usr/sbin/sshd ] || { echo "no sshd (openssh-server)"; exit "$SKIP"; }
	local pid

	fleet_up 5
	# Two pairs, h1-h3 and h2-h4, and h5, h1's second client, whose
	# sshd is stopped. The hosts share this file system: the binary is
	# linked, not copied (the fan-in test copies it).
	fleet_inventory "1 2" "3 4 5"
	pid=${FLEET_PIDS##* }
	kill "$pid"
	wait "$pid" 2> /dev/null || true
	# Pairs overlap only if Ansible launches every client within the
	# start margin: 30 s, not 10, holds it beside other tests' load.
	fleet_run -e netstage_mode=pairs -e netstage_copy_bin=false \
		-e netstage_start_margin=30
	[ "$FLEET_RC" != 0 ] || fail "a host was down and the play said nothing"
	grep -q 'no result from h5: merged without them' play.log ||
		fail "the play did not name h5: $(tail -20 play.log)"
	fleet_counts h3 h4
	expect_eq "$(key results/merged.txt merge_missing)" h5 "missing"
	expect_eq "$(key results/merged.txt merge_missing_count)" 1 \
		"missing count"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["merge"]["merge_missing"] == "h5", d["merge"]
assert len(d["runs"]) == 2, d["runs"]' results/merged.json
	# Each server served its own client alone, h1 waiting for no more.
	python3 - results <<'PY'
import json, sys
d = sys.argv[1]
for s, c in (("h1", "h3"), ("h2", "h4")):
    srv = json.load(open(f"{d}/{s}/server.json"))
    cli = json.load(open(f"{d}/{c}/client.json"))
    n = srv.get("server", srv)["results"]["num_transactions"]
    m = cli.get("client", cli)["results"]["num_transactions"]
    assert 0 <= n - m <= 1, (s, n, c, m)
    print(f"{s} served {n}, {c} counted {m}")
PY
}

long t_fleet_fans_four_clients_into_one_server
