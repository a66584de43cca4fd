#pragma once
// Crash-safe file writing: write to "<path>.tmp.<pid>", fsync it, rename over path, fsync the
// directory. A reader sees the old file or the new one, never a partial one.
#include <string>
#include <string_view>

namespace lg::nn {

void write_file_atomic(const std::string& path, std::string_view bytes);
// fsync a directory so a rename inside it is durable.
void fsync_dir(const std::string& dir);
std::string read_file(const std::string& path);  // a user error naming path when unreadable
// Creates dir and its parents unless they exist; a user error naming `what` (e.g. "--checkpoint-dir")
// and dir when it cannot be created, is not a directory, or is not writable.
void make_directories(const std::string& dir, const std::string& what);

}  // namespace lg::nn
