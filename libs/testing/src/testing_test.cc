#include "folio/testing/testing.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace folio::testing {

TEST_CASE("TempDir is created and removed with its contents") {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    CHECK(std::filesystem::is_directory(path));
    std::filesystem::create_directories(path + "/a/b");
    std::ofstream(path + "/a/b/f") << "x";
  }
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("FreePort returns a usable port") {
  int port = FreePort();
  CHECK(port > 0);
  CHECK(port < 65536);
}

TEST_CASE("Process passes env, logs output and reports the exit status") {
  TempDir dir;
  std::string log = dir.path() + "/out.log";
  Process p({"sh", "-c", "echo out=$FOLIO_X; echo err >&2; exit 3"}, {"FOLIO_X=42"}, log);
  int status = p.Stop(0, 5000);  // signal 0: just wait
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  CHECK(ss.str() == "out=42\nerr\n");
}

TEST_CASE("Process::Stop signals the whole process group") {
  Process p({"sh", "-c", "sleep 30 & sleep 30; wait"});
  CHECK(p.Running());
  int status = p.Stop(SIGTERM, 5000);
  REQUIRE(status != -1);
  CHECK(WIFSIGNALED(status));
  CHECK(!p.Running());
}

TEST_CASE("WaitForHttp gives up on a closed port") {
  std::string url = "http://127.0.0.1:" + std::to_string(FreePort()) + "/";
  CHECK(!WaitForHttp(url, 200, 100));
}

TEST_CASE("NatsServer answers on its port") {
  NatsServer server;
  CHECK(server.url() == "nats://127.0.0.1:" + std::to_string(server.port()));
  server.Restart();
  CHECK(server.port() > 0);
}

}  // namespace folio::testing
