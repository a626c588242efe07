#include "push.h"

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "folio/core/time.h"
#include "report.h"
#include "wire.h"

namespace folio::cli {
namespace {

void Warn(std::string_view path, std::string_view reason) {
  std::fprintf(stderr, "warning: %.*s: %.*s\n", static_cast<int>(path.size()), path.data(),
               static_cast<int>(reason.size()), reason.data());
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "folio: %s\n", message.c_str());
  return kExitFailed;
}

class Pusher {
 public:
  explicit Pusher(const PushOptions& options)
      : options_(options), start_us_(MonotonicUs()), bar_(stderr, options.progress) {}

  int Run() {
    std::error_code ec;
    if (!std::filesystem::is_directory(options_.dir, ec)) {
      return Fail(options_.dir.string() + ": no such directory");
    }
    // The manifest first: a wrong server or token fails before a long walk.
    Result<Manifest> manifest = FetchManifest(options_.server);
    if (!manifest.ok()) return Fail(manifest.status().message());
    Result<Vault> vault = WalkVault(options_.dir, WalkOptions{options_.max_note_bytes});
    if (!vault.ok()) return Fail(vault.status().message());
    for (const SkippedFile& s : vault->skipped) {
      Warn(s.path, s.reason);
      if (s.is_error) ++totals_.skipped;
    }
    plan_ = Diff(*vault, *manifest);
    batches_ = PlanBatches(plan_, options_.limits);
    totals_.unchanged = static_cast<int64_t>(plan_.unchanged);
    totals_.version = manifest->version;
    if (options_.dry_run) return DryRun();
    if (vault->notes.empty() && !plan_.to_delete.empty() && !options_.allow_delete_all) {
      return Fail(options_.dir.string() + " has no notes; refusing to delete all " +
                  std::to_string(plan_.to_delete.size()) +
                  " notes on the server (pass --allow-delete-all to do that)");
    }
    return Send();
  }

 private:
  int DryRun() {
    for (size_t i = 0; i < plan_.to_send.size(); ++i) {
      std::printf("%s\n", DryRunSendLine(plan_.to_send[i], plan_.is_new[i]).c_str());
    }
    for (const std::string& d : plan_.to_delete) std::printf("%s\n", DryRunDeleteLine(d).c_str());
    std::string summary = DryRunSummaryLine(plan_, batches_.size(), totals_.version, totals_.skipped);
    std::printf("%s\n", summary.c_str());
    return totals_.skipped > 0 ? kExitSkipped : kExitOk;
  }

  int Send() {
    for (const LocalNote& n : plan_.to_send) total_bytes_ += n.size;
    bar_.Update(0, plan_.to_send.size(), 0, total_bytes_);
    for (size_t i = 0; i < batches_.size(); ++i) {
      Status st = SendBatch(batches_[i]);
      if (!st.ok()) {
        Report();
        std::string msg = st.message();
        if (i > 0) {
          msg += " (" + std::to_string(i) + " of " + std::to_string(batches_.size()) +
                 " batches were pushed; run push again to send the rest)";
        }
        return Fail(msg);
      }
      bar_.Update(notes_done_, plan_.to_send.size(), bytes_done_, total_bytes_);
    }
    Report();
    totals_.seconds = static_cast<double>(MonotonicUs() - start_us_) / 1e6;
    std::printf("%s\n", SummaryLine(totals_).c_str());
    return totals_.skipped > 0 ? kExitSkipped : kExitOk;
  }

  Status SendBatch(const Batch& b) {
    std::vector<OutgoingNote> notes;
    notes.reserve(b.note_count);
    for (size_t i = b.first_note; i < b.first_note + b.note_count; ++i) {
      const LocalNote& n = plan_.to_send[i];
      ++notes_done_;
      bytes_done_ += n.size;
      Result<std::string> content = ReadNote(options_.dir, n.path, options_.max_note_bytes);
      if (!content.ok()) {
        late_skips_.emplace_back(n.path, content.status().message() + "; not sent");
        ++totals_.skipped;
        continue;
      }
      notes.push_back({n.path, std::move(content).value()});
    }
    std::span<const std::string> deletes(plan_.to_delete.data() + b.first_delete, b.delete_count);
    if (notes.empty() && deletes.empty()) return Status::Ok();
    Result<PushReply> reply = SendPush(options_.server, BuildPushBody(notes, deletes));
    if (!reply.ok()) return reply.status();
    Account(std::move(reply).value());
    return Status::Ok();
  }

  void Account(PushReply reply) {
    totals_.sent += reply.received;
    totals_.changed += reply.changed;
    totals_.rendered += reply.rendered;
    totals_.deleted += reply.deleted;
    totals_.version = reply.version;
    // A later batch may re-render a note of an earlier one (its link target
    // arrived): the latest report of a note replaces the earlier one.
    for (NoteReport& n : reply.notes) {
      auto [it, inserted] = report_index_.emplace(n.path, reports_.size());
      if (inserted) reports_.push_back(std::move(n));
      else reports_[it->second] = std::move(n);
    }
  }

  // Warnings wait for the end so they never interleave with the progress bar.
  void Report() {
    bar_.Clear();
    for (const auto& [path, reason] : late_skips_) Warn(path, reason);
    for (const NoteReport& n : reports_) {
      for (const std::string& w : n.warnings) Warn(n.path, w);
    }
  }

  const PushOptions& options_;
  int64_t start_us_;
  ProgressBar bar_;
  PushPlan plan_;
  std::vector<Batch> batches_;
  PushTotals totals_;
  size_t notes_done_ = 0;
  int64_t bytes_done_ = 0, total_bytes_ = 0;
  std::vector<std::pair<std::string, std::string>> late_skips_;
  std::vector<NoteReport> reports_;
  std::map<std::string, size_t, std::less<>> report_index_;
};

}  // namespace

int RunPush(const PushOptions& options) { return Pusher(options).Run(); }

}  // namespace folio::cli
