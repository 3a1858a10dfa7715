# `cmake --install` installs the headers and libmimorx.so (mimorx_shared,
# cmake/MimorxComponents.cmake) and exports it as mimorx::mimorx, so that find_package(mimorx)
# works with nothing else found.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS mimorx_shared EXPORT mimorxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/mimorx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/mimorx/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mimorx)
install(EXPORT mimorxTargets NAMESPACE mimorx:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
configure_package_config_file(cmake/mimorxConfig.cmake.in ${PROJECT_BINARY_DIR}/mimorxConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mimorxConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mimorxConfig.cmake ${PROJECT_BINARY_DIR}/mimorxConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mimorx)
