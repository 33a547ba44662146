# GPU backend tests, included from tests/exec/CMakeLists.txt. Built whenever the backend is
# (CUDA and NCCL found); where no CUDA device is visible every test skips and says why, and ctest
# reports them as skipped.
if(PARATWIN_HAVE_CUDA AND TARGET paratwin_exec_cuda)
  find_package(MPI REQUIRED COMPONENTS CXX)
  add_executable(cuda_backend_tests ${CMAKE_CURRENT_LIST_DIR}/cuda_backend_test.cpp)
  target_link_libraries(cuda_backend_tests PRIVATE paratwin_exec_cuda paratwin_workloads MPI::MPI_CXX GTest::gtest
                        paratwin_warnings)
  target_compile_definitions(cuda_backend_tests PRIVATE PARATWIN_EXAMPLES_DIR="${paratwin_SOURCE_DIR}/workloads/examples")
  gtest_discover_tests(cuda_backend_tests DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endif()
