#!/usr/bin/env bash
# One word, one meaning: the words docs/architecture.md retires ("Glossary", its table of retired
# words) must not come back as whole identifiers in the Rust or SQL sources. String literals and
# comments are not read (a comment may say what a word used to mean, a message may use it as
# English); the list has one home, that table. It proves first that it finds a retired word in
# code and only there.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
python3 - "$here" <<'PY'
import pathlib, re, sys

root = pathlib.Path(sys.argv[1])
doc = (root / "docs/architecture.md").read_text()
section = doc.split("| retired word |", 1)
if len(section) != 2:
    sys.exit("docs/architecture.md has no table of retired words (a row starting '| retired word |')")
retired = []
for line in section[1].splitlines()[2:]:
    if not line.startswith("|"):
        break
    retired += re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", line.split("|")[1])
if not retired:
    sys.exit("the table of retired words lists no word")

# A line's code: its string literals emptied first (so a `//` inside one is no comment), then its
# comment cut off.
STRINGS = {".rs": re.compile(r'"(?:[^"\\]|\\.)*"'), ".sql": re.compile(r"'(?:[^']|'')*'")}
COMMENTS = {".rs": "//", ".sql": "--"}


def code_of(line, suffix):
    return STRINGS[suffix].sub('""', line).split(COMMENTS[suffix], 1)[0]


def hits(line, suffix):
    code = code_of(line, suffix)
    return [word for word in retired if re.search(rf"\b{word}\b", code)]


# The check checked: a retired word in code is found, in a string or a comment it is not.
word = retired[0]
assert hits(f"let x = {word};", ".rs") == [word], "a retired word in code must be found"
assert hits(f'let u = "http://x"; {word}(u);', ".rs") == [word], "code after a string holding //"
assert hits(f'log("{word} here"); // {word}', ".rs") == [], "strings and comments are not code"
assert hits(f"SELECT '{word}' -- {word}", ".sql") == [], "SQL strings and comments are not code"

found = []
skip = {"target", "node_modules", ".git", ".local"}
for path in sorted(root.rglob("*")):
    if path.suffix not in STRINGS or skip & set(path.relative_to(root).parts):
        continue
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        for word in hits(line, path.suffix):
            found.append(f"{path.relative_to(root)}:{number}: {word}: {line.strip()}")
if found:
    print("retired words back as identifiers (docs/architecture.md, \"Glossary\"):")
    print("\n".join(found))
    sys.exit(1)
print(f"retired words: none of {len(retired)} is back")
PY
