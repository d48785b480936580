#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# The header is committed: CO-RE relocations make the BPF object built
# against it load on other kernels, so builds need no BTF of their own.
set -e
cd "$(dirname "$0")/.."
case "$(uname -m)" in
x86_64) arch=x86 ;;
aarch64) arch=arm64 ;;
*) arch=$(uname -m) ;;
esac
BTF=${1:-/sys/kernel/btf/vmlinux}
[ -r "$BTF" ] || { echo "gen-vmlinux: no BTF at $BTF" >&2; exit 1; }
BPFTOOL=${BPFTOOL:-$(command -v bpftool || ls /usr/sbin/bpftool)}
mkdir -p "vmlinux/$arch"
"$BPFTOOL" btf dump file "$BTF" format c > "vmlinux/$arch/vmlinux.h.tmp"
mv "vmlinux/$arch/vmlinux.h.tmp" "vmlinux/$arch/vmlinux.h"
echo "vmlinux/$arch/vmlinux.h from $BTF ($(uname -r))"
