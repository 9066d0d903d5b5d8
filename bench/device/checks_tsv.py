"""checks_tsv.py — the table of a device script's check jobs (run_afwd3.sh): one row per job of
JOBS (`TAG|COMMAND` lines) with its exit status and seconds (R/rc.txt), the shapes its
`--json` answer checked, the failing ones, and the sanitizer's summary lines (tags cs_*).

    python3 checks_tsv.py R JOBS > checks.tsv
"""
import json
import os
import sys


def text(R, tag, ext):
    try:
        return open(os.path.join(R, tag + ext)).read()
    except OSError:
        return ""


def main():
    R, jobs = sys.argv[1], sys.argv[2]
    rc = {}
    for line in text(R, "rc", ".txt").splitlines():
        p = line.split()
        if len(p) >= 3:
            rc[p[0]] = (int(p[1]), p[2])
    print("tag\texit\tseconds\tshapes\tfailing / sanitizer")
    for line in open(jobs):
        tag = line.split("|")[0]
        code, secs = rc.get(tag, (-1, "-"))
        try:
            doc = json.loads(text(R, tag, ".json"))
        except ValueError:
            doc = {}
        reps = doc.get("check", []) if isinstance(doc, dict) else []
        bad = [r.get("message", r.get("shape", "?"))[:100] for r in reps if not r.get("ok")]
        extra = ""
        if code == -1:
            extra = "not run (out of time)"
        elif tag.startswith("cs_"):
            err = text(R, tag, ".err") + text(R, tag, ".json")
            extra = " ".join(x.strip("= ") for x in err.splitlines() if "SUMMARY" in x)[:120]
        elif code != 0 and not bad:
            extra = text(R, tag, ".err")[-160:].replace("\n", " ").replace("\t", " ")
        print(f"{tag}\t{code}\t{secs}\t{len(reps)}\t{';'.join(bad[:2])} {extra}")


if __name__ == "__main__":
    main()
