# The house's structure (sourced by run.sh): src/'s modules include
# one another one way only, down the layers (docs/architecture.md).

CHECK_INCLUDES="python3 $PWD/tests/func/check_includes.py"
SRC_DIR=$PWD/src

# No circle of includes among src/'s modules, and the check sees one
# when a module includes one above it.
t_src_includes_point_one_way() {
	local copy=$TMP/src-copy

	$CHECK_INCLUDES "$SRC_DIR" || fail "src/ has a circle of includes"
	rm -rf "$copy"
	cp -r "$SRC_DIR" "$copy"
	# kv.c (the bottom) made to include side.h (near the top).
	sed -i '1i #include "side.h"' "$copy/kv.c"
	! $CHECK_INCLUDES "$copy" > out || fail "no circle seen: $(cat out)"
	grep -q 'a circle of includes among: .*src-copy/kv' out || fail "$(cat out)"
}
