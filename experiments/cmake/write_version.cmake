# Run at every build (cmake -P, from experiments/CMakeLists.txt): writes OUT with what each result
# row records of the binary that made it:
#  - AUTODDL_VERSION_TEXT "<VERSION> (git <commit>[-dirty])" for the source tree SRC as it is when
#    autoddl is built (for the record);
#  - AUTODDL_MODEL_VERSION, 12 hex digits of the SHA-256 over "<path> <sha256>\n" of every file
#    cmake/model_sources.txt names (sorted by path): rows of another model version are stale.
#    experiments/figures/model_version.py computes the same hash from a tree, so the two must agree.
# The file is rewritten only when the text changes, so an unchanged tree recompiles nothing; a new
# commit or an edit recompiles version.cpp alone.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=7
  OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT git)
  set(git "unknown")
endif()

file(STRINGS "${SRC}/cmake/model_sources.txt" entries REGEX "^[^#]")
set(files "")
foreach(e IN LISTS entries)
  string(STRIP "${e}" e)
  if(e STREQUAL "")
    continue()
  elseif(IS_DIRECTORY "${SRC}/${e}")
    file(GLOB_RECURSE found RELATIVE "${SRC}" "${SRC}/${e}/*")
    list(APPEND files ${found})
  elseif(EXISTS "${SRC}/${e}")
    list(APPEND files "${e}")
  endif()
endforeach()
list(FILTER files INCLUDE REGEX "\\.(cpp|hpp|h|in|json)$")
list(FILTER files EXCLUDE REGEX "(^|/)\\.")
list(REMOVE_DUPLICATES files)
list(SORT files)
set(lines "")
foreach(f IN LISTS files)
  file(SHA256 "${SRC}/${f}" h)
  string(APPEND lines "${f} ${h}\n")
endforeach()
string(SHA256 model "${lines}")
string(SUBSTRING "${model}" 0 12 model)
list(LENGTH files n)

set(text "#define AUTODDL_VERSION_TEXT \"${VERSION} (git ${git})\"\n#define AUTODDL_MODEL_VERSION \"${model}\"\n#define AUTODDL_MODEL_FILES ${n}\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
