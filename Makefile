# netstage build. `make` builds build/netstage and the workload links;
# `make check` runs every test; `make check SANITIZE=1` builds everything
# with AddressSanitizer and UndefinedBehaviorSanitizer first; `make run`
# installs what is missing, builds, and runs a short loopback tcp_rr.
# Both `run` and `check` install missing Debian packages first.
# V=1 shows the commands.

CC ?= cc
BUILD ?= build
WORKLOADS := tcp_rr tcp_stream udp_stream

CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
	  -Wshadow -Wstrict-prototypes -MMD -MP
LDLIBS += -lpthread -lm

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

SRCS := $(wildcard src/*.c src/workload/*.c)
OBJS := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/t_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.DELETE_ON_ERROR:
.PHONY: all check unit func run clean deps

all: $(BUILD)/netstage $(WORKLOADS:%=$(BUILD)/%)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/netstage: $(OBJS)
	$(call msg,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The names neper and rushit users type: the workload is argv[0].
$(WORKLOADS:%=$(BUILD)/%): $(BUILD)/netstage
	$(Q)ln -sf netstage $@

$(BUILD)/tests/t_%: tests/unit/t_%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(call msg,TEST,$@)$(CC) $(CFLAGS) -Isrc $(LDFLAGS) -o $@ $^ \
		$(LDLIBS) -lcmocka

unit: $(UNIT_BINS)
	$(Q)rc=0; for t in $(UNIT_BINS); do $$t || rc=1; done; exit $$rc

func: all
	$(Q)NETSTAGE=$(BUILD)/netstage tests/func/run.sh

check: deps
	$(Q)$(MAKE) --no-print-directory unit func

deps:
	$(Q)scripts/install-deps.sh

run: deps all
	$(BUILD)/netstage tcp_rr --local -l 3

clean:
	rm -rf build build-san

-include $(OBJS:.o=.d) $(UNIT_BINS:%=%.d)
