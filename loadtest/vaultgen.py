#!/usr/bin/env python3
"""vaultgen: a deterministic Obsidian-style vault of N notes for loadtest/scale-bench.

    python3 loadtest/vaultgen.py --notes 10000 [--seed 1] OUT_DIR

The same (notes, seed) always gives the same bytes. Shape (the push-bench note, ~400 bytes,
is the baseline for size; these are ~500-700 bytes):

- folders a few levels deep: eight areas, then topics, then (from ~8,000 notes) parts,
  about 100 notes per leaf folder; names with spaces, like a real vault;
- every note: frontmatter (tags, created, sometimes aliases and a description), an H1,
  "Revision R." (what the benchmark edits), a paragraph of links, a "## Details" section
  with a list, sometimes a code fence or an inline #tag, a closing paragraph;
- links by [[wikilink]]: one to a hub (a "Map of ..." note; hubs are Zipf-popular, so the
  first is linked from a large share of the vault), two to neighbours in the same folder,
  one to any note in the vault, written as [[Name]], [[Name|alias text]],
  [[Name#Details]], [[folder/Name]] or by the target's frontmatter alias;
- hubs ("Maps/Map of AREA K.md", N/1000 of them, at least 3) link to a sample of notes;
  a root index.md links to every hub;
- tags from a Zipf vocabulary (20 + N/500 names, some nested area/topic);
- attachments: N/2000 (at least 3) small distinct PNG files in Attachments/, each
  embedded by a few notes with ![[image-K.png]].

Importable: generate(out, n, seed) returns a Vault (paths of the ordinary notes, their URLs)
and set_revision(path, rev) rewrites a note's "Revision R." line.
"""
import argparse
import os
import random
import re
import struct
import zlib

AREAS = ["Projects", "Areas", "Resources", "Archive", "Journal", "People", "Meetings", "Reading"]
ADJ = ("quarterly weekly early late open closed quiet rapid careful rough final draft shared "
       "private local remote small large simple hidden modern classic").split()
NOUN = ("planning review garden notes retro sketch outline budget roadmap interview summary "
        "experiment reading design meeting journal checklist idea question answer").split()
WORDS = ("note vault link page graph idea plan task follow up review draft thought source "
         "quote summary detail context decision result reason example problem method the a of "
         "to in and for with on by from at as is this that it").split()
TAG_ROOTS = ("project idea todo reference meeting person book paper recipe travel health "
             "finance code design research draft review archive inbox someday").split()
HEADING = "Details"


def slug(segment):
    """The URL rule of README "URLs" for the ASCII names this generator makes."""
    return re.sub(r"[^a-z0-9]+", "-", segment.lower()).strip("-")


def url_of(path):
    parts = path[:-3].split("/")
    return "/" + "/".join(slug(p) for p in parts)


class Vault:
    def __init__(self, root):
        self.root = root
        self.notes = []   # vault paths of ordinary notes (what the benchmark edits)
        self.hubs = []
        self.attachments = []

    def path(self, rel):
        return os.path.join(self.root, rel)


def zipf_cdf(n, s=1.0):
    acc, cdf = 0.0, []
    for i in range(n):
        acc += 1.0 / (i + 1) ** s
        cdf.append(acc)
    return cdf


def pick(rnd, cdf):
    u = rnd.random() * cdf[-1]
    lo, hi = 0, len(cdf) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo


def folder_of(leaf, leaves):
    """Leaf folder `leaf` of `leaves`: AREA/Topic K, or AREA/Topic K/Part P past 80 leaves."""
    area, k = AREAS[leaf % len(AREAS)], leaf // len(AREAS)
    if leaves <= 80:
        return "%s/Topic %d" % (area, k)
    return "%s/Topic %d/Part %d" % (area, k // 10, k % 10)


def tiny_png(k):
    """A valid 2x2 RGB PNG whose pixels depend on k (distinct bytes, distinct hashes)."""
    def chunk(kind, data):
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)
    px = bytes([(k * 37) % 256, (k * 91) % 256, (k * 13) % 256]) * 2
    raw = b"\x00" + px + b"\x00" + px[::-1]
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def sentence(rnd, lo=6, hi=12):
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(lo, hi))).capitalize() + "."


def plan(n, seed):
    """Names, folders, aliases and tags of every note: the graph's vertices."""
    rnd = random.Random(seed)
    leaves = max(1, n // 100)
    names, folders, aliases = [], [], []
    for i in range(n):
        names.append("%s %s %d" % (rnd.choice(ADJ).capitalize(), rnd.choice(NOUN), i))
        folders.append(folder_of(i * leaves // n, leaves))
        aliases.append("%s alias %d" % (rnd.choice(NOUN).capitalize(), i) if rnd.random() < 0.2 else None)
    hubs = ["Map of %s %d" % (AREAS[h % len(AREAS)], h) for h in range(max(3, n // 1000))]
    tags = []
    for t in range(20 + n // 500):
        root = TAG_ROOTS[t % len(TAG_ROOTS)]
        tags.append(root if t < len(TAG_ROOTS) else "%s/%s-%d" % (root, slug(AREAS[t % len(AREAS)]), t))
    return names, folders, aliases, hubs, tags


def link_to(rnd, j, names, folders, aliases):
    """A wikilink to note j in one of the forms Obsidian users write."""
    u = rnd.random()
    if u < 0.20:
        return "[[%s|%s]]" % (names[j], " ".join(rnd.choice(WORDS) for _ in range(2)))
    if u < 0.35:
        return "[[%s#%s]]" % (names[j], HEADING)
    if u < 0.45:
        return "[[%s/%s]]" % (folders[j], names[j])
    if u < 0.55 and aliases[j]:
        return "[[%s]]" % aliases[j]
    return "[[%s]]" % names[j]


def note_text(i, rnd, g, n_images):
    names, folders, aliases, hubs, tags, hub_cdf, tag_cdf = g
    n = len(names)
    fm = ["---", "tags: [%s]" % ", ".join(sorted({tags[pick(rnd, tag_cdf)] for _ in range(rnd.randint(1, 3))})),
          "created: 20%02d-%02d-%02d" % (20 + i % 6, 1 + i % 12, 1 + i % 28)]
    if aliases[i]:
        fm.append("aliases: [%s]" % aliases[i])
    if rnd.random() < 0.3:
        fm.append("description: %s" % sentence(rnd, 5, 9))
    fm.append("---")
    links = []
    if rnd.random() < 0.8:
        links.append("[[%s]]" % hubs[pick(rnd, hub_cdf)])
    for d in (1, 2):
        j = i + d if i + d < n and folders[i + d] == folders[i] else i - d
        if 0 <= j < n and j != i:
            links.append(link_to(rnd, j, names, folders, aliases))
    j = rnd.randrange(n)
    if j != i:
        links.append(link_to(rnd, j, names, folders, aliases))
    body = ["# %s" % names[i], "", "Revision 1.", "",
            "%s See %s." % (sentence(rnd), ", ".join(links) if links else "nothing yet"), "",
            "## %s" % HEADING, "",
            "- %s" % sentence(rnd, 3, 6), "- %s" % sentence(rnd, 3, 6), "- %s" % sentence(rnd, 3, 6), ""]
    if rnd.random() < 0.2:
        body += ["```js", "const x = %d;" % i, "console.log(x * 2);", "```", ""]
    if rnd.random() < 0.1:
        body += ["Filed under #%s." % tags[pick(rnd, tag_cdf)], ""]
    if n_images and rnd.random() < 0.005:
        body += ["![[image-%d.png]]" % rnd.randrange(n_images), ""]
    body.append(sentence(rnd))
    return "\n".join(fm + body) + "\n"


def hub_text(h, rnd, hubs, names):
    picks = sorted({rnd.randrange(len(names)) for _ in range(20)})
    lines = ["---", "tags: [moc]", "---", "# %s" % hubs[h], "", "Revision 1.", "",
             "A map of content: the notes this area starts from.", ""]
    lines += ["- [[%s]]" % names[j] for j in picks]
    return "\n".join(lines) + "\n"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def generate(out, n, seed=1):
    """Writes the vault into `out` (which should be empty) and describes it."""
    names, folders, aliases, hubs, tags = plan(n, seed)
    g = (names, folders, aliases, hubs, tags, zipf_cdf(len(hubs)), zipf_cdf(len(tags)))
    v = Vault(out)
    n_images = max(3, n // 2000)
    for k in range(n_images):
        rel = "Attachments/image-%d.png" % k
        write(v.path(rel), tiny_png(k))
        v.attachments.append(rel)
    for h in range(len(hubs)):
        rel = "Maps/%s.md" % hubs[h]
        write(v.path(rel), hub_text(h, random.Random(seed * 1000003 + n + h), hubs, names))
        v.hubs.append(rel)
    write(v.path("index.md"), "# Home\n\n" + "".join("- [[%s]]\n" % h for h in hubs))
    for i in range(n):
        rel = "%s/%s.md" % (folders[i], names[i])
        write(v.path(rel), note_text(i, random.Random(seed * 1000003 + i), g, n_images))
        v.notes.append(rel)
    return v


REVISION = re.compile(rb"^Revision \d+\.$", re.M)


def set_revision(path, rev):
    """Rewrites the note's "Revision R." line (its size changes when R's digits do)."""
    with open(path, "rb") as f:
        data = f.read()
    data, count = REVISION.subn(b"Revision %d." % rev, data, count=1)
    if count != 1:
        raise ValueError("%s has no Revision line" % path)
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    a = ap.parse_args()
    v = generate(a.out, a.notes, a.seed)
    print("%s: %d notes, %d hubs, %d attachments, index.md" % (a.out, len(v.notes), len(v.hubs), len(v.attachments)))


if __name__ == "__main__":
    main()
