# Run at every build (cmake -P, from experiments/CMakeLists.txt): writes OUT with the version text
# each result row carries, "<VERSION> (git <commit>[-dirty])" for the source tree SRC as it is
# when autoddl is built. The file is rewritten only when the text changes, so an unchanged tree
# recompiles nothing; a new commit or an edit recompiles version.cpp alone.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=7
  OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT git)
  set(git "unknown")
endif()
set(text "#define AUTODDL_VERSION_TEXT \"${VERSION} (git ${git})\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
