#include "status_report.h"

#include <algorithm>
#include <set>

#include "folio/core/json.h"
#include "folio/core/text.h"
#include "prefix.h"

namespace folio::cli {
namespace {

void Split(const FileChanges& changes, const std::vector<std::string>& lost_paths, StatusChanges* out) {
  const std::set<std::string_view> lost(lost_paths.begin(), lost_paths.end());
  for (size_t i = 0; i < changes.to_send.size(); ++i) {
    const std::string& path = changes.to_send[i].path;
    (changes.is_new[i] ? out->add : out->change).push_back(path);
    if (!changes.is_new[i] && lost.contains(path)) out->lost.push_back(path);
  }
  out->unchanged = changes.unchanged;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// At most `max` lines "  MARK ITEM", then "  ... and N more".
template <typename List, typename Fn>
void Capped(const List& list, size_t max, Fn line, std::string* out) {
  size_t shown = std::min(max, list.size());
  for (size_t i = 0; i < shown; ++i) *out += "  " + line(list[i]) + "\n";
  if (list.size() > shown) *out += "  ... and " + std::to_string(list.size() - shown) + " more\n";
}

void Kind(const char* name, const StatusChanges& c, size_t max, std::string* out) {
  *out += std::string(name) + ": " + std::to_string(c.add.size()) + " to add, " + std::to_string(c.change.size()) +
          " to change, " + std::to_string(c.remove.size()) + " to delete, " + std::to_string(c.unchanged) +
          " unchanged" +
          (c.lost.empty() ? "" : " (" + std::to_string(c.lost.size()) + " lost by the server's storage: re-sent)") +
          "\n";
  // One cap per kind, in the order add, change, delete.
  std::vector<std::string> lines;
  for (const auto& p : c.add) lines.push_back("+ " + p);
  for (const auto& p : c.change) lines.push_back("~ " + p);
  for (const auto& p : c.remove) lines.push_back("- " + p);
  Capped(lines, max, [](const std::string& l) { return l; }, out);
}

void JsonPaths(JsonWriter* w, std::string_view key, const std::vector<std::string>& paths, size_t max) {
  w->Key(key).BeginArray();
  for (size_t i = 0; i < std::min(max, paths.size()); ++i) w->String(paths[i]);
  w->EndArray();
}

void JsonKind(JsonWriter* w, std::string_view key, const StatusChanges& c, size_t max) {
  w->Key(key).BeginObject();
  JsonPaths(w, "add", c.add, max);
  JsonPaths(w, "change", c.change, max);
  JsonPaths(w, "delete", c.remove, max);
  w->Key("add_count").Int(static_cast<int64_t>(c.add.size()));
  w->Key("change_count").Int(static_cast<int64_t>(c.change.size()));
  w->Key("delete_count").Int(static_cast<int64_t>(c.remove.size()));
  if (!c.lost.empty()) {
    JsonPaths(w, "lost", c.lost, max);
    w->Key("lost_count").Int(static_cast<int64_t>(c.lost.size()));
  }
  w->Key("unchanged").Int(static_cast<int64_t>(c.unchanged)).EndObject();
}

void JsonSkipped(JsonWriter* w, std::string_view key, const std::vector<SkippedFile>& files, size_t max) {
  w->Key(key).BeginArray();
  for (size_t i = 0; i < std::min(max, files.size()); ++i) {
    w->BeginObject().Key("path").String(files[i].path).Key("reason").String(files[i].reason).EndObject();
  }
  w->EndArray();
}

}  // namespace

StatusReport MakeStatusReport(const PushPlan& plan, const Manifest& manifest, const Vault& vault,
                              std::string_view scope, std::optional<bool> vault_strict) {
  StatusReport r;
  r.site = manifest.site;
  r.site_url = manifest.site_url;
  r.version = manifest.version;
  Split(plan.notes, {}, &r.notes);
  Split(plan.attachments, manifest.missing_attachments, &r.attachments);
  // The server's rule: a deleted path not ending in ".md" is an attachment.
  for (const std::string& p : plan.to_delete) {
    (EndsWith(AsciiLower(p), ".md") ? r.notes : r.attachments).remove.push_back(p);
  }
  for (const auto& [path, warnings] : manifest.warnings) {  // a map: sorted by path
    if (!InScope(path, scope)) continue;
    // Once per note and text: an older server repeats a warning per link (issue 28).
    std::set<std::string_view> seen;
    for (const std::string& w : warnings) {
      if (seen.insert(w).second) r.warnings.push_back({path, w});
    }
  }
  for (const SkippedFile& s : vault.skipped) {
    if (s.too_large) r.oversized.push_back(s);
    else if (s.is_error) r.left_out.push_back(s);
  }
  if (vault_strict && manifest.strict_line_breaks != vault_strict) r.strict_line_breaks_change = vault_strict;
  return r;
}

std::string StatusText(const StatusReport& r, size_t max_paths) {
  std::string out = "server " + r.server + ": ";
  out += r.site.empty() ? "" : "site " + r.site + ", ";
  out += "version " + std::to_string(r.version);
  out += r.site_url.empty() ? "" : ", " + r.site_url;
  out += "\n";
  Kind("notes", r.notes, max_paths, &out);
  Kind("attachments", r.attachments, max_paths, &out);
  if (r.strict_line_breaks_change) {
    out += std::string("settings: strict line breaks ") + (*r.strict_line_breaks_change ? "on" : "off") +
           " in the vault, " + (*r.strict_line_breaks_change ? "off" : "on") + " on the site\n";
  }
  if (!r.warnings.empty()) {
    out += "server warnings: " + std::to_string(r.warnings.size()) + "\n";
    Capped(r.warnings, max_paths, [](const StatusWarning& w) { return w.path + ": " + w.warning; }, &out);
  }
  auto skipped = [&](const char* title, const std::vector<SkippedFile>& files) {
    if (files.empty()) return;
    out += std::string(title) + ": " + std::to_string(files.size()) + "\n";
    Capped(files, max_paths, [](const SkippedFile& s) { return s.path + ": " + s.reason; }, &out);
  };
  skipped("oversized (over the server's limits; push leaves them out)", r.oversized);
  skipped("left out (push does not send them)", r.left_out);
  if (r.in_sync()) {
    out += "in sync\n";
  } else {
    out += "not in sync: " + Plural(r.notes.total(), "note", "notes") + " and " +
           Plural(r.attachments.total(), "attachment", "attachments") + " differ" +
           (r.strict_line_breaks_change ? ", and the settings" : "") + "; `folio push` sends them\n";
  }
  return out;
}

std::string StatusJson(const StatusReport& r, size_t max_paths) {
  JsonWriter w;
  w.BeginObject().Key("in_sync").Bool(r.in_sync()).Key("server").String(r.server).Key("site").String(r.site);
  w.Key("site_url").String(r.site_url).Key("version").Int(r.version);
  JsonKind(&w, "notes", r.notes, max_paths);
  JsonKind(&w, "attachments", r.attachments, max_paths);
  w.Key("warnings").BeginArray();
  for (size_t i = 0; i < std::min(max_paths, r.warnings.size()); ++i) {
    w.BeginObject().Key("path").String(r.warnings[i].path).Key("warning").String(r.warnings[i].warning).EndObject();
  }
  w.EndArray().Key("warning_count").Int(static_cast<int64_t>(r.warnings.size()));
  JsonSkipped(&w, "oversized", r.oversized, max_paths);
  JsonSkipped(&w, "left_out", r.left_out, max_paths);
  if (r.strict_line_breaks_change) w.Key("strict_line_breaks").Bool(*r.strict_line_breaks_change);
  w.EndObject();
  return w.Take();
}

}  // namespace folio::cli
