// write_file_atomically (common/atomic_write.hpp): whole files, the replaced file's permissions,
// and a temporary nothing planted beside the target can capture.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic_write.hpp"

namespace fs = std::filesystem;

namespace {
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}
}  // namespace

TEST_CASE("write_file_atomically keeps the replaced file's permissions and follows nothing planted beside it") {
  const fs::path dir = fs::temp_directory_path() / ("luwusim-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.json";
  // A new file: what the umask gives a new file.
  luwu::write_file_atomically(out.string(), "one");
  CHECK(read(out) == "one");
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK(mode_of(out) == (0666 & ~mask));
  // A private file stays private (a fresh temporary is 0600 or 0644 by itself; the target's mode wins).
  REQUIRE(::chmod(out.c_str(), 0640) == 0);
  luwu::write_file_atomically(out.string(), "two");
  CHECK(read(out) == "two");
  CHECK(mode_of(out) == 0640);
  // A link planted at the old fixed temporary name leads nowhere: the victim keeps its content.
  std::ofstream(dir / "victim") << "victim";
  fs::create_symlink(dir / "victim", dir / "out.json.tmp-luwusim");
  luwu::write_file_atomically(out.string(), "three");
  CHECK(read(out) == "three");
  CHECK(read(dir / "victim") == "victim");
  CHECK(fs::is_symlink(dir / "out.json.tmp-luwusim"));
  // No temporary is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename().string().rfind("out.json.tmp-luwusim-", 0) == 0;
  CHECK(files == 0);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically through a symbolic link writes the link's target, keeping its mode and the link") {
  // `--timeline` through a link turned a 0600 target into 0644 and replaced a dangling link with a
  // file; the README promises links keep their target.
  const fs::path dir = fs::temp_directory_path() / ("luwusim-atomic-link-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path target = dir / "target.json", link = dir / "link.json";
  std::ofstream(target) << "old";
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  fs::create_symlink(target, link);
  luwu::write_file_atomically(link.string(), "new");
  CHECK(fs::is_symlink(link));
  CHECK(read(target) == "new");
  CHECK(mode_of(target) == 0600);
  // A dangling link: its target is created, the link stays a link.
  const fs::path absent = dir / "absent.json", dangling = dir / "dangling.json";
  fs::create_symlink(absent, dangling);
  luwu::write_file_atomically(dangling.string(), "made");
  CHECK(fs::is_symlink(dangling));
  CHECK(read(absent) == "made");
  fs::remove_all(dir);
}
