#!/usr/bin/env python3
"""checkov on the SAM template, as compliance pipelines run it, with a stricter verdict.

    checkov_gate.py CHECKOV TEMPLATE

Fails on any finding that is neither fixed nor explained: a failed check, a parsing error, or a
check skipped in the template (`Metadata: checkov: skip`) without a comment saying why (checkov
itself accepts a skip with no comment). Prints checkov's counts, then each such finding.
"""
import json
import subprocess
import sys

# What checkov records for a skip that gave no comment.
NO_COMMENT = "No comment provided"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: checkov_gate.py CHECKOV TEMPLATE")
    checkov, template = sys.argv[1:]
    # --skip-download: nothing is fetched from Prisma Cloud (guidelines, severities), so the scan
    # is the same offline and on every machine.
    run = subprocess.run(
        [checkov, "--file", template, "--framework", "cloudformation", "--skip-download", "--output", "json"],
        capture_output=True,
        text=True,
    )
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"checkov gave no report (exit {run.returncode}):\n{run.stdout}{run.stderr}")
    reports = report if isinstance(report, list) else [report]
    problems = []
    for one in reports:
        summary = one.get("summary", {})
        results = one.get("results", {})
        if not summary.get("resource_count"):
            problems.append(f"checkov found no resources in {template}")
        print(
            f"checkov {summary.get('checkov_version', '?')} on {template}: "
            f"{summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed, "
            f"{summary.get('skipped', 0)} skipped in the template, "
            f"{summary.get('parsing_errors', 0)} parsing errors"
        )
        for check in results.get("failed_checks", []):
            lines = check.get("file_line_range", [])
            problems.append(
                f"{check['check_id']} ({check['check_name']}) on {check['resource']}, "
                f"lines {'-'.join(map(str, lines))}"
            )
        for check in results.get("skipped_checks", []):
            comment = (check.get("check_result") or {}).get("suppress_comment") or ""
            if not comment.strip() or comment == NO_COMMENT:
                problems.append(f"{check['check_id']} is skipped on {check['resource']} without a comment saying why")
        for error in results.get("parsing_errors", []):
            problems.append(f"checkov could not parse {error}")
    for problem in problems:
        print(f"  - {problem}")
    if problems:
        print(
            "Fix each, or skip it on its resource with the reason, for a reviewer to see:\n"
            "    Metadata:\n      checkov:\n        skip:\n          - id: CKV_AWS_...\n"
            "            comment: why this check does not apply here"
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
