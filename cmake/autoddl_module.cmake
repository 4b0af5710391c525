# autoddl_module(NAME DEPS...): a static library from <module>/src/**/*.cpp with the
# public header folder <module>/include (headers live in include/autoddl/<module>/).
function(autoddl_module name)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  add_library(autoddl_${name} STATIC ${srcs})
  target_include_directories(autoddl_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(autoddl_${name} PUBLIC ${ARGN})
  add_library(autoddl::${name} ALIAS autoddl_${name})
endfunction()
