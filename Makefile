# netstage build. `make` builds build/netstage and the workload links;
# `make check` runs every test; `make check SANITIZE=1` builds everything
# with AddressSanitizer and UndefinedBehaviorSanitizer first; `make run`
# installs what is missing, builds, and runs a short traced loopback tcp_rr.
# Both `run` and `check` install missing Debian packages first.
# `make fuzz` runs each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS
# (60); `make check` runs each for 5. V=1 shows the commands.

CC ?= cc
BUILD ?= build
WORKLOADS := tcp_rr tcp_crr udp_rr tcp_stream udp_stream

ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)

CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
	  -Wshadow -Wstrict-prototypes -MMD -MP -iquote src -Ibpf -I$(BUILD)/bpf \
	  -I$(BUILD)
LUA_CFLAGS := $(shell pkg-config --cflags lua5.3 2>/dev/null || echo -I/usr/include/lua5.3)
LUA_LIBS := $(shell pkg-config --libs lua5.3 2>/dev/null || echo -llua5.3)
CFLAGS += $(LUA_CFLAGS) -I$(BUILD)/lua
LDLIBS += -lbpf -lelf -lz -lpthread -lm $(LUA_LIBS) -lsodium -lcap -lmicrohttpd \
	-ljansson
# -mcpu=v3: atomic fetch-and-add (udp_ready's tail), kernels >= 5.12.
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) \
	      -Ibpf -Wall -Werror

# libFuzzer: clang, coverage on every object, ASan and UBSan.
ifeq ($(FUZZ),1)
BUILD := build-fuzz
CC := clang
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	  -Wno-missing-field-initializers
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(SANITIZE),1)
BUILD := $(BUILD)-san
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2);
endif

# src/'s folders are its layers (src/README.md); includes name a file
# by its path under src/.
SRCS := $(wildcard src/*/*.c)
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/cmd/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/t_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.DELETE_ON_ERROR:
.PHONY: all check unit func run clean deps deps-run fuzz fuzz-bins FORCE install \
	uninstall bench-tools ref-tools

all: $(BUILD)/netstage $(WORKLOADS:%=$(BUILD)/%)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

# The BPF object, and the skeleton user space includes to load it.
$(BUILD)/bpf/stages.bpf.o: bpf/stages.bpf.c $(wildcard bpf/*.h) \
			   vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(@D)
	$(call msg,BPF,$@)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(BUILD)/bpf/stages.skel.h: $(BUILD)/bpf/stages.bpf.o
	$(call msg,SKEL,$@)$(BPFTOOL) gen skeleton $< name stages_bpf > $@

# The tracer's files include the skeleton (trace/tracer_int.h).
$(patsubst %.c,$(BUILD)/%.o,$(wildcard src/trace/tracer*.c)): \
	$(BUILD)/bpf/stages.skel.h

# What `netstage --version` says: git's description of the tree it was
# built from, or VERSION's when built from a tarball. Rewritten only when
# it changes, so it rebuilds what includes it then and only then.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || \
		   cat VERSION 2>/dev/null || echo unknown)
$(BUILD)/version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define NETSTAGE_VERSION "$(VERSION)"' > $@.new
	@cmp -s $@.new $@ && rm $@.new || mv $@.new $@

FORCE:

# Every object waits for it; only those that include it rebuild (-MMD).
$(OBJS): | $(BUILD)/version.h

$(BUILD)/src/script/engine.o: $(BUILD)/lua/prelude.inc

# Text as C string literals a source includes: the Lua prelude, the
# pages' scripts (each after page.js, the helpers they share) and style.
INCS := $(BUILD)/lua/prelude.inc $(BUILD)/html/report_js.inc \
	$(BUILD)/html/report_css.inc $(BUILD)/html/merge_js.inc \
	$(BUILD)/html/compare_js.inc
$(BUILD)/lua/prelude.inc: lua/prelude.lua
$(BUILD)/html/report_js.inc: src/output/html/page.js \
	src/output/html/report.js
$(BUILD)/html/report_css.inc: src/output/html/report.css
$(BUILD)/html/merge_js.inc: src/output/html/page.js \
	src/output/html/merge.js
$(BUILD)/html/compare_js.inc: src/output/html/page.js \
	src/output/html/compare.js
$(INCS):
	@mkdir -p $(@D)
	$(call msg,GEN,$@)cat $^ | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
		-e 's/^/"/' -e 's/$$/\\n"/' > $@

$(BUILD)/src/output/html_report.o: $(BUILD)/html/report_js.inc \
	$(BUILD)/html/report_css.inc $(BUILD)/version.h
$(BUILD)/src/output/merge_report.o: $(BUILD)/html/merge_js.inc \
	$(BUILD)/html/report_css.inc
$(BUILD)/src/output/compare_report.o: $(BUILD)/html/compare_js.inc \
	$(BUILD)/html/report_css.inc

$(BUILD)/netstage: $(OBJS)
	$(call msg,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The names neper and rushit users type: the workload is argv[0].
$(WORKLOADS:%=$(BUILD)/%): $(BUILD)/netstage
	$(Q)ln -sf netstage $@

# Sources and objects only: a test's .d names the headers it read (the
# skeleton among them), which are prerequisites, not inputs.
$(BUILD)/tests/t_%: tests/unit/t_%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,TEST,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ \
		$(filter %.c %.o,$^) $(LDLIBS) -lcmocka

# bench/overhead.sh's reference floor: empty programs on the hooks,
# loaded by a process of their own (bench/bare-hooks.c).
bench-tools: $(BUILD)/bench/bare-hooks $(BUILD)/bench/bare-hooks.bpf.o

$(BUILD)/bench/bare-hooks.bpf.o: bench/bare-hooks.bpf.c vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(@D)
	$(call msg,BPF,$@)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(BUILD)/bench/bare-hooks: $(BUILD)/bench/bare-hooks.o
	$(call msg,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ -lbpf

# The tests' reference timers (tests/ref/): BPF of their own, on other
# events than netstage's, that the tests hold netstage's stages against;
# and wakedelay, which holds wake-up calls up as a busy host does.
REF_TOOLS := rxref wakedelay
ref-tools: $(REF_TOOLS:%=$(BUILD)/tests/ref/%)
.SECONDARY: $(REF_TOOLS:%=$(BUILD)/tests/ref/%.bpf.o) \
	    $(REF_TOOLS:%=$(BUILD)/tests/ref/%.skel.h)

$(BUILD)/tests/ref/%.bpf.o: tests/ref/%.bpf.c vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(@D)
	$(call msg,BPF,$@)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/ref/%.skel.h: $(BUILD)/tests/ref/%.bpf.o
	$(call msg,SKEL,$@)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(BUILD)/tests/ref/%: tests/ref/%.c $(BUILD)/tests/ref/%.skel.h
	$(call msg,CC,$@)$(CC) $(CFLAGS) -I$(BUILD)/tests/ref $(LDFLAGS) \
		-o $@ $< -lbpf

FUZZ_SECONDS ?= 60
# Builds make check and make fuzz run on every CPU.
NPROC := $(shell nproc 2>/dev/null || echo 1)
# Functional tests at once (tests/func/run.sh: those declared solo run
# alone after them).
JOBS ?= $(NPROC)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,FUZZ,$@)$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) \
		-o $@ $^ $(LDLIBS)

fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

# Each target from its committed seeds and what earlier runs found
# (build-fuzz/corpus/NAME); a crash leaves build-fuzz/crash-* and fails.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) FUZZ=1 SANITIZE= fuzz-bins
	$(Q)for t in $(FUZZ_NAMES); do \
		mkdir -p build-fuzz/corpus/$$t; \
		echo "  FUZZ   $$t for $(FUZZ_SECONDS) s"; \
		build-fuzz/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
			-artifact_prefix=build-fuzz/ -print_final_stats=1 \
			build-fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			> build-fuzz/$$t.log 2>&1 || { tail -30 build-fuzz/$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units' build-fuzz/$$t.log; \
	done

unit: $(UNIT_BINS)
	$(Q)rc=0; for t in $(UNIT_BINS); do $$t || rc=1; done; exit $$rc

func: all bench-tools ref-tools
	$(Q)NETSTAGE=$(BUILD)/netstage JOBS=$(JOBS) tests/func/run.sh

# Build on every CPU first, then run the tests one at a time.
check: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all bench-tools ref-tools \
		$(UNIT_BINS)
	$(Q)$(MAKE) --no-print-directory unit func
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=3

deps:
	$(Q)scripts/install-deps.sh all

# What building and running need, not the test tools (browser, node).
deps-run:
	$(Q)scripts/install-deps.sh run

run: deps-run all
	$(BUILD)/netstage tcp_rr --local -l 3 --trace

# The man page, from the option table the binary carries.
$(BUILD)/netstage.1: $(BUILD)/netstage
	$(call msg,MAN,$@)$(BUILD)/netstage --man > $@

# PREFIX and DESTDIR as packagers expect: the binary and its workload
# links, the man page, the examples, the JSON schema and the bash
# completion. The links are netstage-tcp_rr and so on: neper installs
# tcp_rr, tcp_stream and the rest under those names. LINK_PREFIX=
# installs them bare, for a host without neper.
PREFIX ?= /usr/local
LINK_PREFIX ?= netstage-
BINDIR := $(PREFIX)/bin
MANDIR := $(PREFIX)/share/man/man1
DATADIR := $(PREFIX)/share/netstage
COMPDIR := $(PREFIX)/share/bash-completion/completions

install: all $(BUILD)/netstage.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) \
		$(DESTDIR)$(DATADIR)/examples $(DESTDIR)$(COMPDIR)
	install -m 755 $(BUILD)/netstage $(DESTDIR)$(BINDIR)/netstage
	for w in $(WORKLOADS); do \
		ln -sf netstage $(DESTDIR)$(BINDIR)/$(LINK_PREFIX)$$w; done
	install -m 644 $(BUILD)/netstage.1 $(DESTDIR)$(MANDIR)/netstage.1
	install -m 644 examples/*.lua $(DESTDIR)$(DATADIR)/examples/
	install -m 644 docs/netstage.schema.json $(DESTDIR)$(DATADIR)/
	install -m 644 scripts/netstage.bash-completion \
		$(DESTDIR)$(COMPDIR)/netstage
	for w in $(WORKLOADS); do \
		ln -sf netstage $(DESTDIR)$(COMPDIR)/$(LINK_PREFIX)$$w; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/netstage $(DESTDIR)$(MANDIR)/netstage.1 \
		$(DESTDIR)$(COMPDIR)/netstage
	for w in $(WORKLOADS); do \
		rm -f $(DESTDIR)$(BINDIR)/$(LINK_PREFIX)$$w \
		$(DESTDIR)$(COMPDIR)/$(LINK_PREFIX)$$w; done
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-san build-fuzz

-include $(OBJS:.o=.d) $(UNIT_BINS:%=%.d)
