// Renders whose links are answered later (deferred.h).
#include "folio/markdown/deferred.h"

#include "folio/core/secret.h"
#include "html_util.h"

namespace folio::markdown {
namespace {

// "~fl<16 hex>." opens a placeholder, "<question index>~" ends it: only
// characters AppendUrlEscaped keeps, so the placeholder reaches the html as
// it was returned. The nonce is drawn once per process.
const std::string& PlaceholderPrefix() {
  static const std::string prefix = [] {
    auto nonce = RandomHex(8);
    return "~fl" + (nonce.ok() ? *nonce : std::string("5f0c1a9e7d3b2468")) + ".";
  }();
  return prefix;
}

class DeferringResolver : public LinkResolver {
 public:
  explicit DeferringResolver(DeferredLinks* links) : links_(links) {}
  std::optional<std::string> Resolve(std::string_view target) override { return Ask(false, target); }
  std::optional<std::string> ResolveAttachment(std::string_view target) override { return Ask(true, target); }
  std::optional<std::string> EmbedNote(std::string_view, std::string_view, const RenderOptions&) override {
    links_->embeds_note = true;
    return std::nullopt;
  }

 private:
  std::string Ask(bool attachment, std::string_view target) {
    std::string url = PlaceholderPrefix() + std::to_string(links_->questions.size()) + "~";
    links_->questions.push_back({attachment, std::string(target)});
    return url;
  }
  DeferredLinks* links_;
};

}  // namespace

RenderResult RenderNoteDeferred(std::string_view source, std::string_view note_path, const RenderOptions& options,
                                DeferredLinks* links) {
  *links = DeferredLinks{};
  DeferringResolver resolver(links);
  RenderOptions opts = options;
  opts.resolver = &resolver;
  return RenderNote(source, note_path, opts);
}

std::optional<std::string> FillLinks(std::string_view html, const DeferredLinks& links, LinkResolver* resolver) {
  if (links.embeds_note) return std::nullopt;
  std::vector<std::string> urls;
  urls.reserve(links.questions.size());
  for (const auto& q : links.questions) {
    std::optional<std::string> url = q.attachment ? resolver->ResolveAttachment(q.target) : resolver->Resolve(q.target);
    if (!url) return std::nullopt;
    urls.push_back(std::move(*url));
  }
  const std::string& prefix = PlaceholderPrefix();
  std::string out;
  out.reserve(html.size() + 32 * urls.size());
  size_t from = 0, at;
  while ((at = html.find(prefix, from)) != std::string_view::npos) {
    size_t end = html.find('~', at + prefix.size());
    size_t k = 0;
    bool ok = end != std::string_view::npos && end > at + prefix.size();
    for (size_t i = at + prefix.size(); ok && i < end; ++i) {
      ok = html[i] >= '0' && html[i] <= '9';
      k = k * 10 + static_cast<size_t>(html[i] - '0');
    }
    if (!ok || k >= urls.size()) return std::nullopt;  // not ours: cannot happen without the nonce
    out.append(html, from, at - from);
    AppendUrlEscaped(urls[k], &out);
    from = end + 1;
  }
  out.append(html, from, std::string_view::npos);
  return out;
}

}  // namespace folio::markdown
