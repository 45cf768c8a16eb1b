// Where keel looks for its TOML config file when neither --config nor KEEL_CONFIG names one
// (ADO-2): $XDG_CONFIG_HOME/keel/config.toml, or ~/.config/keel/config.toml when
// XDG_CONFIG_HOME is unset or not absolute (the XDG Base Directory rules). The file is read
// only when it exists; `--config ''` (or KEEL_CONFIG="") reads none.
//
// Pure apart from reading the two environment variables and one stat.
#pragma once

#include <string>

namespace keel {

// The default config file's path ("" when neither variable gives an absolute directory).
std::string DefaultConfigPath();

// DefaultConfigPath() when that file exists (as anything: a directory there is reported when
// it is read), else "".
std::string ExistingDefaultConfig();

}  // namespace keel
