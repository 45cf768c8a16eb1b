// UsageErrorText: what keel prints for a command-line error CLI11 found, in place of CLI11's
// bare text, so that the user can fix it in one go:
//  - an unknown flag gets the nearest known one: "keel: unknown flag --catlog (did you mean
//    --catalog?)", and the value after it is not reported as a second stray argument;
//  - an unknown command gets the nearest known one ("keel: unknown command catlog (did you
//    mean catalog?)", "keel trace sumary" -> "trace summary"), or the list of commands; a
//    command that needs one and has none says which it takes;
//  - a bad value that came from a KEEL_* environment variable (the flag is not on the
//    command line) names the variable: "... (from the environment variable KEEL_WORKERS)";
//  - anything else is CLI11's message, prefixed "keel: ".
// Each message ends with "Run with --help for more information.\n". Pure: reads the app's
// options, argv and the environment; prints nothing.
//
// Written here: CLI11 2.1.2 (Debian 12) has neither suggestions nor the variable's name in
// its errors.
#pragma once

#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

namespace keel {

std::string UsageErrorText(const CLI::App& app, const CLI::ParseError& error, int argc,
                           const char* const* argv);

// The edit distance between two flag names (insertions, deletions, substitutions and swaps of
// two neighbours each count one). For tests.
size_t FlagDistance(const std::string& a, const std::string& b);

}  // namespace keel
