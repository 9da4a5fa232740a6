# Lua 5.4 from Debian's liblua5.4-dev (pkg-config module lua5.4).
find_package(PkgConfig REQUIRED)
pkg_check_modules(LUA54 REQUIRED lua5.4)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Lua54 DEFAULT_MSG LUA54_LIBRARIES)
