// The Engine's words: the vocabulary each site keeps of its notes' fields
// (typo corrections, stems, idf: query.h) and the link texts that make a
// note's anchors field.
#include <algorithm>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "engine.h"
#include "engine_internal.h"
#include "folio/core/log.h"
#include "folio/core/text.h"

namespace folio::search {

std::string PathWords(std::string_view path) {
  if (EndsWith(AsciiLower(path), ".md")) path.remove_suffix(3);
  std::string out(path);
  std::replace(out.begin(), out.end(), '/', ' ');
  return out;
}

std::string EncodeSections(std::span<const bus::NoteSection> sections) {
  std::string out;
  for (const bus::NoteSection& s : sections) {
    if (s.anchor.empty() || s.anchor.find_first_of("\t\n") != std::string::npos) continue;
    out.append(std::to_string(s.offset)).append("\t").append(s.anchor).append("\n");
  }
  return out;
}

std::vector<std::string> NoteWords(std::string_view title, std::string_view path, std::string_view text,
                                   const bus::NoteEvent& extra) {
  std::set<std::string, std::less<>> words;
  auto add = [&](std::string_view s) {
    ForEachWord(s, [&](std::string_view w) {
      if (words.find(w) == words.end()) words.emplace(w);
    });
  };
  add(title);
  add(PathWords(path));
  add(text);
  for (const std::string& a : extra.aliases) add(a);
  for (const std::string& t : extra.tags) add(t);
  return {words.begin(), words.end()};
}

Status Engine::DiffWords(ApplyWork* w) {
  const bus::NoteEvent& e = *w->e;
  std::vector<std::string> before, after;
  if (w->stored) {
    auto old = store_->ReadFields(w->stored->id);
    if (!old.ok()) return old.status();
    bus::NoteEvent old_extra;
    if (!old->extra.empty() && bus::DecodeNoteEvent(old->extra, &old_extra).ok()) {
      w->old_lang = old_extra.lang;
    }
    w->had_lang = true;
    before = NoteWords(old->title, e.path, old->text, old_extra);
  }
  if (!e.deleted) after = NoteWords(e.title, e.path, e.text, e);
  w->lang = e.lang;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(w->words_added));
  std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(w->words_removed));
  return Status::Ok();
}

Result<std::string> Engine::Anchors(const std::string& site, const std::string& path, const std::string& title) {
  auto texts = store_->LinkTexts(site, path);
  if (!texts.ok()) return texts.status();
  std::string out;
  std::string folded_title = AsciiLower(title);
  for (const std::string& t : *texts) {
    if (AsciiLower(t) == folded_title) continue;  // says nothing the title does not
    out.append(t).append("\n");
  }
  return out;
}

Status Engine::UpdateAnchors(const std::string& site, const std::vector<std::string>& targets) {
  std::vector<std::string> sorted = targets;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (const std::string& path : sorted) {
    auto note = store_->FindNote(site, path);
    if (!note.ok()) return note.status();
    if (!*note) continue;  // not (yet) a note: its anchors are computed when it comes
    auto anchors = Anchors(site, path, (*note)->title);
    if (!anchors.ok()) return anchors.status();
    if (Status s = fts_->SetAnchors((*note)->id, *anchors); !s.ok()) return s;
  }
  return Status::Ok();
}

void Engine::LoadWords() {
  std::unique_lock lock(mu_);
  Status s = store_->ForEachNoteFields([&](int64_t, std::string_view site_name, std::string_view path,
                                           std::string_view title, std::string_view text, std::string_view extra) {
    Site* site = SiteFor(std::string(site_name));
    bus::NoteEvent e;
    if (!extra.empty()) (void)bus::DecodeNoteEvent(extra, &e);
    const std::string& lang = e.lang.empty() ? options_.language : e.lang;
    for (const std::string& w : NoteWords(title, path, text, e)) site->vocab.Add(w, lang);
    ++site->note_langs[e.lang];
  });
  if (!s.ok()) log::Error("search: the vocabulary could not be loaded", {{"error", s.message()}});
}

size_t Engine::vocabulary_words() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [name, site] : sites_) n += site->vocab.size();
  return n;
}

size_t Engine::vocabulary_bytes() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [name, site] : sites_) n += site->vocab.MemoryBytes();
  return n;
}

Status Engine::ReplayStarted() {
  if (Status s = store_->SetMeta(kReplayNotesKey, ""); !s.ok()) return s;
  needs_replay_ = false;
  return Status::Ok();
}

}  // namespace folio::search
