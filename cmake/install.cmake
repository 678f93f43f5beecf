# cmake/install.cmake — what `cmake --install build --prefix P` puts where, and the package another CMake
# project finds with find_package(flopwise):
#   P/bin/flopwise                          the CLI
#   P/lib/flopwise/libflopwise_torch.so     the TorchScript plugin    } where the CLI looks for them: next to
#   P/lib/flopwise/flopwise-runtime         the runtime harness       } itself, then ../lib/flopwise/
#   P/include/flopwise/*.h                  the public headers
#   P/<libdir>/libflopwise_*.a              the layers' static libraries (and the ONNX importer's)
#   P/<libdir>/cmake/flopwise/              flopwiseConfig.cmake, its version file, the exported targets
# flopwise::flopwise is the analyse entry point (flopwise/analyse.h) with the ONNX importer and the layers
# below it; its dependencies (protobuf lite, nlohmann_json, simdjson, zlib, toml++, threads, dl) are found again by the config.
include(CMakePackageConfigHelpers)
set(FLOPWISE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/flopwise)

# The umbrella target; `flopwise` is the executable's name, so it is exported under that name instead.
add_library(flopwise_package INTERFACE)
target_link_libraries(flopwise_package INTERFACE flopwise_pipeline flopwise_onnx flopwise_core
                      nlohmann_json::nlohmann_json)
set_target_properties(flopwise_package PROPERTIES EXPORT_NAME flopwise)
add_library(flopwise::flopwise ALIAS flopwise_package)

install(TARGETS flopwise RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/flopwise DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS flopwise_package flopwise_pipeline flopwise_onnx flopwise_core flopwise_writers flopwise_measured
                flopwise_analysis flopwise_cost flopwise_pt2 flopwise_aten flopwise_shape flopwise_ir
        EXPORT flopwiseTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT flopwiseTargets NAMESPACE flopwise:: DESTINATION ${FLOPWISE_INSTALL_CMAKEDIR})

if(TARGET tomlplusplus::tomlplusplus)
  set(FLOPWISE_NEEDS_TOMLPLUSPLUS ON)
else()
  set(FLOPWISE_NEEDS_TOMLPLUSPLUS OFF)
endif()
configure_package_config_file(cmake/flopwiseConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/flopwiseConfig.cmake
                              INSTALL_DESTINATION ${FLOPWISE_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/flopwiseConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/flopwiseConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/flopwiseConfigVersion.cmake
        DESTINATION ${FLOPWISE_INSTALL_CMAKEDIR})

# The Python package, when built: P/<FLOPWISE_PYTHON_INSTALL_DIR>/flopwise (default Debian's layout,
# lib/python3/dist-packages), its _paths.py naming the installed CLI. (pip install . is setup.py's.)
if(TARGET flopwise_python)
  set(FLOPWISE_PYTHON_INSTALL_DIR lib/python3/dist-packages
      CACHE STRING "where cmake --install puts the Python package, relative to the prefix")
  install(DIRECTORY python/flopwise DESTINATION ${FLOPWISE_PYTHON_INSTALL_DIR} PATTERN __pycache__ EXCLUDE)
  install(TARGETS flopwise_python LIBRARY DESTINATION ${FLOPWISE_PYTHON_INSTALL_DIR}/flopwise)
  install(CODE "file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${FLOPWISE_PYTHON_INSTALL_DIR}/flopwise/_paths.py\"
    \"# Written by cmake --install: the installed CLI (FLOPWISE_CLI overrides it).\\nCLI = \\\"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/flopwise\\\"\\n\")")
endif()
