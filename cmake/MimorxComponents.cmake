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

# The aggregate library `mimorx` that users link: every component.
function(mimorx_finish_components)
  add_library(mimorx INTERFACE)
  foreach(c ${MIMORX_COMPONENTS})
    target_link_libraries(mimorx INTERFACE mimorx_${c})
  endforeach()
  add_library(mimorx::mimorx ALIAS mimorx)
endfunction()
