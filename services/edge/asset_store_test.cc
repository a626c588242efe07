// AssetStore's gzip copy: which assets get one (asset_store.h).
#include <doctest/doctest.h>

#include <random>

#include "asset_store.h"
#include "folio/core/gzip.h"

using namespace folio;
using namespace folio::edge;

TEST_CASE("asset gzip: text types are compressible, media and unknown binary types are not") {
  for (const char* t : {"text/css", "text/javascript; charset=utf-8", "TEXT/PLAIN", "application/json",
                        "application/javascript", "image/svg+xml", "application/xml", "application/manifest+json",
                        "application/rss+xml"}) {
    CHECK_MESSAGE(AssetStore::CompressibleType(t), t);
  }
  for (const char* t : {"image/png", "image/jpeg", "video/mp4", "application/pdf", "application/zip",
                        "application/octet-stream", "", "font/woff2"}) {
    CHECK_MESSAGE(!AssetStore::CompressibleType(t), t);
  }
}

TEST_CASE("asset gzip: kept only for text that shrinks by 10% or more, and it inflates to the body") {
  std::string css;
  for (int i = 0; i < 400; ++i) css += ".note-" + std::to_string(i) + " { color: var(--text-normal); }\n";
  Asset a;
  a.content_type = "text/css";
  a.body = css;
  AssetStore::Compress(&a);
  REQUIRE(!a.body_gzip.empty());
  CHECK(a.body_gzip.size() < css.size() / 2);
  std::string back;
  REQUIRE(GzipDecompress(a.body_gzip, &back).ok());
  CHECK(back == css);

  // Untyped bytes (storage's octet-stream for .js, .css, .json names) are
  // compressed when they look like text...
  Asset js;
  js.content_type = "application/octet-stream";
  js.body = css;
  AssetStore::Compress(&js);
  CHECK(!js.body_gzip.empty());

  // ...and not when they are binary, nor when the type is media.
  std::mt19937 rng(7);
  std::string noise = "\x89PNG\r\n\x1a\n";
  while (noise.size() < 20000) noise.push_back(static_cast<char>(rng() & 0xff));
  for (const char* t : {"image/png", "application/octet-stream"}) {
    Asset png;
    png.content_type = t;
    png.body = noise;
    AssetStore::Compress(&png);
    CHECK_MESSAGE(png.body_gzip.empty(), t);
  }
  Asset png_text;  // a PNG type never gets a copy, whatever its bytes
  png_text.content_type = "image/png";
  png_text.body = css;
  AssetStore::Compress(&png_text);
  CHECK(png_text.body_gzip.empty());

  // Text that gzip cannot shrink by 10% (random bytes above the controls)
  // keeps no copy.
  std::string letters;
  while (letters.size() < 20000) letters.push_back(static_cast<char>(0x20 + rng() % 224));
  Asset txt;
  txt.content_type = "text/plain";
  txt.body = letters;
  AssetStore::Compress(&txt);
  CHECK(txt.body_gzip.empty());
}
