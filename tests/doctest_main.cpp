// doctest's main, and one guard: ctest runs each test case by name (--test-case=NAME); a name that
// ctest's discovery cut (at a ';', a CMake list separator) matches no test case, and doctest would
// report success having run nothing.  A filtered run that matches none fails instead.  And one
// convenience: tests write their scratch files into the working directory (ctest's is the build
// tree); run by hand from the repository root they would leave them there, so they run from a
// scratch folder instead.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace {

unsigned matched_test_cases = 0;

struct MatchCounter : doctest::IReporter {
  explicit MatchCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { matched_test_cases = stats.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("match-counter", 1, MatchCounter);

}  // namespace

int main(int argc, char** argv) {
#ifdef LUWUSIM_SOURCE_DIR
  std::error_code ec;
  if (std::filesystem::equivalent(std::filesystem::current_path(), LUWUSIM_SOURCE_DIR, ec)) {
    const auto scratch = std::filesystem::temp_directory_path() / "luwusim-test-scratch";
    std::filesystem::create_directories(scratch);
    std::filesystem::current_path(scratch);
  }
#endif
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  bool filtered = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--test-case=", 12) == 0 || std::strncmp(argv[i], "-tc=", 4) == 0) filtered = true;
  if (result == 0 && filtered && matched_test_cases == 0) {
    std::cerr << "no test case matches the --test-case filter: its name was cut or misspelt, and nothing ran\n";
    return 1;
  }
  return result;
}
