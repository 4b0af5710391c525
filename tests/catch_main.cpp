// Catch2 v2's main, compiled once and shared by every test executable.
// The console is made wider than any test name (the longest is under 120 characters): Catch2
// v2's console reporter wraps a long name at its ": " (catchorg/Catch2#2309) and, when that
// break falls past the line width, aborts on an assertion or, with NDEBUG, loops printing the
// name until the disk or ctest's memory is full, turning one failed check into a hung CI run.
// The width comes from tests/CMakeLists.txt, whose test 'every Catch test name fits' checks it.
#define CATCH_CONFIG_CONSOLE_WIDTH AUTODDL_CATCH_CONSOLE_WIDTH
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
