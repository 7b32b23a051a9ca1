#!/usr/bin/env python3
"""readme_blocks.py - the README's code blocks as a test (tests/cli/test_readme.sh).

    readme_blocks.py README.md ROOT OUTDIR BACKEND

Reads every fenced code block of README.md and decides by its language and by
a marker comment on the line just before its opening fence what the test does
with it (README.md, "Code blocks in this README", says the same to writers):

    ```sh / ```bash / ```shell   run, in order, by one bash (set -e), so cd and
                                 export carry over from block to block
    ```text                      not code (syntax summaries, listings): nothing
    ```json                      must parse as JSON
    <!-- readme-test: skip REASON -->        not run (REASON is required)
    <!-- readme-test: file PATH -->          the block is PATH's content (PATH
                                             relative to the checkout), exactly
    <!-- readme-test: excerpt PATH -->       every line of the block is a line of
                                             PATH, in order (a "..." line skips)
    <!-- readme-test: servers -->            run only on PostgreSQL and MariaDB,
                                             with each `export DJC_DATABASE_URL=...`
                                             line's URL replaced by the test's server

Any other block (no language, or a language not listed, without a file or
excerpt marker) is an error, so a new block must say what it is.

Writes OUTDIR/run.sh (the runnable blocks, each sourced from OUTDIR/blockN.sh
after `README_LINE=N`, so a failure names the README line), prints one line
per block it checked or scheduled, and exits 1 after printing
"README.md:LINE: problem" lines when a block is wrong.
"""
import json
import os
import re
import sys

RUN = {"sh", "bash", "shell"}
MARK = re.compile(r"^\s*<!--\s*readme-test:\s*(\S+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^`\s]*)")


def blocks(lines):
    """(line number of the opening fence, info, marker, body lines)"""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).lower()
        start = i
        marker = None
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0:
            mm = MARK.match(lines[j])
            if mm:
                marker = (mm.group(1), mm.group(2))
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence)) and
                                      lines[i].strip().strip(fence[0]) == ""):
            ln = lines[i]
            body.append(ln[len(indent):] if ln.startswith(indent) else ln)
            i += 1
        if i >= len(lines):
            yield start + 1, info, marker, None   # unterminated
            return
        yield start + 1, info, marker, body
        i += 1


def excerpt_ok(body, text):
    have = [ln.strip() for ln in text.splitlines()]
    k = 0
    for ln in body:
        want = ln.strip()
        if not want or want in ("...", "/* ... */", "# ..."):
            continue
        while k < len(have) and have[k] != want:
            k += 1
        if k == len(have):
            return want
        k += 1
    return None


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: readme_blocks.py README.md ROOT OUTDIR BACKEND")
    readme, root, outdir, backend = sys.argv[1:]
    name = os.path.basename(readme)
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    problems = []
    run = []
    for line, info, marker, body in blocks(lines):
        where = "%s:%d" % (name, line)
        if body is None:
            problems.append("%s: code block never closed" % where)
            continue
        kind, arg = marker if marker else (None, "")
        if kind == "skip":
            if not arg:
                problems.append("%s: readme-test: skip needs a reason" % where)
            else:
                print("%s: skipped (%s)" % (where, arg))
        elif kind in ("file", "excerpt"):
            path = os.path.join(root, arg)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                problems.append("%s: readme-test: %s %s: %s" % (where, kind, arg, e.strerror))
                continue
            if kind == "file":
                if "\n".join(body) + "\n" != text:
                    problems.append("%s: the block differs from %s" % (where, arg))
                else:
                    print("%s: is %s" % (where, arg))
            else:
                bad = excerpt_ok(body, text)
                if bad is not None:
                    problems.append("%s: not in %s (in this order): %s" % (where, arg, bad))
                else:
                    print("%s: is an excerpt of %s" % (where, arg))
        elif kind == "servers":
            if info not in RUN:
                problems.append("%s: readme-test: servers marks a block that is not sh" % where)
            elif backend == "sqlite":
                print("%s: servers only (not on sqlite)" % where)
            else:
                body = [re.sub(r"^(\s*export\s+DJC_DATABASE_URL=).*$", r'\1"$README_SERVER_URL"', ln) for ln in body]
                run.append((line, body))
        elif kind is not None:
            problems.append("%s: unknown marker readme-test: %s" % (where, kind))
        elif info in RUN:
            run.append((line, body))
        elif info == "text":
            pass
        elif info == "json":
            try:
                json.loads("\n".join(body))
                print("%s: JSON parses" % where)
            except ValueError as e:
                problems.append("%s: JSON does not parse: %s" % (where, e))
        else:
            problems.append("%s: a code block of language '%s' without a readme-test marker "
                            "(use sh, text, json, or a marker)" % (where, info or "(none)"))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "run.sh"), "w") as out:
        out.write("set -eE -o pipefail\n")
        out.write("trap 'echo \"%s:$README_LINE: block failed (exit $?) at: $BASH_COMMAND\" >&2' ERR\n" % name)
        for n, (line, body) in enumerate(run):
            path = os.path.join(outdir, "block%d.sh" % n)
            with open(path, "w") as b:
                b.write("\n".join(body) + "\n")
            out.write("README_LINE=%d\necho \"== %s:%d\"\n. %s\n" % (line, name, line, path))
            print("%s:%d: runs" % (name, line))
        out.write("echo \"== %s: %d blocks ran\"\n" % (name, len(run)))
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
