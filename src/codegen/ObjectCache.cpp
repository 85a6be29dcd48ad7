//===- ObjectCache.cpp - Compiled code kept between runs -------------------===//
//
// See keel/codegen/ObjectCache.h for what is kept, under which key, and the
// rules that make loading machine code from disk safe.
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/ObjectCache.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

namespace keel::codegen {

namespace {

constexpr std::string_view kMagic = "KEELOBJ1";
constexpr std::string_view kSuffix = ".kobj";
constexpr size_t kKeyDigits = 64, kSumBytes = 32;
constexpr size_t kHeaderBytes = kMagic.size() + kKeyDigits + 8 + kSumBytes;
/// A temporary file older than this was left by a process that died.
constexpr time_t kStaleTemporarySeconds = 3600;

std::string hex(const uint8_t *bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string checksum(std::string_view data) {
  llvm::BLAKE3 hasher;
  hasher.update(llvm::StringRef(data.data(), data.size()));
  auto sum = hasher.final<kSumBytes>();
  return std::string(reinterpret_cast<const char *>(sum.data()), sum.size());
}

/// The GNU build ID of the executable or library holding this code (the
/// linker's hash of its contents), in hex; empty when it has none.
std::string computeBuildId() {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(&computeBuildId), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto &s = *static_cast<Search *>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &p = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + p.p_vaddr;
          if (p.p_type == PT_LOAD && s.address >= start && s.address - start < p.p_memsz)
            holds = true;
        }
        if (!holds)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &p = info->dlpi_phdr[i];
          if (p.p_type != PT_NOTE)
            continue;
          auto *at = reinterpret_cast<const char *>(info->dlpi_addr + p.p_vaddr);
          const char *end = at + p.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            auto *note = reinterpret_cast<const ElfW(Nhdr) *>(at);
            const char *name = at + sizeof(ElfW(Nhdr));
            const char *desc = name + ((note->n_namesz + 3) & ~size_t{3});
            if (desc + note->n_descsz > end)
              break;
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
              s.id = hex(reinterpret_cast<const uint8_t *>(desc), note->n_descsz);
            at = desc + ((note->n_descsz + 3) & ~size_t{3});
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

const std::string &buildId() {
  static const std::string id = computeBuildId();
  return id;
}

/// Whether `st` may be trusted: owned by this user and writable by no one
/// else. Otherwise, why not.
std::optional<std::string> untrusted(const struct stat &st) {
  if (st.st_uid != geteuid())
    return std::string("it is owned by another user");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("it is writable by other users");
  return std::nullopt;
}

/// mkdir -p, each directory it creates mode 0700; false with `why`.
bool makeDirectories(const std::string &dir, std::string &why) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/')
      continue;
    std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      why = "cannot create " + part + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool isEntry(std::string_view name) {
  return name.size() == kKeyDigits + kSuffix.size() && name.substr(kKeyDigits) == kSuffix;
}
bool isTemporary(std::string_view name) { return name.find(".tmp.") != std::string_view::npos; }

struct File {
  std::string path;
  struct stat st;
};

/// The directory's entries and temporary files (lstat: links are neither).
std::vector<File> listing(const std::string &dir) {
  std::vector<File> out;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return out;
  while (dirent *e = readdir(d)) {
    std::string_view name = e->d_name;
    if (!isEntry(name) && !isTemporary(name))
      continue;
    File f{dir + "/" + std::string(name), {}};
    if (lstat(f.path.c_str(), &f.st) == 0 && S_ISREG(f.st.st_mode))
      out.push_back(std::move(f));
  }
  closedir(d);
  return out;
}

bool readAll(int fd, std::string &out, size_t size) {
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, out.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

} // namespace

std::string defaultCacheDir() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
    return std::string(xdg) + "/keel";
  if (const char *home = std::getenv("HOME"); home && home[0] == '/')
    return std::string(home) + "/.cache/keel";
  return "";
}

std::string hostAndBuild() {
  static const std::string text = [] { // the host and the build do not change
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> list;
    for (const auto &f : features)
      list.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    std::sort(list.begin(), list.end());
    std::string out = llvm::sys::getProcessTriple() + "\n" + llvm::sys::getHostCPUName().str() + "\n";
    for (const std::string &f : list)
      out += f + ",";
    return out + "\nLLVM " LLVM_VERSION_STRING "\nKeel build " + buildId() + "\n";
  }();
  return text;
}

std::string cacheKey(std::string_view moduleText, std::string_view host) {
  llvm::BLAKE3 hasher;
  // Each part with its length, so no two different lists hash alike.
  for (std::string_view part : {std::string_view("keel object cache 1"), host, moduleText}) {
    uint64_t n = part.size();
    hasher.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&n), sizeof n));
    hasher.update(llvm::StringRef(part.data(), part.size()));
  }
  auto sum = hasher.final<32>();
  return hex(sum.data(), sum.size());
}

ObjectCache::ObjectCache(std::string dir, uint64_t maxBytes, std::vector<std::string> &warnings)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {
  while (dir_.size() > 1 && dir_.back() == '/')
    dir_.pop_back();
  std::string why;
  if (dir_.empty())
    why = "no directory for it (set KEEL_CACHE_DIR, XDG_CACHE_HOME or HOME)";
  else if (buildId().empty())
    why = "this build of Keel has no build ID to tell its objects from another build's";
  else if (dir_[0] != '/')
    why = "its directory " + dir_ + " is not an absolute path";
  else if (makeDirectories(dir_, why)) {
    struct stat st;
    if (stat(dir_.c_str(), &st) != 0)
      why = "cannot read " + dir_ + ": " + std::strerror(errno);
    else if (!S_ISDIR(st.st_mode))
      why = dir_ + " is not a directory";
    else if (std::optional<std::string> problem = untrusted(st))
      why = "its directory " + dir_ + " is not private: " + *problem;
  }
  usable_ = why.empty();
  if (!usable_)
    warnings.push_back("the compile cache is not used: " + why);
}

std::optional<std::vector<std::string>> ObjectCache::load(const std::string &key,
                                                          std::vector<std::string> &warnings) const {
  if (!usable_)
    return std::nullopt;
  std::string path = dir_ + "/" + key + std::string(kSuffix);
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      warnings.push_back("the compile cache entry " + path + " is not used: " + std::strerror(errno));
    return std::nullopt;
  }
  std::string why, data;
  struct stat st;
  bool discard = true; // a damaged entry is removed; an untrusted one is only left alone
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
    discard = false;
  } else if (std::optional<std::string> problem = untrusted(st)) {
    why = *problem;
    discard = false;
  } else if (static_cast<uint64_t>(st.st_size) < kHeaderBytes || !readAll(fd, data, static_cast<size_t>(st.st_size))) {
    why = "it is truncated";
  } else {
    std::string_view view = data;
    uint64_t length = 0;
    std::memcpy(&length, data.data() + kMagic.size() + kKeyDigits, 8);
    if (view.substr(0, kMagic.size()) != kMagic)
      why = "it is not a Keel object";
    else if (view.substr(kMagic.size(), kKeyDigits) != key)
      why = "it holds another key's object";
    else if (length != data.size() - kHeaderBytes)
      why = "it is truncated";
    else if (view.substr(kHeaderBytes - kSumBytes, kSumBytes) != checksum(view.substr(kHeaderBytes)))
      why = "its checksum does not match";
  }
  std::vector<std::string> objects;
  for (std::string_view rest = std::string_view(data).substr(why.empty() ? kHeaderBytes : data.size()); !rest.empty();) {
    uint64_t n = 0;
    if (rest.size() < 8 || (std::memcpy(&n, rest.data(), 8), n > rest.size() - 8)) {
      why = "its objects are malformed";
      break;
    }
    objects.emplace_back(rest.substr(8, n));
    rest.remove_prefix(8 + n);
  }
  if (why.empty() && objects.empty())
    why = "it holds no object";
  if (why.empty())
    futimens(fd, nullptr); // just used: the last to evict
  close(fd);
  if (!why.empty()) {
    if (discard)
      unlink(path.c_str());
    warnings.push_back("the compile cache entry " + path + " was " + (discard ? "discarded" : "not used") +
                       ": " + why + (discard ? "; it is rebuilt" : ""));
    return std::nullopt;
  }
  return objects;
}

void ObjectCache::store(const std::string &key, const std::vector<std::string> &objects,
                        std::vector<std::string> &warnings) const {
  if (!usable_)
    return;
  std::string object; // each object's length, then its bytes
  for (const std::string &o : objects) {
    uint64_t n = o.size();
    object.append(reinterpret_cast<const char *>(&n), 8);
    object += o;
  }
  static std::atomic<uint64_t> counter{0};
  std::string path = dir_ + "/" + key + std::string(kSuffix);
  std::string temporary = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::string header(kMagic);
  header += key;
  uint64_t length = object.size();
  header.append(reinterpret_cast<const char *>(&length), 8);
  header += checksum(object);
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && writeAll(fd, header) && writeAll(fd, object);
  int error = errno;
  if (fd >= 0 && close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    if (fd >= 0)
      unlink(temporary.c_str());
    warnings.push_back("the compiled code was not stored in the compile cache " + dir_ + ": " + std::strerror(error));
    return;
  }
  // Least recently used first out, until the rest fits the bound.
  std::vector<File> files = listing(dir_);
  uint64_t total = 0;
  time_t now = time(nullptr);
  std::vector<File> entries;
  for (File &f : files) {
    if (!isEntry(f.path.substr(dir_.size() + 1))) {
      if (now - f.st.st_mtime > kStaleTemporarySeconds)
        unlink(f.path.c_str());
      continue;
    }
    total += static_cast<uint64_t>(f.st.st_size);
    entries.push_back(std::move(f));
  }
  std::sort(entries.begin(), entries.end(), [](const File &a, const File &b) {
    if (a.st.st_mtim.tv_sec != b.st.st_mtim.tv_sec)
      return a.st.st_mtim.tv_sec < b.st.st_mtim.tv_sec;
    return a.st.st_mtim.tv_nsec < b.st.st_mtim.tv_nsec;
  });
  for (const File &f : entries) {
    if (total <= maxBytes_)
      break;
    if (f.path == path) // the entry just stored stays, even alone over the bound
      continue;
    if (unlink(f.path.c_str()) == 0)
      total -= static_cast<uint64_t>(f.st.st_size);
  }
}

ObjectCache::Usage ObjectCache::usage() const {
  Usage u;
  if (!usable_)
    return u;
  for (const File &f : listing(dir_))
    if (isEntry(f.path.substr(dir_.size() + 1))) {
      ++u.entries;
      u.bytes += static_cast<uint64_t>(f.st.st_size);
    }
  return u;
}

uint64_t ObjectCache::clear() const {
  uint64_t removed = 0;
  if (!usable_)
    return removed;
  for (const File &f : listing(dir_))
    if (unlink(f.path.c_str()) == 0 && isEntry(f.path.substr(dir_.size() + 1)))
      ++removed;
  return removed;
}

} // namespace keel::codegen
