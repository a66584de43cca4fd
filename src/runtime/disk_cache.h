#pragma once
// A content-addressed disk cache of compiled kernels (and, later, BEAM results).
// Entries live in config().cache_dir/<kind>/<128-bit hex of the key>. Writes go to a unique temp
// file in the same folder and are renamed into place, so processes writing the same entry at once
// never expose a partial file (the last rename wins; both wrote identical bytes). CACHE=0 turns the
// cache off. A failure to write is reported once on stderr and otherwise ignored: the cache only
// ever saves time.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lg {

std::optional<std::vector<uint8_t>> cache_get(const std::string& kind, const std::string& key);
void cache_put(const std::string& kind, const std::string& key, const std::vector<uint8_t>& value);
// The file an entry lives in (whether or not it exists).
std::string cache_path(const std::string& kind, const std::string& key);

}  // namespace lg
