// Renames with edits (rename_match.h, issue 28): the measure, the
// threshold, one-to-one matching and the bounds.
#include <doctest/doctest.h>

#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "rename_match.h"

using namespace folio;
using namespace folio::ingest;

namespace {

// A note of `lines` lines of prose about `topic`: words drawn from a
// vocabulary by a generator seeded with the topic, as unrelated notes differ.
std::string Text(const std::string& topic, int lines) {
  static const char* const kWords[] = {
      "the", "a", "river", "stone", "light", "walk", "morning", "garden", "plan", "idea", "of", "and", "to",
      "write", "north", "build", "quiet", "paper", "code", "music", "city", "field", "rain", "green", "slow",
      "history", "market", "engine", "letter", "bridge", "winter", "table", "voice", "window", "island", "salt",
      "review", "signal", "forest", "number", "copper", "dance", "harbour", "lesson", "thread", "mirror"};
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(topic)));
  std::string s = "# " + topic + "\n\n";
  for (int i = 0; i < lines; ++i) {
    for (int w = 0; w < 10; ++w) s += std::string(kWords[rng() % std::size(kWords)]) + (w == 9 ? ".\n" : " ");
  }
  return s;
}

// `text` with lines `every`, 2*`every`, ... rewritten.
std::string Edited(std::string text, int every) {
  std::string out;
  int n = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol - pos + 1);
    pos = eol + 1;
    out += (++n % every == 0) ? "An entirely rewritten sentence here, number " + std::to_string(n) + ".\n" : line;
  }
  return out;
}

}  // namespace

TEST_CASE("rename match: word 3-gram Jaccard; a few edited lines stay above the threshold, other notes do not") {
  const std::string note = Text("gardening", 20);
  CHECK(Similarity(Shingles(note), Shingles(note)) == 1.0);
  CHECK(Similarity(Shingles("Same Words, here!"), Shingles("same words here")) == 1.0);  // case, punctuation
  double edited = Similarity(Shingles(note), Shingles(Edited(note, 7)));  // 3 of 22 lines rewritten
  CAPTURE(edited);
  CHECK(edited >= kRenameSimilarity);
  CHECK(Similarity(Shingles(note), Shingles(Text("astronomy", 20))) < kRenameSimilarity);
  CHECK(Similarity(Shingles(note), Shingles(Edited(note, 2))) < kRenameSimilarity);  // half rewritten: a new note
  CHECK(Shingles("two words").size() == 1);
  CHECK(Shingles("").empty());
}

TEST_CASE("rename match: one to one, best pairs first; unrelated notes stay apart") {
  const std::string a = Text("apples", 15), b = Text("boats", 15), c = Text("clouds", 15);
  auto m = MatchRenames({{"Old A.md", a}, {"Old B.md", b}, {"Gone.md", c}},
                        {{"New B.md", Edited(b, 6)}, {"New A.md", Edited(a, 5)}, {"Fresh.md", Text("dunes", 15)}});
  CHECK(m.size() == 2);
  CHECK(m["New A.md"] == "Old A.md");
  CHECK(m["New B.md"] == "Old B.md");
  CHECK(m.count("Fresh.md") == 0);
  // Two added copies of one deleted note: only the closer one is its rename.
  auto one = MatchRenames({{"Old.md", a}}, {{"Copy 1.md", Edited(a, 4)}, {"Copy 2.md", Edited(a, 8)}});
  REQUIRE(one.size() == 1);
  CHECK(one.begin()->first == "Copy 2.md");
}

TEST_CASE("rename match: at most kRenameMaxNotes notes per side take part") {
  std::vector<std::string> texts;
  for (size_t i = 0; i <= kRenameMaxNotes; ++i) texts.push_back(Text("topic " + std::to_string(i * 1000), 10));
  std::vector<RenameSide> deleted, added;
  for (size_t i = 0; i <= kRenameMaxNotes; ++i) {
    deleted.push_back({"old" + std::to_string(i) + ".md", texts[i]});
    added.push_back({"new" + std::to_string(i) + ".md", texts[i]});
  }
  auto m = MatchRenames(deleted, added);
  CHECK(m.size() == kRenameMaxNotes);
  CHECK(m.count("new" + std::to_string(kRenameMaxNotes) + ".md") == 0);
}
