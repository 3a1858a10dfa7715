# mimorx_component(<name> DIR <src subdir> [PREFIX <file prefix>] [DEPS <components>...])
# Builds src/<DIR>/<PREFIX>*.cpp (and *.cu when CUDA is on) into the static library
# mimorx_<name>. CUDA sources are compiled in every build where nvcc exists, so a kernel
# that does not compile fails CI.
set(MIMORX_COMPONENTS "" CACHE INTERNAL "")

function(mimorx_component name)
  cmake_parse_arguments(C "" "DIR;PREFIX" "DEPS" ${ARGN})
  set(base ${PROJECT_SOURCE_DIR}/src/${C_DIR})
  file(GLOB cpp CONFIGURE_DEPENDS ${base}/${C_PREFIX}*.cpp)
  set(sources ${cpp})
  if(MIMORX_HAS_CUDA)
    file(GLOB cu CONFIGURE_DEPENDS ${base}/${C_PREFIX}*.cu)
    list(APPEND sources ${cu})
  endif()
  set(target mimorx_${name})
  if(sources)
    add_library(${target} STATIC ${sources})
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:mimorx_options>)
    set(scope PUBLIC)
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(sources)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE Eigen3::Eigen fmt::fmt-header-only OpenMP::OpenMP_CXX)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON
      CUDA_SEPARABLE_COMPILATION OFF CUDA_RUNTIME_LIBRARY Static)
    if(MIMORX_HAS_CUDA)
      target_link_libraries(${target} PUBLIC CUDA::cudart_static)
    endif()
  endif()
  foreach(d ${C_DEPS})
    target_link_libraries(${target} ${scope} mimorx_${d})
  endforeach()
  target_link_libraries(${target} ${scope} OpenMP::OpenMP_CXX)
  add_library(mimorx::${name} ALIAS ${target})
  set(MIMORX_COMPONENTS ${MIMORX_COMPONENTS} ${name} CACHE INTERNAL "")
endfunction()

# The aggregate library `mimorx` that the build tree links (apps, tests, benchmarks): every
# component, static. And `mimorx_shared`, the libmimorx.so that `cmake --install` exports as
# mimorx::mimorx: the same objects in one shared library whose build dependencies stay private
# (the OpenMP runtime is a DT_NEEDED of the library, the static CUDA runtime is linked in with
# its symbols hidden; Eigen and fmt are header-only inside src/), so that a consumer needs the
# headers and the library only.
function(mimorx_finish_components)
  add_library(mimorx INTERFACE)
  add_library(mimorx_shared SHARED)
  foreach(c ${MIMORX_COMPONENTS})
    target_link_libraries(mimorx INTERFACE mimorx_${c})
    get_target_property(type mimorx_${c} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      target_sources(mimorx_shared PRIVATE $<TARGET_OBJECTS:mimorx_${c}>)
    endif()
  endforeach()
  add_library(mimorx::mimorx ALIAS mimorx)
  set_target_properties(mimorx_shared PROPERTIES OUTPUT_NAME mimorx EXPORT_NAME mimorx
    LINKER_LANGUAGE CXX VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  target_include_directories(mimorx_shared INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_compile_features(mimorx_shared INTERFACE cxx_std_20)  # the headers use C++20
  target_link_libraries(mimorx_shared PRIVATE $<BUILD_INTERFACE:mimorx_options> OpenMP::OpenMP_CXX)
  if(MIMORX_HAS_MPI)
    target_link_libraries(mimorx_shared PRIVATE MPI::MPI_CXX)
  endif()
  if(MIMORX_HAS_CUDA)
    target_link_libraries(mimorx_shared PRIVATE CUDA::cudart_static)
    target_link_options(mimorx_shared PRIVATE "LINKER:--exclude-libs,libcudart_static.a")
  endif()
  if(NOT MIMORX_SANITIZE)
    # Every symbol resolved when the library is linked, not when a consumer links it.
    target_link_options(mimorx_shared PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
