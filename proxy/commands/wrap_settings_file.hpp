// Reading an agent's own settings file (Cline's providers.json, Codex's
// config.toml, opencode.json) for `gistproxy wrap`: the user's file, yet
// read as carefully as any input. A regular file of at most `limit` bytes;
// a folder, a FIFO (opened without blocking: no hang), a device or a larger
// file is a problem said in words, never an abort or a wait.
#pragma once

#include <cstddef>
#include <string>

namespace gistproxy::proxy {

struct settings_file {
  bool missing = false;  // no file there (not a problem: the agent's defaults)
  std::string text;      // the file's bytes, when there is no problem
  std::string problem;   // why it was not read ("is a folder", "is larger than 1 MiB"), else empty
};

inline constexpr std::size_t max_settings_bytes = 1 << 20;  // a settings file is a few KB

settings_file read_settings_file(const std::string& path, std::size_t limit = max_settings_bytes);

}  // namespace gistproxy::proxy
