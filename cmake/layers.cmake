# cmake/layers.cmake — the layers of flopwise and the rule between them (ARCHITECTURE.md): a file may include
# the public headers of its own layer and of the layers below it, never of one above, nor forward-declare a
# type one above defines. The configure step runs flopwise_check_layers() and stops at the first violation;
# `cmake -DROOT=DIR -P cmake/layers.cmake` checks a tree on its own (the test tests/layers_test.sh runs it on
# a copy with a violation put in).
#
# Layers, lowest first: each with the folders whose files belong to it and the public headers it declares.
set(FLOPWISE_LAYERS ir shape aten importers cost analyses measured writers commands)
set(FLOPWISE_LAYER_ir_DIRS src/ir)
set(FLOPWISE_LAYER_ir_HEADERS aten_call.h dim.h errors.h input_file.h ir.h json_text.h limits.h pins.h shape_key.h
    string_arena.h sub_byte.h)
set(FLOPWISE_LAYER_shape_DIRS shape_inference shape_inference/ops)
set(FLOPWISE_LAYER_shape_HEADERS infer.h numel_memo.h ops.h)
# The aten lowering (no LibTorch): a neutral aten call into the IR, below every importer that meets aten ops.
set(FLOPWISE_LAYER_aten_DIRS src/aten)
set(FLOPWISE_LAYER_aten_HEADERS aten_lower.h aten_schema.h)
# Importers sit above shape inference: the .pt importer lowers aten ops to ops the registry knows.
set(FLOPWISE_LAYER_importers_DIRS src/import src/torch src/pt2)
set(FLOPWISE_LAYER_importers_HEADERS onnx_import.h pt2_import.h)
set(FLOPWISE_LAYER_cost_DIRS src/cost)
set(FLOPWISE_LAYER_cost_HEADERS attention.h convention.h cost.h stored_tensors.h)
set(FLOPWISE_LAYER_analyses_DIRS src/pipeline src/analysis src/diff)
set(FLOPWISE_LAYER_analyses_HEADERS analysed_report.h analyse.h budget.h calibration.h diff.h llm.h moe.h parallel.h peak_memory.h rational_poly.h
    roofline.h sweep.h training.h verify.h)
# Measured time: traces, runtime profiles, the calibration fit, the run join.
set(FLOPWISE_LAYER_measured_DIRS src/measured)
set(FLOPWISE_LAYER_measured_HEADERS calibrate.h graph_replay.h ort_profile.h run.h torch_trace.h trace_census.h)
set(FLOPWISE_LAYER_writers_DIRS src/writers)
set(FLOPWISE_LAYER_writers_HEADERS formats.h report_io.h run_diff.h run_report.h trace_census_report.h trace_report.h
    writers.h)
set(FLOPWISE_LAYER_commands_DIRS src/cli src/runtime src/python)
set(FLOPWISE_LAYER_commands_HEADERS)

function(flopwise_check_layers root)
  # header -> rank
  set(rank 0)
  foreach(layer IN LISTS FLOPWISE_LAYERS)
    foreach(h IN LISTS FLOPWISE_LAYER_${layer}_HEADERS)
      set(_rank_${h} ${rank})
      set(_layer_${h} ${layer})
    endforeach()
    math(EXPR rank "${rank} + 1")
  endforeach()
  # type -> rank: the types the public headers define (`struct X {`, `class X : ...`), each at the lowest layer
  # defining one of its name. Forward-declaring a higher layer's type (`struct X;`) is the same dependency as
  # including its header, and is refused too.
  set(rank 0)
  foreach(layer IN LISTS FLOPWISE_LAYERS)
    foreach(h IN LISTS FLOPWISE_LAYER_${layer}_HEADERS)
      if(EXISTS ${root}/include/flopwise/${h})
        file(STRINGS ${root}/include/flopwise/${h} defs REGEX "^(struct|class) [A-Za-z_0-9]+[ :{]")
      else()
        set(defs)
      endif()
      foreach(line IN LISTS defs)
        string(REGEX REPLACE "^(struct|class) ([A-Za-z_0-9]+).*" "\\2" t "${line}")
        if(NOT DEFINED _type_rank_${t})
          set(_type_rank_${t} ${rank})
          set(_type_of_${t} "${layer} (flopwise/${h})")
        endif()
      endforeach()
    endforeach()
    math(EXPR rank "${rank} + 1")
  endforeach()
  # Every public header belongs to a layer.
  file(GLOB headers RELATIVE ${root}/include/flopwise ${root}/include/flopwise/*.h)
  foreach(h IN LISTS headers)
    if(NOT DEFINED _rank_${h})
      message(FATAL_ERROR "layers: include/flopwise/${h} belongs to no layer: add it to cmake/layers.cmake")
    endif()
  endforeach()
  set(rank 0)
  foreach(layer IN LISTS FLOPWISE_LAYERS)
    set(files)
    foreach(dir IN LISTS FLOPWISE_LAYER_${layer}_DIRS)
      file(GLOB f ${root}/${dir}/*.cc ${root}/${dir}/*.h ${root}/${dir}/*.def)
      list(APPEND files ${f})
    endforeach()
    foreach(h IN LISTS FLOPWISE_LAYER_${layer}_HEADERS)
      list(APPEND files ${root}/include/flopwise/${h})
    endforeach()
    foreach(file IN LISTS files)
      file(STRINGS ${file} names REGEX "^(struct|class) [A-Za-z_0-9]+;")
      foreach(line IN LISTS names)
        string(REGEX REPLACE "^(struct|class) ([A-Za-z_0-9]+);.*" "\\2" t "${line}")
        if(DEFINED _type_rank_${t} AND _type_rank_${t} GREATER rank)
          file(RELATIVE_PATH rel ${root} ${file})
          message(FATAL_ERROR "layers: ${rel} (layer ${layer}) declares ${t} of the higher layer ${_type_of_${t}}; "
                              "the order is ${FLOPWISE_LAYERS} (ARCHITECTURE.md)")
        endif()
      endforeach()
      file(STRINGS ${file} includes REGEX "^#include \"flopwise/[a-z_0-9]+\\.h\"")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^#include \"flopwise/([a-z_0-9]+\\.h)\".*" "\\1" h "${line}")
        if(NOT DEFINED _rank_${h})
          message(FATAL_ERROR "layers: ${file} includes flopwise/${h}, which belongs to no layer")
        endif()
        if(_rank_${h} GREATER rank)
          file(RELATIVE_PATH rel ${root} ${file})
          message(FATAL_ERROR "layers: ${rel} (layer ${layer}) includes flopwise/${h} of the higher layer "
                              "${_layer_${h}}; the order is ${FLOPWISE_LAYERS} (ARCHITECTURE.md)")
        endif()
      endforeach()
    endforeach()
    math(EXPR rank "${rank} + 1")
  endforeach()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED ROOT)
  flopwise_check_layers(${ROOT})
  message(STATUS "layers: ${ROOT} keeps the layer order")
endif()
