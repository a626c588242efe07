// A note rendered before the vault its links point into is known, its
// links answered later: ingest parses a push's notes once, before the push
// changes its model (the notes' titles, tags and link targets are what
// changes it), and finishes the same render into the page afterwards, when
// links may resolve to notes of the same push (docs/architecture.md "The
// push path").
//
// RenderNoteDeferred renders with a resolver that answers every link and
// attachment with a placeholder URL and records the question; FillLinks asks
// the real resolver the same questions in the same order and writes its URLs
// where the placeholders are. The result equals RenderNote with that
// resolver whenever every question has an answer and the note embeds no
// note; otherwise FillLinks says so and the caller renders the note again.
// A dangling link is rendered differently (a dead span and a warning), and
// a note embed holds the other note's render, so neither is deferred.
//
// Threading: both are reentrant; FillLinks calls the resolver on the
// calling thread only. The placeholders carry a random per-process nonce, so
// no note can write one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/markdown/render.h"

namespace folio::markdown {

// The questions a deferred render asked, in order, and whether it can be
// finished without rendering again.
struct DeferredLinks {
  struct Question {
    bool attachment = false;  // ResolveAttachment; else Resolve
    std::string target;
  };
  std::vector<Question> questions;
  bool embeds_note = false;  // EmbedNote was asked: only RenderNote gives the page
};

// RenderNote(source, note_path, options) with every Resolve and
// ResolveAttachment answered by a placeholder (options.resolver is
// ignored). The result's html holds the placeholders; everything else in it
// (title, text, tags, headings, links with their targets, block ids,
// frontmatter) is what RenderNote gives with a resolver that answers every
// question. Warnings are those of the render, without resolver warnings.
RenderResult RenderNoteDeferred(std::string_view source, std::string_view note_path, const RenderOptions& options,
                                DeferredLinks* links);

// The html of RenderNote(source, note_path, options with `resolver`): the
// placeholders of `html` (RenderNoteDeferred's, with `links`) replaced by
// the resolver's answers. nullopt if the note embeds a note or the resolver
// has no answer to some question (the page differs: render it again); the
// resolver has been asked the questions up to that one.
std::optional<std::string> FillLinks(std::string_view html, const DeferredLinks& links, LinkResolver* resolver);

}  // namespace folio::markdown
