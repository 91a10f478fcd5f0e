# Included by scripts/model.sh's llama.cpp configure (CMAKE_PROJECT_INCLUDE): what llama-server
# needs, built for less CPU, the source untouched. ggml (the kernels) and libllama (the model
# code, the sampler chain and its grammar) keep -O2: the tests generate with them. The rest of
# what the server links is compiled at -O0: its HTTP and JSON handling and llama-common (chat
# templates, the JSON Schema to grammar conversion) run once a request; mtmd (images and audio)
# never runs here (no --mmproj); what of them runs once a token (the server's slot loop,
# llama-common's sampler wrapper filling the candidate list) is a loop over the vocabulary
# beside a forward pass of the model in -O2 kernels. A bare machine's `make test` is CPU-bound
# on two cores (BENCHMARKS.md, "make test on a fresh clone", 2026-12-04), and these C++ files,
# heavy with templates, were a good part of this build at -O1. llama-common and cpp-httplib are
# built in unity batches too (one compiler run for many files that include the same heavy
# headers). mtmd refuses a unity build (its public helper must not see its internal headers),
# and the server's own targets were not tried in one.
if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  return() # ggml's own project() includes this too
endif()

function(aitasks_trim_llama_server)
  foreach(target IN ITEMS llama-common mtmd server-context llama-server-impl cpp-httplib)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE -O0)
    endif()
  endforeach()
  foreach(target IN ITEMS llama-common cpp-httplib)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
    endif()
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL aitasks_trim_llama_server)
