#===- GenerateVersion.cmake - the git revision for --version -------------===#
#
# cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -P GenerateVersion.cmake
# Run at every build (target fp8-version); rewrites OUTPUT only when the
# revision changed, so nothing recompiles otherwise.
set(revision "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(revision "unknown")
  else()
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain
                            --untracked-files=no
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      set(revision "${revision}-dirty")
    endif()
  endif()
endif()
set(text "#define FP8_VERSION \"${VERSION}\"\n#define FP8_GIT_REVISION \"${revision}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
