#===- FP8Opt.cmake - helpers for fp8-opt's own targets -------------------===#
#
# fp8_add_library(name SOURCES ... [DEPENDS tgt...] [LINK_LIBS lib...])
#
# Like add_mlir_library, but the library goes into fp8-opt's own export set
# (FP8OptTargets) instead of MLIR's, is always static + PIC, and links the
# MLIR dylib rather than static MLIR component libraries (Debian's MLIR does
# not export MLIR_LINK_MLIR_DYLIB).

function(fp8_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  set_property(GLOBAL APPEND PROPERTY FP8_EXPORTED_TARGETS ${name})
  add_library(FP8Opt::${name} ALIAS ${name})
endfunction()
