# SPDX-License-Identifier: GPL-2.0-only
#
# softhca top-level Makefile.
#
#   make            kernel module + libsofthca + tools + selftests
#   make check      install dependencies, build, the guest selftests on
#                   Debian's kernel and on the sanitizer tier's debug
#                   kernel (KASAN, lockdep, kmemleak, KUnit), prove-tier
#   make check-stock  the same without the sanitizer tier
#   make check-full   the sanitizer tier with every selftest it runs
#   make demo       boot a guest and show a softhca device
#   make bench      boot a guest, run softhca-perf on softhca and rdma_rxe
#   make install    module (updates/ + depmod), library, drop-in libibverbs,
#                   headers, tools, man
#
# KDIR selects the kernel build tree (default: the running kernel's, or
# the newest installed headers when the running kernel has none).  W=1
# and C=2 are passed to the kernel build as usual.

VERSION   := 0.1.0
SOVERSION := 1

KVER   ?= $(shell tools/vm/kver 2>/dev/null)
KDIR   ?= /lib/modules/$(KVER)/build

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

CC      ?= cc
AR      ?= ar
B       := build
CFLAGS  ?= -O2 -g
WFLAGS  := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
override CFLAGS += $(WFLAGS) -std=gnu11 -D_GNU_SOURCE -Iuapi -Ilib -Iinclude

LIB_SRCS := $(sort $(wildcard lib/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
LIB_PIC  := $(LIB_SRCS:%.c=$(B)/pic/%.o)
LIBSO    := $(B)/lib/libsofthca.so.$(SOVERSION)
LIBA     := $(B)/lib/libsofthca.a

# The drop-in libibverbs.so.1 that softhca-run puts first on
# LD_LIBRARY_PATH: libsofthca's objects plus lib/dropin/ (the provider
# interface, the IBVERBS_1.0 compatibility symbols), every symbol at the
# version the installed libibverbs exports it under.  The version script
# and the provider ABI number are generated from that library at build
# time (tools/dropin/gen-map).
IBVERBS_SO  ?= $(firstword $(wildcard /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/libibverbs.so.1 \
		/usr/lib/*/libibverbs.so.1 /usr/lib64/libibverbs.so.1 /usr/lib/libibverbs.so.1))
DROPIN_DIR  := $(B)/lib/dropin
DROPIN      := $(DROPIN_DIR)/libibverbs.so.1
DROPIN_GEN  := $(B)/dropin
DROPIN_SRCS := $(sort $(wildcard lib/dropin/*.c))
DROPIN_PIC  := $(DROPIN_SRCS:%.c=$(B)/pic/%.o)
DROPIN_TEST := $(if $(IBVERBS_SO),$(B)/selftests/dropin_query)
UC_WIRE     := $(if $(IBVERBS_SO),$(B)/selftests/uc_wire)
RDMACM_SO   ?= $(firstword $(wildcard /usr/lib/*/librdmacm.so /usr/lib64/librdmacm.so /usr/lib/librdmacm.so))
CM_VERBS    := $(if $(and $(IBVERBS_SO),$(RDMACM_SO)),$(B)/selftests/cm_verbs)

TOOL_SRCS := tools/softhca/main.c tools/softhca/nl.c tools/softhca/show.c
TOOL      := $(B)/bin/softhca

# softhca-perf: one source, built against libsofthca and against the
# distribution's libibverbs (to measure any RDMA device the same way).
PERF_SRCS := $(sort $(wildcard tools/perf/*.c))
PERF      := $(B)/bin/softhca-perf
PERF_IBV  := $(B)/bin/softhca-perf-ibverbs

.PHONY: all module lib dropin tools selftests kunit check check-stock check-full check-guest demo bench install \
	clean deps checkpatch

all: module lib tools selftests

module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at KDIR=$(KDIR) (apt-get install linux-headers-amd64, or make deps)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib: $(LIBSO) $(LIBA) $(B)/lib/softhca.pc $(B)/lib/softhca-rdmacm.pc dropin

$(B)/%.o: %.c $(wildcard lib/*.h uapi/rdma/*.h include/infiniband/*.h tools/softhca/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/pic/%.o: %.c $(wildcard lib/*.h uapi/rdma/*.h include/infiniband/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIBSO): $(LIB_PIC) lib/libsofthca.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libsofthca.so.$(SOVERSION) \
		-Wl,--version-script=lib/libsofthca.map -Wl,--no-undefined \
		-o $@ $(LIB_PIC) -lpthread
	ln -sf libsofthca.so.$(SOVERSION) $(B)/lib/libsofthca.so

ifneq ($(IBVERBS_SO),)
dropin: $(DROPIN)
else
dropin:
	@echo "no libibverbs.so.1 installed (apt-get install libibverbs1): drop-in libibverbs not built"
endif

$(DROPIN_GEN)/libibverbs.map: tools/dropin/gen-map $(IBVERBS_SO)
	@mkdir -p $(dir $@)
	tools/dropin/gen-map map $(IBVERBS_SO) > $@.tmp && mv $@.tmp $@

$(DROPIN_GEN)/pabi.h: tools/dropin/gen-map $(IBVERBS_SO)
	@mkdir -p $(dir $@)
	tools/dropin/gen-map pabi $(IBVERBS_SO) > $@.tmp && mv $@.tmp $@

$(DROPIN_PIC): $(DROPIN_GEN)/pabi.h
$(DROPIN_PIC): override CFLAGS += -I$(DROPIN_GEN)

$(DROPIN): $(LIB_PIC) $(DROPIN_PIC) $(DROPIN_GEN)/libibverbs.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(DROPIN_GEN)/libibverbs.map -Wl,--no-undefined \
		-o $@ $(LIB_PIC) $(DROPIN_PIC) -lpthread

$(LIBA): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/lib/%.pc: lib/%.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

tools: $(TOOL) $(PERF) $(PERF_IBV)

$(TOOL): $(TOOL_SRCS:%.c=$(B)/%.o) $(LIBSO)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) -L$(B)/lib -lsofthca -lmnl \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(PERF): $(PERF_SRCS) tools/perf/perf.h $(LIBSO)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DPERF_LIB='"libsofthca"' -o $@ $(PERF_SRCS) \
		-L$(B)/lib -lsofthca -Wl,-rpath,'$$ORIGIN/../lib'

$(PERF_IBV): $(PERF_SRCS) tools/perf/perf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DPERF_LIB='"libibverbs"' -o $@ $(PERF_SRCS) -libverbs

selftests: lib $(DROPIN_TEST) $(UC_WIRE) $(CM_VERBS)
	$(MAKE) -C selftests B=$(CURDIR)/$(B)/selftests TOP=$(CURDIR)

# selftests/dropin.sh's libibverbs program: built against the
# distribution's libibverbs, run under softhca-run.
$(DROPIN_TEST): selftests/dropin_query.c selftests/tap.h selftests/util.h selftests/smaps.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -libverbs -ldl

# selftests/wire_uc.sh's and wire_rc.sh's program (UC, or RC with -R):
# the distribution's libibverbs too, so that it runs on rdma_rxe as it
# is and on softhca under softhca-run.
$(UC_WIRE): selftests/uc_wire.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -libverbs

# selftests/rdma_cm.sh's program: the distribution's librdmacm (needs
# librdmacm-dev) and libibverbs, the same on rdma_rxe and softhca.
$(CM_VERBS): selftests/cm_verbs.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lrdmacm -libverbs

kunit:
	tools/kunit/run-kunit

deps:
	tools/setup-deps

# The README's test command: everything from a fresh Debian 12 machine.
check:
	tools/check

# Without the sanitizer tier (the debug kernel, the driver's selftests
# on it, prove-tier: Documentation/testing.rst), for a quicker loop.
check-stock:
	SOFTHCA_CHECK_DEBUG=0 tools/check

# make check with every selftest that runs on the debug kernel there, not
# only those whose paths no other covers: about 15 minutes more.
check-full:
	SOFTHCA_CHECK_FULL=1 tools/check

demo: deps all
	tools/vm/run-guest -t 300 -- tools/demo.sh

checkpatch:
	tools/checkpatch

# Figures, not tests: the side-by-side table against rdma_rxe.  10
# minutes on a quiet 2-core host before the perftest rows (about one more);
# a host shared with other guests took over 15, hence the guest's 25.
bench: deps all
	tools/vm/run-guest -t 2100 -- sh tools/bench/guest.sh build/bench/results.jsonl
	python3 tools/bench/table.py build/bench/results.jsonl | tee build/bench/table.txt

# The verbs fuzzer for longer than make check's 30 and 60 s: make fuzz SECS=600
# (SEED=n replays a run).  Fails on any failure it reports or kernel splat.
SECS ?= 600
.PHONY: fuzz
fuzz: deps all
	tools/vm/run-guest -t $$(( $(SECS) + 400 )) -- env FUZZ_SECS=$(SECS) \
		$(if $(SEED),FUZZ_SEED=$(SEED)) sh selftests/fuzz.sh

# The drop-in goes to $(LIBDIR)/softhca, a directory no ld.so.conf names:
# the system's libibverbs stays what every program gets unless
# softhca-run puts this one first.  softhca-run finds it relative to
# itself (dropin_rel, set here).
install: all
	install -d $(DESTDIR)/lib/modules/$(KVER)/updates
	install -m 644 drivers/softhca/softhca.ko $(DESTDIR)/lib/modules/$(KVER)/updates/
	if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); \
	elif [ -d "$(DESTDIR)/lib/modules/$(KVER)/kernel" ]; then depmod -b $(DESTDIR) $(KVER); \
	else echo "DESTDIR set: run 'depmod -a $(KVER)' on the target"; fi
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/rdma
	install -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libsofthca.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsofthca.so
	install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/softhca
	install -m 755 $(DROPIN) $(DESTDIR)$(LIBDIR)/softhca/
	for pc in softhca softhca-rdmacm; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	        -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	        lib/$$pc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$$pc.pc; \
	done
	install -m 644 uapi/rdma/softhca-abi.h $(DESTDIR)$(INCLUDEDIR)/rdma/
	install -d $(DESTDIR)$(INCLUDEDIR)/infiniband
	install -m 644 include/infiniband/softhca_xrc.h $(DESTDIR)$(INCLUDEDIR)/infiniband/
	install -d $(DESTDIR)$(SBINDIR)
	$(CC) -o $(DESTDIR)$(SBINDIR)/softhca $(TOOL_SRCS:%.c=$(B)/%.o) \
		-L$(B)/lib -lsofthca -lmnl -Wl,-rpath,$(LIBDIR)
	install -d $(DESTDIR)$(BINDIR)
	$(CC) $(CFLAGS) -DPERF_LIB='"libsofthca"' -o $(DESTDIR)$(BINDIR)/softhca-perf \
		$(PERF_SRCS) -L$(B)/lib -lsofthca -Wl,-rpath,$(LIBDIR)
	install -m 755 $(PERF_IBV) $(DESTDIR)$(BINDIR)/
	sed "s|^dropin_rel=.*|dropin_rel=$$(realpath -m --relative-to=$(BINDIR) $(LIBDIR)/softhca)|" \
		tools/softhca-run > $(DESTDIR)$(BINDIR)/softhca-run
	chmod 755 $(DESTDIR)$(BINDIR)/softhca-run
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 Documentation/man/softhca-run.1 $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(MANDIR)/man8
	install -m 644 Documentation/man/softhca.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(MANDIR)/man3
	install -m 644 Documentation/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(B)
