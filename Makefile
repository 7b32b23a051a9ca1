# djc - top-level build. `make` builds build/djc and build/libdjc.a;
# `make check` installs dependencies, starts throwaway servers and runs
# every test on SQLite, PostgreSQL and MariaDB; `make demo` runs the demo.
CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
BUILD   ?= build
CFLAGS  += -std=c11 $(OPT) -Wall -Wextra -Wshadow -Wno-unused-parameter -fno-strict-aliasing $(SAN)
CPPFLAGS += -Iinclude -Isrc -I/usr/include/mariadb -I/usr/include/postgresql -D_GNU_SOURCE
# libpq and MariaDB Connector/C are loaded when first used (src/db/dl.c)
LDLIBS  = -ljansson -lpthread -ldl
LDFLAGS += $(SAN)

LIB_SRC := $(sort $(wildcard src/util/*.c src/db/*.c src/schema/*.c src/table/*.c src/jobs/*.c src/populate/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
HELPER_BIN := $(HELPER_SRC:tests/helpers/%.c=$(BUILD)/tests/%)
EX_BIN := $(BUILD)/examples/spikes
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all check check-quick demo deps clean stress bench fuzz unit install uninstall

# `make install` (PREFIX, DESTDIR as usual): the djc command, libdjc.a,
# djc.h and a pkg-config file, so a program builds with
# `cc prog.c $(pkg-config --cflags --libs djc)`.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
PCDIR   ?= $(LIBDIR)/pkgconfig
VERSION := $(shell sed -n 's/^\#define DJC_VERSION "\(.*\)"/\1/p' include/djc.h)

all: $(BUILD)/djc $(BUILD)/libdjc.a $(UNIT_BIN) $(HELPER_BIN) $(EX_BIN) $(BENCH_BIN)

$(BUILD)/%.o: %.c $(wildcard include/*.h include/djc/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libdjc.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/djc: $(CLI_OBJ) $(BUILD)/libdjc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/t.h $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

$(BUILD)/tests/%: tests/helpers/%.c $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

# the example's own makes use libm; libdjc does not
$(BUILD)/examples/spikes: examples/spikes.c $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS) -lm

$(BUILD)/bench/%: bench/%.c $(BUILD)/libdjc.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libdjc.a $(LDLIBS)

deps:
	@scripts/install-deps.sh

# The whole suite: dependencies, servers, unit tests (also under ASan+UBSan),
# CLI behaviour suite on every backend.
check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory BUILD=build-san OPT="-O1 -g" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" all
	@scripts/run-tests.sh

demo: deps all
	@examples/demo.sh

stress: deps all
	@tests/stress/run.sh

bench: deps all
	@bench/run.sh

fuzz: deps
	@tests/fuzz/run.sh

install: $(BUILD)/djc $(BUILD)/libdjc.a
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	install -m 755 $(BUILD)/djc $(DESTDIR)$(BINDIR)/djc
	install -m 644 $(BUILD)/libdjc.a $(DESTDIR)$(LIBDIR)/libdjc.a
	install -m 644 include/djc.h $(DESTDIR)$(INCDIR)/djc.h
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
		'Name: djc' 'Description: DataJoint computed tables and distributed job reservation in C' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -ldjc $(LDLIBS)' \
		> $(DESTDIR)$(PCDIR)/djc.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/djc $(DESTDIR)$(LIBDIR)/libdjc.a $(DESTDIR)$(INCDIR)/djc.h $(DESTDIR)$(PCDIR)/djc.pc

clean:
	rm -rf build build-san build-fuzz
