// The filesystem store's file I/O: reading a blob file as hostile (regular
// files only, bounded), writing one atomically (temp file, fsync, rename),
// and file ages. No policy: fs_blob_store decides what to read and write.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::store {

// The file's mtime in unix seconds, -1 when it cannot be stat'ed.
std::int64_t mtime_of(const std::filesystem::path& p);
void set_mtime(const std::filesystem::path& p, std::int64_t when);

// Reads a blob file: a regular file, not a link, FIFO or device, and no
// larger than `limit` bytes. nullopt on success (the bytes in `out`).
std::optional<rewrite::get_result> read_regular_file(const std::filesystem::path& path, std::uint64_t limit,
                                                     std::string& out);

// Writes `data` to `path` through a temp file beside it and rename(): a
// reader sees the old file or the new one, never a part. The file is the
// owner's alone (0600): a tool output may hold anything. `durable`: fsync
// the file before the rename. 0 on success, else the errno (ENOENT: the
// directory is gone) with `error` saying what failed.
int write_atomically(const std::filesystem::path& path, std::string_view data, bool durable, std::string& error);

// Creates `dir` and any missing parents readable by the owner alone (0700):
// the store holds tool outputs, which are no one else's to read. A folder
// that is already there is left as it is. False, with `ec`, when it cannot.
bool create_private_directories(const std::filesystem::path& dir, std::error_code& ec);

// fsyncs a directory, so the renames made in it survive a crash; inside a
// directory_sync_batch on this thread, once per directory when the batch ends.
void sync_directory(const std::filesystem::path& dir);

// One request's blobs (a bulk offload writes hundreds, into at most 256
// directories of its tenant) fsync each directory once, not once a blob:
// the batch ends, and its fsyncs are done, before the request's references
// leave the store thread. Batches do not nest (an inner one is a no-op).
class directory_sync_batch {
 public:
  directory_sync_batch();
  ~directory_sync_batch();
  directory_sync_batch(const directory_sync_batch&) = delete;
  directory_sync_batch& operator=(const directory_sync_batch&) = delete;

 private:
  bool owner_ = false;
};

// Directory fsyncs done by this process so far (tests count them).
std::uint64_t directory_syncs();

// Blob files or directories this process could not open for lack of file
// descriptors (EMFILE, ENFILE) so far: the proxy logs "out of file
// descriptors" when a store call added to it. Counts `err` if it is one.
std::uint64_t descriptor_shortages();
void count_descriptor_shortage(int err);

}  // namespace gistproxy::store
