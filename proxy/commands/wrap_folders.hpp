// The files `gistproxy wrap` keeps for a run: its folder (logs, the run's
// settings overlay, the default store), the overlay itself, and whether the
// store can take a blob at all. What is written there can be private (a
// copy of Cline's providers holds the user's API key; the store holds tool
// outputs): the folder is the user's alone, and a credential copy left by a
// wrap that was killed is removed by the next one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace gistproxy::proxy {

// $XDG_CACHE_HOME/gistproxy, else $HOME/.cache/gistproxy, else (HOME unset)
// $TMPDIR/gistproxy-UID (a shared folder: the uid keeps users apart). Created
// 0700 when missing, tightened to 0700 when it is the user's; nullopt, with
// `error`, when it is not a directory or belongs to another user.
std::optional<std::filesystem::path> wrap_cache_folder(const char* const* environ, std::string& error);

// The run's settings overlay: a fresh folder (0700) in the cache folder,
// locked for as long as this object lives and removed with it. Making one
// first removes the overlays no live wrap holds: those of a wrap that was
// killed before it could clean up. An empty path when it cannot be made.
class wrap_overlay {
 public:
  explicit wrap_overlay(const std::filesystem::path& cache);
  ~wrap_overlay();
  wrap_overlay(const wrap_overlay&) = delete;
  wrap_overlay& operator=(const wrap_overlay&) = delete;

  const std::string& path() const { return path_; }
  // Removes the folder now (the destructor does it otherwise).
  void remove();

 private:
  std::string path_;
  int lock_fd_ = -1;
};

// Why blobs cannot be written to the directory store `store` (created 0700
// when missing), or nullopt when they can. An s3:// store is not checked.
std::optional<std::string> store_write_problem(const std::string& store);

}  // namespace gistproxy::proxy
