# dvppd: the one build entry.
#
#   make            build libdvpp.a, dvppd, dvppctl (quiet; V=1 shows commands)
#                   and the AscendCL tree $(BUILD)/acl (clients/acl, docs/acl.md)
#   make run        install missing Debian packages, build, start dvppd
#   make test       install missing packages, build, run unit + e2e suites
#   make check      the same suites under ASan+UBSan (build/asan)
#   make bench      side-by-side benchmarks against Pillow and OpenCV
#   make install    binaries, libraries, headers, pkg-config files, the Python
#                   client, man pages, systemd units (dvppd.service,
#                   dvppd.socket), sysusers.d and tmpfiles.d entries, and
#                   $(SYSCONFDIR)/dvppd/dvppd.conf unless one exists; e.g.
#                   make install PREFIX=/usr DESTDIR=/tmp/pkg
#   make uninstall  removes all of it (the config only if unchanged)
#   make deps       install the exact Debian 12 packages build and tests need
#   make deb        the Debian packages (debian/), built by dpkg-buildpackage
#                   from a clean copy of the tree into $(BUILD)/deb
#
# Variables: CC (gcc or clang), BUILD (output folder), SANITIZER
# (address,undefined | thread | empty), OPT, V. Changing any compile flag
# rebuilds everything (the flags are recorded in $(BUILD)/.flags).
# Install: PREFIX (/usr/local), DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, DATADIR,
# MANDIR, PYTHONDIR, SYSCONFDIR (/etc, not under PREFIX), UNITDIR
# ($(PREFIX)/lib/systemd/system), SYSUSERSDIR, TMPFILESDIR, ACLDIR
# ($(PREFIX)/lib/dvpp/acl, the AscendCL tree).

# Cross builds (docs/arm64.md): CROSS=aarch64-linux-gnu- builds everything
# for aarch64 with Debian's cross toolchain against the :arm64 dev packages
# (make deps-arm64) into build/arm64; `make test-arm64` runs its unit suites
# under qemu-aarch64. CC and AR follow CROSS unless given; pkg-config reads
# the target's .pc files only.
CROSS ?=
ifneq ($(CROSS),)
CROSS_TRIPLE := $(CROSS:%-=%)
ARCH := $(firstword $(subst -, ,$(CROSS_TRIPLE)))
# CC from make's default or the environment (a global CC=gcc would build
# host objects into the cross folder) follows CROSS; CC on the command line
# is kept (e.g. CC="clang --target=aarch64-linux-gnu").
ifneq ($(filter default environment,$(origin CC)),)
CC := $(CROSS)gcc
endif
AR := $(CROSS)ar
BUILD ?= build/$(if $(filter aarch64,$(ARCH)),arm64,$(ARCH))
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(CROSS_TRIPLE)/pkgconfig:/usr/share/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR= pkg-config
else
ARCH := $(shell uname -m)
PKG_CONFIG ?= pkg-config
endif

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
SYSCONFDIR ?= /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
BUILD ?= build
OBJ = $(BUILD)/obj
SANITIZER ?=
OPT ?= -O2
PYTHON ?= /usr/bin/python3
VERSION := 0.1.0

ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2)
endif

ifneq ($(SANITIZER),)
ifneq ($(SANITIZER),address,undefined)
ifneq ($(SANITIZER),address)
ifneq ($(SANITIZER),undefined)
ifneq ($(SANITIZER),thread)
$(error SANITIZER must be address,undefined | address | undefined | thread, not '$(SANITIZER)')
endif
endif
endif
endif
SAN_FLAGS := -fsanitize=$(SANITIZER) -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
# FUZZ=1 (set by `make fuzz`, clang only) instruments everything for libFuzzer.
ifeq ($(FUZZ),1)
SAN_FLAGS += -fsanitize=fuzzer-no-link
endif

# --- packages ---------------------------------------------------------------
# Libraries found with pkg-config, and the Debian packages behind them.
PKGS := libjpeg libpng16 jansson libavformat libavcodec libswscale libavutil
# FFmpeg is compiled against but not linked: codecs/dvpp_avlib.c loads it
# with dlopen on first use (its ~140 dependent libraries would cost a fresh
# daemon ~12 MiB of RSS). Tests that call FFmpeg themselves link it.
AV_PKGS := libavformat libavcodec libswscale libavutil
LINK_PKGS := $(filter-out $(AV_PKGS),$(PKGS))
DVPPD_PKGS := libmicrohttpd libprotobuf-c libsystemd
PROTO_PKGS := libprotobuf-c
TEST_PKGS := cmocka
DEB_BUILD := gcc make pkg-config libc6-dev libjpeg62-turbo-dev libpng-dev \
	libjansson-dev libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler \
	protobuf-compiler libavcodec-dev libavformat-dev libavutil-dev libswscale-dev \
	libsystemd-dev
# Building the .deb packages (make deb) and testing them (tests/pkg): the
# packaging tools, lintian, and a Debian 12 root booted under systemd-nspawn.
# (defined before DEB_TEST, whose := expands it at once)
DEB_PKG := dpkg-dev debhelper dh-python lintian mmdebstrap systemd-container
DEB_TEST := libcmocka-dev python3 python3-numpy python3-pil python3-opencv \
	python3-pytest libjpeg-turbo-progs libturbojpeg0 ca-certificates \
	python3-protobuf ffmpeg systemd cmake g++ clang python3-torch python3-torchvision \
	python3-venv python3-setuptools python3-wheel forensics-samples-files \
	haproxy nginx python3-distributed python3-zarr python3-yaml kubernetes-client \
	chromium chromium-driver python3-selenium $(DEB_PKG)
DEB_FUZZ := clang libclang-rt-14-dev
DEB_BENCH := wrk nginx libnginx-mod-http-image-filter
DEB_ALL := $(DEB_BUILD) $(DEB_TEST) $(DEB_EXTRA)

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(LINK_PKGS) 2>/dev/null)
AV_LIBS := $(shell $(PKG_CONFIG) --libs $(AV_PKGS) 2>/dev/null)
PROTO_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PROTO_PKGS) 2>/dev/null)
PROTO_LIBS := $(shell $(PKG_CONFIG) --libs $(PROTO_PKGS) 2>/dev/null)
DVPPD_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DVPPD_PKGS) 2>/dev/null)
DVPPD_LIBS := $(shell $(PKG_CONFIG) --libs $(DVPPD_PKGS) 2>/dev/null)
TEST_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(TEST_PKGS) 2>/dev/null)
TEST_LIBS := $(shell $(PKG_CONFIG) --libs $(TEST_PKGS) 2>/dev/null) $(AV_LIBS)

# --- flags ------------------------------------------------------------------
# -ffp-contract=off: no compiler fuses a*b+c into one FMA behind our back
# (clang does by default, on aarch64 in plain C too): the float kernels and
# the coefficient tables must round the same on every compiler and CPU.
STD := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -ffp-contract=off
WARN := -Wall -Wextra -Werror -Wstrict-prototypes -Wshadow -Wformat=2 \
	-Wno-format-nonliteral -Wvla -Wpointer-arith
DEBUG := -g
INCLUDES := -I. -Icore -Icodecs -Ivpc -Iaipp -I$(BUILD)/gen -Iipc -Iproto
FINAL_CFLAGS := $(STD) $(WARN) $(OPT) $(DEBUG) $(SAN_FLAGS) -MMD -MP \
	-DDVPP_VERSION=\"$(VERSION)\" $(INCLUDES) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
FINAL_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
FINAL_LIBS := $(PKG_LIBS) -ldl -lpthread -lm $(LIBS)

# Per-file ISA flags: only the file named after an ISA gets its -m flags;
# everything else stays at the baseline ISA and reaches it by dispatch.
ISA_sse41 := -msse4.1
ISA_avx2 := -mavx2 -mfma -mf16c -mbmi2
ISA_avx512 := $(ISA_avx2) -mavx512f -mavx512bw -mavx512dq -mavx512vl

# --- sources ----------------------------------------------------------------
LIB_DIRS := core codecs vpc aipp device
LIB_SRCS := $(wildcard $(addsuffix /*.c,$(LIB_DIRS)))
ifeq ($(ARCH),x86_64)
LIB_SRCS += $(wildcard $(addsuffix /x86/*.c,$(LIB_DIRS)))
endif
# NEON is part of ARMv8-A: the arm/ kernels need no flag of their own.
ifeq ($(ARCH),aarch64)
LIB_SRCS += $(wildcard $(addsuffix /arm/*.c,$(LIB_DIRS)))
endif
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB := $(BUILD)/libdvpp.a

# The daemon: dvppd/ (process, config, specs, settings) and its two front ends
# dvppd/http/ and dvppd/sock/, each module of which includes its folder's
# private *_int.h and the daemon's headers through -Idvppd.
DVPPD_SRCS := $(wildcard dvppd/*.c dvppd/http/*.c dvppd/sock/*.c)
DVPPCTL_SRCS := $(wildcard clients/dvppctl/*.c)
DVPPD := $(BUILD)/dvppd
DVPPCTL := $(BUILD)/dvppctl

# The wire contract: proto/dvpp.proto compiled at build time (protobuf-c for
# C, protoc for the Python client), and ipc/ (transport, fds, rings).
GEN := $(BUILD)/gen
PROTO_C := $(GEN)/proto/dvpp.pb-c.c
PROTO_H := $(GEN)/proto/dvpp.pb-c.h
PROTO_PY := clients/python/dvpp/dvpp_pb2.py
IPC_SRCS := $(wildcard ipc/*.c)
IPC_OBJS := $(IPC_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/gen/proto/dvpp.pb-c.o
IPC_LIB := $(BUILD)/libdvppipc.a

# The web console (dvppd/console/): its files become a C table at build time
# (tools/embed.c, built and run on the build host with HOSTCC, no xxd needed)
# in $(GEN), linked into dvppd; the daemon serves only what the table holds.
HOSTCC ?= cc
CONSOLE_FILES := $(sort $(wildcard dvppd/console/*.html dvppd/console/*.css \
	dvppd/console/*.js))
CONSOLE_EMBED := $(BUILD)/tools/embed
CONSOLE_C := $(GEN)/dvppd_console_assets.c
CONSOLE_OBJ := $(OBJ)/gen/dvppd_console_assets.o
# The list itself, recorded like the AscendCL sources: a console file that
# goes away (the wildcard) regenerates the table without it.
CONSOLE_LIST := $(BUILD)/.console-files
$(shell mkdir -p $(BUILD) && (echo '$(CONSOLE_FILES)' | cmp -s - $(CONSOLE_LIST) || echo '$(CONSOLE_FILES)' > $(CONSOLE_LIST)))

# libdvppclient: clients/lib + the transport + the generated code, PIC,
# as a static and a shared library (soname libdvppclient.so.1).
PIC := $(BUILD)/pic
CLIENT_SRCS := $(wildcard clients/lib/*.c) ipc/ipc_msg.c
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(PIC)/%.o) $(PIC)/gen/proto/dvpp.pb-c.o
CLIENT_A := $(BUILD)/libdvppclient.a
CLIENT_SO := $(BUILD)/libdvppclient.so.1
EXAMPLE_SRCS := $(wildcard clients/examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:clients/examples/%.c=$(BUILD)/examples/%)
E2E_C_SRCS := $(wildcard tests/e2e/*.c)
E2E_C_BINS := $(E2E_C_SRCS:%.c=$(BUILD)/%)

UNIT_SRCS := $(filter-out tests/unit/helpers/%,$(wildcard tests/unit/*/test_*.c))
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)
UNIT_HELPERS := $(wildcard tests/unit/helpers/*.c)
UNIT_HELPER_OBJS := $(UNIT_HELPERS:%.c=$(OBJ)/%.o)

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:%.c=$(BUILD)/%)
# Targets that run the daemon's own modules (spec parser, socket front end,
# the HTTP front end's frame lists and multipart parser).
FUZZ_DVPPD := $(filter $(addprefix $(BUILD)/tests/fuzz/,fuzz_spec fuzz_sock fuzz_ring fuzz_http),\
	$(FUZZ_BINS))
# The same targets linked with tests/fuzz/replay_main.c instead of libFuzzer
# (any compiler): `make check` replays tests/fuzz/regressions/ with them.
FUZZ_REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/replay/%)
FUZZ_REPLAY_DVPPD := $(FUZZ_DVPPD:$(BUILD)/tests/fuzz/%=$(BUILD)/tests/fuzz/replay/%)

# bench/acl_bench.c links the AscendCL libraries: its own rule (after the
# ACL tree's), built by `make bench` only.
BENCH_SRCS := $(filter-out bench/acl_bench.c,$(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:%.c=$(BUILD)/%)
ACL_BENCH := $(BUILD)/bench/acl_bench

# AscendCL on any CPU (clients/acl/, docs/acl.md): the CANN-style tree
# $(ACL)/ = runtime/include/acl/... (the headers, copied),
# runtime/lib64/{libascendcl,libacl_dvpp,libacl_cblas}.so, the same three in
# runtime/lib64/stub/, and set_env.sh; so INSTALL_DIR=$(ACL) works straight
# from a build. Each library carries a private copy of the libdvpp objects
# it needs: libdvpp's sources compiled again -fPIC -fvisibility=hidden into
# $(ACL_PIC_A), which the linker pulls from object by object, with
# --exclude-libs,ALL so no dvpp_* symbol is exported. The sources are
# wildcards (an empty one still builds a loadable library).
ACL := $(BUILD)/acl
ACL_OBJ := $(ACL)/obj
ACL_LIB64 := $(ACL)/runtime/lib64
ACL_HDR_SRCS := $(wildcard clients/acl/runtime/include/acl/*.h \
	clients/acl/runtime/include/acl/*/*.h)
ACL_HDRS := $(ACL_HDR_SRCS:clients/acl/%=$(ACL)/%)
ACL_RT_SRCS := $(wildcard clients/acl/src/acl_rt_*.c)
ACL_DVPP_SRCS := $(wildcard clients/acl/src/acl_dvpp_*.c clients/acl/src/acl_vdec.c \
	clients/acl/src/acl_venc.c clients/acl/src/acl_video.c)
ACL_CBLAS_SRCS := $(wildcard clients/acl/src/acl_cblas.c)
ACL_RT_OBJS := $(ACL_RT_SRCS:%.c=$(ACL_OBJ)/%.o)
ACL_DVPP_OBJS := $(ACL_DVPP_SRCS:%.c=$(ACL_OBJ)/%.o)
ACL_CBLAS_OBJS := $(ACL_CBLAS_SRCS:%.c=$(ACL_OBJ)/%.o)
ACL_PIC_OBJS := $(LIB_SRCS:%.c=$(ACL_OBJ)/%.o)
ACL_PIC_A := $(ACL_OBJ)/libdvpp_pic.a
ACL_SO_NAMES := libascendcl.so libacl_dvpp.so libacl_cblas.so
ACL_SOS := $(addprefix $(ACL_LIB64)/,$(ACL_SO_NAMES))
ACL_STUBS := $(addprefix $(ACL_LIB64)/stub/,$(ACL_SO_NAMES))
ACL_ENV := $(ACL)/set_env.sh
# The older CANN layout some projects still read (acllib/include,
# acllib/lib64, acllib/lib64/stub): one relative link to runtime/, so each
# of its paths resolves in the built tree, the installed one and copies.
ACL_ACLLIB := $(ACL)/acllib
ACL_TREE := $(ACL_HDRS) $(ACL_SOS) $(ACL_STUBS) $(ACL_ENV) $(ACL_ACLLIB)
# What the ACL sources see: the public headers, the private bridge
# (acl_int.h), libdvpp's headers; FUNC_VISIBILITY makes ACL_FUNC_VISIBILITY
# export the API.
ACL_CFLAGS := -Iclients/acl/runtime/include -Iclients/acl/src -Idevice \
	-DFUNC_VISIBILITY -DENABLE_DVPP_INTERFACE
# Where `make install` puts the tree (set_env.sh there names this path).
ACLDIR ?= $(PREFIX)/lib/dvpp/acl
# C tests of the layer (cmocka), linked against the built libraries with an
# rpath to them, compiled against the copied headers; run by `make unit`.
ACL_TEST_SRCS := $(wildcard tests/acl/test_*.c)
ACL_TEST_BINS := $(ACL_TEST_SRCS:%.c=$(BUILD)/%)

ALL_OBJS := $(LIB_OBJS) $(DVPPD_SRCS:%.c=$(OBJ)/%.o) $(IPC_OBJS) $(CLIENT_OBJS) \
	$(EXAMPLE_SRCS:%.c=$(OBJ)/%.o) $(E2E_C_SRCS:%.c=$(OBJ)/%.o) \
	$(DVPPCTL_SRCS:%.c=$(OBJ)/%.o) $(UNIT_HELPER_OBJS) \
	$(UNIT_SRCS:%.c=$(OBJ)/%.o) $(BENCH_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/bench/acl_bench.o \
	$(FUZZ_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/tests/fuzz/replay_main.o
ALL_OBJS += $(ACL_PIC_OBJS) $(ACL_RT_OBJS) $(ACL_DVPP_OBJS) $(ACL_CBLAS_OBJS) \
	$(ACL_TEST_SRCS:%.c=$(OBJ)/%.o)

# Record the flags; objects depend on the record, so a flag change rebuilds.
FLAGS_FILE := $(BUILD)/.flags
FLAGS_NOW := $(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS) $(FINAL_LIBS)
$(shell mkdir -p $(BUILD) && (echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_FILE) || echo '$(FLAGS_NOW)' > $(FLAGS_FILE)))
# The same for the AscendCL libraries' source lists: a source that goes
# away (the wildcards) relinks the libraries without it.
ACL_SRCS_FILE := $(ACL)/.sources
ACL_SRCS_NOW := $(ACL_RT_SRCS) / $(ACL_DVPP_SRCS) / $(ACL_CBLAS_SRCS) / $(LIB_SRCS)
$(shell mkdir -p $(ACL) && (echo '$(ACL_SRCS_NOW)' | cmp -s - $(ACL_SRCS_FILE) || echo '$(ACL_SRCS_NOW)' > $(ACL_SRCS_FILE)))

.PHONY: all run test check unit e2e scale pkg deb bench install uninstall deps clean \
	test-data distclean fuzz fuzz-bins fuzz-replay tsan-unit deps-arm64 arm64 unit-bins \
	test-arm64 run-unit-qemu
.DEFAULT_GOAL := all

all: $(LIB) $(DVPPD) $(DVPPCTL) $(CLIENT_A) $(CLIENT_SO) $(PROTO_PY) $(EXAMPLE_BINS) \
	$(E2E_C_BINS) $(ACL_TREE)

$(PROTO_C) $(PROTO_H): proto/dvpp.proto
	@mkdir -p $(GEN)
	$(call quiet,PROTOC,$<)
	$(Q)protoc-c --c_out=$(GEN) $<

$(PROTO_PY): proto/dvpp.proto
	@mkdir -p $(dir $@)
	$(call quiet,PROTOC,$@)
	$(Q)protoc --python_out=$(dir $@) -Iproto $<

# Everything that includes the generated header waits for it.
$(IPC_SRCS:%.c=$(OBJ)/%.o) $(DVPPD_SRCS:%.c=$(OBJ)/%.o) $(DVPPCTL_SRCS:%.c=$(OBJ)/%.o) \
	$(CLIENT_OBJS) $(UNIT_SRCS:%.c=$(OBJ)/%.o) $(E2E_C_SRCS:%.c=$(OBJ)/%.o) \
	$(EXAMPLE_SRCS:%.c=$(OBJ)/%.o) $(FUZZ_SRCS:%.c=$(OBJ)/%.o): $(PROTO_H)

$(OBJ)/gen/%.o: $(GEN)/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) $(PROTO_CFLAGS) -c $< -o $@

$(IPC_LIB): $(IPC_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(PIC)/%.o: %.c $(FLAGS_FILE) $(PROTO_H)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) $(PROTO_CFLAGS) -Iclients/include -fPIC \
		-fvisibility=hidden -c $< -o $@

$(PIC)/gen/%.o: $(GEN)/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) $(PROTO_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(CLIENT_A): $(CLIENT_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(CLIENT_SO): $(CLIENT_OBJS)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -shared -Wl,-soname,libdvppclient.so.1 -o $@ $^ \
		$(PROTO_LIBS) -lpthread
	$(Q)ln -sf libdvppclient.so.1 $(BUILD)/libdvppclient.so

$(OBJ)/clients/examples/%.o $(OBJ)/tests/e2e/%.o: FINAL_CFLAGS += -Iclients/include

$(BUILD)/examples/%: $(OBJ)/clients/examples/%.o $(CLIENT_A)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(PROTO_LIBS) -lpthread

$(BUILD)/tests/e2e/%: $(OBJ)/tests/e2e/%.o $(CLIENT_A)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(PROTO_LIBS) -lpthread

$(OBJ)/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) $(ISA) -c $< -o $@

$(OBJ)/%_sse41.o: ISA := $(ISA_sse41)
$(OBJ)/%_avx2.o: ISA := $(ISA_avx2)
$(OBJ)/%_avx512.o: ISA := $(ISA_avx512)

$(LIB): $(LIB_OBJS)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OBJ)/dvppd/%.o $(OBJ)/ipc/%.o: FINAL_CFLAGS += $(DVPPD_CFLAGS) -Idvppd

$(CONSOLE_EMBED): tools/embed.c
	@mkdir -p $(dir $@)
	$(call quiet,HOSTCC,$<)
	$(Q)$(HOSTCC) -std=c11 -O1 -Wall -Wextra -Werror -o $@ $<

$(CONSOLE_C): $(CONSOLE_EMBED) $(CONSOLE_FILES) $(CONSOLE_LIST)
	@mkdir -p $(dir $@)
	$(call quiet,EMBED,$@)
	$(Q)$(CONSOLE_EMBED) $@ $(CONSOLE_FILES)

$(CONSOLE_OBJ): dvppd/http/http_console_assets.h

$(DVPPD): $(DVPPD_SRCS:%.c=$(OBJ)/%.o) $(CONSOLE_OBJ) $(IPC_LIB) $(LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(DVPPD_LIBS) $(FINAL_LIBS)

$(OBJ)/clients/dvppctl/%.o: FINAL_CFLAGS += -Iclients/include

# dvppctl resolves presets with the daemon's own code (preprocess --preset,
# preset list): dvppd_presets and the spec parsers need libdvpp and jansson only.
DVPPCTL_DVPPD_OBJS := $(addprefix $(OBJ)/dvppd/,dvppd_presets.o dvppd_spec.o \
	dvppd_spec_json.o dvppd_spec_query.o dvppd_trace.o)

$(DVPPCTL): $(DVPPCTL_SRCS:%.c=$(OBJ)/%.o) $(DVPPCTL_DVPPD_OBJS) $(CLIENT_A) $(LIB)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(PROTO_LIBS) $(FINAL_LIBS)

$(OBJ)/tests/%.o: FINAL_CFLAGS += $(TEST_CFLAGS) -Itests/unit/helpers

$(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(UNIT_HELPER_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(FINAL_LIBS) $(TEST_LIBS)

# The daemon's modules (all but main) for its unit tests.
DVPPD_MOD_OBJS := $(filter-out $(OBJ)/dvppd/main.o,$(DVPPD_SRCS:%.c=$(OBJ)/%.o)) \
	$(CONSOLE_OBJ)
$(OBJ)/tests/unit/dvppd/%.o $(OBJ)/tests/unit/ipc/%.o: FINAL_CFLAGS += -Idvppd $(DVPPD_CFLAGS)

$(BUILD)/tests/unit/ipc/%: $(OBJ)/tests/unit/ipc/%.o $(UNIT_HELPER_OBJS) $(IPC_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(DVPPD_LIBS) $(FINAL_LIBS) $(TEST_LIBS)

$(BUILD)/tests/unit/dvppd/%: $(OBJ)/tests/unit/dvppd/%.o $(UNIT_HELPER_OBJS) \
		$(DVPPD_MOD_OBJS) $(IPC_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(DVPPD_LIBS) $(FINAL_LIBS) $(TEST_LIBS)

# Fuzz targets: libFuzzer (make fuzz, clang), or the replay driver (any CC).
$(OBJ)/tests/fuzz/%.o: FINAL_CFLAGS += -Idvppd $(DVPPD_CFLAGS) $(PROTO_CFLAGS)

$(filter-out $(FUZZ_DVPPD),$(FUZZ_BINS)): $(BUILD)/tests/fuzz/%: $(OBJ)/tests/fuzz/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(FINAL_LIBS)

$(FUZZ_DVPPD): $(BUILD)/tests/fuzz/%: $(OBJ)/tests/fuzz/%.o $(DVPPD_MOD_OBJS) $(IPC_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(DVPPD_LIBS) $(FINAL_LIBS)

$(filter-out $(FUZZ_REPLAY_DVPPD),$(FUZZ_REPLAY_BINS)): $(BUILD)/tests/fuzz/replay/%: \
		$(OBJ)/tests/fuzz/%.o $(OBJ)/tests/fuzz/replay_main.o $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(FINAL_LIBS)

$(FUZZ_REPLAY_DVPPD): $(BUILD)/tests/fuzz/replay/%: $(OBJ)/tests/fuzz/%.o \
		$(OBJ)/tests/fuzz/replay_main.o $(DVPPD_MOD_OBJS) $(IPC_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(DVPPD_LIBS) $(FINAL_LIBS)

$(OBJ)/bench/%.o: FINAL_CFLAGS += -Iclients/include

$(BUILD)/bench/%: $(OBJ)/bench/%.o $(CLIENT_A) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(PROTO_LIBS) $(FINAL_LIBS)

# --- AscendCL tree (the ACL_* variables above; docs/acl.md) -----------------
# libdvpp's objects again, PIC and hidden (each with its file's ISA flags),
# and the layer's own sources with ACL_CFLAGS.
$(ACL_OBJ)/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)
	$(Q)$(CC) $(FINAL_CFLAGS) $(ACL_EXTRA) $(ISA) -fPIC -fvisibility=hidden -c $< -o $@

$(ACL_OBJ)/%_sse41.o: ISA := $(ISA_sse41)
$(ACL_OBJ)/%_avx2.o: ISA := $(ISA_avx2)
$(ACL_OBJ)/%_avx512.o: ISA := $(ISA_avx512)
$(ACL_OBJ)/clients/acl/%.o: ACL_EXTRA := $(ACL_CFLAGS)

$(ACL_PIC_A): $(ACL_PIC_OBJS) $(ACL_SRCS_FILE)
	$(call quiet,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(ACL_PIC_OBJS)

# Unversioned SONAMEs (stub and real copies are interchangeable). -z defs
# finds an unresolved symbol at build time rather than in a program's
# loader; the sanitizers' runtimes resolve only in the program, so it is
# left out under them. libacl_dvpp.so and libacl_cblas.so need
# libascendcl.so (the runtime, the acli_* bridge) and find it beside
# themselves ($ORIGIN) when a program's own search path does not.
ACL_SO_LDFLAGS = $(FINAL_LDFLAGS) -shared -Wl,--exclude-libs,ALL $(if $(SAN_FLAGS),,-Wl,-z,defs)
ACL_SO_LIBS = -Wl,--as-needed $(FINAL_LIBS) -Wl,--no-as-needed

$(ACL_LIB64)/libascendcl.so: $(ACL_RT_OBJS) $(ACL_PIC_A) $(ACL_SRCS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ACL_SO_LDFLAGS) -Wl,-soname,libascendcl.so -o $@ $(ACL_RT_OBJS) \
		$(ACL_PIC_A) $(ACL_SO_LIBS)

$(ACL_LIB64)/libacl_dvpp.so: $(ACL_DVPP_OBJS) $(ACL_PIC_A) $(ACL_LIB64)/libascendcl.so \
		$(ACL_SRCS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ACL_SO_LDFLAGS) -Wl,-soname,libacl_dvpp.so -Wl,-rpath,'$$ORIGIN' -o $@ \
		$(ACL_DVPP_OBJS) $(ACL_PIC_A) -Wl,--no-as-needed $(ACL_LIB64)/libascendcl.so \
		$(ACL_SO_LIBS)

$(ACL_LIB64)/libacl_cblas.so: $(ACL_CBLAS_OBJS) $(ACL_LIB64)/libascendcl.so $(ACL_SRCS_FILE)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(ACL_SO_LDFLAGS) -Wl,-soname,libacl_cblas.so -Wl,-rpath,'$$ORIGIN' -o $@ \
		$(ACL_CBLAS_OBJS) -Wl,--no-as-needed $(ACL_LIB64)/libascendcl.so $(ACL_SO_LIBS)

$(ACL_LIB64)/stub/%.so: $(ACL_LIB64)/%.so
	@mkdir -p $(dir $@)
	$(call quiet,CP,$@)
	$(Q)cp -f $< $@

$(ACL)/runtime/include/%.h: clients/acl/runtime/include/%.h
	@mkdir -p $(dir $@)
	$(call quiet,CP,$@)
	$(Q)cp -f $< $@

# set_env.sh finds its own folder when sourced by bash or zsh; a plain sh
# gets the folder it was made for (here: this build's, installed: ACLDIR).
$(ACL_ENV): clients/acl/set_env.sh.in
	@mkdir -p $(dir $@)
	$(call quiet,GEN,$@)
	$(Q)sed -e 's|@ACL_DIR@|$(abspath $(ACL))|g' $< > $@

$(ACL_ACLLIB):
	@mkdir -p $(dir $@)
	$(Q)ln -sfn runtime $@

$(OBJ)/tests/acl/%.o: FINAL_CFLAGS += -I$(ACL)/runtime/include -Iclients/acl/src \
	-DENABLE_DVPP_INTERFACE
$(ACL_TEST_SRCS:%.c=$(OBJ)/%.o): $(ACL_HDRS)

# libdvpp.a too, for tests that compare with libdvpp called directly (its
# copy is the program's own; the libraries' copies stay hidden).
$(BUILD)/tests/acl/%: $(OBJ)/tests/acl/%.o $(ACL_SOS) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $< -Wl,--no-as-needed -L$(ACL_LIB64) -lacl_dvpp \
		-lascendcl -lacl_cblas -Wl,-rpath,$(abspath $(ACL_LIB64)) $(LIB) $(FINAL_LIBS) \
		$(TEST_LIBS)

# The AscendCL layer timed beside libdvpp called directly (bench/run_acl.py):
# the copied headers, the two libraries with an rpath, libdvpp.a as above.
$(OBJ)/bench/acl_bench.o: FINAL_CFLAGS += -I$(ACL)/runtime/include -DENABLE_DVPP_INTERFACE
$(OBJ)/bench/acl_bench.o: $(ACL_HDRS)
$(ACL_BENCH): $(OBJ)/bench/acl_bench.o $(ACL_SOS) $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $< -Wl,--no-as-needed -L$(ACL_LIB64) -lacl_dvpp \
		-lascendcl -Wl,-rpath,$(abspath $(ACL_LIB64)) $(LIB) $(FINAL_LIBS)

# --- running ----------------------------------------------------------------
run: deps
	$(Q)$(MAKE) --no-print-directory all
	./$(DVPPD)

# Real-world photos and seeds from Debian packages (downloaded, never
# installed), cached in .cache/testdata.
test-data:
	$(Q)tests/tools/fetch-test-data

# The unit suites run twice: at the CPU's SIMD level and capped to scalar,
# so every dispatch path is exercised on this machine.
unit: all $(UNIT_BINS) $(ACL_TEST_BINS)
	$(Q)tests/tools/run-unit $(UNIT_BINS) $(ACL_TEST_BINS)
	$(Q)DVPP_SIMD=scalar tests/tools/run-unit $(UNIT_BINS) $(ACL_TEST_BINS)

# DVPP_MAKE_VARS: what a test needs to run `make install` on this very build
# (tests/e2e/test_install.py) without rebuilding it with other flags. CI
# reaches pytest from the environment (or `make e2e CI=1`): set, any skipped
# test fails the run (tests/e2e/conftest.py).
e2e: all
	$(Q)DVPP_BUILD=$(BUILD) \
	DVPP_MAKE_VARS="BUILD='$(BUILD)' SANITIZER='$(SANITIZER)' OPT='$(OPT)' CC='$(CC)' \
	CFLAGS='$(CFLAGS)' LDFLAGS='$(LDFLAGS)' LIBS='$(LIBS)'" \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/e2e

# The scale-out set-ups (tests/scale/): dvppd fleets behind real HAProxy and
# nginx, the Kubernetes manifests rendered by kubectl kustomize, dataset jobs
# on a real Dask cluster writing Zarr (docs/scale-out.md).
scale: all
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) -m pytest -q -p no:cacheprovider tests/scale

# The Debian packages (tests/pkg/): built with `make deb`, checked by
# lintian, installed, removed and purged in a throw-away Debian 12 root, and
# booted under a real systemd in systemd-nspawn (docs/operations.md).
pkg:
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) -m pytest -q -p no:cacheprovider tests/pkg

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(ACL_TEST_BINS)
	$(Q)$(MAKE) --no-print-directory test-data
	$(Q)$(MAKE) --no-print-directory unit e2e scale pkg

# libx265 leaks inside its own encoder setup (tests/tools/lsan.supp says why).
export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/tools/lsan.supp
# libavcodec's frame threads synchronise in uninstrumented code (tests/tools/tsan.supp).
export TSAN_OPTIONS = suppressions=$(CURDIR)/tests/tools/tsan.supp

check: deps
	$(Q)$(MAKE) --no-print-directory test-data
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZER=address,undefined \
		OPT=-O1 unit e2e fuzz-replay
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan SANITIZER=thread OPT=-O1 \
		tsan-unit

# The threaded parts (device model) under ThreadSanitizer.
TSAN_BINS := $(filter $(BUILD)/tests/unit/device/%,$(UNIT_BINS))
tsan-unit: $(TSAN_BINS)
	$(Q)tests/tools/run-unit $(TSAN_BINS)

# libFuzzer targets (clang), FUZZ_SECONDS each (default 60), seeded from the
# corpora; a crash, leak, OOM or timeout fails.
fuzz:
	$(Q)$(MAKE) --no-print-directory deps DEB_EXTRA="$(DEB_FUZZ)"
	$(Q)$(MAKE) --no-print-directory test-data
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang \
		SANITIZER=address,undefined OPT=-O1 FUZZ=1 fuzz-bins
	$(Q)tests/tools/run-fuzz build/fuzz

fuzz-bins: $(FUZZ_BINS)

# Every input that ever crashed a fuzz target, and a few seeds per target
# (tests/fuzz/regressions/<target>/), through the targets built with the
# replay driver: no clang, no libFuzzer; part of `make check`.
fuzz-replay: $(FUZZ_REPLAY_BINS)
	$(Q)tests/tools/replay-fuzz $(BUILD)

bench:
	$(Q)$(MAKE) --no-print-directory deps DEB_EXTRA="$(DEB_BENCH)"
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS) $(ACL_BENCH) test-data
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_vpc.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_norm.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_batch.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_http.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_sock.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_video.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_acl.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_torch.py
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/run_fleet.py

# 100,000 mixed HTTP + socket requests at 250 req/s (~7 min); exit 1 when the
# pass condition fails (bench/README.md, "Soak"). Quick: bench/soak.py --quick.
.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)DVPP_BUILD=$(BUILD) $(PYTHON) bench/soak.py

# --- installing ---------------------------------------------------------------
# Man page sources (roff). D: the staging root (DESTDIR), CONF: the config.
MANSRC ?= docs/man
D = $(DESTDIR)
CONF = $(D)$(SYSCONFDIR)/dvppd/dvppd.conf

install: all
	install -d $(D)$(BINDIR) $(D)$(LIBDIR)/pkgconfig $(D)$(INCLUDEDIR)/dvpp \
		$(D)$(PYTHONDIR)/dvpp/torch $(D)$(DATADIR)/dvppd $(D)$(MANDIR)/man1 \
		$(D)$(MANDIR)/man5 $(D)$(MANDIR)/man8 $(D)$(UNITDIR) $(D)$(SYSUSERSDIR) \
		$(D)$(TMPFILESDIR) $(D)$(SYSCONFDIR)/dvppd
	install -m 0755 $(DVPPD) $(DVPPCTL) $(D)$(BINDIR)/
	install -m 0644 $(LIB) $(CLIENT_A) $(D)$(LIBDIR)/
	install -m 0755 $(CLIENT_SO) $(D)$(LIBDIR)/
	ln -sf libdvppclient.so.1 $(D)$(LIBDIR)/libdvppclient.so
	install -m 0644 $(wildcard core/dvpp_*.h codecs/dvpp_*.h) $(D)$(INCLUDEDIR)/dvpp/
	install -m 0644 clients/include/dvppclient.h proto/dvpp_ring.h $(D)$(INCLUDEDIR)/
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s/dvpp\n\nName: libdvpp\nDescription: dvppd media preprocessing library\nVersion: %s\nRequires.private: $(PKGS)\nLibs: -L$${libdir} -ldvpp -lpthread -lm\nCflags: -I$${includedir}\n' \
		'$(PREFIX)' '$(LIBDIR)' '$(INCLUDEDIR)' '$(VERSION)' > $(D)$(LIBDIR)/pkgconfig/libdvpp.pc
	sed -e '/^#/!s|@PREFIX@|$(PREFIX)|' -e '/^#/!s|@VERSION@|$(VERSION)|' \
		-e 's|^libdir=.*|libdir=$(LIBDIR)|' -e 's|^includedir=.*|includedir=$(INCLUDEDIR)|' \
		clients/lib/dvppclient.pc.in > $(D)$(LIBDIR)/pkgconfig/dvppclient.pc
	install -m 0644 clients/python/dvpp/*.py $(D)$(PYTHONDIR)/dvpp/
	install -m 0644 clients/python/dvpp/torch/*.py $(D)$(PYTHONDIR)/dvpp/torch/
	install -m 0644 proto/dvpp.proto proto/PROTOCOL.md $(D)$(DATADIR)/dvppd/
	install -m 0644 $(MANSRC)/dvppctl.1 $(D)$(MANDIR)/man1/
	install -m 0644 $(MANSRC)/dvppd.conf.5 $(D)$(MANDIR)/man5/
	install -m 0644 $(MANSRC)/dvppd.8 $(D)$(MANDIR)/man8/
	sed -e 's|@BINDIR@|$(BINDIR)|g' systemd/dvppd.service.in > $(D)$(UNITDIR)/dvppd.service
	chmod 0644 $(D)$(UNITDIR)/dvppd.service
	install -m 0644 systemd/dvppd.socket $(D)$(UNITDIR)/
	install -m 0644 systemd/dvppd.sysusers $(D)$(SYSUSERSDIR)/dvppd.conf
	install -m 0644 systemd/dvppd.tmpfiles $(D)$(TMPFILESDIR)/dvppd.conf
	@# The operator's config is never replaced.
	@if [ -e $(CONF) ]; then echo "kept $(CONF) (it exists)"; else \
		echo "install -m 0644 systemd/dvppd.conf $(CONF)"; \
		install -m 0644 systemd/dvppd.conf $(CONF); fi
	@# The AscendCL tree, as it is in $(ACL) (set_env.sh naming ACLDIR).
	install -d $(D)$(ACLDIR)/runtime/lib64/stub
	for h in $(ACL_HDRS:$(ACL)/%=%); do install -D -m 0644 $(ACL)/$$h $(D)$(ACLDIR)/$$h || exit 1; done
	install -m 0755 $(ACL_SOS) $(D)$(ACLDIR)/runtime/lib64/
	install -m 0755 $(ACL_STUBS) $(D)$(ACLDIR)/runtime/lib64/stub/
	ln -sfn runtime $(D)$(ACLDIR)/acllib
	sed -e 's|@ACL_DIR@|$(ACLDIR)|g' clients/acl/set_env.sh.in > $(D)$(ACLDIR)/set_env.sh
	chmod 0644 $(D)$(ACLDIR)/set_env.sh

# Everything install wrote; the config only while it is the shipped one, and
# only the folders that are dvppd's own.
uninstall:
	rm -f $(D)$(BINDIR)/dvppd $(D)$(BINDIR)/dvppctl \
		$(D)$(LIBDIR)/libdvpp.a $(D)$(LIBDIR)/libdvppclient.a \
		$(D)$(LIBDIR)/libdvppclient.so $(D)$(LIBDIR)/libdvppclient.so.1 \
		$(D)$(LIBDIR)/pkgconfig/libdvpp.pc $(D)$(LIBDIR)/pkgconfig/dvppclient.pc \
		$(D)$(INCLUDEDIR)/dvppclient.h $(D)$(INCLUDEDIR)/dvpp_ring.h \
		$(D)$(MANDIR)/man1/dvppctl.1 $(D)$(MANDIR)/man5/dvppd.conf.5 \
		$(D)$(MANDIR)/man8/dvppd.8 \
		$(D)$(UNITDIR)/dvppd.service $(D)$(UNITDIR)/dvppd.socket \
		$(D)$(SYSUSERSDIR)/dvppd.conf $(D)$(TMPFILESDIR)/dvppd.conf
	rm -rf $(D)$(INCLUDEDIR)/dvpp $(D)$(PYTHONDIR)/dvpp $(D)$(DATADIR)/dvppd $(D)$(ACLDIR)
	rmdir $(D)$(patsubst %/,%,$(dir $(ACLDIR))) 2>/dev/null || true
	@if cmp -s systemd/dvppd.conf $(CONF); then echo "rm -f $(CONF)"; rm -f $(CONF); \
	elif [ -e $(CONF) ]; then echo "kept $(CONF) (changed from the shipped one)"; fi
	rmdir $(D)$(SYSCONFDIR)/dvppd 2>/dev/null || true

# --- Debian packages ----------------------------------------------------------
# dpkg-buildpackage -us -uc -b on a copy of the tree as git sees it (tracked
# and untracked files, not the ignored ones: no build/, no .cache/), so the
# packages come from a clean tree whatever the checkout holds. Out: the
# .debs, .buildinfo and .changes in DEB_OUT. DEB_BUILD_OPTIONS passes
# through (nocheck skips the unit suites of debian/rules).
DEB_OUT ?= $(BUILD)/deb
DEB_SRC = $(DEB_OUT)/src/dvppd-$(VERSION)
deb:
	$(Q)$(MAKE) --no-print-directory deps
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_SRC)
	@if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z -co --exclude-standard | \
			tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(DEB_SRC); \
	else \
		tar --exclude=./build --exclude=./.cache --exclude=./.git -cf - . | \
			tar -xf - -C $(DEB_SRC); \
	fi
	@# The unit suites of the build read .cache/testdata: share this tree's.
	mkdir -p .cache && ln -s $(CURDIR)/.cache $(DEB_SRC)/.cache
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -jauto
	mv $(DEB_OUT)/src/*.deb $(DEB_OUT)/src/*.buildinfo $(DEB_OUT)/src/*.changes $(DEB_OUT)/
	rm -rf $(DEB_OUT)/src
	@ls -1 $(DEB_OUT)

# Install only what is missing; apt-get needs root (sudo otherwise). A
# fresh machine has no package lists, so update once before installing.
deps:
	@missing=""; for p in $(DEB_ALL); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null; then \
			echo "make deps: missing$$missing and no apt-get (Debian 12 expected)" >&2; exit 1; fi; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		echo "make deps: installing$$missing"; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null || exit 1; \
	fi

# --- aarch64 (docs/arm64.md) --------------------------------------------------
# Debian's cross toolchain, qemu-user, and the :arm64 dev packages the build
# links (multiarch: beside the native ones, same versions).
ARM64_TRIPLE := aarch64-linux-gnu
# (libc6-dev-arm64-cross is only a Recommends of the cross gcc, and make deps
# installs without recommends.)
DEB_ARM64 := crossbuild-essential-arm64 libc6-dev-arm64-cross qemu-user $(addsuffix :arm64,libc6-dev \
	libjpeg62-turbo-dev libpng-dev libjansson-dev libmicrohttpd-dev libprotobuf-c-dev \
	libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libsystemd-dev \
	libcmocka-dev)
ARM64_BUILD ?= build/arm64
# qemu-user runs the aarch64 programs here with the multiarch loader and
# libraries (libc6:arm64, /lib/ld-linux-aarch64.so.1). Not with -L
# /usr/aarch64-linux-gnu: that loader is the cross package's glibc build,
# while libc.so.6 still resolves to the multiarch one (a newer Debian
# revision), and the mismatched pair hangs in the first pthread call.
QEMU_ARM64 ?= qemu-aarch64

deps-arm64:
	@dpkg --print-foreign-architectures | grep -qx arm64 || { \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		echo "make deps-arm64: adding the arm64 architecture"; \
		$$SUDO dpkg --add-architecture arm64 && $$SUDO apt-get update -qq; }
	@$(MAKE) --no-print-directory deps DEB_ALL="$(DEB_ALL) $(DEB_ARM64)"

# Everything for aarch64 in $(ARM64_BUILD): libdvpp.a, dvppd, dvppctl, the
# clients, the AscendCL tree and every unit-test binary.
arm64: deps-arm64
	$(Q)$(MAKE) --no-print-directory CROSS=$(ARM64_TRIPLE)- BUILD=$(ARM64_BUILD) all unit-bins

unit-bins: $(UNIT_BINS) $(ACL_TEST_BINS)

# Every unit binary under qemu-aarch64, at the NEON level and capped to
# scalar; then dvppctl for aarch64 against this machine's build on real
# photos (tests/arm64/compare-dvppctl: the same bytes).
test-arm64: arm64
ifneq ($(CROSS),)
	$(error make test-arm64 compares with this machine's build: run it without CROSS=)
endif
	$(Q)$(MAKE) --no-print-directory CROSS= BUILD=$(BUILD) all test-data
	$(Q)$(MAKE) --no-print-directory CROSS=$(ARM64_TRIPLE)- BUILD=$(ARM64_BUILD) \
		QEMU_ARM64="$(QEMU_ARM64)" run-unit-qemu
	$(Q)$(PYTHON) tests/arm64/compare_dvppctl.py --native $(BUILD)/dvppctl \
		--cross $(ARM64_BUILD)/dvppctl --qemu "$(QEMU_ARM64)"

# One binary per core at a time, the slowest under qemu first (test_video
# alone is ~3 min emulated) so that the others fill the remaining cores.
ARM64_JOBS ?= $(shell nproc)
QEMU_SLOW := $(filter %/test_video %/test_pipeline_sweep %/test_csc %/test_resize \
	%/test_video_venc %/test_resize_window,$(UNIT_BINS) $(ACL_TEST_BINS))
QEMU_ORDER := $(QEMU_SLOW) $(filter-out $(QEMU_SLOW),$(UNIT_BINS) $(ACL_TEST_BINS))
run-unit-qemu:
	$(Q)DVPP_UNIT_JOBS=$(ARM64_JOBS) DVPP_UNIT_RUNNER="$(QEMU_ARM64)" \
		tests/tools/run-unit $(QEMU_ORDER)
	$(Q)DVPP_SIMD=scalar DVPP_UNIT_JOBS=$(ARM64_JOBS) DVPP_UNIT_RUNNER="$(QEMU_ARM64)" \
		tests/tools/run-unit $(QEMU_ORDER)

clean:
	rm -rf build

distclean: clean
	rm -rf .cache

# Keep intermediate objects of chained pattern rules (tests, fuzzers).
.SECONDARY:

-include $(ALL_OBJS:.o=.d)
