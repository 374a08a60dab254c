# A CMake toolchain file for wasmkeep actors in C (clang for wasm32-wasi, reactor model).
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<sdk-c>/cmake/wasm32-wasi.cmake
#   cmake --build build            # builds <name>.wasm, a component
#
# In CMakeLists.txt, after project(... LANGUAGES C):
#   include(${WASMKEEP_C_SDK}/cmake/wasmkeep.cmake)   # WASMKEEP_C_SDK is set by this file
#   wasmkeep_actor(my-actor actor.c)                  # -> my-actor.wasm in the build dir
#
# Variables you may set: WK_SYSROOT (a WASI sysroot; default: Debian's wasi-libc,
# found by clang), WASMKEEP_CLANG (default: clang).
set(CMAKE_SYSTEM_NAME WASI)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
get_filename_component(WASMKEEP_C_SDK "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(WASMKEEP_C_SDK "${WASMKEEP_C_SDK}" CACHE PATH "The wasmkeep C SDK")
if(NOT WASMKEEP_CLANG)
  set(WASMKEEP_CLANG clang)
endif()
set(CMAKE_C_COMPILER "${WASMKEEP_CLANG}")
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_C_FLAGS_INIT "-mexec-model=reactor")
set(CMAKE_EXECUTABLE_SUFFIX ".core.wasm")
if(WK_SYSROOT)
  set(CMAKE_SYSROOT "${WK_SYSROOT}")
endif()
# A wasm32-wasi executable cannot run here: compile-check only.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
