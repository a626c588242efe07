#include "watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>
#include <string>
#include <system_error>
#include <utility>

#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "index.h"
#include "wire.h"

namespace folio::cli {
namespace {

namespace fs = std::filesystem;

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int) {
  int saved = errno;
  char c = 1;
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
  errno = saved;
}

int64_t NowMs() { return MonotonicUs() / 1000; }

// Directories a push walks: not dot-named (vault.cc), except the settings folder.
bool Watched(std::string_view name) { return !name.empty() && (name.front() != '.' || name == ".obsidian"); }

// More files than this in one burst: a walk is as cheap as reading them one by one.
constexpr size_t kMaxQuickPaths = 64;

constexpr uint32_t kDirMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                              IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

// One inotify descriptor and a watch per vault directory.
class TreeWatch {
 public:
  ~TreeWatch() {
    if (fd_ >= 0) close(fd_);
  }

  Status Open(const fs::path& root) {
    root_ = root;
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) return Status::Internal(std::string("inotify_init1: ") + std::strerror(errno));
    return AddTree(root_);
  }

  int fd() const { return fd_; }

  // The files named by events since the last call, or false when only a
  // walk of the whole vault covers what changed; resets both.
  bool TakeChanges(std::set<std::string>* out) {
    bool named = !needs_walk_;
    *out = std::move(changed_);
    changed_.clear();
    needs_walk_ = false;
    return named;
  }

  // Watches `dir` and every walked directory under it (already watched
  // ones keep their watch: inotify returns the same descriptor).
  Status AddTree(const fs::path& dir) {
    int wd = inotify_add_watch(fd_, dir.c_str(), kDirMask);
    if (wd < 0) {
      if (dir == root_) return Status::Unavailable(dir.string() + ": cannot watch: " + std::strerror(errno));
      return Status::Ok();  // gone already, or a file: its parent's events cover it
    }
    dirs_[wd] = dir;
    if (dir.filename() == ".obsidian") return Status::Ok();  // app.json only
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      std::error_code tec;
      if (Watched(name) && it->is_directory(tec) && !it->is_symlink(tec)) (void)AddTree(it->path());
    }
    return Status::Ok();
  }

  // Reads the queued events; returns whether any concerns the vault. Sets
  // *root_gone when the root was deleted or moved away.
  bool Drain(bool* root_gone) {
    alignas(inotify_event) char buf[64 * 1024];
    bool relevant = false;
    for (;;) {
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (char* p = buf; p < buf + n;) {
        auto* ev = reinterpret_cast<inotify_event*>(p);
        p += sizeof(inotify_event) + ev->len;
        relevant |= Handle(*ev, root_gone);
      }
    }
    return relevant;
  }

 private:
  bool Handle(const inotify_event& ev, bool* root_gone) {
    if (ev.mask & IN_Q_OVERFLOW) {  // events were lost: watch every folder again, push compares all
      (void)AddTree(root_);
      needs_walk_ = true;
      return true;
    }
    auto it = dirs_.find(ev.wd);
    if (it == dirs_.end()) return false;
    if (ev.mask & IN_IGNORED) {  // the folder went away; its parent's event carries the change
      dirs_.erase(it);
      return false;
    }
    if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
      if (it->second == root_) *root_gone = true;
      needs_walk_ = true;
      return true;
    }
    std::string_view name = ev.len > 0 ? std::string_view(ev.name) : std::string_view();
    bool in_settings = it->second.filename() == ".obsidian";
    if (in_settings) {
      if (name == "app.json") needs_walk_ = true;
      return name == "app.json";
    }
    if (!Watched(name)) return false;  // dot files: editors' swap files, the index in .folio
    if (ev.mask & IN_ISDIR) {
      if (ev.mask & (IN_CREATE | IN_MOVED_TO)) (void)AddTree(it->second / name);
      needs_walk_ = true;  // a folder's files came or went
      return true;
    }
    if (changed_.size() >= kMaxQuickPaths) {
      needs_walk_ = true;
    } else {
      changed_.insert(it->second.lexically_relative(root_).generic_string() == "."
                          ? std::string(name)
                          : (it->second.lexically_relative(root_) / name).generic_string());
    }
    return true;
  }

  int fd_ = -1;
  fs::path root_;
  std::set<std::string> changed_;  // vault-relative files named by events since the last TakeChanges
  bool needs_walk_ = true;         // a change the named files do not cover (folders, overflow, settings)
  std::map<int, fs::path> dirs_;  // watch descriptor -> directory
};

class Watcher {
 public:
  explicit Watcher(const WatchOptions& options) : options_(options), push_(options.push) {
    push_.run = &run_;
    push_.server.retry_for_ms = 0;  // we retry, showing the state
    push_.progress = false;
  }

  int Run() {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return Fatal(std::strerror(errno));
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    if (Status st = tree_.Open(push_.dir); !st.ok()) return Fatal(st.message());
    due_ms_ = NowMs();  // the initial push
    for (;;) {
      int timeout = due_ms_ < 0 ? -1 : static_cast<int>(std::clamp<int64_t>(due_ms_ - NowMs(), 0, 60'000));
      pollfd fds[2] = {{tree_.fd(), POLLIN, 0}, {g_signal_pipe[0], POLLIN, 0}};
      int n = poll(fds, 2, timeout);
      if (n < 0 && errno != EINTR) return Fatal(std::string("poll: ") + std::strerror(errno));
      if (fds[1].revents & POLLIN) return 0;
      bool root_gone = false;
      if ((fds[0].revents & POLLIN) && tree_.Drain(&root_gone)) OnChange();
      if (root_gone || !fs::is_directory(push_.dir)) {
        return Fatal(push_.dir.string() + " was deleted or moved; stopped watching");
      }
      if (due_ms_ >= 0 && NowMs() >= due_ms_) {
        Push();
        if (Signalled()) return 0;
        if (stop_ >= 0) return stop_;
      }
    }
  }

 private:
  void OnChange() {
    int64_t now = NowMs();
    if (burst_start_ms_ < 0) burst_start_ms_ = now;
    if (backoff_ms_ > 0) return;  // the next retry sends it
    due_ms_ = std::min(now + options_.debounce_ms, burst_start_ms_ + options_.max_wait_ms);
  }

  void Push() {
    burst_start_ms_ = -1;
    due_ms_ = -1;
    std::set<std::string> changed;
    bool named = tree_.TakeChanges(&changed);
    int64_t start = NowMs();
    int code = kExitFailed;
    if (named && backoff_ms_ == 0 && !server_.empty() && QuickPush(changed, &code)) {
      // done: only the named files were read
    } else {
      run_ = PushRun();  // RunPush sets the size limits the quick pushes use
      code = RunPush(push_);
      if (code != kExitFailed) LoadServerState();
    }
    int64_t took = NowMs() - start;
    if (code == kExitFailed && run_.needs_author) {
      // A refused token, a server that is not folio, the delete guard:
      // retrying would only repeat it.
      stop_ = Fatal(run_.error + "; stopped watching");
      return;
    }
    if (code == kExitFailed) return Retry(run_.error);
    backoff_ms_ = 0;
    int64_t changes = run_.added + run_.modified + run_.removed;
    if (changes > 0 || run_.totals.strict_line_breaks_now) PrintPush(took);
    if (!announced_) {
      announced_ = true;
      if (options_.push.json) {
        std::string line = "{\"event\":\"watching\",\"dir\":";
        AppendJsonString(push_.dir.string(), &line);
        Print(line + "}");
      } else {
        Print("folio: watching " + push_.dir.string() + " (Ctrl-C stops)");
      }
    }
  }

  // What the server holds, as the index written by the last full push says.
  void LoadServerState() {
    server_.clear();
    Result<Index> index = ReadIndex(push_.dir);
    if (!index.ok()) return;  // every burst then takes the full path
    for (IndexEntry& e : index->entries) {
      if (!e.server_sha256.empty()) server_.emplace(std::move(e.path), std::move(e.server_sha256));
    }
    server_.emplace("", "");  // known, even when empty
  }

  // Pushes just the files events named: each is read (or found gone) and
  // sent when its hash differs from the server's; a deletion is sent for a
  // gone file the server holds. Returns false, having sent nothing, when
  // one of them needs the walk's rules (a link, a file over the limit, bad
  // UTF-8, a bad path): the full push then reports it. The index on disk
  // is left as it is: the next full push hashes these files again and its
  // manifest delta covers what this push wrote.
  bool QuickPush(const std::set<std::string>& changed, int* code) {
    std::vector<OutgoingNote> notes;
    std::vector<OutgoingAttachment> attachments;
    std::vector<std::string> deletes;
    std::vector<std::pair<std::string, std::string>> hashes;  // site path -> sent hash
    int64_t added = 0, modified = 0;
    for (const std::string& rel : changed) {
      bool note = EndsWith(rel, ".md"), attachment = !note && IsAttachmentPath(rel);
      if (!note && !attachment) continue;
      if (!CheckVaultPath(rel).ok()) return false;
      std::string site = push_.scope + rel;
      auto held = server_.find(site);
      struct stat sb;
      if (::lstat((push_.dir / rel).c_str(), &sb) != 0) {
        if (errno != ENOENT) return false;
        if (held != server_.end()) deletes.push_back(site);
        continue;
      }
      if (!S_ISREG(sb.st_mode)) return false;
      Result<std::string> data = note ? ReadNote(push_.dir, rel, run_.max_note_bytes)
                                      : ReadAttachment(push_.dir, rel, run_.max_attachment_bytes);
      if (!data.ok()) return false;
      std::string sha = Sha256Hex(*data);
      if (held != server_.end() && held->second == sha) continue;
      ++(held == server_.end() ? added : modified);
      hashes.emplace_back(site, sha);
      if (note) notes.push_back({site, std::move(data).value()});
      else attachments.push_back({site, Base64Encode(*data)});
    }
    if (push_.no_delete) deletes.clear();
    // The delete guard of `folio push` (push.h): the full push applies it and says why.
    size_t note_deletes = static_cast<size_t>(
        std::count_if(deletes.begin(), deletes.end(), [](const std::string& d) { return EndsWith(d, ".md"); }));
    size_t notes_held = static_cast<size_t>(std::count_if(
        server_.begin(), server_.end(), [](const auto& e) { return EndsWith(e.first, ".md"); }));
    if (!push_.yes && note_deletes > push_.delete_confirm_above && note_deletes * 4 > notes_held) return false;
    run_.added = added;
    run_.modified = modified;
    run_.removed = static_cast<int64_t>(deletes.size());
    run_.warnings.clear();
    run_.totals = PushTotals();
    run_.needs_author = false;
    *code = kExitOk;
    if (notes.empty() && attachments.empty() && deletes.empty()) return true;
    Result<PushReply> reply = SendPush(push_.server, BuildPushBody(notes, attachments, deletes));
    if (!reply.ok()) {
      run_.error = reply.status().message();
      const Code c = reply.status().code();
      run_.needs_author = c == Code::kUnauthenticated || c == Code::kPermissionDenied || c == Code::kNotFound;
      *code = kExitFailed;
      server_.clear();  // the retry walks
      return true;
    }
    run_.totals.version = reply->version;
    run_.totals.sent = reply->received;  // notes and attachments, for the "received" count
    for (const NoteReport& n : reply->notes) {
      for (const std::string& w : DistinctWarnings(n)) {
        std::fprintf(stderr, "warning: %s: %s\n", n.path.c_str(), w.c_str());
        if (run_.warnings.size() < 3) run_.warnings.push_back(n.path + ": " + w);
      }
    }
    for (auto& [path, sha] : hashes) server_[path] = std::move(sha);
    for (const std::string& d : deletes) server_.erase(d);
    return true;
  }

  void PrintPush(int64_t took) {
    if (options_.push.json) {
      std::string line = "{\"event\":\"push\",\"added\":" + std::to_string(run_.added) +
                         ",\"modified\":" + std::to_string(run_.modified) + ",\"deleted\":" +
                         std::to_string(run_.removed) + ",\"ms\":" + std::to_string(took) +
                         ",\"received\":" + std::to_string(run_.totals.sent + run_.totals.attachments_sent) +
                         ",\"version\":" + std::to_string(run_.totals.version) + ",\"warnings\":[";
      for (size_t i = 0; i < run_.warnings.size(); ++i) {
        if (i > 0) line += ',';
        AppendJsonString(run_.warnings[i], &line);
      }
      return Print(line + "]}");
    }
    std::string line = "folio: pushed +" + std::to_string(run_.added) + " ~" + std::to_string(run_.modified) +
                       " -" + std::to_string(run_.removed) + " (" + std::to_string(took) + " ms)";
    for (const std::string& w : run_.warnings) line += "; " + w;
    Print(line);
  }

  void Retry(const std::string& message) {
    backoff_ms_ = backoff_ms_ == 0 ? 1000 : std::min(backoff_ms_ * 2, options_.max_backoff_ms);
    due_ms_ = NowMs() + backoff_ms_;
    if (options_.push.json) {
      std::string line = "{\"event\":\"retry\",\"message\":";
      AppendJsonString(message, &line);
      return Print(line + ",\"in_ms\":" + std::to_string(backoff_ms_) + "}");
    }
    std::fprintf(stderr, "folio: push failed: %s; retrying in %lld s\n", message.c_str(),
                 static_cast<long long>((backoff_ms_ + 999) / 1000));
  }

  int Fatal(const std::string& message) {
    if (options_.push.json) {
      std::string line = "{\"event\":\"error\",\"message\":";
      AppendJsonString(message, &line);
      Print(line + "}");
    }
    std::fprintf(stderr, "folio: %s\n", message.c_str());
    return kExitFailed;
  }

  static void Print(const std::string& line) {
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
  }

  static bool Signalled() {
    pollfd p = {g_signal_pipe[0], POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }

  const WatchOptions& options_;
  PushOptions push_;
  PushRun run_;
  TreeWatch tree_;
  // Site path -> hash the server holds, for pushes of just the named files;
  // empty: unknown (the next push walks).
  std::unordered_map<std::string, std::string> server_;
  int64_t due_ms_ = -1;          // when to push next (loop time, ms); -1: nothing pending
  int64_t burst_start_ms_ = -1;  // first event not yet pushed; -1: none
  int64_t backoff_ms_ = 0;       // current retry interval; 0: last push succeeded
  int stop_ = -1;                // >= 0: the exit code the watch stops with
  bool announced_ = false;
};

}  // namespace

int RunWatch(const WatchOptions& options) { return Watcher(options).Run(); }

}  // namespace folio::cli
