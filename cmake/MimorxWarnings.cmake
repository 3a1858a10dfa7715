# Warnings as errors on our own code; sanitizers on request.
add_library(mimorx_options INTERFACE)
target_compile_options(mimorx_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -ffp-contract=off>
  $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror --expt-relaxed-constexpr -lineinfo>)
if(MIMORX_SANITIZE)
  target_compile_options(mimorx_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer>)
  target_link_options(mimorx_options INTERFACE -fsanitize=address,undefined)
endif()
