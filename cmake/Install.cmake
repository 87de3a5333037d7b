#===- Install.cmake - the installed FP8Opt CMake package -----------------===#
include(CMakePackageConfigHelpers)

get_property(fp8_targets GLOBAL PROPERTY FP8_EXPORTED_TARGETS)
install(TARGETS ${fp8_targets} EXPORT FP8OptTargets
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  RUNTIME DESTINATION bin)
install(TARGETS fp8-opt fp8-translate fp8-compile RUNTIME DESTINATION bin)
install(EXPORT FP8OptTargets NAMESPACE FP8Opt:: DESTINATION ${FP8_INSTALL_CMAKEDIR})

# Public headers, the generated .inc files they include, and the ODS sources
# (so that downstream dialects can include our attributes).
install(DIRECTORY include/fp8 DESTINATION include FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/fp8 DESTINATION include
  FILES_MATCHING PATTERN "*.inc")
install(DIRECTORY dialects/ DESTINATION include/fp8/ods FILES_MATCHING PATTERN "*.td")

configure_package_config_file(cmake/FP8OptConfig.cmake.in
  ${PROJECT_BINARY_DIR}/FP8OptConfig.cmake
  INSTALL_DESTINATION ${FP8_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/FP8OptConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/FP8OptConfig.cmake
              ${PROJECT_BINARY_DIR}/FP8OptConfigVersion.cmake
        DESTINATION ${FP8_INSTALL_CMAKEDIR})
