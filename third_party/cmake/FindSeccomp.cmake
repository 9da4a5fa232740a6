# libseccomp from Debian's libseccomp-dev (pkg-config module libseccomp).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED libseccomp)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Seccomp DEFAULT_MSG SECCOMP_LIBRARIES)
