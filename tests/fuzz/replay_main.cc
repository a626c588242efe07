// Replays inputs through a libFuzzer target without libFuzzer: the ctest
// <target>_replay (CMake folio_fuzz) links this main with the target's
// sources, so every compiler and build type (g++, ASan) runs the seed corpus
// and every crash reproducer on each `make test`.
//
// Usage: <target>_replay PATH...   (files, or directories of files; names
// starting with '.' and README* are skipped). Exit 0 when every input ran;
// 1 when a path cannot be read or no input was found (a wrong path must not
// pass silently). A failing input aborts inside the target, as it would
// under the fuzzer; the input's path is printed first.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional, like libFuzzer's: called once before the first input.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool Skipped(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name.rfind("README", 0) == 0;
}

bool Run(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
  // A heap copy of exactly the input's size, so ASan sees reads past its end.
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path path(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
        if (e.is_regular_file() && !Skipped(e.path())) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        ok = Run(f) && ok;
        ++count;
      }
    } else if (std::filesystem::is_regular_file(path, ec)) {
      ok = Run(path) && ok;
      ++count;
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      ok = false;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs\n", count);
  if (count == 0) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 1;
  }
  return ok ? 0 : 1;
}
