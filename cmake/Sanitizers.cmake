#===- Sanitizers.cmake - sanitizer and libFuzzer builds -------------------===#
#
# Included at the end of the top-level CMakeLists.txt, after every target
# exists. Never for the normal build: use a separate build directory.
#
#   -DFP8_SANITIZE="address;undefined"   scripts/sanitize.sh (g++ or clang)
#   -DFP8_ENABLE_FUZZER=ON               scripts/fuzz.sh (clang only; implies
#                                        address;undefined unless FP8_SANITIZE
#                                        says otherwise)
#
# The flags go on fp8-opt's own compiled targets. Not on the model-library
# runtime archives (fp8rt_cpu, fp8rt_cuda, fp8rt_cuda_model): fp8-compile
# links them into model .so files with `cc ... -Wl,--no-undefined`, and a
# model loaded by an uninstrumented process (Python's ctypes, a user's
# program) cannot resolve the sanitizer runtime. The sanitized fp8-run still
# puts every model's malloc/free and memcpy/memset behind ASan's allocator
# and interceptors. docs/Fuzzing.md.

if(FP8_ENABLE_FUZZER AND NOT FP8_SANITIZE)
  set(FP8_SANITIZE "address;undefined")
endif()

if(FP8_SANITIZE)
  if(FP8_ENABLE_FUZZER AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FP8_ENABLE_FUZZER needs clang (libFuzzer): configure "
                        "with -DCMAKE_CXX_COMPILER=clang++ "
                        "-DCMAKE_C_COMPILER=clang")
  endif()
  set(_fp8_san_list ${FP8_SANITIZE})
  # GCC leaves float-cast-overflow out of -fsanitize=undefined (clang has
  # it): a folded conversion of inf to int64 went unreported under g++.
  if("undefined" IN_LIST _fp8_san_list AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND _fp8_san_list float-cast-overflow)
  endif()
  list(JOIN _fp8_san_list "," _fp8_san)
  # Every UB report is fatal (a crash for libFuzzer, a failed test for
  # lit); frame pointers and line tables make the reports readable.
  set(_fp8_san_compile -fsanitize=${_fp8_san} -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  # No vptr checks: Debian's LLVM is built without RTTI, so UBSan cannot
  # tell the dynamic type of LLVM's objects and reports every member call
  # on one (llvm::cl::Option in fp8::hideOptionsOutside) as a type
  # mismatch. Clang drops vptr by itself under -fno-rtti; g++ does not.
  if("undefined" IN_LIST _fp8_san_list)
    list(APPEND _fp8_san_compile -fno-sanitize=vptr)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND _fp8_san_compile -gline-tables-only)
  else()
    list(APPEND _fp8_san_compile -g1)
  endif()
  if(FP8_ENABLE_FUZZER)
    list(APPEND _fp8_san_compile -fsanitize=fuzzer-no-link)
  endif()
  set(_fp8_san_link -fsanitize=${_fp8_san})

  set(_fp8_san_exclude fp8rt_cpu fp8rt_cuda fp8rt_cuda_model)
  function(_fp8_sanitize_dir dir)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      if(t IN_LIST _fp8_san_exclude)
        continue()
      endif()
      get_target_property(type ${t} TYPE)
      if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        target_compile_options(${t} PRIVATE
          "$<$<COMPILE_LANGUAGE:C,CXX>:${_fp8_san_compile}>")
        if(NOT type STREQUAL "STATIC_LIBRARY" AND
           NOT type STREQUAL "OBJECT_LIBRARY")
          target_link_options(${t} PRIVATE ${_fp8_san_link})
        endif()
        if(type STREQUAL "EXECUTABLE")
          # Default sanitizer options and suppressions, in every binary.
          target_sources(${t} PRIVATE
            ${PROJECT_SOURCE_DIR}/fuzz/SanitizerDefaults.cpp)
        endif()
      endif()
    endforeach()
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(s IN LISTS subdirs)
      _fp8_sanitize_dir(${s})
    endforeach()
  endfunction()
  _fp8_sanitize_dir(${PROJECT_SOURCE_DIR})
  message(STATUS "fp8-opt: sanitizers ${_fp8_san} on fp8-opt's targets "
                 "(not on ${_fp8_san_exclude})")
endif()
