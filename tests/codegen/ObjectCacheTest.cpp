//===- ObjectCacheTest.cpp - The compile cache's rules, one by one --------===//
//
// keel/codegen/ObjectCache.h: what the key depends on, that entries come
// back as stored, and that every kind of damage or distrust is caught:
// each case breaks an entry or the directory by hand (bytes flipped, the
// file cut, another key's file, permissions) and checks the cache refuses
// it with a warning, and that a store and load work again after.
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/ObjectCache.h"

#include <atomic>
#include <functional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace keel::codegen;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the test's temporary folder, removed after.
class ObjectCacheTest : public testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "keel-object-cache-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  std::string dir(const std::string &name = "cache") const { return (root_ / name).string(); }
  static std::string entryPath(const ObjectCache &c, const std::string &key) { return c.dir() + "/" + key + ".kobj"; }
  static std::string read(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void write(const std::string &path, const std::string &data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
  }
  static bool mentions(const std::vector<std::string> &warnings, const std::string &what) {
    for (const std::string &w : warnings)
      if (w.find(what) != std::string::npos)
        return true;
    return false;
  }
  fs::path root_;
};

const std::string kObject = std::string("\x7f" "ELF machine code, with a zero byte: \0 and more", 48);
/// A module compiled in parts: one object per part (one may be empty).
const std::vector<std::string> kObjects = {kObject, "", "a third part"};
using Objects = std::vector<std::string>;

TEST(ObjectCacheKey, DependsOnTheModuleAndTheHost) {
  std::string host = hostAndBuild();
  std::string a = cacheKey("define void @f() { ret void }", host);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a, cacheKey("define void @f() { ret void }", host));
  EXPECT_NE(a, cacheKey("define void @g() { ret void }", host));
  // Another CPU feature string: another key.
  std::string otherHost = host;
  size_t at = otherHost.find("+avx");
  if (at != std::string::npos)
    otherHost[at] = '-';
  else
    otherHost += "+avx,";
  EXPECT_NE(a, cacheKey("define void @f() { ret void }", otherHost));
  // Parts are length-prefixed: moving text from one part to the other changes the key.
  EXPECT_NE(cacheKey("xy", "ab"), cacheKey("y", "abx"));
}

TEST(ObjectCacheKey, NamesTheHostAndTheBuild) {
  std::string host = hostAndBuild();
  struct utsname machine {}; // the kernel's name for the processor: the triple's first part
  ASSERT_EQ(uname(&machine), 0);
  EXPECT_NE(host.find(machine.machine), std::string::npos) << host;
  EXPECT_NE(host.find("LLVM 22."), std::string::npos) << host;
  size_t build = host.find("Keel build ");
  ASSERT_NE(build, std::string::npos) << host;
  EXPECT_GE(host.size() - build, std::string("Keel build ").size() + 40) << "no build ID: " << host;
}

TEST_F(ObjectCacheTest, CreatesAPrivateDirectoryAndStoresPrivateEntries) {
  std::vector<std::string> warnings;
  ObjectCache cache(dir("a/b/keel"), 1 << 20, warnings);
  ASSERT_TRUE(cache.usable()) << (warnings.empty() ? "" : warnings[0]);
  EXPECT_EQ(fs::status(dir("a/b/keel")).permissions() & fs::perms::all, fs::perms::owner_all);
  std::string key = cacheKey("module", "host");
  EXPECT_FALSE(cache.load(key, warnings));
  cache.store(key, kObjects, warnings);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(fs::status(entryPath(cache, key)).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  std::optional<Objects> back = cache.load(key, warnings);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, kObjects);
  EXPECT_EQ(cache.usage().entries, 1u);
  EXPECT_GT(cache.usage().bytes, kObject.size());
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_EQ(cache.usage().entries, 0u);
  EXPECT_FALSE(cache.load(key, warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST_F(ObjectCacheTest, CorruptedTruncatedAndForeignEntriesAreDiscardedAndRebuilt) {
  std::vector<std::string> warnings;
  ObjectCache cache(dir(), 1 << 20, warnings);
  ASSERT_TRUE(cache.usable());
  std::string key = cacheKey("module", "host"), other = cacheKey("other module", "host");
  struct Damage {
    const char *name, *warning;
    std::function<void(const std::string &path)> apply;
  };
  std::vector<Damage> damages = {
      {"a flipped bit in the object", "checksum",
       [](const std::string &p) { std::string d = read(p); d[d.size() - 3] ^= 1; write(p, d); }},
      {"a flipped bit in the header's length", "truncated",
       [](const std::string &p) { std::string d = read(p); d[8 + 64] ^= 1; write(p, d); }},
      {"the file cut short", "truncated", [](const std::string &p) { write(p, read(p).substr(0, 100)); }},
      {"the header cut", "truncated", [](const std::string &p) { write(p, read(p).substr(0, 10)); }},
      {"an empty file", "truncated", [](const std::string &p) { write(p, ""); }},
      {"not a Keel object", "not a Keel object",
       [](const std::string &p) { std::string d = read(p); d[0] = 'X'; write(p, d); }},
  };
  for (const Damage &d : damages) {
    SCOPED_TRACE(d.name);
    warnings.clear();
    cache.store(key, kObjects, warnings);
    d.apply(entryPath(cache, key));
    EXPECT_FALSE(cache.load(key, warnings));
    EXPECT_TRUE(mentions(warnings, d.warning)) << (warnings.empty() ? "no warning" : warnings[0]);
    EXPECT_TRUE(mentions(warnings, "discarded"));
    EXPECT_FALSE(fs::exists(entryPath(cache, key)));
    cache.store(key, kObjects, warnings); // rebuilt
    EXPECT_EQ(cache.load(key, warnings).value_or(Objects{}), kObjects);
  }
  // Another key's entry under this key's name.
  warnings.clear();
  cache.store(other, {"another object"}, warnings);
  fs::copy_file(entryPath(cache, other), entryPath(cache, key), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load(key, warnings));
  EXPECT_TRUE(mentions(warnings, "another key's object"));
  EXPECT_EQ(cache.load(other, warnings).value_or(Objects{}), Objects{"another object"});
}

TEST_F(ObjectCacheTest, UntrustedDirectoriesAndEntriesAreNotUsed) {
  std::vector<std::string> warnings;
  fs::create_directories(dir());
  fs::permissions(dir(), fs::perms::owner_all | fs::perms::group_all | fs::perms::others_all);
  ObjectCache open(dir(), 1 << 20, warnings);
  EXPECT_FALSE(open.usable());
  EXPECT_TRUE(mentions(warnings, "writable by other users")) << (warnings.empty() ? "" : warnings[0]);
  std::string key = cacheKey("module", "host");
  open.store(key, kObjects, warnings); // refused: nothing written
  EXPECT_FALSE(fs::exists(dir() + "/" + key + ".kobj"));

  fs::permissions(dir(), fs::perms::owner_all);
  warnings.clear();
  ObjectCache cache(dir(), 1 << 20, warnings);
  ASSERT_TRUE(cache.usable());
  cache.store(key, kObjects, warnings);
  fs::permissions(entryPath(cache, key), fs::perms::others_write, fs::perm_options::add);
  EXPECT_FALSE(cache.load(key, warnings));
  EXPECT_TRUE(mentions(warnings, "writable by other users"));
  EXPECT_TRUE(fs::exists(entryPath(cache, key))); // not the cache's to delete
  cache.store(key, kObjects, warnings);           // replaced by a private one
  EXPECT_EQ(cache.load(key, warnings).value_or(Objects{}), kObjects);

  // An entry of another user (root can make one: give it away).
  if (geteuid() == 0) {
    ASSERT_EQ(chown(entryPath(cache, key).c_str(), 65534, 65534), 0);
    warnings.clear();
    EXPECT_FALSE(cache.load(key, warnings));
    EXPECT_TRUE(mentions(warnings, "owned by another user"));
    cache.store(key, kObjects, warnings);
    EXPECT_EQ(cache.load(key, warnings).value_or(Objects{}), kObjects);
  }

  // A link planted under an entry's name is not followed.
  write(dir("elsewhere"), "planted");
  fs::remove(entryPath(cache, key));
  fs::create_symlink(dir("elsewhere"), entryPath(cache, key));
  warnings.clear();
  EXPECT_FALSE(cache.load(key, warnings));
  EXPECT_FALSE(warnings.empty());
}

TEST_F(ObjectCacheTest, MissingOrUncreatableDirectories) {
  std::vector<std::string> warnings;
  write(dir("file"), "a file where a directory would go");
  ObjectCache cache(dir("file/keel"), 1 << 20, warnings);
  EXPECT_FALSE(cache.usable());
  EXPECT_TRUE(mentions(warnings, "cannot create"));
  warnings.clear();
  ObjectCache relative("relative/keel", 1 << 20, warnings);
  EXPECT_FALSE(relative.usable());
  EXPECT_TRUE(mentions(warnings, "not an absolute path"));
}

TEST_F(ObjectCacheTest, ReadOnlyDirectoriesLoadButDoNotStore) {
  // Root writes to read-only directories: there the case runs in a child
  // process as the user nobody, in a directory of its own.
  auto check = [](const std::string &dir) {
    std::vector<std::string> warnings;
    ObjectCache cache(dir, 1 << 20, warnings);
    if (!cache.usable())
      return 1;
    std::string key = cacheKey("module", "host");
    cache.store(key, kObjects, warnings);
    if (chmod(dir.c_str(), 0500) != 0)
      return 2;
    if (cache.load(key, warnings).value_or(Objects{}) != kObjects || !warnings.empty())
      return 3;
    cache.store(cacheKey("another", "host"), kObjects, warnings);
    bool said = mentions(warnings, "was not stored");
    chmod(dir.c_str(), 0700);
    return said ? 0 : 4;
  };
  if (geteuid() != 0) {
    EXPECT_EQ(check(dir()), 0);
    return;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(10);
    char pattern[] = "/tmp/keel-object-cache-nobody-XXXXXX";
    if (!mkdtemp(pattern))
      _exit(11);
    int status = check(std::string(pattern) + "/cache");
    std::error_code ec;
    fs::remove_all(pattern, ec);
    _exit(status);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: not usable, 2: chmod, 3: no hit, 4: no warning, 10/11: setup";
}

TEST_F(ObjectCacheTest, EvictsTheLeastRecentlyUsedBeyondTheBound) {
  std::vector<std::string> warnings;
  std::string big(10000, 'x');
  // Room for three entries (each the object, its length and a 112-byte header).
  ObjectCache cache(dir(), 3 * (big.size() + 120), warnings);
  ASSERT_TRUE(cache.usable());
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(cacheKey("module " + std::to_string(i), "host"));
    cache.store(keys.back(), {big}, warnings);
    // Distinct ages, oldest first (file times may be coarse).
    struct timespec times[2] = {{1000000 + i, 0}, {1000000 + i, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, entryPath(cache, keys.back()).c_str(), times, 0), 0);
  }
  EXPECT_EQ(cache.usage().entries, 3u);
  ASSERT_TRUE(cache.load(keys[0], warnings)); // the oldest, now the most recently used
  keys.push_back(cacheKey("module 3", "host"));
  cache.store(keys.back(), {big}, warnings);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(cache.usage().entries, 3u);
  EXPECT_LE(cache.usage().bytes, 3 * (big.size() + 120));
  EXPECT_TRUE(fs::exists(entryPath(cache, keys[0])));
  EXPECT_FALSE(fs::exists(entryPath(cache, keys[1]))); // the least recently used
  EXPECT_TRUE(fs::exists(entryPath(cache, keys[2])));
  EXPECT_TRUE(fs::exists(entryPath(cache, keys[3])));
  // An entry larger than the bound is kept alone (it was just compiled).
  ObjectCache tiny(dir(), 100, warnings);
  tiny.store(keys[0], {big}, warnings);
  EXPECT_EQ(tiny.usage().entries, 1u);
  EXPECT_TRUE(fs::exists(entryPath(tiny, keys[0])));
}

TEST_F(ObjectCacheTest, ConcurrentStoresAndLoadsSeeWholeEntries) {
  std::vector<std::string> warnings;
  ObjectCache cache(dir(), 1 << 30, warnings);
  ASSERT_TRUE(cache.usable());
  std::string key = cacheKey("module", "host");
  std::string big(1 << 20, 'y');
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        std::vector<std::string> w;
        cache.store(key, {big}, w);
        std::optional<Objects> back = cache.load(key, w);
        if (!back || *back != Objects{big} || !w.empty())
          ++bad;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.usage().entries, 1u); // no temporary left behind counts, none is an entry
  size_t files = 0;
  for (const auto &e : fs::directory_iterator(dir()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

} // namespace
