# PipeLinkFunctions.cmake — build PipeLink components and link them, from any CMake project.
#
# Included by the installed PipeLinkConfig.cmake (after find_package(PipeLink)) and by PipeLink's
# own build tree (examples/, tests/). Whoever includes it sets, before including:
#   PIPELINK_INCLUDE_DIR          directory holding pipelink/device.cuh
#   PIPELINK_EXECUTABLE           the pipelink CLI (a path, or $<TARGET_FILE:...>)
#   PIPELINK_EXECUTABLE_DEPENDS   what commands that run the CLI depend on (a target or the file)
# and CUDAToolkit must have been found (nvcc: CUDAToolkit_NVCC_EXECUTABLE).
#
# pipelink_add_component(NAME <name> CONTRACT <contract.toml>
#                        SOURCES <component.cu> [<header>...] | OBJECT_OF <other component>
#                        [NVRTC] [DEFINES <NAME[=V]>...] [OUTPUT_NAME <object>]
#                        [OUTPUT_DIRECTORY <dir>] [INCLUDE_DIRECTORIES <dir>...] [DEPENDS <file>...]
#                        [ARCH sm_90a])
#   Compiles the one .cu among SOURCES (the other SOURCES and DEPENDS are dependencies only):
#     default: nvcc -dc -std=c++17 -gencode arch=compute_90a,code=lto_90a -I<pipelink include>
#              (with -MD: every header the source includes is a dependency too; needs CMake 3.20)
#     NVRTC:   pipelink compile (LTO-IR through NVRTC)
#   into <OUTPUT_DIRECTORY>/<object> (default directory: the current binary directory), where
#   <object> is the contract's [component] object key; OUTPUT_NAME, if given, must equal it (a
#   mismatch is a configure error). Creates the custom target <name>. The object is built with the
#   contract's [component] defines (what the monolithic control compiles the source with): DEFINES,
#   where given, must be the same macros (PL_CHECKED aside: DEFINES PL_CHECKED alone builds the
#   contract's defines and PL_CHECKED), else a configure error.
#   OBJECT_OF <other>: compiles nothing; <contract> describes <other>'s object (another contract
#   for the same object, e.g. other facts), which must be the object the contract names.
#
# pipelink_link(TARGET <name> COMPONENTS <component>...
#               [OUTPUT <cubin>] [MAP] [CONTROL] [SAVE_TEMPS] [CONNECT <PORT=PIPE>...]
#               [DEFINES <NAME[=V]>...] [INCLUDE_DIRECTORIES <dir>...] [KERNEL_NAME <name>]
#               [ARCH sm_90a] [PDL] [PDL_EARLY_TRIGGER] [TILE_ORDER <order>] [BLOCKS_PER_SM <n>] [MIN_REGISTERS] [FATAL_WARNINGS]
#               [TILE_SCHEDULE data-parallel|split-k|stream-k[:W]] [EXCLUDE_FROM_ALL])
#   Runs `pipelink link` over the components' contracts, in order (a component listed twice is
#   instantiated twice), searching the components' output directories (-L). Writes OUTPUT
#   (default <current binary dir>/<name>.cubin; relative paths are relative to it), with MAP also
#   <base>.map, and with CONTROL also the monolithic control <base>_control.cubin (and
#   <base>_control.map with MAP) through `pipelink link --control`. PDL links both with --pdl
#   (programmatic dependent launch: the entry waits before any role; the runtime launches with
#   the attribute; PDL_EARLY_TRIGGER adds --pdl-early-trigger). TILE_ORDER (row_major, col_major or grouped:G) is --tile-order for both: the
#   order of the tile sequence, for components whose [tiles] say order = "any". TILE_SCHEDULE is
#   --tile-schedule for both (split-k, stream-k: tiles split along k, docs/contracts.md). BLOCKS_PER_SM is
#   --blocks-per-sm for both (that many blocks fit on one SM); MIN_REGISTERS is --min-registers for
#   both (launch with the fewest registers the warpgroups' budgets fit in); FATAL_WARNINGS is
#   --fatal-warnings for both (any warning, e.g. a spilling kernel, fails the build). Creates the custom target
#   <name> (built by `all` unless EXCLUDE_FROM_ALL) with the properties PIPELINK_CUBIN,
#   PIPELINK_MAP, PIPELINK_CONTROL_CUBIN and PIPELINK_CONTROL_MAP (empty when not built), and
#   appends "<cubin>|<map>|<control>|<control map>" to the GLOBAL property PIPELINK_LINKS (unless
#   EXCLUDE_FROM_ALL; only read by PipeLink's own tests, harmless elsewhere).
#   The link depends on the contracts and the components' objects only, so changing one
#   component's source rebuilds that component and the link; the control, compiled from the
#   sources, depends on every component's SOURCES and DEPENDS and on its object (so on every
#   header the nvcc-compiled sources include, through the objects' depfiles).
include_guard(GLOBAL)

foreach(_pl_v PIPELINK_INCLUDE_DIR PIPELINK_EXECUTABLE PIPELINK_EXECUTABLE_DEPENDS)
  if(NOT DEFINED ${_pl_v})
    message(FATAL_ERROR "PipeLinkFunctions.cmake: ${_pl_v} is not set (use find_package(PipeLink))")
  endif()
  set_property(GLOBAL PROPERTY _${_pl_v} "${${_pl_v}}")
endforeach()

# The object named by the [component] table's `object` key of a contract, or "" if none.
function(_pipelink_contract_object contract out_var)
  file(STRINGS "${contract}" _lines REGEX "^[ \t]*(\\[|object[ \t]*=)")
  set(_table "")
  set(_object "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^[ \t]*\\[+[ \t]*([A-Za-z_][^]]*)\\]")  # a table header, not an array's continuation line
      string(STRIP "${CMAKE_MATCH_1}" _table)
    elseif(_table STREQUAL "component" AND _line MATCHES "^[ \t]*object[ \t]*=[ \t]*[\"']([^\"']*)[\"']")
      set(_object "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out_var} "${_object}" PARENT_SCOPE)
endfunction()

# The contract's [component] defines (the macros the monolithic control compiles its source with),
# normalized (no -D, sorted) into out_var, and whether the key is there into found_var. Reads the
# one-line array form; a contract that writes the array over several lines is refused here, since
# the object's build and the control's must not be able to differ unnoticed.
function(_pipelink_contract_defines contract out_var found_var)
  file(READ "${contract}" _text)
  # This is no TOML parser (pipelink's toml++ is not built when CMake configures): what it cannot
  # read exactly it refuses, since a misread would build the object with other macros than the
  # contract states, unnoticed.
  set(_refuse "")
  if(_text MATCHES "\"\"\"|'''")
    set(_refuse "a multi-line string")
  elseif(_text MATCHES "(^|\n)[ \t]*[\"']defines[\"'][ \t]*=")
    set(_refuse "a quoted defines key")
  elseif(_text MATCHES "(^|\n)[ \t]*[\"']?component[\"']?[ \t]*(\\.|=)")
    set(_refuse "a dotted or inline component table")
  elseif(_text MATCHES "(^|\n)[ \t]*\\[+[ \t]*[\"']")
    set(_refuse "a quoted table name")
  endif()
  if(NOT _refuse STREQUAL "")
    message(FATAL_ERROR "PipeLink: ${contract}: the build reads [component] defines from the contract's text and "
                        "cannot read ${_refuse} exactly; write the contract without it (a [component] table with "
                        "defines = [\"A=1\", \"B\"] on one line)")
  endif()
  # Brackets and semicolons would bend CMake's list splitting (an unbalanced "[" joins the lines
  # after it into one element): they are stood in for before the text is split into lines.
  string(REPLACE ";" "<pl-sc>" _text "${_text}")
  string(REPLACE "[" "<pl-lb>" _text "${_text}")
  string(REPLACE "]" "<pl-rb>" _text "${_text}")
  string(REPLACE "\n" ";" _lines "${_text}")
  set(_table "")
  set(_defs "")
  set(_found FALSE)
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^[ \t]*(<pl-lb>)+[ \t]*([A-Za-z_][^<]*)<pl-rb>")  # a table header, not an array's continuation line
      string(STRIP "${CMAKE_MATCH_2}" _table)
    elseif(_table STREQUAL "component" AND _line MATCHES "^[ \t]*defines[ \t]*=[ \t]*(.*)$")
      set(_value "${CMAKE_MATCH_1}")
      # The quoted items up to the array's closing bracket (a bracket inside an item's quotes is
      # part of the item); no closing bracket before the end of the line or a comment: an array
      # over several lines.
      set(_items "")
      set(_closed FALSE)
      if(_value MATCHES "^<pl-lb>")
        string(SUBSTRING "${_value}" 7 -1 _value)  # after "<pl-lb>"
        string(REGEX MATCHALL "\"[^\"]*\"|'[^']*'|<pl-rb>|#" _tokens "${_value}")
        foreach(_tok IN LISTS _tokens)
          if(_tok STREQUAL "<pl-rb>")
            set(_closed TRUE)
            break()
          elseif(_tok STREQUAL "#")
            break()
          endif()
          list(APPEND _items "${_tok}")
        endforeach()
      endif()
      if(NOT _closed)
        message(FATAL_ERROR "PipeLink: ${contract}: write [component] defines as a one-line array "
                            "(defines = [\"A=1\", \"B\"]) so the build can check it against the object's defines")
      endif()
      set(_found TRUE)
      foreach(_it IN LISTS _items)
        string(REGEX REPLACE "^[\"']|[\"']$" "" _it "${_it}")
        if(_it MATCHES "<pl-sc>|\\\\")
          message(FATAL_ERROR "PipeLink: ${contract}: the build cannot pass this define exactly (a ';' or an "
                              "escape '\\'): write it without: ${_it}")
        endif()
        string(REPLACE "<pl-lb>" "[" _it "${_it}")
        string(REPLACE "<pl-rb>" "]" _it "${_it}")
        list(APPEND _defs "${_it}")
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _defs)
  list(SORT _defs)
  set(${out_var} "${_defs}" PARENT_SCOPE)
  set(${found_var} ${_found} PARENT_SCOPE)
endfunction()

function(_pipelink_arch arch out_var)
  if(NOT arch MATCHES "^sm_([0-9]+a?)$")
    message(FATAL_ERROR "PipeLink: ARCH must look like sm_90a, got '${arch}'")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(pipelink_add_component)
  cmake_parse_arguments(PARSE_ARGV 0 A "NVRTC"
    "NAME;CONTRACT;OUTPUT_NAME;OUTPUT_DIRECTORY;OBJECT_OF;ARCH"
    "SOURCES;DEFINES;INCLUDE_DIRECTORIES;DEPENDS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pipelink_add_component: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_NAME OR NOT A_CONTRACT)
    message(FATAL_ERROR "pipelink_add_component: NAME and CONTRACT are required")
  endif()
  get_filename_component(contract "${A_CONTRACT}" ABSOLUTE)
  if(NOT EXISTS "${contract}")
    message(FATAL_ERROR "pipelink_add_component(${A_NAME}): contract ${contract} does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${contract}")  # re-read its object key
  _pipelink_contract_object("${contract}" object)
  if(A_OUTPUT_NAME AND object AND NOT A_OUTPUT_NAME STREQUAL object)
    message(FATAL_ERROR "pipelink_add_component(${A_NAME}): OUTPUT_NAME '${A_OUTPUT_NAME}' differs from "
                        "the object '${object}' that ${contract} names; the linker looks for '${object}'")
  endif()
  if(NOT object)
    if(NOT A_OUTPUT_NAME)
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): ${contract} has no [component] object key; give OUTPUT_NAME")
    endif()
    set(object "${A_OUTPUT_NAME}")
  endif()

  # The object's defines are the contract's: DEFINES, where given, must list the same macros (the
  # control is compiled with the contract's, so an object built otherwise is not the code its
  # contract describes); without DEFINES the contract's are used.
  _pipelink_contract_defines("${contract}" contract_defines has_defines)
  set(given_defines "")
  set(checked_defines "")
  foreach(d IN LISTS A_DEFINES)
    string(REGEX REPLACE "^-D" "" d "${d}")
    if(d MATCHES "^PL_CHECKED(=.*)?$")  # the checked build is the link's mode (pipelink -D PL_CHECKED), not the contract's
      list(APPEND checked_defines "${d}")
    else()
      list(APPEND given_defines "${d}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES given_defines)
  list(SORT given_defines)
  if(NOT given_defines STREQUAL "" AND NOT given_defines STREQUAL contract_defines)
    message(FATAL_ERROR "pipelink_add_component(${A_NAME}): DEFINES '${given_defines}' differ from the defines "
                        "'${contract_defines}' that ${contract} states ([component] defines, what the monolithic "
                        "control compiles the source with); make them the same, or drop DEFINES to use the contract's")
  endif()
  if(given_defines STREQUAL "" AND has_defines AND NOT A_OBJECT_OF)  # none given (or PL_CHECKED alone): the contract's
    set(A_DEFINES ${contract_defines} ${checked_defines})
  endif()

  if(A_OBJECT_OF)
    if(A_SOURCES OR A_NVRTC OR A_DEFINES OR A_OUTPUT_DIRECTORY OR A_INCLUDE_DIRECTORIES)
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): OBJECT_OF takes no SOURCES, NVRTC, DEFINES, "
                          "INCLUDE_DIRECTORIES or OUTPUT_DIRECTORY (it compiles nothing)")
    endif()
    if(NOT TARGET "${A_OBJECT_OF}")
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): OBJECT_OF ${A_OBJECT_OF}: no such component")
    endif()
    get_target_property(other_object ${A_OBJECT_OF} PIPELINK_OBJECT)
    if(NOT other_object)
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): ${A_OBJECT_OF} is not a PipeLink component")
    endif()
    get_filename_component(other_name "${other_object}" NAME)
    if(NOT other_name STREQUAL object)
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): ${contract} names object '${object}', "
                          "but ${A_OBJECT_OF} builds '${other_name}'")
    endif()
    get_target_property(other_defines ${A_OBJECT_OF} PIPELINK_DEFINES)
    if(other_defines MATCHES "-NOTFOUND$")
      set(other_defines "")
    endif()
    if(NOT contract_defines STREQUAL other_defines)
      message(FATAL_ERROR "pipelink_add_component(${A_NAME}): ${contract} states defines '${contract_defines}', "
                          "but ${A_OBJECT_OF} builds its object with '${other_defines}'")
    endif()
    get_target_property(sources ${A_OBJECT_OF} PIPELINK_SOURCES)
    add_custom_target(${A_NAME} DEPENDS ${A_OBJECT_OF})
    set_target_properties(${A_NAME} PROPERTIES PIPELINK_OBJECT "${other_object}" PIPELINK_CONTRACT "${contract}"
                          PIPELINK_SOURCES "${sources}" PIPELINK_BUILD_TARGET ${A_OBJECT_OF}
                          PIPELINK_DEFINES "${other_defines}")
    return()
  endif()

  get_property(inc GLOBAL PROPERTY _PIPELINK_INCLUDE_DIR)
  get_property(cli GLOBAL PROPERTY _PIPELINK_EXECUTABLE)
  get_property(cli_dep GLOBAL PROPERTY _PIPELINK_EXECUTABLE_DEPENDS)
  set(cu "")
  set(sources "")
  foreach(s IN LISTS A_SOURCES)
    get_filename_component(s "${s}" ABSOLUTE)
    list(APPEND sources "${s}")
    if(s MATCHES "\\.cu$")
      if(cu)
        message(FATAL_ERROR "pipelink_add_component(${A_NAME}): one .cu per component (${cu}, ${s})")
      endif()
      set(cu "${s}")
    endif()
  endforeach()
  if(NOT cu)
    message(FATAL_ERROR "pipelink_add_component(${A_NAME}): SOURCES must hold the component's .cu")
  endif()
  # The generated contract header beside the source (`pipelink header`: <stem>.contract.h), when
  # there is one, is a dependency too.
  get_filename_component(cu_dir "${cu}" DIRECTORY)
  get_filename_component(cu_stem "${cu}" NAME_WE)
  if(EXISTS "${cu_dir}/${cu_stem}.contract.h")
    list(APPEND sources "${cu_dir}/${cu_stem}.contract.h")
  endif()
  foreach(d IN LISTS A_DEPENDS)
    get_filename_component(d "${d}" ABSOLUTE)
    list(APPEND sources "${d}")
  endforeach()
  set(dir "${A_OUTPUT_DIRECTORY}")
  if(NOT dir)
    set(dir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  file(MAKE_DIRECTORY "${dir}")
  set(out "${dir}/${object}")
  if(NOT A_ARCH)
    set(A_ARCH sm_90a)
  endif()
  _pipelink_arch(${A_ARCH} sm)

  set(defs "")
  foreach(d IN LISTS A_DEFINES)
    string(REGEX REPLACE "^-D" "" d "${d}")
    list(APPEND defs "${d}")
  endforeach()
  if(A_NVRTC)
    set(flags "")
    foreach(i IN LISTS A_INCLUDE_DIRECTORIES)
      get_filename_component(i "${i}" ABSOLUTE)
      list(APPEND flags -I "${i}")
    endforeach()
    foreach(d IN LISTS defs)
      list(APPEND flags -D "${d}")
    endforeach()
    add_custom_command(OUTPUT "${out}"
      COMMAND ${cli} compile "${cu}" -o "${out}" -arch=${A_ARCH} ${flags}
      DEPENDS ${cli_dep} ${sources} "${inc}/pipelink/device.cuh" "${inc}/pipelink/limits.h"
      COMMENT "pipelink compile (NVRTC) ${A_NAME}: ${object}"
      VERBATIM)
  else()
    if(NOT CUDAToolkit_NVCC_EXECUTABLE)
      find_package(CUDAToolkit REQUIRED)
    endif()
    set(flags "-I${inc}")
    foreach(i IN LISTS A_INCLUDE_DIRECTORIES)
      get_filename_component(i "${i}" ABSOLUTE)
      list(APPEND flags "-I${i}")
    endforeach()
    foreach(d IN LISTS defs)
      list(APPEND flags "-D${d}")
    endforeach()
    # nvcc writes the headers the source includes into a depfile (-MD -MF), so an edit to a header
    # shared by several components (examples/llama_decode/components/attn_common/attn_walk.cuh)
    # rebuilds every object that includes it; listing SOURCES alone missed those.
    add_custom_command(OUTPUT "${out}"
      COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" -dc -std=c++17 -gencode arch=compute_${sm},code=lto_${sm}
              ${flags} -MD -MF "${out}.d" "${cu}" -o "${out}"
      DEPENDS ${sources} "${inc}/pipelink/device.cuh" "${inc}/pipelink/limits.h"
      DEPFILE "${out}.d"
      COMMENT "nvcc (component) ${A_NAME}: ${object}"
      VERBATIM)
  endif()
  add_custom_target(${A_NAME} DEPENDS "${out}")
  set_target_properties(${A_NAME} PROPERTIES PIPELINK_OBJECT "${out}" PIPELINK_CONTRACT "${contract}"
                        PIPELINK_SOURCES "${sources}" PIPELINK_BUILD_TARGET ${A_NAME} PIPELINK_DEFINES "${contract_defines}")
endfunction()

function(pipelink_link)
  cmake_parse_arguments(PARSE_ARGV 0 A "CONTROL;MAP;SAVE_TEMPS;EXCLUDE_FROM_ALL;PDL;PDL_EARLY_TRIGGER;MIN_REGISTERS;FATAL_WARNINGS"
    "TARGET;OUTPUT;KERNEL_NAME;ARCH;TILE_ORDER;TILE_SCHEDULE;BLOCKS_PER_SM"
    "COMPONENTS;CONNECT;DEFINES;INCLUDE_DIRECTORIES")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pipelink_link: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT A_TARGET OR NOT A_COMPONENTS)
    message(FATAL_ERROR "pipelink_link: TARGET and COMPONENTS are required")
  endif()
  get_property(cli GLOBAL PROPERTY _PIPELINK_EXECUTABLE)
  get_property(cli_dep GLOBAL PROPERTY _PIPELINK_EXECUTABLE_DEPENDS)
  get_property(inc GLOBAL PROPERTY _PIPELINK_INCLUDE_DIR)

  set(contracts "")      # in order, repeats kept: one instance each
  set(objects "")
  set(lib_dirs "")
  set(sources "")
  set(comp_targets "")
  foreach(c IN LISTS A_COMPONENTS)
    if(NOT TARGET "${c}")
      message(FATAL_ERROR "pipelink_link(${A_TARGET}): ${c} is not a component (pipelink_add_component)")
    endif()
    get_target_property(obj ${c} PIPELINK_OBJECT)
    if(NOT obj)
      message(FATAL_ERROR "pipelink_link(${A_TARGET}): ${c} is not a PipeLink component")
    endif()
    get_target_property(contract ${c} PIPELINK_CONTRACT)
    get_target_property(srcs ${c} PIPELINK_SOURCES)
    get_target_property(build_target ${c} PIPELINK_BUILD_TARGET)
    get_filename_component(obj_dir "${obj}" DIRECTORY)
    list(APPEND contracts "${contract}")
    list(APPEND objects "${obj}")
    list(APPEND lib_dirs "${obj_dir}")
    list(APPEND sources ${srcs})
    list(APPEND comp_targets ${build_target})
  endforeach()
  list(REMOVE_DUPLICATES objects)
  list(REMOVE_DUPLICATES lib_dirs)
  list(REMOVE_DUPLICATES sources)
  list(REMOVE_DUPLICATES comp_targets)
  set(unique_contracts ${contracts})
  list(REMOVE_DUPLICATES unique_contracts)

  set(out "${A_OUTPUT}")
  if(NOT out)
    set(out "${A_TARGET}.cubin")
  endif()
  get_filename_component(out "${out}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  get_filename_component(out_dir "${out}" DIRECTORY)
  file(MAKE_DIRECTORY "${out_dir}")
  string(REGEX REPLACE "\\.cubin$" "" base "${out}")

  set(common "")
  if(A_ARCH)
    _pipelink_arch(${A_ARCH} sm)
    list(APPEND common -arch=${A_ARCH})
  endif()
  foreach(c IN LISTS A_CONNECT)
    list(APPEND common --connect "${c}")
  endforeach()
  foreach(d IN LISTS A_DEFINES)
    string(REGEX REPLACE "^-D" "" d "${d}")
    list(APPEND common -D "${d}")
  endforeach()
  foreach(i IN LISTS A_INCLUDE_DIRECTORIES)
    get_filename_component(i "${i}" ABSOLUTE)
    list(APPEND common -I "${i}")
  endforeach()
  if(A_KERNEL_NAME)
    list(APPEND common --kernel-name "${A_KERNEL_NAME}")
  endif()
  if(A_TILE_ORDER)
    list(APPEND common --tile-order "${A_TILE_ORDER}")
  endif()
  if(A_TILE_SCHEDULE)
    list(APPEND common --tile-schedule "${A_TILE_SCHEDULE}")
  endif()
  if(A_BLOCKS_PER_SM)
    list(APPEND common --blocks-per-sm ${A_BLOCKS_PER_SM})   # the control too
  endif()
  if(A_PDL)
    list(APPEND common --pdl)   # the control too: linked and control stay machine-code identical
  endif()
  if(A_PDL_EARLY_TRIGGER)
    list(APPEND common --pdl-early-trigger)
  endif()
  if(A_MIN_REGISTERS)
    list(APPEND common --min-registers)   # the control too
  endif()
  if(A_FATAL_WARNINGS)
    list(APPEND common --fatal-warnings)  # a warning (e.g. a spill) fails the build
  endif()

  set(link_flags "")
  foreach(d IN LISTS lib_dirs)
    list(APPEND link_flags -L "${d}")
  endforeach()
  set(outputs "${out}")
  set(map "")
  if(A_MAP)
    set(map "${base}.map")
    list(APPEND outputs "${map}")
    list(APPEND link_flags --map "${map}")
  endif()
  if(A_SAVE_TEMPS)
    list(APPEND link_flags --save-temps)
  endif()
  get_filename_component(name "${out}" NAME)
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${cli} link ${contracts} ${common} ${link_flags} -o "${out}"
    DEPENDS ${cli_dep} ${unique_contracts} ${objects} ${comp_targets}
    COMMENT "pipelink link: ${name}"
    VERBATIM)
  set(all_outputs ${outputs})

  set(control "")
  set(control_map "")
  if(A_CONTROL)
    set(control "${base}_control.cubin")
    set(control_outputs "${control}")
    set(control_flags "")
    if(A_MAP)
      set(control_map "${base}_control.map")
      list(APPEND control_outputs "${control_map}")
      set(control_flags --map "${control_map}")
    endif()
    get_filename_component(name "${control}" NAME)
    # The control compiles the sources itself; it also depends on the components' objects, whose
    # depfiles follow every header the sources include, so a header edit rebuilds both sides.
    add_custom_command(OUTPUT ${control_outputs}
      COMMAND ${cli} link --control ${contracts} ${common} -o "${control}" ${control_flags}
      DEPENDS ${cli_dep} ${unique_contracts} ${sources} "${inc}/pipelink/device.cuh" ${objects} ${comp_targets}
      COMMENT "pipelink link --control: ${name} (monolithic control)"
      VERBATIM)
    list(APPEND all_outputs ${control_outputs})
  endif()

  set(all ALL)
  if(A_EXCLUDE_FROM_ALL)
    set(all "")
  endif()
  add_custom_target(${A_TARGET} ${all} DEPENDS ${all_outputs})
  set_target_properties(${A_TARGET} PROPERTIES PIPELINK_CUBIN "${out}" PIPELINK_MAP "${map}"
                        PIPELINK_CONTROL_CUBIN "${control}" PIPELINK_CONTROL_MAP "${control_map}")
  # Every link the default build makes, in declaration order (the global property PIPELINK_LINKS,
  # entries "cubin|map|control cubin|control map", empty fields where absent): tests that check every
  # link read this list instead of globbing the build directory, which may hold stale experiments.
  if(NOT A_EXCLUDE_FROM_ALL)
    set_property(GLOBAL APPEND PROPERTY PIPELINK_LINKS "${out}|${map}|${control}|${control_map}")
  endif()
endfunction()
