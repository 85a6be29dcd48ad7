//===- keel/codegen/ObjectCache.h - Compiled code kept between runs -*- C++ -*-===//
//
// A directory of machine-code objects, one file per compiled module, so that
// a program compiled once is loaded, not compiled, the next time (the role
// of JAX's and Triton's persistent caches). Program::compile (Codegen.h)
// looks an entry up by the key of the LLVM module it is about to optimize
// and compile; on a miss it compiles and stores the object.
//
// The key (cacheKey) is a BLAKE3 hash of everything that decides the
// machine code: the LLVM module as Keel generated it (the loop IR and every
// option that shapes it are in it), the host the code is compiled for
// (target triple, CPU name and feature string), the LLVM version, and this
// build of Keel (its ELF build ID, so a rebuilt Keel never loads objects an
// older one made).
//
// Entries are machine code that Keel loads and runs, so the cache is
// private and checked:
// - the directory is created mode 0700; a directory or entry owned by
//   another user, or writable by its group or by others, is not used (a
//   warning, then a run without it);
// - an entry holds a header (magic, key, length, BLAKE3 of the rest), then
//   each object as its length and bytes: a truncated, corrupted or foreign
//   entry (another key's) is detected, discarded and rebuilt;
// - writes go to a temporary file renamed into place, so processes sharing
//   the directory see whole entries or none;
// - the directory is bounded: after each store, entries least recently
//   used (their modification time, refreshed on every hit) are removed
//   until the total is under the bound.
// A cache problem never fails a compilation and never changes a result:
// at worst the module is compiled again.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_CODEGEN_OBJECTCACHE_H
#define KEEL_CODEGEN_OBJECTCACHE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::codegen {

/// $XDG_CACHE_HOME/keel when XDG_CACHE_HOME is an absolute path, else
/// $HOME/.cache/keel; empty when neither can be found.
std::string defaultCacheDir();

/// What the key says about the host and the build: the target triple, CPU
/// name and features, the LLVM version and Keel's build ID, one per line.
std::string hostAndBuild();

/// The cache key of a module, as 64 hex digits: `moduleText` is the LLVM
/// module before optimization (any exact serialization), `hostAndBuild`
/// normally hostAndBuild().
std::string cacheKey(std::string_view moduleText, std::string_view hostAndBuild);

class ObjectCache {
public:
  /// The cache in `dir` (created, mode 0700, when missing) bounded by
  /// `maxBytes`. When it cannot be used (created, or trusted), `usable()` is
  /// false and `warnings` says why.
  ObjectCache(std::string dir, uint64_t maxBytes, std::vector<std::string> &warnings);

  bool usable() const { return usable_; }
  const std::string &dir() const { return dir_; }

  /// The objects stored under `key` (a module compiled in parts gives one
  /// per part), or nullopt (no entry; or one discarded as damaged, foreign
  /// or untrusted, with a warning). A hit marks the entry as just used.
  std::optional<std::vector<std::string>> load(const std::string &key, std::vector<std::string> &warnings) const;
  /// Stores `objects` under `key` (replacing any entry), then evicts least
  /// recently used entries beyond the bound. Failures (a read-only or full
  /// disk) leave the cache as it was, with a warning.
  void store(const std::string &key, const std::vector<std::string> &objects,
             std::vector<std::string> &warnings) const;

  struct Usage {
    uint64_t entries = 0, bytes = 0;
  };
  /// What the directory's entries take.
  Usage usage() const;
  /// Removes every entry (and stale temporary files); how many.
  uint64_t clear() const;

private:
  std::string dir_;
  uint64_t maxBytes_;
  bool usable_ = false;
};

} // namespace keel::codegen

#endif // KEEL_CODEGEN_OBJECTCACHE_H
