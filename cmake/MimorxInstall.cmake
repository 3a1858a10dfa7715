# `cmake --install` exports mimorx::mimorx so that find_package(mimorx) works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(targets mimorx)
foreach(c ${MIMORX_COMPONENTS})
  list(APPEND targets mimorx_${c})
endforeach()
install(TARGETS ${targets} EXPORT mimorxTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/mimorx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/mimorx/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mimorx)
install(EXPORT mimorxTargets NAMESPACE mimorx:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
configure_package_config_file(cmake/mimorxConfig.cmake.in ${PROJECT_BINARY_DIR}/mimorxConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mimorxConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mimorxConfig.cmake ${PROJECT_BINARY_DIR}/mimorxConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
