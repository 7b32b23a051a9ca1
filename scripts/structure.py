#!/usr/bin/env python3
"""structure.py - the rules of docs/architecture.md that code can break
without a test noticing, checked on the sources (issue 37).

    python3 scripts/structure.py [ROOT]

Prints one line per check ("ok - ..." or "not ok - ..." followed by the
offending places) and exits 1 when any rule is broken. The rules:

  1. Calls go downward only: a file of src/LAYER includes headers of its
     own layer or of layers below it (LAYERS, top first); util/ includes
     no header of djc's (not even include/djc.h).
  2. No layer above src/db reaches into a driver: `->drv->` and the
     driver's name appear only in src/db.
  3. SQL is written two ways only: statements of fixed shape in the named
     statement files (*statements.c) expanded by src/sql/expand.c, and
     statements over users' tables built by src/sql/query.c; the drivers
     render them. A C string that starts with an SQL verb or holds an SQL
     clause keyword appears nowhere else.
  4. No function is longer than 80 lines or takes more than 7 parameters.
"""
import glob
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
SRC = os.path.join(ROOT, "src")
LAYERS = ["cli", "populate", "make", "jobs", "table", "sql", "schema", "db", "util"]
SQL_HOMES = ("src/db/", "src/sql/")
MAX_LINES, MAX_PARAMS = 80, 7

failed = 0


def report(ok, what, bad):
    global failed
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failed += 1
        for b in bad[:40]:
            print("    " + b)
        if len(bad) > 40:
            print("    ... and %d more" % (len(bad) - 40))


def sources(ext=("c", "h")):
    out = []
    for e in ext:
        out += glob.glob(os.path.join(SRC, "**", "*." + e), recursive=True)
    return sorted(out)


def rel(path):
    return os.path.relpath(path, ROOT)


def layer_of(path):
    parts = rel(path).split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def strip_comments(text):
    """The text with comments blanked (line numbers kept) and string
    literals kept: rule 3 reads literals, the others read code."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def code_of(path):
    with open(path, encoding="utf-8") as f:
        return strip_comments(f.read())


# 1. includes go downward
bad = []
for f in sources():
    me = layer_of(f)
    if me not in LAYERS:
        bad.append("%s: a folder that is not a layer of LAYERS" % rel(f))
        continue
    for no, line in enumerate(code_of(f).split("\n"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        inc = m.group(1)
        if inc == "djc.h":
            if me == "util":
                bad.append("%s:%d: util includes the public header" % (rel(f), no))
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(f), inc))
        if not os.path.exists(target):
            target = os.path.normpath(os.path.join(SRC, inc))
        other = layer_of(target)
        if other in LAYERS and LAYERS.index(other) < LAYERS.index(me):
            bad.append("%s:%d: %s (layer %s) includes %s of layer %s above it" % (rel(f), no, rel(f), me, inc, other))
report(not bad, "every include goes to the file's own layer or one below it (%s)" % " > ".join(LAYERS), bad)

# 2. drivers stay in src/db
bad = []
for f in sources():
    if rel(f).startswith("src/db/"):
        continue
    for no, line in enumerate(code_of(f).split("\n"), 1):
        if "->drv->" in line or re.search(r"\bdrv\s*->\s*name\b", line):
            bad.append("%s:%d: %s" % (rel(f), no, line.strip()))
report(not bad, "no file above src/db reaches into a driver (->drv->)", bad)

# 3. SQL only in its homes
VERB = re.compile(r'^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|TRUNCATE|REPLACE|GRANT)\b')
CLAUSE = re.compile(r'\b(FROM|WHERE|JOIN|GROUP BY|ORDER BY|INSERT INTO|DELETE FROM|VALUES|SET \w+ =)\b')
bad = []
for f in sources(("c",)):
    r = rel(f)
    if r.startswith(SQL_HOMES) or r.endswith("statements.c"):
        continue
    for no, line in enumerate(code_of(f).split("\n"), 1):
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
            if VERB.search(lit) or CLAUSE.search(lit):
                bad.append('%s:%d: "%s"' % (r, no, lit[:70]))
report(not bad, "SQL text only in src/db, src/sql and the named statement files", bad)

# 4. function size (this code base's style: a definition at column 0,
#    '{' and '}' alone at column 0)
bad, count = [], 0
for f in sources(("c",)):
    lines = code_of(f).split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            j, sig = i - 1, []
            while j >= 0 and lines[j].strip() and not lines[j].startswith(("}", "#")):
                sig.insert(0, lines[j].strip())
                if re.match(r"^[A-Za-z_].*\(", lines[j]):
                    break
                j -= 1
            s = " ".join(sig)
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            m = re.search(r"([A-Za-z_]\w*)\s*\((.*)\)\s*$", s)
            if m and "=" not in s.split("(")[0]:
                count += 1
                params = m.group(2).strip()
                np = 0 if params in ("", "void") else params.count(",") + 1
                body = k - i - 1
                if body > MAX_LINES:
                    bad.append("%s:%d: %s is %d lines" % (rel(f), i, m.group(1), body))
                if np > MAX_PARAMS:
                    bad.append("%s:%d: %s takes %d parameters" % (rel(f), i, m.group(1), np))
            i = k
        i += 1
report(not bad and count > 500,
       "no function over %d lines or with over %d parameters (%d functions read)" % (MAX_LINES, MAX_PARAMS, count), bad)

sys.exit(1 if failed else 0)
