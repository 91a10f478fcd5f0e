#!/usr/bin/env bash
# One word, one meaning: the words docs/architecture.md retires ("Glossary", its table of retired
# words) must not come back as identifiers in the Rust or SQL sources. Comments are not read (a
# comment may say what a word used to mean); the list has one home, that table.
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

found = []
skip = {"target", "node_modules", ".git", ".local"}
for path in sorted(root.rglob("*")):
    if path.suffix not in {".rs", ".sql"} or skip & set(path.relative_to(root).parts):
        continue
    comment = "--" if path.suffix == ".sql" else "//"
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        code = line.split(comment, 1)[0]
        for word in retired:
            if re.search(rf"\b{word}\b", code):
                found.append(f"{path.relative_to(root)}:{number}: {word}: {line.strip()}")
if found:
    print("retired words back as identifiers (docs/architecture.md, \"Glossary\"):")
    print("\n".join(found))
    sys.exit(1)
print(f"retired words: none of {len(retired)} is back")
PY
