// Stemmer against Debian's libstemmer.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "stemmer.h"

using folio::search::Stemmer;

TEST_CASE("Stemmer: English, German, French, Russian") {
  Stemmer s;
  CHECK(s.Stem("en", "connections") == "connect");
  CHECK(s.Stem("en", "connected") == "connect");
  CHECK(s.Stem("en", "publishing") == "publish");
  CHECK(s.Stem("en", "published") == "publish");
  CHECK(s.Stem("de", "hauser") == "haus");  // "Häuser", folded
  CHECK(s.Stem("de", "verbindungen") == s.Stem("de", "verbindung"));
  CHECK(s.Stem("fr", "continuellement") == "continuel");
  CHECK(s.Stem("fr", "publications") == s.Stem("fr", "publication"));
  CHECK(s.Stem("ru", "минуты") == "минут");
  CHECK(s.Stem("ru", "минута") == "минут");
  CHECK(s.Stem("es", "bibliotecas") == s.Stem("es", "biblioteca"));
}

TEST_CASE("Stemmer: language names") {
  CHECK(Stemmer::Normalize("en-US") == "en");
  CHECK(Stemmer::Normalize("pt_BR") == "pt");
  CHECK(Stemmer::Normalize("EN") == "en");
  CHECK(Stemmer::Normalize("English") == "en");
  CHECK(Stemmer::Normalize("nb") == "no");
  CHECK(Stemmer::Normalize("") == "");
  CHECK(Stemmer::Normalize("e1") == "");
  CHECK(Stemmer::Normalize(std::string(40, 'a')) == "");
  for (const char* lang : {"en", "de", "fr", "es", "ru", "pt", "it", "nl", "sv", "da", "fi", "no",
                           "en-GB", "english", "German"}) {
    CHECK_MESSAGE(Stemmer::Supported(lang), lang);
  }
  for (const char* lang : {"", "zh", "ja", "ko", "xx", "en1", "klingon"}) {
    CHECK_MESSAGE(!Stemmer::Supported(lang), lang);
  }
  CHECK(Stemmer().Stem("en-US", "connections") == "connect");
  CHECK(Stemmer().Stem("english", "connections") == "connect");
}

TEST_CASE("Stemmer: words it leaves alone") {
  Stemmer s;
  CHECK(s.Stem("xx", "connections") == "connections");  // unsupported language
  CHECK(s.Stem("", "connections") == "connections");
  CHECK(s.Stem("zh", "连接") == "连接");
  CHECK(s.Stem("en", "连接s") == "连接s");              // holds CJK
  CHECK(s.Stem("en", "is") == "is");                    // under 3 code points
  CHECK(s.Stem("ru", "мы") == "мы");                    // 4 bytes, 2 code points
  std::string long_word(30, 'a');
  long_word += "ingsconnections" + std::string(30, 'b') + "ings";
  REQUIRE(long_word.size() > Stemmer::kMaxBytes);
  CHECK(s.Stem("en", long_word) == long_word);
  std::string at_max = std::string(Stemmer::kMaxBytes - 10, 'a') + "connecting";
  CHECK(s.Stem("en", at_max) == std::string(Stemmer::kMaxBytes - 10, 'a') + "connect");
  CHECK(s.Stem("en", "") == "");
}

TEST_CASE("Stemmer: concurrent use from 4 threads") {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"connections", "connect"}, {"publishing", "publish"}, {"running", "run"}};
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Stemmer s;  // half the threads share one object
      static const Stemmer shared;
      const Stemmer& use = t % 2 ? s : shared;
      for (int i = 0; i < 20000; ++i) {
        auto& [word, stem] = cases[static_cast<size_t>(i) % cases.size()];
        if (use.Stem(i % 3 ? "en" : "en-US", word) != stem) ++wrong[static_cast<size_t>(t)];
        if (use.Stem("ru", "минуты") != "минут") ++wrong[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
}
