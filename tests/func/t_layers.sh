# The house's structure (sourced by run.sh): src/'s modules include
# one another one way only, and so do its folders, down the layers
# (src/README.md, docs/architecture.md).

CHECK_INCLUDES="python3 $PWD/tests/func/check_includes.py"
SRC_DIR=$PWD/src

# No circle of includes among src/'s modules or its folders, and the
# check sees each kind when one is made.
t_src_includes_point_one_way() {
	local copy=$TMP/src-copy

	$CHECK_INCLUDES "$SRC_DIR" > out || fail "src/: $(cat out)"
	rm -rf "$copy"
	cp -r "$SRC_DIR" "$copy"
	# kv.c (the bottom) made to include side.h (near the top).
	sed -i '1i #include "side/side.h"' "$copy/core/kv.c"
	! $CHECK_INCLUDES "$copy" > out || fail "no circle seen: $(cat out)"
	grep -q 'a circle of includes among: .*src-copy/core/kv' out ||
		fail "$(cat out)"
	# A folder circle with no module circle: core/ reaches up to
	# stats/fit.h, which includes nothing of core/, while stats/
	# includes core/ elsewhere.
	rm -rf "$copy"
	cp -r "$SRC_DIR" "$copy"
	sed -i '1i #include "stats/fit.h"' "$copy/core/kv.c"
	! $CHECK_INCLUDES "$copy" > out || fail "no folder circle: $(cat out)"
	grep -q '^a circle of includes among the folders: core stats$' out ||
		fail "$(cat out)"
	! grep -q '^a circle of includes among: ' out || fail "$(cat out)"
}
