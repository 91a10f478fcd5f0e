#!/usr/bin/env bash
# The README stays a front page (under 300 lines), and every relative Markdown link in README.md,
# CONTRIBUTING.md and docs/*.md reaches a file that exists and, for a `#anchor`, a heading of that
# page (GitHub's rule: lowercase, spaces to '-', punctuation but '-' and '_' dropped, a repeated
# heading gets -1, -2, ...). Links inside code (fenced blocks, backquotes) are not links. Before
# the real check, the checker must refuse a made-up tree with a long README, a missing file and a
# missing anchor, so a checker that passes everything fails here.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/check.py" <<'PY'
import re, sys, unicodedata
from pathlib import Path

MAX_README_LINES = 300
root = Path(sys.argv[1]).resolve()
pages = [root / "README.md", root / "CONTRIBUTING.md"] + sorted((root / "docs").glob("*.md"))
pages = [p for p in pages if p.exists()]

def prose(text):
    """The lines outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if fence:
            if marker and stripped.startswith(fence) and not stripped[len(marker.group(1)):].strip():
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        yield number, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)

def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = "".join(c for c in text
                   if c in " -" or unicodedata.category(c)[0] in "LMN" or unicodedata.category(c) == "Pc")
    return kept.replace(" ", "-")

anchors_of = {}
def anchors(path):
    if path not in anchors_of:
        found, seen = set(), {}
        fence = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if fence:
                if marker and stripped.startswith(fence):
                    fence = None
                continue
            if marker:
                fence = marker.group(1)
                continue
            heading = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if heading:
                base = slug(heading.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            for explicit in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(explicit)
        anchors_of[path] = found
    return anchors_of[path]

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
problems, links = [], 0
readme = root / "README.md"
if readme.exists():
    count = len(readme.read_text(encoding="utf-8").splitlines())
    if count >= MAX_README_LINES:
        problems.append(f"README.md has {count} lines: a front page stays under {MAX_README_LINES} "
                        "(move the rest into a docs/ page)")
for page in pages:
    name = page.relative_to(root)
    for number, line in prose(page.read_text(encoding="utf-8")):
        targets = [m.group(1) for m in LINK.finditer(line)]
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        for target in targets:
            if not target or re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # a URL with a scheme (https:, mailto:) is not ours to check
            links += 1
            path_part, _, anchor = target.partition("#")
            destination = (page.parent / path_part).resolve() if path_part else page
            if path_part.startswith("/"):
                destination = (root / path_part.lstrip("/")).resolve()
            if not destination.exists():
                problems.append(f"{name}:{number}: {target}: no file {path_part}")
                continue
            if anchor and destination.suffix == ".md" and destination.is_file():
                if anchor not in anchors(destination):
                    problems.append(f"{name}:{number}: {target}: {destination.relative_to(root)} "
                                    f"has no heading with the anchor #{anchor}")
for problem in problems:
    print(f"FAIL: {problem}")
if problems:
    sys.exit(1)
lines = len(readme.read_text(encoding="utf-8").splitlines()) if readme.exists() else 0
print(f"ok: docs_links: README.md {lines} lines; {links} relative links in {len(pages)} pages, "
      "each to a file and heading that exist")
PY

# The checker refuses what it must: a made-up tree with one fault of each kind.
bad="$work/bad"
mkdir -p "$bad/docs"
{
  echo "# Title"
  echo "[fine](docs/a.md#a-heading-with-code_and-punctuation), [also](#title), [dup](docs/a.md#twice-1)"
  echo "[gone](docs/missing.md), [nowhere](docs/a.md#no-such-heading), \`[code](docs/missing.md)\`"
  for _ in $(seq 1 300); do echo "filler"; done
} >"$bad/README.md"
printf '# A heading: with `code_and` punctuation!\n\n## Twice\n\n## Twice\n\n```\n[in a fence](nowhere.md)\n```\n' >"$bad/docs/a.md"
if python3 "$work/check.py" "$bad" >"$work/bad.out"; then
  echo "FAIL: the checker passed a tree with a missing file, a missing anchor and a 303-line README"
  exit 1
fi
for expected in "README.md has 303 lines" "docs/missing.md: no file" "#no-such-heading"; do
  grep -qF -- "$expected" "$work/bad.out" || {
    echo "FAIL: the checker did not report '$expected':"
    cat "$work/bad.out"
    exit 1
  }
done
[ "$(grep -c '^FAIL' "$work/bad.out")" = 3 ] || {
  echo "FAIL: the checker reported other faults than the three made up (code, fences, anchors):"
  cat "$work/bad.out"
  exit 1
}

python3 "$work/check.py" "$here"
