# What `cmake --install` and CPack put where (scripts/package builds the release packages):
#   bin/keel, share/man/man1/keel.1.gz (from `keel --help`, by help2man), share/doc/keel/
#   (README.md, LICENSE, NOTICE, examples/), lib/systemd/system/keel.service.
# The .deb installs them under /usr; the tarball holds them under keel-VERSION-linux-ARCH/.
include(GNUInstallDirs)
install(TARGETS keel RUNTIME DESTINATION bin)
install(FILES README.md LICENSE NOTICE DESTINATION share/doc/keel)
install(DIRECTORY examples/ DESTINATION share/doc/keel/examples USE_SOURCE_PERMISSIONS
        PATTERN ".gitignore" EXCLUDE PATTERN "node_modules" EXCLUDE)
install(FILES packaging/keel.service DESTINATION lib/systemd/system)

# The man page is `keel --help` as help2man lays it out (NAME, SYNOPSIS, the options, the
# examples): written at build time from the binary itself, so it cannot disagree with it.
# Required for packages; a developer build without help2man has no man page.
find_program(KEEL_HELP2MAN help2man)
if(KEEL_PORTABLE AND NOT KEEL_HELP2MAN)
  message(FATAL_ERROR "KEEL_PORTABLE needs help2man for the man page (apt install help2man)")
endif()
if(KEEL_HELP2MAN)
  set(man ${CMAKE_BINARY_DIR}/keel.1)
  add_custom_command(OUTPUT ${man}.gz
    COMMAND ${KEEL_HELP2MAN} --no-info --section=1 --source=keel
            "--name=an MCP server with reliable cancellation, timeouts and exactly-once mutations"
            --output=${man} $<TARGET_FILE:keel>
    COMMAND gzip -9nf ${man}
    DEPENDS keel VERBATIM)
  add_custom_target(keel_man ALL DEPENDS ${man}.gz)
  install(FILES ${man}.gz DESTINATION share/man/man1)
endif()

set(CPACK_PACKAGE_NAME keel)
set(CPACK_PACKAGE_VENDOR "the keel authors")
# No public address yet: the Maintainer field names the authors only (set one before a
# release leaves the project).
set(CPACK_PACKAGE_CONTACT "the keel authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MCP server with reliable cancellation, timeouts and exactly-once mutations")
set(CPACK_PACKAGE_DESCRIPTION
    "keel serves tools to MCP hosts over stdio or Streamable HTTP, with cancellation, timeouts,\n retries, circuit breakers and an idempotency ledger (SQLite or PostgreSQL).")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_PACKAGE_FILE_NAME keel-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR})
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_SOURCE_DIR}/dist)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR OFF)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/cpack_options.cmake)
# The .deb: keel_VERSION_ARCH.deb. Depends comes from dpkg-shlibdeps on the binary: libc6 only.
# The libraries keel loads when a feature needs them are Recommends (installed by apt by
# default, so the features work; a minimal system may leave them out and gets a message
# naming the package when the feature is used): libpq5 for --db postgresql://,
# libmicrohttpd12 for --http, libcurl4 for keel wrap --upstream-url.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5, libmicrohttpd12, libcurl4 | libcurl4t64")
include(CPack)
