# Writes worksteal.pc at install time, when the final prefix is known (cmake --install --prefix
# may differ from the configured one). Outside the directories the linker searches by itself the
# runtime loader would not find the shared library either, so there Libs also carries an rpath:
# a program built with `pkg-config --cflags --libs worksteal` then runs as it is.
# In: WS_PC_IN, WS_PC_OUT, WS_PC_SYSTEM_DIRS, and what worksteal.pc.in names.
get_filename_component(ws_libdir "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}" ABSOLUTE)
set(WS_PC_RPATH " -Wl,-rpath,\${libdir}")
foreach(dir IN LISTS WS_PC_SYSTEM_DIRS)
  get_filename_component(dir "${dir}" ABSOLUTE)
  if(dir STREQUAL ws_libdir)
    set(WS_PC_RPATH "")
  endif()
endforeach()
configure_file("${WS_PC_IN}" "${WS_PC_OUT}" @ONLY)
