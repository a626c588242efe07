// folio: the command-line client. Parses flags (and FOLIO_<NAME> env vars)
// and dispatches; the work lives in push.cc, status.cc and their helpers.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "folio/core/config.h"
#include "export.h"
#include "prefix.h"
#include "push.h"
#include "status.h"
#include "watch.h"

namespace {

constexpr std::string_view kVersion = "0.1.0";

constexpr std::string_view kCommands =
    "folio publishes a vault of markdown notes through a folio-ingest server.\n"
    "\n"
    "commands:\n"
    "  folio push DIR   send the notes and attachments (images, audio, video, PDF)\n"
    "                   in DIR that the server lacks or holds in another version;\n"
    "                   delete from the server those gone from DIR (with --prefix P:\n"
    "                   DIR is the site's folder P; only P/ is touched)\n"
    "  folio status DIR what a push of DIR would change, changing nothing: notes\n"
    "                   and attachments to add, change and delete, the server's\n"
    "                   version, the site's URL, the server's warnings (dangling\n"
    "                   and ambiguous links), files over its limits; exit 0 in\n"
    "                   sync, 1 not in sync, 2 error (uses --server, --token,\n"
    "                   --prefix, --json, --timeout; never retries)\n"
    "  folio watch DIR  push DIR once, then keep watching it and push what changed\n"
    "                   after each burst of saves (--debounce); takes push's flags;\n"
    "                   retries with backoff while the server is away; Ctrl-C stops\n"
    "  folio export DIR write the published site, as its edge serves it, to the\n"
    "                   folder DIR: pages, listings, stylesheet, feeds and\n"
    "                   attachments, each with a .gz twin when served gzipped\n"
    "                   (for nginx gzip_static); uses --server, --token, --edge,\n"
    "                   --force; DIR must be new or empty unless --force\n"
    "  folio version    print the version\n"
    "  folio help       print this help\n"
    "\n";

void DeclareFlags(folio::Flags* flags) {
  flags->Add("server", "http://127.0.0.1:8080", "base URL of the folio-ingest server");
  flags->Add("token", "", "API token, sent as 'Authorization: Bearer TOKEN'");
  flags->Add("prefix", "",
             "publish DIR as the site's folder PREFIX (local x.md is PREFIX/x.md); nothing outside PREFIX/ is"
             " changed or deleted");
  flags->AddBool("dry-run", false, "print what would be sent and deleted; send nothing");
  flags->Add("batch-notes", "500", "most notes (plus attachments and deletions) per request");
  flags->Add("batch-bytes", "8MiB", "most note content plus attachment base64 per request; a larger file travels alone");
  flags->Add("max-note-bytes", "", "larger notes are left out with a warning (default: the server's limit)");
  flags->Add("max-attachment-bytes", "",
             "larger attachments are left out with a warning (default: the server's limit, e.g. 64MiB with --storage)");
  flags->Add("timeout", "120s", "time limit of each request");
  flags->Add("retry-for", "60s",
             "while the server is unreachable or answers 5xx (e.g. restarting), retry each request with backoff"
             " for this long (pushes carry an Idempotency-Key, so a retry never applies one twice); 0 = never retry");
  flags->AddBool("full", false,
                 "ignore DIR/.folio/index: fetch the full manifest and read and hash every file (the index is"
                 " rewritten after the push)");
  flags->AddBool("json", false,
                 "print the push's summary (status: the whole report) as one JSON line (counts, files hashed,"
                 " manifest kind)");
  flags->AddBool("timings", false, "push: one 'folio: timings PHASE=MS ...' line on stderr (where the time went)");
  flags->AddBool("allow-delete-all", false, "let a push from a vault with no notes delete every note on the server");
  flags->AddBool("no-delete", false, "send new and changed files only; delete nothing on the server");
  flags->AddBool("strict-line-breaks", false,
                 "render the site with Obsidian's \"Strict line breaks\" on (a paragraph's lines are joined),"
                 " whatever DIR/.obsidian/app.json says; by default the vault's own setting is sent when it has one");
  flags->AddBool("no-strict-line-breaks", false,
                 "render the site with \"Strict line breaks\" off (each newline is a line break, Obsidian's"
                 " default), whatever DIR/.obsidian/app.json says");
  flags->Add("edge", "", "export: base URL of an edge serving the site (default: the server's --base-url)");
  flags->AddBool("force", false, "export: write into a non-empty DIR, replacing files of the same name");
  flags->Add("debounce", "50ms", "watch: push once no change came for this long");
  flags->Add("max-wait", "1s", "watch: push at most this long after the first change of a burst of saves");
  flags->AddBool("yes", false,
                 "go ahead with a push that deletes more than 20 notes and more than a quarter of the server's (see"
                 " them first with --dry-run)");
}

int Usage(const folio::Flags& flags, std::FILE* out, int code) {
  std::fprintf(out, "%.*s%s", static_cast<int>(kCommands.size()), kCommands.data(),
               flags.Usage().c_str());
  return code;
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "folio: %s (see folio --help)\n", message.c_str());
  return folio::cli::kExitUsage;
}

// Fills *out from the flags; returns "" or the problem.
std::string LoadPushOptions(const folio::Flags& flags, folio::cli::PushOptions* out) {
  out->dir = flags.positional()[1];
  out->server.url = flags.Get("server");
  while (out->server.url.ends_with('/')) out->server.url.pop_back();
  if (!out->server.url.starts_with("http://") && !out->server.url.starts_with("https://")) {
    return "--server must be an http:// or https:// URL, not '" + flags.Get("server") + "'";
  }
  out->server.token = flags.Get("token");
  folio::Result<std::string> scope = folio::cli::ScopeOfPrefix(flags.Get("prefix"));
  if (!scope.ok()) return scope.status().message();
  out->scope = std::move(scope).value();
  out->dry_run = flags.GetBool("dry-run");
  out->allow_delete_all = flags.GetBool("allow-delete-all");
  out->no_delete = flags.GetBool("no-delete");
  out->yes = flags.GetBool("yes");
  out->full = flags.GetBool("full");
  out->json = flags.GetBool("json");
  out->timings = flags.GetBool("timings");
  if (flags.GetBool("strict-line-breaks") && flags.GetBool("no-strict-line-breaks")) {
    return "--strict-line-breaks and --no-strict-line-breaks contradict each other";
  }
  if (flags.GetBool("strict-line-breaks")) out->strict_line_breaks = true;
  if (flags.GetBool("no-strict-line-breaks")) out->strict_line_breaks = false;
  auto notes = flags.GetInt("batch-notes");
  auto bytes = flags.GetBytes("batch-bytes");
  // Empty: the server's limits, from its manifest.
  auto bytes_or_zero = [&](const char* name) -> folio::Result<int64_t> {
    if (flags.Get(name).empty()) return int64_t{0};
    auto v = flags.GetBytes(name);
    if (v.ok() && *v < 1) return folio::Status::Invalid(std::string("--") + name + " must be positive");
    return v;
  };
  auto max_note = bytes_or_zero("max-note-bytes");
  auto max_att = bytes_or_zero("max-attachment-bytes");
  auto timeout = flags.GetDurationMs("timeout");
  auto retry_for = flags.GetDurationMs("retry-for");
  for (const folio::Status* st : {&notes.status(), &bytes.status(), &max_note.status(), &max_att.status(),
                                  &timeout.status(), &retry_for.status()}) {
    if (!st->ok()) return st->message();
  }
  if (*notes < 1 || *bytes < 1 || *timeout < 1) {
    return "--batch-notes, --batch-bytes and --timeout must be positive";
  }
  out->max_attachment_bytes = *max_att;
  out->limits = {*notes, *bytes};
  out->max_note_bytes = *max_note;
  out->server.timeout_ms = *timeout;
  if (*retry_for < 0) return "--retry-for must not be negative";
  out->server.retry_for_ms = *retry_for;
  const char* term = std::getenv("TERM");
  out->progress = isatty(STDERR_FILENO) && !(term && std::string_view(term) == "dumb");
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // A push at 100k files reads a 15 MB index and builds several 100k-entry
  // lists: large buffers come from the heap and freed memory stays there,
  // so later lists reuse pages already touched instead of faulting in fresh
  // ones (-22% page faults of a one-change push; issue 26).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  folio::Flags flags("folio push|watch DIR", "Sends a vault's changed notes and attachments to a folio-ingest server.");
  DeclareFlags(&flags);
  folio::Status st = flags.Parse(argc, argv);
  if (st.code() == folio::Code::kNotFound) return Usage(flags, stdout, 0);  // --help
  if (!st.ok()) {  // Flags' message already points at --help
    std::fprintf(stderr, "folio: %s\n", st.message().c_str());
    return folio::cli::kExitUsage;
  }
  const auto& args = flags.positional();
  if (args.empty()) return Usage(flags, stderr, folio::cli::kExitUsage);
  if (args[0] == "help") return Usage(flags, stdout, 0);
  if (args[0] == "version") {
    std::printf("folio %.*s\n", static_cast<int>(kVersion.size()), kVersion.data());
    return 0;
  }
  if (args[0] != "push" && args[0] != "status" && args[0] != "watch" && args[0] != "export") {
    return UsageError("unknown command '" + args[0] + "'");
  }
  if (args.size() != 2) return UsageError(args[0] + " takes exactly one DIR");
  folio::cli::PushOptions options;
  if (std::string problem = LoadPushOptions(flags, &options); !problem.empty()) {
    return UsageError(problem);
  }
  if (args[0] == "push") return folio::cli::RunPush(options);
  if (args[0] == "export") {
    folio::cli::ExportOptions exp{options.dir, options.server, flags.Get("edge"), flags.GetBool("force")};
    return folio::cli::RunExport(exp);
  }
  if (args[0] == "status") {
    // A quick look, so no retries; its errors exit with kStatusError
    // (== kExitUsage), apart from "not in sync".
    static_assert(folio::cli::kStatusError == folio::cli::kExitUsage);
    folio::cli::StatusOptions status{options.dir, options.scope, options.server, options.json};
    status.server.retry_for_ms = 0;
    return folio::cli::RunStatus(status);
  }
  if (options.dry_run) return UsageError("watch does not take --dry-run");
  folio::cli::WatchOptions watch;
  watch.push = std::move(options);
  auto debounce = flags.GetDurationMs("debounce");
  auto max_wait = flags.GetDurationMs("max-wait");
  if (!debounce.ok()) return UsageError(debounce.status().message());
  if (!max_wait.ok()) return UsageError(max_wait.status().message());
  if (*debounce < 0 || *max_wait < *debounce) return UsageError("--max-wait must be at least --debounce (>= 0)");
  watch.debounce_ms = *debounce;
  watch.max_wait_ms = *max_wait;
  return folio::cli::RunWatch(watch);
}
