#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <span>
#include <thread>
#include <tuple>
#include <vector>

#include "api.h"
#include "damaged.h"
#include "folio/core/hash.h"
#include "folio/http/client.h"
#include "folio/journal/env.h"
#include "folio/testing/testing.h"

using namespace folio;

TEST_CASE("damaged blobs: known by key and version, reported once, bounded") {
  folio::storage::DamagedBlobs d(2);
  CHECK(d.Add("sha256/a", 1));
  CHECK(!d.Add("sha256/a", 1));  // reported once
  CHECK(d.Contains("sha256/a", 1));
  CHECK(!d.Contains("sha256/a", 2));  // a newer version is not damaged
  CHECK(d.Add("sha256/a", 2));
  CHECK(!d.Contains("sha256/a", 1));
  CHECK(d.Add("sha256/b", 1));
  CHECK(d.Add("sha256/c", 1));  // over capacity: the oldest goes
  CHECK(d.size() == 2);
  CHECK(!d.Contains("sha256/a", 2));
  CHECK(d.Contains("sha256/b", 1));
  CHECK(d.Contains("sha256/c", 1));
}

namespace {

// The real Env, whose file syncs fail once fail_sync is set: the journal then
// refuses writes for good, as after an fsync that failed on a real disk.
class FailSyncEnv final : public journal::Env {
 public:
  std::atomic<bool> fail_sync{false};

  Result<std::unique_ptr<journal::File>> OpenFile(const std::string& path, bool create) override {
    auto f = base_->OpenFile(path, create);
    if (!f.ok()) return f.status();
    return std::unique_ptr<journal::File>(new SyncFile(this, std::move(*f)));
  }
  Status ReadFile(const std::string& path, std::string* out) override { return base_->ReadFile(path, out); }
  Status CreateDir(const std::string& path) override { return base_->CreateDir(path); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return base_->ListDir(dir); }
  Status Remove(const std::string& path) override { return base_->Remove(path); }
  Status Rename(const std::string& from, const std::string& to) override { return base_->Rename(from, to); }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Result<std::unique_ptr<journal::DirLock>> LockFile(const std::string& path) override {
    return base_->LockFile(path);
  }

 private:
  class SyncFile final : public journal::File {
   public:
    SyncFile(FailSyncEnv* env, std::unique_ptr<journal::File> base)
        : File(base->path()), env_(env), base_(std::move(base)) {}
    Status WriteAt(uint64_t offset, std::span<const std::string_view> parts) override {
      return base_->WriteAt(offset, parts);
    }
    Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const override {
      return base_->ReadAt(offset, n, out, got);
    }
    Status Sync() override {
      if (env_->fail_sync) return Status::Unavailable("fdatasync '" + path() + "': Input/output error (injected)");
      return base_->Sync();
    }
    Status Truncate(uint64_t size) override { return base_->Truncate(size); }
    Result<uint64_t> Size() const override { return base_->Size(); }

   private:
    FailSyncEnv* env_;
    std::unique_ptr<journal::File> base_;
  };
  journal::Env* base_ = journal::DefaultEnv();
};

}  // namespace

TEST_CASE("api: after a failed fsync, writes are refused without the journal's detail (no paths)") {
  testing::TempDir dir;
  FailSyncEnv env;
  journal::Options jo;
  jo.env = &env;
  jo.background = false;
  auto j = journal::Journal::Open(dir.path() + "/journal", jo);
  REQUIRE(j.ok());
  http::Loop loop;
  ThreadPool io(2);  // destroyed before the loop its tasks post to
  static metrics::Registry registry;  // the API's metrics outlive the test (one registry per process)
  storage::ApiContext ctx{&loop, &io, j->get(), &registry, {}, nullptr, {Sha256Hex("w"), Sha256Hex("r")}};
  http::Router router;
  storage::MountApi(&router, &ctx);
  http::Server server(&loop, &router);
  REQUIRE(server.Listen("127.0.0.1", 0).ok());
  std::thread loop_thread([&] { loop.Run(); });
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    http::ClientRequest req;
    req.method = method;
    req.url = "http://127.0.0.1:" + std::to_string(server.port()) + path;
    req.body = body;
    req.headers.emplace_back("Authorization", "Bearer w");
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  };

  const std::string kept = "stored before the failure";
  CHECK(call("PUT", "/blobs/sha256/" + Sha256Hex(kept), kept).status == 201);
  env.fail_sync = true;
  const std::string lost = "its commit's fsync fails";
  const std::string message =
      "storage cannot write (a previous write or fsync failed); it must be restarted; nothing was kept";
  // The write that meets the failure, a later one (refused up front), a delete.
  for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"PUT", "/blobs/sha256/" + Sha256Hex(lost), lost},
           {"PUT", "/objects/backups/later.db", "later"},
           {"DELETE", "/blobs/sha256/" + Sha256Hex(kept), ""}}) {
    CAPTURE(method);
    CAPTURE(path);
    auto r = call(method, path, body);
    CHECK(r.status == 503);
    CHECK(r.body.find(message) != std::string::npos);
    CHECK(r.body.find(dir.path()) == std::string::npos);
    CHECK(r.body.find("injected") == std::string::npos);
  }
  CHECK(call("GET", "/blobs/sha256/" + Sha256Hex(kept)).body == kept);  // reads go on
  const std::string not_ready = storage::NotReadyReason(ctx);
  CHECK(not_ready.find("restart needed") != std::string::npos);
  CHECK(not_ready.find(dir.path()) == std::string::npos);

  loop.Stop();
  loop_thread.join();
}

TEST_CASE("api: uploads around the write chunk's size are stored whole") {
  // The last chunk of a body whose length is known waits for the body's end
  // and is appended and committed in one trip to the I/O pool; the chunks
  // before it are appended as they fill.
  testing::TempDir dir;
  journal::Options jo;
  jo.background = false;
  jo.block_bytes = 4096;
  auto j = journal::Journal::Open(dir.path() + "/journal", jo);
  REQUIRE(j.ok());
  http::Loop loop;
  ThreadPool io(2);
  static metrics::Registry registry;
  storage::ApiContext ctx{&loop, &io, j->get(), &registry, {}, nullptr, {Sha256Hex("w"), Sha256Hex("r")}};
  ctx.options.write_chunk_bytes = 5000;
  http::Router router;
  storage::MountApi(&router, &ctx);
  http::Server server(&loop, &router);
  REQUIRE(server.Listen("127.0.0.1", 0).ok());
  std::thread loop_thread([&] { loop.Run(); });
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    http::ClientRequest req;
    req.method = method;
    req.url = "http://127.0.0.1:" + std::to_string(server.port()) + path;
    req.body = body;
    req.headers.emplace_back("Authorization", "Bearer w");
    auto r = http::Fetch(req);
    return r.ok() ? *r : http::ClientResponse{};
  };
  for (size_t n : {size_t{1}, size_t{4999}, size_t{5000}, size_t{5001}, size_t{15000}, size_t{15007},
                   size_t{200000}}) {
    CAPTURE(n);
    std::string body(n, '\0');
    for (size_t i = 0; i < n; ++i) body[i] = static_cast<char>('a' + (i * 7 + n) % 26);
    const std::string path = "/blobs/sha256/" + Sha256Hex(body);
    REQUIRE(call("PUT", path, body).status == 201);
    auto got = call("GET", path);
    CHECK(got.status == 200);
    CHECK((got.body == body));
    auto named = call("PUT", "/objects/sizes/" + std::to_string(n), body);
    CHECK(named.status == 201);
    CHECK(named.body.find("\"size\":" + std::to_string(n)) != std::string::npos);
    CHECK((call("GET", "/objects/sizes/" + std::to_string(n)).body == body));
  }
  loop.Stop();
  loop_thread.join();
}
