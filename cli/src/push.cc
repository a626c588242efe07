#include "push.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "folio/core/hash.h"
#include "folio/core/secret.h"
#include "folio/core/time.h"
#include "folio/core/text.h"
#include "index.h"
#include "prefix.h"
#include "report.h"
#include "settings.h"
#include "sync.h"
#include "wire.h"

namespace folio::cli {
namespace {

void Warn(std::string_view path, std::string_view reason) {
  std::fprintf(stderr, "warning: %.*s: %.*s\n", static_cast<int>(path.size()), path.data(),
               static_cast<int>(reason.size()), reason.data());
}

constexpr int64_t kCommitTimeoutMs = 30 * 60 * 1000;

// Where a push's time went (--timings): each Mark ends the phase named.
class PhaseClock {
 public:
  void Mark(const char* phase) {
    int64_t now = MonotonicUs();
    line_ += ' ';
    line_ += phase;
    line_ += '=' + FormatMs(now - last_us_);
    last_us_ = now;
  }
  void Print(int64_t start_us) const {
    std::fprintf(stderr, "folio: timings%s total=%s\n", line_.c_str(), FormatMs(MonotonicUs() - start_us).c_str());
  }

 private:
  static std::string FormatMs(int64_t us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(us) / 1000);
    return buf;
  }
  int64_t last_us_ = MonotonicUs();
  std::string line_;
};

class Pusher {
 public:
  explicit Pusher(const PushOptions& options)
      : options_(options), start_us_(MonotonicUs()), bar_(stderr, options.progress) {}

  // A failure a retry cannot mend (PushRun::needs_author).
  int FailForAuthor(const std::string& message) {
    if (options_.run != nullptr) options_.run->needs_author = true;
    return Fail(message);
  }
  int Fail(const Status& s, const std::string& more = "") {
    const bool author = s.code() == Code::kUnauthenticated || s.code() == Code::kPermissionDenied ||
                        s.code() == Code::kNotFound;
    return author ? FailForAuthor(s.message() + more) : Fail(s.message() + more);
  }
  int Fail(const std::string& message) {
    if (options_.run != nullptr) {
      options_.run->error = message;
    } else {
      std::fprintf(stderr, "folio: %s\n", message.c_str());
    }
    return kExitFailed;
  }

  int Run() {
    std::error_code ec;
    if (!std::filesystem::is_directory(options_.dir, ec)) {
      return Fail(options_.dir.string() + ": no such directory");
    }
    std::string settings_warning;
    settings_ = ApplySettingsFlags(ReadVaultSettings(options_.dir, &settings_warning), options_.strict_line_breaks);
    if (!settings_warning.empty()) Warn(kObsidianAppJson, settings_warning);
    // The manifest first: a wrong server or token fails before a long walk.
    const Index* index = LoadIndex();
    clock_.Mark("index_read");
    Result<ServerView> view = LoadServerView(index, options_.server.url, options_.full, [this](int64_t since) {
      return FetchManifest(options_.server, since);
    });
    if (!view.ok()) return Fail(view.status());
    if (!view->note.empty()) std::fprintf(stderr, "folio: %s\n", view->note.c_str());
    view_ = std::move(view).value();
    clock_.Mark("manifest");
    totals_.manifest_delta = view_.from_delta;
    const Manifest* manifest = &view_.manifest;
    max_note_bytes_ = Limit("--max-note-bytes", options_.max_note_bytes, manifest->max_note_bytes,
                            kDefaultMaxNoteBytes);
    max_attachment_bytes_ = Limit("--max-attachment-bytes", options_.max_attachment_bytes,
                                  manifest->max_attachment_bytes, kMaxAttachmentBytes);
    if (options_.run != nullptr) {
      options_.run->max_note_bytes = max_note_bytes_;
      options_.run->max_attachment_bytes = max_attachment_bytes_;
    }
    WalkOptions walk;
    walk.max_note_bytes = max_note_bytes_;
    walk.max_attachment_bytes = max_attachment_bytes_;
    StatCache cache = index != nullptr && !options_.full ? StatCache(*index, options_.scope) : StatCache();
    walk.cache = &cache;
    walked_ns_ = WallClockNs();
    Result<Vault> vault = WalkVault(options_.dir, walk);
    if (!vault.ok()) return Fail(vault.status().message());
    vault_ = std::move(vault).value();
    AddScope(options_.scope, &vault_);  // from here on, paths are the site's
    clock_.Mark("walk");
    Vault* const local = &vault_;
    totals_.files = static_cast<int64_t>(local->notes.size() + local->attachments.size());
    totals_.hashed = static_cast<int64_t>(local->hashed);
    synced_version_ = manifest->version;
    for (const SkippedFile& s : local->skipped) {
      Note(s.path, s.reason);
      if (!s.is_error) continue;
      ++totals_.skipped;
      if (IsAttachmentPath(s.path)) ++totals_.attachments_skipped;
    }
    plan_ = Diff(*local, *manifest, options_.scope);
    if (options_.no_delete) plan_.to_delete.clear();
    batches_ = PlanBatches(plan_, options_.limits);
    clock_.Mark("diff");
    totals_.unchanged = static_cast<int64_t>(plan_.notes.unchanged);
    totals_.attachments_unchanged = static_cast<int64_t>(plan_.attachments.unchanged);
    totals_.version = manifest->version;
    if (options_.dry_run) return DryRun();
    if (local->notes.empty() && !plan_.to_delete.empty() && !options_.allow_delete_all) {
      size_t attachments = static_cast<size_t>(
          std::count_if(plan_.to_delete.begin(), plan_.to_delete.end(),
                        [](const std::string& p) { return IsAttachmentPath(p); }));
      std::string what = std::to_string(plan_.to_delete.size() - attachments) + " notes";
      if (attachments > 0) what += " and " + std::to_string(attachments) + " attachments";
      return FailForAuthor(options_.dir.string() + " has no notes; refusing to delete all " + what + Where() +
                  " (pass --allow-delete-all to do that)");
    }
    // The guard counts the notes the push may delete: the scope's.
    size_t notes_deleted = NotesToDelete(), notes_held = CountInScope(manifest->notes, options_.scope);
    if (!options_.yes && notes_deleted > options_.delete_confirm_above && notes_deleted * 4 > notes_held) {
      std::string held = options_.scope.empty() ? "the server's " + std::to_string(notes_held) + " notes"
                                                : "the " + std::to_string(notes_held) + " notes" + Where();
      return FailForAuthor("this push would delete " + std::to_string(notes_deleted) + " of " + held +
                  "; see them with --dry-run, then pass --yes to go ahead (or --no-delete to only send)");
    }
    return Send();
  }

 private:
  // " on the server", or " under 'P/' on the server" with --prefix.
  std::string Where() const {
    return options_.scope.empty() ? " on the server" : " under '" + options_.scope + "' on the server";
  }

  // The vault's settings differ from the site's (as its manifest says;
  // servers that do not say: assumed to differ).
  bool SettingsChange() const {
    const std::optional<bool>& site = view_.manifest.strict_line_breaks;
    return settings_.strict_line_breaks && (!site || *site != *settings_.strict_line_breaks);
  }

  size_t NotesToDelete() const {
    return static_cast<size_t>(std::count_if(plan_.to_delete.begin(), plan_.to_delete.end(),
                                             [](const std::string& p) { return !IsAttachmentPath(p); }));
  }

  // Lines in sending order: attachments, notes, deletions.
  int DryRun() {
    const FileChanges& atts = plan_.attachments;
    for (size_t i = 0; i < atts.to_send.size(); ++i) {
      std::printf("%s\n", DryRunAttachmentLine(atts.to_send[i], atts.is_new[i]).c_str());
    }
    const FileChanges& notes = plan_.notes;
    for (size_t i = 0; i < notes.to_send.size(); ++i) {
      std::printf("%s\n", DryRunSendLine(notes.to_send[i], notes.is_new[i]).c_str());
    }
    for (const std::string& d : plan_.to_delete) std::printf("%s\n", DryRunDeleteLine(d).c_str());
    if (size_t n = NotesToDelete(); n > 0) {
      std::string where = options_.scope.empty() ? "" : " (under '" + options_.scope + "')";
      std::printf("folio: this push would DELETE %zu %s from the server%s%s\n", n, n == 1 ? "note" : "notes",
                  where.c_str(), options_.no_delete ? "" : " (--no-delete keeps them)");
    }
    if (SettingsChange()) {
      std::printf("would turn strict line breaks %s (every note page re-renders)\n",
                  *settings_.strict_line_breaks ? "on" : "off");
    }
    std::string summary = DryRunSummaryLine(plan_, batches_.size(), totals_.version, totals_.skipped,
                                            totals_.attachments_skipped);
    std::printf("%s\n", summary.c_str());
    return totals_.skipped > 0 ? kExitSkipped : kExitOk;
  }

  // More than one batch: staged (each batch stored by the server, then one
  // commit applies them as one push that renders each page once).
  int Send() {
    for (const FileChanges* c : {&plan_.attachments, &plan_.notes}) {
      total_files_ += c->to_send.size();
      for (const LocalFile& f : c->to_send) total_bytes_ += f.size;
    }
    if (batches_.size() > 1) {
      Result<std::string> stage = RandomHex(16);
      if (!stage.ok()) return Fail(stage.status().message());
      stage_ = *stage;
    }
    bar_.Update(0, total_files_, 0, total_bytes_);
    for (size_t i = 0; i < batches_.size(); ++i) {
      Status st = SendBatch(batches_[i], i);
      if (!st.ok()) {
        Report();
        std::string msg = st.message();
        if (!stage_.empty()) {
          msg += " (" + std::to_string(staged_) + " of " + std::to_string(batches_.size()) +
                 " batches were staged and nothing was applied; run push again)";
        } else if (i > 0) {
          msg += " (" + std::to_string(i) + " of " + std::to_string(batches_.size()) +
                 " batches were pushed; run push again to send the rest)";
        }
        return Fail(Status(st.code(), msg));
      }
      bar_.Update(files_done_, total_files_, bytes_done_, total_bytes_);
    }
    if (staged_ > 0) {
      if (Status st = Commit(); !st.ok()) {
        Report();
        bool unknown = st.code() == Code::kDeadlineExceeded || st.code() == Code::kUnavailable;
        return Fail(st.message() + (unknown ? " (the server may still apply the " + std::to_string(staged_) +
                                                  " staged batches; run push again later: it sends only what the "
                                                  "server lacks)"
                                            : " (the " + std::to_string(staged_) +
                                                  " staged batches were not applied; run push again)"));
      }
    }
    if (SettingsChange() && !settings_sent_) {  // nothing else carried it
      Result<PushReply> reply = SendPush(options_.server, BuildPushBody({}, {}, {}, &settings_));
      if (!reply.ok()) {
        Report();
        return Fail(reply.status(), " (sending the vault's settings)");
      }
      Account(std::move(reply).value(), {});
    }
    Report();
    clock_.Mark("send");
    SaveIndex();
    clock_.Mark("index_write");
    if (options_.timings) clock_.Print(start_us_);
    totals_.seconds = static_cast<double>(MonotonicUs() - start_us_) / 1e6;
    if (options_.run != nullptr) {
      FillRun(options_.run);
    } else {
      std::printf("%s\n", (options_.json ? SummaryJson(totals_) : SummaryLine(totals_)).c_str());
    }
    return totals_.skipped > 0 ? kExitSkipped : kExitOk;
  }

  void FillRun(PushRun* run) const {
    run->totals = totals_;
    for (const FileChanges* c : {&plan_.attachments, &plan_.notes}) {
      for (size_t i = 0; i < c->to_send.size(); ++i) {
        if (outcome_.not_sent.contains(c->to_send[i].path)) continue;
        ++(c->is_new[i] ? run->added : run->modified);
      }
    }
    run->removed = static_cast<int64_t>(plan_.to_delete.size());
  }

  // The commit of a staged push: one request; the server's phases are
  // shown once it answers (on stderr, with the progress bar).
  Status Commit() {
    bar_.Text("committing " + std::to_string(staged_) + " staged batches (" + std::to_string(files_done_) +
              " files) as one push...");
    // The commit applies the whole import in one request: it gets at least
    // kCommitTimeoutMs (a retry after a timeout would only wait behind it).
    ServerOptions server = options_.server;
    server.timeout_ms = std::max(server.timeout_ms, kCommitTimeoutMs);
    Result<PushReply> reply =
        CommitStage(server, stage_, settings_.empty() ? "" : BuildPushBody({}, {}, {}, &settings_));
    if (!reply.ok()) return reply.status();
    settings_sent_ = true;
    if (options_.progress && !reply->phases.empty()) {
      bar_.Clear();
      std::fprintf(stderr, "server: committed in %lld ms (%s)\n", static_cast<long long>(reply->took_ms),
                   reply->phases.c_str());
    }
    Account(std::move(reply).value(), staged_carried_);
    return Status::Ok();
  }

  // Files are read (and attachments encoded) only now, so memory stays
  // bounded by one batch.
  Status SendBatch(const Batch& b, size_t index) {
    std::vector<OutgoingAttachment> attachments;
    attachments.reserve(b.attachment_count);
    for (size_t i = b.first_attachment; i < b.first_attachment + b.attachment_count; ++i) {
      const LocalAttachment& a = plan_.attachments.to_send[i];
      Result<std::string> data = Read(a, ReadAttachment, max_attachment_bytes_, true);
      if (data.ok()) attachments.push_back({a.path, Base64Encode(*data)});
    }
    std::vector<OutgoingNote> notes;
    notes.reserve(b.note_count);
    for (size_t i = b.first_note; i < b.first_note + b.note_count; ++i) {
      const LocalNote& n = plan_.notes.to_send[i];
      Result<std::string> content = Read(n, ReadNote, max_note_bytes_, false);
      if (content.ok()) notes.push_back({n.path, std::move(content).value()});
    }
    std::span<const std::string> deletes(plan_.to_delete.data() + b.first_delete, b.delete_count);
    if (notes.empty() && attachments.empty() && deletes.empty()) return Status::Ok();
    Carried carried{static_cast<int64_t>(attachments.size()),
                    static_cast<int64_t>(std::count_if(deletes.begin(), deletes.end(), IsAttachmentDelete))};
    if (!stage_.empty()) {
      Result<StageReply> staged = StageBatch(options_.server, stage_, index, BuildPushBody(notes, attachments, deletes));
      if (!staged.ok()) return staged.status();
      if (staged->staged) {
        ++staged_;
        staged_carried_.attachments += carried.attachments;
        staged_carried_.attachment_deletes += carried.attachment_deletes;
      } else {
        Account(std::move(staged->applied), carried);  // a server without staging pushed it
      }
      return Status::Ok();
    }
    Result<PushReply> reply = SendPush(options_.server, BuildPushBody(notes, attachments, deletes, &settings_));
    if (!reply.ok()) return reply.status();
    settings_sent_ = true;
    Account(std::move(reply).value(), carried);
    return Status::Ok();
  }

  // Reads `f` for sending; a file gone, grown or spoiled since the walk is
  // left out with a warning at the end.
  template <typename Reader>
  Result<std::string> Read(const LocalFile& f, Reader reader, int64_t max_bytes, bool attachment) {
    ++files_done_;
    bytes_done_ += f.size;
    Result<std::string> content = reader(options_.dir, LocalPath(f.path, options_.scope), max_bytes);
    if (content.ok()) {
      // Changed since the walk: the index must record what the server got.
      if (std::string sha = Sha256Hex(*content); sha != f.sha256) outcome_.sent_sha256[f.path] = sha;
    } else {
      outcome_.not_sent.insert(f.path);
      late_skips_.emplace_back(f.path, content.status().message() + "; not sent");
      ++totals_.skipped;
      if (attachment) ++totals_.attachments_skipped;
    }
    return content;
  }

  // What requests carried that a reply is about, for servers whose reply
  // does not split its counts into notes and attachments.
  struct Carried {
    int64_t attachments = 0, attachment_deletes = 0;
  };

  // The server's rule: a deleted path not ending in ".md" is an attachment.
  static bool IsAttachmentDelete(const std::string& path) { return !EndsWith(AsciiLower(path), ".md"); }

  void Account(PushReply reply, const Carried& carried) {
    // The index's server view is exact at the last version reached by our
    // own batches alone: a batch that changed something made exactly one
    // version, one that changed nothing none. Another writer in between
    // stops the count (the next delta then covers its changes too).
    bool changed = reply.changed + reply.deleted > 0 || reply.settings_changed;
    if (reply.settings_changed) totals_.strict_line_breaks_now = reply.strict_line_breaks;
    contiguous_ = contiguous_ && reply.version == synced_version_ + (changed ? 1 : 0);
    if (contiguous_) synced_version_ = reply.version;
    // Servers older than the split (no "attachments_*"): what we carried.
    int64_t att_received = reply.attachments_received >= 0 ? reply.attachments_received : carried.attachments;
    int64_t att_changed =
        reply.attachments_changed >= 0 ? reply.attachments_changed : std::min(carried.attachments, reply.changed);
    int64_t att_deleted = reply.attachments_deleted >= 0 ? reply.attachments_deleted
                                                         : std::min(carried.attachment_deletes, reply.deleted);
    totals_.sent += std::max<int64_t>(0, reply.received - att_received);
    totals_.changed += std::max<int64_t>(0, reply.changed - att_changed);
    totals_.deleted += std::max<int64_t>(0, reply.deleted - att_deleted);
    totals_.attachments_sent += att_received;
    totals_.attachments_changed += att_changed;
    totals_.attachments_deleted += att_deleted;
    totals_.rendered += reply.rendered;
    totals_.version = reply.version;
    // A later batch may re-render a note of an earlier one (its link target
    // arrived): the latest report of a note replaces the earlier one.
    for (NoteReport& n : reply.notes) {
      auto [it, inserted] = report_index_.emplace(n.path, reports_.size());
      if (inserted) reports_.push_back(std::move(n));
      else reports_[it->second] = std::move(n);
    }
  }

  // The index of a previous push, or nullptr (none, or unusable: one note).
  const Index* LoadIndex() {
    if (options_.full) return nullptr;
    Result<Index> index = ReadIndex(options_.dir);
    if (!index.ok()) {
      if (index.status().code() != Code::kNotFound) {
        std::fprintf(stderr, "folio: %s; ignored (every file is hashed)\n", index.status().message().c_str());
      }
      return nullptr;
    }
    index_ = std::move(index).value();
    return &index_;
  }

  // After a push that succeeded; a failure only costs the next push a full hash.
  void SaveIndex() {
    outcome_.version = synced_version_;
    // Nothing new to record (no file hashed, nothing sent, same server version): keep it.
    if (view_.from_delta && vault_.hashed == 0 && batches_.empty() && synced_version_ == index_.version) return;
    Index next;  // the header; the rows refer to vault_, view_, plan_ and outcome_
    next.server = options_.server.url;
    next.site = view_.manifest.site;
    next.epoch = view_.manifest.epoch;
    next.version = outcome_.version;
    next.walked_ns = walked_ns_;
    if (Status s = UpdateIndex(options_.dir, index_, next, IndexRowsAfterPush(vault_, view_.manifest, plan_, outcome_));
        !s.ok()) {
      std::fprintf(stderr, "folio: %s (the next push hashes every file)\n", s.message().c_str());
    }
  }

  // Warnings wait for the end so they never interleave with the progress
  // bar, and each prints once (DistinctWarnings).
  void Report() {
    bar_.Clear();
    for (const auto& [path, reason] : late_skips_) Note(path, reason);
    for (const NoteReport& n : reports_) {
      for (const std::string& w : DistinctWarnings(n)) Note(n.path, w);
    }
    late_skips_.clear();
    reports_.clear();
    report_index_.clear();
  }

  // Warn, and keep the first few for PushRun::warnings.
  void Note(std::string_view path, std::string_view reason) {
    Warn(path, reason);
    if (options_.run != nullptr && options_.run->warnings.size() < 3) {
      options_.run->warnings.push_back(std::string(path) + ": " + std::string(reason));
    }
  }

  // The size limit to use: the flag's (0: not given), the server's (0: not
  // advertised), or `fallback`. A flag over the server's limit would only
  // get the push refused, so the server's wins, with a warning.
  static int64_t Limit(const char* flag, int64_t given, int64_t server, int64_t fallback) {
    if (given <= 0) return server > 0 ? server : fallback;
    if (server > 0 && given > server) {
      std::fprintf(stderr, "warning: %s %s is over the server's limit of %s; using the server's\n", flag,
                   FormatBytes(given).c_str(), FormatBytes(server).c_str());
      return server;
    }
    return given;
  }

  const PushOptions& options_;
  int64_t max_note_bytes_ = 0, max_attachment_bytes_ = 0;  // in effect (Limit)
  int64_t start_us_;
  PhaseClock clock_;
  ProgressBar bar_;
  PushPlan plan_;
  Index index_;       // as read at the start (LoadIndex)
  ServerView view_;   // the manifest the plan was made against
  Vault vault_;       // the walk
  int64_t walked_ns_ = 0;
  int64_t synced_version_ = 0;  // see Account
  bool contiguous_ = true;
  PushOutcome outcome_;
  std::vector<Batch> batches_;
  std::string stage_;  // "" = one plain push per batch; else the stage's ID
  size_t staged_ = 0;  // batches the server holds in the stage
  Carried staged_carried_;  // what the staged batches carry (for the commit's reply)
  PushTotals totals_;
  VaultSettings settings_;      // sent with the push (settings.h)
  bool settings_sent_ = false;  // a request carried settings_
  size_t files_done_ = 0, total_files_ = 0;
  int64_t bytes_done_ = 0, total_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> late_skips_;
  std::vector<NoteReport> reports_;
  std::map<std::string, size_t, std::less<>> report_index_;
};

}  // namespace

int RunPush(const PushOptions& options) {
  if (options.run != nullptr) return Pusher(options).Run();  // `folio watch`: pushes again and again
  // A one-shot push ends the process: its walk, views and plans (a 100k-file
  // vault's are some 400k strings) are left to the exit instead of freed one
  // by one, which cost ~10% of a one-change push (issue 26). Reachable
  // through this pointer, so leak checkers do not count it.
  static Pusher* one_shot = nullptr;
  one_shot = new Pusher(options);
  return one_shot->Run();
}

}  // namespace folio::cli
