// Internal: a faster stand-in for Source-highlight's regex rules, with the
// same results. Source-highlight finds each token by running every rule of
// the current state as a regex_search over the rest of the line, so a line
// of n tokens costs ~n x rules searches, each with its own setup and string
// copies (~27 us for a two-line js fence). A FastRule answers the same
// question with the same boost::regex, but:
//  - skips the regex when no character left on the line can start a match
//    (the regex's own first-character map, which boost's search uses too);
//  - remembers its last search on the line: a match found further on is
//    still the answer for a later start, except at that start itself, which
//    is tried alone (a search from there sees no character before it, so
//    \b, ^ and \G may answer differently there, and only there); rules with
//    lookbehind, which can see before the start, always search afresh;
//  - does not copy the rest of the line into the token (nothing reads it).
//
// Threading: rules and their memo belong to one thread's loaded definitions
// (highlight.cc's ThreadHighlighter); never shared.
#pragma once

#include <srchilite/highlightstate.h>

#include <cstdint>

namespace folio::markdown {

// Replaces, in every state reachable from `main`, each regex rule by a
// FastRule with the same regex and properties. Rules whose regex is rebuilt
// from a match (back-references into the next state, e.g. here-documents)
// stay Source-highlight's own. `line` must be bumped before each line is
// highlighted and outlive the rules: memos of another line are never used.
void UseFastRules(const srchilite::HighlightStatePtr& main, const uint64_t* line);

}  // namespace folio::markdown
