# djc - top-level build. `make` builds build/djc, build/libdjc.a and
# build/libdjc.so; `make check` installs dependencies, starts throwaway servers
# and runs every test on SQLite, PostgreSQL and MariaDB; `make demo` runs the
# demo. What each needs is listed in scripts/deps.txt.
CC      ?= cc
LD      ?= ld
OBJCOPY ?= objcopy
PKG_CONFIG ?= pkg-config
OPT     ?= -O2 -g
SAN     ?=
BUILD   ?= build
CFLAGS  += -std=c11 $(OPT) -Wall -Wextra -Wshadow -Wno-unused-parameter -fno-strict-aliasing $(SAN)
CPPFLAGS += -Iinclude -Isrc -D_GNU_SOURCE $(DEP_CFLAGS)
LDLIBS  = $(DEP_LIBS) -lpthread -ldl -lm

LDFLAGS += $(SAN)

# Include and link flags come from pkg-config, so the build finds the headers
# where each system puts them (Debian: /usr/include/postgresql and
# /usr/include/mariadb; Fedora/RHEL: /usr/include and /usr/include/mysql).
# libpq, MariaDB Connector/C and SQLite are loaded when first used
# (src/db/dl.c), so only their headers are needed; jansson is linked.
# Evaluated once, when a recipe first needs the flags, so that `make deps`,
# `make clean` and the first step of `make check` run before pkg-config and
# the libraries are installed.
pc_have = $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo y)
pc_missing = $(strip $(foreach m,$(1),$(if $(call pc_have,$(m)),,$(m))))
pc_flags = $(if $(call pc_missing,$(2)),$(error pkg-config ($(PKG_CONFIG)) finds no $(call pc_missing,$(2)): run `make deps` (scripts/install-deps.sh build); see scripts/deps.txt),$(shell $(PKG_CONFIG) $(1) $(2)))
MARIADB_PC = $(firstword $(foreach m,libmariadb mariadb,$(if $(call pc_have,$(m)),$(m))) libmariadb)
DEP_CFLAGS = $(eval DEP_CFLAGS := $(call pc_flags,--cflags,jansson sqlite3 libpq $(MARIADB_PC)))$(DEP_CFLAGS)
DEP_LIBS = $(eval DEP_LIBS := $(call pc_flags,--libs,jansson))$(DEP_LIBS)

LIB_SRC := $(sort $(wildcard src/util/*.c src/db/*.c src/schema/*.c src/sql/*.c src/table/*.c src/jobs/*.c src/make/*.c src/populate/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# unit tests that include a header from src/ (or the fuzz harness, which
# does) call internal functions: they link the internal archive; the others
# use the public API only and link libdjc.a as a user's program does
UNIT_INTERNAL := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(shell grep -l '^\#include "\(\.\./\|[a-z]*/\)' $(UNIT_SRC)))
EX_BIN := $(BUILD)/examples/spikes
# programs the CLI tests start by the thousand (tests/cli/helpers)
TEST_HELPERS := $(patsubst tests/cli/helpers/%.c,$(BUILD)/tests/%,$(wildcard tests/cli/helpers/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

# The shared library: SONAME libdjc.so.MAJOR, every public symbol (djc_*)
# in the version node of libdjc.map, everything else local.
VERSION := $(shell sed -n 's/^\#define DJC_VERSION "\(.*\)"/\1/p' include/djc.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libdjc.so.$(SOMAJOR)
SOREAL  := libdjc.so.$(VERSION)

.PHONY: all unit-bins check check-quick check-san demo deps clean stress bench fuzz unit install uninstall

# `make install` (PREFIX, DESTDIR as usual): the djc command, libdjc.a,
# libdjc.so, djc.h, a pkg-config file, the manual pages djc(1) and libdjc(3)
# and bash completion, so a program builds with
# `cc prog.c $(pkg-config --cflags --libs djc)` (shared) or links libdjc.a
# with `pkg-config --static --libs djc`; and the Python make module,
# djc_make.py, in PYDIR (djc puts it first on a make program's PYTHONPATH),
# and djc_lib.py (a Python make called in-process by libdjc).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
PCDIR   ?= $(LIBDIR)/pkgconfig
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
PYDIR   ?= $(PREFIX)/share/djc/python

all: $(BUILD)/djc $(BUILD)/libdjc.a $(BUILD)/libdjc.so $(UNIT_BIN) $(EX_BIN) $(BENCH_BIN) $(TEST_HELPERS)

# The unit test binaries alone: all the suite runs of the sanitizer build
# (its CLI, examples and benchmarks were built and never run: a seventh of
# make check's compiling)
unit-bins: $(UNIT_BIN)

$(BUILD)/%.o: %.c $(wildcard include/*.h include/djc/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# library objects go into the shared library too
$(LIB_OBJ): CFLAGS += -fPIC
# where `make install` puts djc and djc_make.py: the last place the library
# looks for them for its make programs (src/make/locate.c)
$(BUILD)/src/make/locate.o: CPPFLAGS += -DDJC_INSTALL_BINDIR='"$(BINDIR)"' -DDJC_INSTALL_PYDIR='"$(PYDIR)"'

# Every library object as it is, internal symbols included: for the CLI
# (it reads the configuration through src/util/config.h) and for the unit
# tests that test internal functions. Never installed.
$(BUILD)/libdjc-internal.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The public archive holds one relocatable object made of all library objects
# in which every global symbol not starting with djc_ is made local: a user's
# program cannot collide with (or bind to) djc's internal names
# (tests/abi/test_exports.sh checks this).
$(BUILD)/libdjc.o: $(LIB_OBJ)
	$(LD) -r -o $@.tmp $^
	$(OBJCOPY) -w --keep-global-symbol='djc_*' $@.tmp $@
	rm -f $@.tmp

$(BUILD)/libdjc.a: $(BUILD)/libdjc.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/$(SOREAL): $(LIB_OBJ) libdjc.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=libdjc.map -Wl,--no-undefined \
		$(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

$(BUILD)/libdjc.so: $(BUILD)/$(SOREAL)
	ln -sf $(SOREAL) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# the CLI uses the public API only (tests/cli/test_cli.sh checks its
# includes): it links the public archive, like any program
# (and util/near.o, the "did you mean" it shares with the library: cli.h)
$(BUILD)/djc: $(CLI_OBJ) $(BUILD)/src/util/near.o $(BUILD)/libdjc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(filter-out $(UNIT_INTERNAL),$(UNIT_BIN)): $(BUILD)/tests/%: tests/unit/%.c tests/unit/t.h $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

$(UNIT_INTERNAL): $(BUILD)/tests/%: tests/unit/%.c tests/unit/t.h $(BUILD)/libdjc-internal.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc-internal.a $(LDLIBS)

# static and without the sanitizers: what they cost is their start
$(TEST_HELPERS): $(BUILD)/tests/%: tests/cli/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -static -o $@ $<

# the example's own makes use libm; libdjc does not
$(BUILD)/examples/spikes: examples/spikes.c $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

# What each target installs is group build, demo, check, bench or stress of
# scripts/deps.txt. The targets that build after installing do so in a
# second make, which reads the pkg-config flags of what was just installed.
deps:
	@scripts/install-deps.sh check

# the builds that follow make deps use every core unless make was given -j
PAR = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))

# What the test targets pass to scripts/run-tests.sh: T names test files
# (`make check T="test_jobs_core leases"`), CASE one case of them
# (`make check T=test_jobs_core CASE="lapsed lease"`), on every backend
# unless DJC_BACKENDS says otherwise.
TEST_SEL = $(if $(T),DJC_TESTS="$(T)") $(if $(CASE),DJC_CASE="$(CASE)")
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# The whole suite: dependencies, servers, unit tests (also under ASan+UBSan),
# CLI behaviour suite on every backend.
# The sanitizer build is made by the runner in the background, while the
# servers start and the plain build's files run (its own files wait for it):
# on a machine where starting processes does not use a second core,
# compiling does (docs/testing.md).
# (through a variable: a recipe line naming $(MAKE) itself runs even
# under `make -n`, and this one runs the suite)
SAN_MAKE = $(MAKE) --no-print-directory $(PAR) BUILD=build-san OPT="-O1 -g" SAN="$(SAN_FLAGS)" unit-bins
check: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@$(TEST_SEL) DJC_SAN_MAKE='$(SAN_MAKE)' scripts/run-tests.sh

# The quick loop: the plain build, every test on SQLite only (no servers, no
# sanitizer build).
check-quick: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@$(TEST_SEL) DJC_BACKENDS=sqlite DJC_SAN_BUILD= scripts/run-tests.sh

# Every test file, the CLI suite included, on the sanitizer build alone, on
# every backend (not part of check: ASan+UBSan take about three times the
# CPU; lib.sh builds the programs of test_install with the same flags, and
# test_clocks leaves out its libfaketime cases, which hang under ASan).
check-san: deps
	@$(MAKE) --no-print-directory $(PAR) BUILD=build-san OPT="-O1 -g" SAN="$(SAN_FLAGS)" all unit-bins
	@$(TEST_SEL) DJC_BUILD=build-san DJC_SAN_BUILD= DJC_FILE_TIMEOUT=2700 scripts/run-tests.sh

# The unit tests (tests/unit) alone, plain and sanitizer builds, on SQLite.
unit: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@$(MAKE) --no-print-directory $(PAR) BUILD=build-san OPT="-O1 -g" SAN="$(SAN_FLAGS)" unit-bins
	@$(TEST_SEL) DJC_KINDS=unit DJC_BACKENDS=sqlite scripts/run-tests.sh

# the demo needs only the build and SQLite: no database server is installed;
# like the tests it runs with a PATH of its declared programs only
demo:
	@scripts/install-deps.sh demo
	@$(MAKE) --no-print-directory $(PAR) all
	@rm -rf $(BUILD)/demo-bin && scripts/install-deps.sh --bin $(BUILD)/demo-bin demo
	@PATH="$(CURDIR)/$(BUILD)/demo-bin" examples/demo.sh

stress:
	@scripts/install-deps.sh stress
	@$(MAKE) --no-print-directory $(PAR) all
	@tests/stress/run.sh
	@tests/stress/server.sh
	@tests/stress/scale.sh

bench:
	@scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory $(PAR) all
	@bench/run.sh
	@bench/dj-populate.sh
	@bench/dj-blob.sh
	@bench/query-dj.sh

fuzz:
	@scripts/install-deps.sh fuzz
	@tests/fuzz/run.sh

install: $(BUILD)/djc $(BUILD)/libdjc.a $(BUILD)/libdjc.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR) $(DESTDIR)$(PYDIR)
	install -m 755 $(BUILD)/djc $(DESTDIR)$(BINDIR)/djc
	install -m 644 $(BUILD)/libdjc.a $(DESTDIR)$(LIBDIR)/libdjc.a
	install -m 755 $(BUILD)/$(SOREAL) $(DESTDIR)$(LIBDIR)/$(SOREAL)
	ln -sf $(SOREAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libdjc.so
	install -m 644 include/djc.h $(DESTDIR)$(INCDIR)/djc.h
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 man/djc.1 $(DESTDIR)$(MANDIR)/man1/djc.1
	install -m 644 man/libdjc.3 $(DESTDIR)$(MANDIR)/man3/libdjc.3
	install -m 644 completion/djc.bash $(DESTDIR)$(BASHCOMPDIR)/djc
	install -m 644 python/djc_make.py $(DESTDIR)$(PYDIR)/djc_make.py
	install -m 644 python/djc_blob.py $(DESTDIR)$(PYDIR)/djc_blob.py
	install -m 644 python/djc_datajoint.py $(DESTDIR)$(PYDIR)/djc_datajoint.py
	@# djc_lib.py with the path of the library installed beside it
	sed 's|^_INSTALLED_LIB = None$$|_INSTALLED_LIB = "$(LIBDIR)/$(SONAME)"|' python/djc_lib.py > $(DESTDIR)$(PYDIR)/djc_lib.py
	chmod 644 $(DESTDIR)$(PYDIR)/djc_lib.py
	@# byte-compiled here: a user who cannot write PYDIR would otherwise have
	@# djc_make.py compiled at every start of a Python make (10 ms each);
	@# next to the modules whatever cache directory the installer's own
	@# environment names (PYTHONPYCACHEPREFIX)
	@if command -v python3 >/dev/null 2>&1; then env -u PYTHONPYCACHEPREFIX python3 -m compileall -q -d $(PYDIR) $(DESTDIR)$(PYDIR) >/dev/null || \
		echo "make install: python3 could not byte-compile $(DESTDIR)$(PYDIR)" >&2; fi
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
		'Name: djc' 'Description: DataJoint computed tables and distributed job reservation in C' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -ldjc' \
		'Libs.private: $(LDLIBS)' \
		> $(DESTDIR)$(PCDIR)/djc.pc
	@# a new shared library in a system directory is found once ldconfig ran
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig 2>/dev/null || PATH="$$PATH:/sbin:/usr/sbin" ldconfig || \
		echo "make install: run ldconfig so that programs find $(LIBDIR)/$(SONAME)" >&2; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/djc $(DESTDIR)$(LIBDIR)/libdjc.a $(DESTDIR)$(LIBDIR)/$(SOREAL) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libdjc.so \
		$(DESTDIR)$(INCDIR)/djc.h $(DESTDIR)$(PCDIR)/djc.pc $(DESTDIR)$(PYDIR)/djc_make.py $(DESTDIR)$(PYDIR)/djc_blob.py \
		$(DESTDIR)$(PYDIR)/djc_datajoint.py $(DESTDIR)$(PYDIR)/djc_lib.py $(DESTDIR)$(MANDIR)/man1/djc.1 $(DESTDIR)$(MANDIR)/man3/libdjc.3 $(DESTDIR)$(BASHCOMPDIR)/djc
	rm -rf $(DESTDIR)$(PYDIR)/__pycache__

clean:
	rm -rf build build-san build-fuzz

# issue 40: the no-op Python serve make against the C make (bench/py-serve.sh), a
# 10 MiB <blob> in, 1 MiB out (bench/py-blob.sh), and a per-key make's fetch
# through the fetch socket against djc fetch (bench/py-perkey.sh)
.PHONY: bench-py
bench-py:
	@$(MAKE) --no-print-directory $(PAR) all
	@bench/py-serve.sh
	@bench/py-blob.sh
	@bench/py-perkey.sh

# djc on a pipeline declared by the real DataJoint Python (not part of check:
# needs DataJoint, `pip install datajoint`, or ../shared/realdj): scripts/check-datajoint.sh;
# then djc_make.py's <blob> decoding with DataJoint's codec (tests/datajoint/test_pyblob.sh, SQLite)
.PHONY: check-datajoint
check-datajoint: all
	@scripts/check-datajoint.sh
	@tests/datajoint/test_pyblob.sh

# the real DataJoint's queries against djc's on one database (not part of
# check: needs DataJoint): scripts/check-datajoint-queries.sh
.PHONY: check-datajoint-queries
check-datajoint-queries: all
	@scripts/check-datajoint-queries.sh
