// FastRule: Source-highlight's RegexHighlightRule::tryToMatch with the
// same regex and the same token, found with fewer regex calls. Its output
// is checked against the library's own rules (obsidian_test.cc, and
// `highlight-bench --compare` over whole source trees).
#include "highlight_rule.h"

#include <srchilite/highlightrule.h>
#include <srchilite/highlighttoken.h>
#include <srchilite/matchingparameters.h>
#include <srchilite/regexhighlightrule.h>

#include <boost/regex.hpp>
#include <set>
#include <string>

namespace folio::markdown {

namespace {

using It = std::string::const_iterator;

class FastRule : public srchilite::HighlightRule {
 public:
  FastRule(const srchilite::HighlightRule& orig, const uint64_t* line) : re_(orig.toString()), line_(line) {
    for (const std::string& elem : orig.getElemList()) addElem(elem);
    setNextState(orig.getNextState());
    setExitLevel(orig.getExitLevel());
    setNested(orig.isNested());
    setHasSubexpressions(orig.getHasSubexpressions());
    setAdditionalInfo(orig.getAdditionalInfo());
    const std::string& s = re_.str();
    // Lookbehind sees before the search's start; \G is the start itself.
    memo_ok_ = s.find("(?<") == std::string::npos && s.find("\\G") == std::string::npos;
  }

  bool tryToMatch(It start, It end, srchilite::HighlightToken& token,
                  const srchilite::MatchingParameters& params) override {
    boost::match_flag_type flags = boost::match_default;
    if (!params.beginningOfLine) flags |= boost::match_not_bol;
    const boost::smatch* m = Find(start, end, flags);
    if (m == nullptr) return false;
    Fill(start, *m, &token);
    return true;
  }

  const std::string toString() const override { return re_.str(); }
  void replaceReferences(const srchilite::ReplacementList&) override {}  // not wrapped when it has references
  srchilite::HighlightRule* clone() override { return new FastRule(*this); }

 private:
  // The match regex_search(start, end, flags) would return, or null.
  const boost::smatch* Find(It start, It end, boost::match_flag_type flags) {
    const bool memo_valid = memo_ok_ && memo_line_ == *line_ && memo_end_ == end && memo_from_ <= start &&
                            (!memo_found_ || memo_[0].first > start);
    if (!memo_valid) {
      memo_line_ = 0;  // no memo if the search throws (boost's complexity limit)
      memo_found_ = AnyStart(start, end) && boost::regex_search(start, end, memo_, re_, flags);
      memo_line_ = *line_;
      memo_from_ = start;
      memo_end_ = end;
      return memo_found_ ? &memo_ : nullptr;
    }
    // Positions after `start` answer as in the remembered search; `start`
    // itself is tried alone, when its character can begin a match.
    if (CanStartAt(start, end) && boost::regex_search(start, end, here_, re_, flags | boost::match_continuous)) {
      return &here_;
    }
    return memo_found_ ? &memo_ : nullptr;
  }

  bool CanStartAt(It pos, It end) const {
    if (re_.can_be_null()) return true;
    return pos != end && (re_.get_map()[static_cast<unsigned char>(*pos)] & kMaskAny) != 0;
  }
  bool AnyStart(It pos, It end) const {
    if (re_.can_be_null()) return true;
    const unsigned char* map = re_.get_map();
    for (; pos != end; ++pos) {
      if (map[static_cast<unsigned char>(*pos)] & kMaskAny) return true;
    }
    return false;
  }

  // The token as RegexHighlightRule fills it, less the suffix (unused).
  void Fill(It start, const boost::smatch& m, srchilite::HighlightToken* token) const {
    token->prefix.assign(start, m[0].first);
    bool blank = true;
    for (char c : token->prefix) blank = blank && (c == ' ' || c == '\t');
    token->prefixOnlySpaces = blank;
    if (getHasSubexpressions()) {
      for (size_t i = 1; i < m.size(); ++i) token->matchedSubExps.push_back(m[i]);
    }
    if (getElemList().size() > 1) {
      for (size_t i = 1; i < m.size(); ++i) {
        if (m[i].matched) token->addMatched(getElemList()[i - 1], m[i]);
      }
    } else {
      token->addMatched(getElemList()[0], m[0]);
    }
  }

  // boost's start-map bits: the character can begin a match (take) or be
  // skipped by a leading optional part (skip); its search tests both.
  static constexpr unsigned char kMaskAny = 3;

  boost::regex re_;
  const uint64_t* line_;
  bool memo_ok_ = false;
  uint64_t memo_line_ = 0;  // 0: no memo
  It memo_from_, memo_end_;
  bool memo_found_ = false;
  boost::smatch memo_, here_;
};

void Replace(const srchilite::HighlightStatePtr& state, const uint64_t* line,
             std::set<const srchilite::HighlightState*>* seen) {
  if (!state || !seen->insert(state.get()).second) return;
  const srchilite::RuleList& rules = state->getRuleList();
  for (size_t i = 0; i < rules.size(); ++i) {
    srchilite::HighlightRulePtr rule = rules[i];
    Replace(rule->getNextState(), line, seen);
    if (rule->getNeedsReferenceReplacement()) continue;
    if (dynamic_cast<srchilite::RegexHighlightRule*>(rule.get()) == nullptr) continue;
    state->replaceRule(i, srchilite::HighlightRulePtr(new FastRule(*rule, line)));
  }
}

}  // namespace

void UseFastRules(const srchilite::HighlightStatePtr& main, const uint64_t* line) {
  std::set<const srchilite::HighlightState*> seen;
  Replace(main, line, &seen);
}

}  // namespace folio::markdown
