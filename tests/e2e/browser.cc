#include "browser.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <simdjson.h>
#include <sstream>

#include "folio/core/hash.h"
#include "folio/core/json.h"

namespace folio::e2e {

struct Browser::Pending {
  PageResult* out = nullptr;
  bool loaded = false;
  bool crashed = false;
};

namespace {

using Clock = std::chrono::steady_clock;

std::string Str(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get_string().get(v) == simdjson::SUCCESS) return std::string(v);
  return "";
}

// A console argument as text: strings as-is, other values by description.
std::string ArgText(simdjson::dom::element arg) {
  std::string_view s;
  if (arg["value"].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  simdjson::dom::element v;
  if (arg["value"].get(v) == simdjson::SUCCESS) return simdjson::minify(v);
  if (arg["description"].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return Str(arg, "type");
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::vector<ConsoleEntry> PageResult::Errors() const {
  std::vector<ConsoleEntry> errors;
  for (const auto& m : messages) {
    if (m.level == "error") errors.push_back(m);
  }
  return errors;
}

std::string PageResult::Describe() const {
  std::string s = "status " + std::to_string(status) + ", final URL " + final_url + "\n";
  for (const auto& m : messages) {
    s += "  [" + m.level + "] " + m.source + ": " + m.text + (m.url.empty() ? "" : " (" + m.url + ")") + "\n";
  }
  for (const auto& d : dialogs) s += "  dialog: " + d + "\n";
  for (const auto& n : navigations) s += "  navigation after load: " + n + "\n";
  s += "  probe: " + probe + "\n";
  return s;
}

Browser::Browser(std::string chromium) {
  log_path_ = profile_.path() + "/chromium.log";
  if (access(chromium.c_str(), X_OK) != 0) {
    status_ = Status::Unavailable(chromium + " is missing or not executable (" + strerror(errno) +
                                  "). The e2e test needs Debian's chromium package: run scripts/install-deps.sh "
                                  "or apt-get install chromium fonts-dejavu-core.");
    return;
  }
  // A write to a pipe Chromium has closed must fail with EPIPE, not kill the test.
  signal(SIGPIPE, SIG_IGN);
  int cmd[2], evt[2];  // cmd: we write, Chromium reads (its fd 3); evt: the reverse (its fd 4)
  if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(evt, O_CLOEXEC) != 0) {
    status_ = Status::Internal(std::string("pipe: ") + strerror(errno));
    return;
  }
  std::vector<std::string> args{
      chromium,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      // No network on CI machines: without these Chromium tries Google hosts
      // (QUIC, component updates, sync, field trials) and logs failures.
      "--disable-quic",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--password-store=basic",
      "--hide-scrollbars",
      "--mute-audio",
      "--user-data-dir=" + profile_.path() + "/profile",
      "--remote-debugging-pipe",
      "about:blank",
  };
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0) {
    status_ = Status::Internal(std::string("fork: ") + strerror(errno));
    return;
  }
  if (pid_ == 0) {
    // Child: own process group (so the destructor can end Chromium's helper
    // processes too), log to a file, pipes on fds 3 and 4.
    setpgid(0, 0);
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int in = fcntl(cmd[0], F_DUPFD, 10), out = fcntl(evt[1], F_DUPFD, 10);
    if (log < 0 || in < 0 || out < 0) _exit(127);
    dup2(log, 1);
    dup2(log, 2);
    dup2(in, 3);  // dup2 clears FD_CLOEXEC on the new descriptor
    dup2(out, 4);
    close_range(5, ~0U, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(cmd[0]);
  close(evt[1]);
  to_chrome_ = cmd[1];
  from_chrome_ = evt[0];

  std::string result;
  // The browser's first target can take long on a loaded CI machine.
  Status s = Call("Target.createTarget", R"({"url":"about:blank"})", &result, false, 60000);
  if (!s.ok()) {
    status_ = s;
    return;
  }
  simdjson::dom::parser parser;
  simdjson::padded_string doc(result);
  std::string target = Str(parser.parse(doc).value_unsafe(), "targetId");
  JsonWriter w;
  w.BeginObject().Key("targetId").String(target).Key("flatten").Bool(true).EndObject();
  s = Call("Target.attachToTarget", w.str(), &result, false);
  if (!s.ok()) {
    status_ = s;
    return;
  }
  simdjson::padded_string doc2(result);
  session_ = Str(parser.parse(doc2).value_unsafe(), "sessionId");
  target_ = target;
  for (const char* m : {"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"}) {
    s = Call(m, "{}");
    if (!s.ok()) {
      status_ = s;
      return;
    }
  }
}

Browser::~Browser() {
  if (pid_ > 0) {
    if (to_chrome_ >= 0) {
      WriteAll(to_chrome_, "{\"id\":" + std::to_string(next_id_++) + ",\"method\":\"Browser.close\"}" + '\0');
    }
    int st;
    auto deadline = Clock::now() + std::chrono::seconds(5);
    pid_t r = 0;
    while ((r = waitpid(pid_, &st, WNOHANG)) == 0 && Clock::now() < deadline) usleep(20000);
    // Whatever is left of the group Chromium was started in (renderers,
    // zygotes) goes too; the group id is the pid of the process we started.
    kill(-pid_, SIGKILL);
    if (r == 0) waitpid(pid_, &st, 0);
  }
  if (to_chrome_ >= 0) close(to_chrome_);
  if (from_chrome_ >= 0) close(from_chrome_);
}

std::string Browser::Log() const {
  std::ifstream in(log_path_);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("dbus") != std::string::npos || line.find("D-Bus") != std::string::npos) continue;
    out += line + "\n";
  }
  return out;
}

Status Browser::Failed(const std::string& what) const {
  std::string log = Log();
  if (log.size() > 4000) log = "..." + log.substr(log.size() - 4000);
  return Status::Internal(what + "\n--- chromium log:\n" + log);
}

Status Browser::Call(const std::string& method, const std::string& params_json, std::string* result,
                     bool in_session, int timeout_ms) {
  if (to_chrome_ < 0) return Failed("chromium is not running");
  int64_t id = next_id_++;
  std::string msg = "{\"id\":" + std::to_string(id) + ",\"method\":\"" + method + "\",\"params\":" + params_json;
  if (in_session) msg += ",\"sessionId\":\"" + session_ + "\"";
  msg += "}";
  msg += '\0';
  if (!WriteAll(to_chrome_, msg)) return Failed("writing to chromium: " + std::string(strerror(errno)));
  reply_id_ = id;
  reply_seen_ = false;
  reply_.clear();
  reply_error_.clear();
  Status s = Pump(timeout_ms, [this] { return reply_seen_; });
  reply_id_ = 0;
  if (!s.ok()) return Failed(method + ": " + s.message());
  if (!reply_error_.empty()) return Failed(method + " failed: " + reply_error_);
  if (result) *result = reply_;
  return Status::Ok();
}

Status Browser::Pump(int timeout_ms, const std::function<bool()>& done) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[65536];
  while (!done()) {
    size_t nul;
    while ((nul = inbuf_.find('\0')) != std::string::npos) {
      std::string message = inbuf_.substr(0, nul);
      inbuf_.erase(0, nul + 1);
      Dispatch(message);
      if (done()) return Status::Ok();
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status::Unavailable("timed out after " + std::to_string(timeout_ms) + " ms");
    pollfd p{from_chrome_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(from_chrome_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable("chromium closed the DevTools pipe (exited or crashed)");
    inbuf_.append(buf, static_cast<size_t>(n));
  }
  return Status::Ok();
}

void Browser::Dispatch(std::string_view message) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(message);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return;
  int64_t id;
  if (doc["id"].get_int64().get(id) == simdjson::SUCCESS) {
    if (id != reply_id_) return;  // a reply nobody waits for (Page.handleJavaScriptDialog)
    reply_seen_ = true;
    simdjson::dom::element e;
    if (doc["error"].get(e) == simdjson::SUCCESS) reply_error_ = simdjson::minify(e);
    if (doc["result"].get(e) == simdjson::SUCCESS) reply_ = simdjson::minify(e);
    return;
  }
  std::string method = Str(doc, "method");
  simdjson::dom::element params;
  if (doc["params"].get(params) != simdjson::SUCCESS) return;

  if (method == "Page.javascriptDialogOpening") {
    // Dismiss at once, or the page would block forever. Fire and forget.
    std::string cmd = "{\"id\":" + std::to_string(next_id_++) +
                      ",\"method\":\"Page.handleJavaScriptDialog\",\"params\":{\"accept\":false},\"sessionId\":\"" +
                      session_ + "\"}";
    cmd += '\0';
    WriteAll(to_chrome_, cmd);
    if (pending_) pending_->out->dialogs.push_back(Str(params, "type") + ": " + Str(params, "message"));
    return;
  }
  if (!pending_) return;  // between loads: nobody is looking
  PageResult* out = pending_->out;

  if (method == "Runtime.consoleAPICalled") {
    ConsoleEntry e;
    std::string type = Str(params, "type");
    e.source = "console." + type;
    e.level = (type == "error" || type == "assert") ? "error" : type == "warning" ? "warning" : "info";
    simdjson::dom::array args;
    if (params["args"].get_array().get(args) == simdjson::SUCCESS) {
      for (auto a : args) e.text += (e.text.empty() ? "" : " ") + ArgText(a);
    }
    simdjson::dom::array frames;
    if (params["stackTrace"]["callFrames"].get_array().get(frames) == simdjson::SUCCESS && frames.size() > 0) {
      e.url = Str(frames.at(0).value_unsafe(), "url");
    }
    out->messages.push_back(std::move(e));
  } else if (method == "Runtime.exceptionThrown") {
    simdjson::dom::element d;
    if (params["exceptionDetails"].get(d) != simdjson::SUCCESS) return;
    ConsoleEntry e{"exception", "error", Str(d, "text"), Str(d, "url")};
    simdjson::dom::element ex;
    if (d["exception"].get(ex) == simdjson::SUCCESS) e.text += " " + Str(ex, "description");
    out->messages.push_back(std::move(e));
  } else if (method == "Log.entryAdded") {
    simdjson::dom::element en;
    if (params["entry"].get(en) != simdjson::SUCCESS) return;
    out->messages.push_back({"log." + Str(en, "source"), Str(en, "level"), Str(en, "text"), Str(en, "url")});
  } else if (method == "Network.responseReceived") {
    // The main document: type Document in the tab's own (top) frame.
    if (Str(params, "type") == "Document" && Str(params, "frameId") == target_) {
      int64_t st;
      if (params["response"]["status"].get_int64().get(st) == simdjson::SUCCESS) out->status = static_cast<int>(st);
    }
  } else if (method == "Page.loadEventFired") {
    pending_->loaded = true;
  } else if (method == "Page.frameRequestedNavigation" || method == "Page.frameScheduledNavigation") {
    // Renderer-initiated navigations (meta refresh, location=..., form
    // submission): never legitimate on a static page.
    if (Str(params, "frameId") == target_) {
      out->navigations.push_back(method.substr(5) + " " + Str(params, "reason") + " " + Str(params, "url"));
    }
  } else if (method == "Page.frameNavigated") {
    simdjson::dom::element f;
    if (pending_->loaded && params["frame"].get(f) == simdjson::SUCCESS && Str(f, "id") == target_) {
      out->navigations.push_back("frameNavigated " + Str(f, "url"));
    }
  } else if (method == "Inspector.targetCrashed" || method == "Inspector.detached") {
    pending_->crashed = true;
    out->messages.push_back({"inspector", "error", method, ""});
  }
}

Status Browser::Load(const Visit& v, PageResult* out) {
  if (!status_.ok()) return status_;
  *out = PageResult{};
  JsonWriter metrics;
  metrics.BeginObject()
      .Key("width").Int(v.width)
      .Key("height").Int(v.height)
      .Key("deviceScaleFactor").Double(v.scale)
      .Key("mobile").Bool(v.mobile)
      .EndObject();
  Status s = Call("Emulation.setDeviceMetricsOverride", metrics.str());
  if (!s.ok()) return s;
  JsonWriter media;
  media.BeginObject().Key("features").BeginArray().BeginObject()
      .Key("name").String("prefers-color-scheme")
      .Key("value").String(v.dark ? "dark" : "light")
      .EndObject().EndArray().EndObject();
  s = Call("Emulation.setEmulatedMedia", media.str());
  if (!s.ok()) return s;

  Pending pending;
  pending.out = out;
  pending_ = &pending;
  struct Reset {
    Pending** p;
    ~Reset() { *p = nullptr; }
  } reset{&pending_};

  JsonWriter nav;
  nav.BeginObject().Key("url").String(v.url).EndObject();
  std::string result;
  s = Call("Page.navigate", nav.str(), &result);
  if (!s.ok()) return s;
  simdjson::dom::parser parser;
  {
    simdjson::padded_string doc(result);
    std::string error_text = Str(parser.parse(doc).value_unsafe(), "errorText");
    if (!error_text.empty()) return Failed("navigating to " + v.url + ": " + error_text);
  }
  s = Pump(15000, [&] { return pending.loaded || pending.crashed; });
  if (!s.ok()) return Failed("waiting for the load event of " + v.url + ": " + s.message());
  if (pending.crashed) return Failed("the tab crashed or detached while loading " + v.url);
  // Settle: what comes after the load event still counts (favicon request,
  // meta refresh, timers, late console messages). A timeout is the point.
  s = Pump(v.settle_ms, [] { return false; });
  if (s.message().find("closed") != std::string::npos) return Failed(s.message());

  auto eval = [&](const std::string& expr, std::string* value) -> Status {
    JsonWriter w;
    w.BeginObject().Key("expression").String(expr).Key("returnByValue").Bool(true).EndObject();
    std::string r;
    Status st = Call("Runtime.evaluate", w.str(), &r);
    if (!st.ok()) return st;
    simdjson::padded_string doc(r);
    simdjson::dom::element e = parser.parse(doc).value_unsafe();
    simdjson::dom::element ex;
    if (e["exceptionDetails"].get(ex) == simdjson::SUCCESS) {
      return Failed("evaluating `" + expr + "` threw: " + simdjson::minify(ex));
    }
    *value = ArgText(e["result"].value_unsafe());
    return Status::Ok();
  };
  s = eval("location.href", &out->final_url);
  if (!s.ok()) return s;
  if (!v.probe.empty()) {
    s = eval(v.probe, &out->probe);
    if (!s.ok()) return s;
  }
  if (!v.screenshot.empty()) {
    s = Call("Page.captureScreenshot", R"({"format":"png"})", &result);
    if (!s.ok()) return s;
    simdjson::padded_string doc(result);
    std::string b64 = Str(parser.parse(doc).value_unsafe(), "data");
    std::string png;
    if (b64.empty() || !Base64Decode(b64, &png)) return Failed("Page.captureScreenshot returned no PNG data");
    std::ofstream f(v.screenshot, std::ios::binary | std::ios::trunc);
    f.write(png.data(), static_cast<std::streamsize>(png.size()));
    if (!f) return Status::Internal("cannot write " + v.screenshot);
  }
  return Status::Ok();
}

}  // namespace folio::e2e
