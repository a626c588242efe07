#!/usr/bin/env python3
"""search-eval's questions.tsv is well formed (offline, no vaults needed): at least 40 questions
over at least 2 vaults, every line with expected note paths and a tag, no question asked twice
of a vault, and none of obsidian-help (held out for independent evaluation). Also checks that
the harness's parser refuses each kind of bad line, so a bad file cannot pass unnoticed."""
import collections
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import search_eval  # noqa: E402

TAGS = {"keyword", "natural", "typo", "partial"}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def parse_text(text):
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        return search_eval.read_questions(f.name)
    finally:
        os.unlink(f.name)


def main():
    try:
        qs = search_eval.read_questions(os.path.join(HERE, "questions.tsv"))
    except ValueError as e:
        fail(str(e))
    per_vault = collections.Counter(q[0] for q in qs)
    if len(qs) < 40:
        fail("%d questions, want at least 40" % len(qs))
    if len(per_vault) < 2:
        fail("vaults %s, want at least 2" % dict(per_vault))
    for vault, q, expected, tag in qs:
        if tag not in TAGS:
            fail("%r: tag %r not one of %s" % (q, tag, sorted(TAGS)))
        for p in expected:
            if not p.endswith(".md") or p.startswith("/") or ".." in p.split("/"):
                fail("%r: expected path %r is not a vault-relative note path" % (q, p))
    dup = [k for k, n in collections.Counter((q[0], q[1].lower()) for q in qs).items() if n > 1]
    if dup:
        fail("asked twice: %s" % dup)
    for bad, why in (("tasks\tq\t\tnatural\n", "no expected path"),
                     ("tasks\tq\ta.md\n", "three columns"),
                     ("obsidian-help\tq\ta.md\tnatural\n", "the held-out vault"),
                     ("Tasks Vault\tq\ta.md\tnatural\n", "a vault that is no site id")):
        try:
            parse_text(bad)
        except ValueError:
            continue
        fail("the parser accepted a line with %s" % why)
    if len(parse_text("# comment\n\ntasks\tq\ta.md|b/c.md\tkeyword\n")[0][2]) != 2:
        fail("the parser did not split expected paths on '|'")
    print("ok: %d questions, %s, tags %s" % (len(qs), dict(per_vault), dict(collections.Counter(q[3] for q in qs))))


if __name__ == "__main__":
    main()
