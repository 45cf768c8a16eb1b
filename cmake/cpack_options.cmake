# Per-generator CPack settings (CPACK_PROJECT_CONFIG_FILE, read by cpack for each generator):
# the .deb installs under /usr, the tarball holds bin/, share/ and lib/ at its top directory.
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_PACKAGING_INSTALL_PREFIX "/")
endif()
