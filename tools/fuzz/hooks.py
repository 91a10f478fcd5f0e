"""Schemathesis hooks for aitasks: the rules of openapi.yaml that tie fields together.

JSON Schema cannot say "minChoices is at most the number of choices" or "exactly one of these
query parameters", so openapi.yaml lists such rules as `x-aitasks-rules` beside the schema or
operation they belong to. These hooks read that list and keep schemathesis's *valid* (positive)
requests within it, so a request the document calls valid is one the server must accept. Invalid
(negative) requests are left alone: the server must refuse every one of them.

The document is read from AITASK_FUZZ_SCHEMA (the copy `run.py` writes for the server under test).
"""

import datetime
import json
import os

import jsonschema_rs
import schemathesis
import yaml

with open(os.environ["AITASK_FUZZ_SCHEMA"], encoding="utf-8") as handle:
    DOCUMENT = yaml.safe_load(handle)


def deref(node, seen=()):
    """The document with every `$ref` replaced by what it points at (it has no cycles)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = DOCUMENT
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return deref(target)
        return {key: deref(value) for key, value in node.items()}
    if isinstance(node, list):
        return [deref(item) for item in node]
    return node


def depth(value):
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def plain(value):
    """No NUL in a string or a key, and every number a finite double."""
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return value.bit_length() < 1024  # beyond that, no double holds it
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    if isinstance(value, list):
        return all(plain(item) for item in value)
    if isinstance(value, dict):
        return all("\x00" not in key and plain(item) for key, item in value.items())
    return True


def stored_bytes(value):
    # Postgres prints jsonb with ", " and ": " separators, unescaped UTF-8.
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def broken_rule(rule, value):
    """The rule's name when `value` breaks it."""
    if not isinstance(value, dict):
        return None
    (name, spec), = rule.items()
    if name == "maxStoredBytes":
        # A margin for the defaults the server writes into the stored form.
        return name if stored_bytes(value) > spec - 2_000 else None
    if name == "maxDepth":
        return name if depth(value.get(spec["property"])) >= spec["levels"] else None
    if name == "plainJson":
        return name if not plain(value.get(spec["property"])) else None
    if name == "atMostCountOf":
        count, items = value.get(spec["property"]), value.get(spec["items"])
        if isinstance(count, (int, float)) and isinstance(items, list) and count > len(items):
            return name
        return None
    if name == "notBelow":
        low, high = value.get(spec["bound"], 0), value.get(spec["property"])
        if isinstance(low, (int, float)) and isinstance(high, (int, float)) and high < low:
            return name
        return None
    if name == "uniqueBy":
        keys = [item.get(spec["property"]) for item in value.get(spec["items"], []) if isinstance(item, dict)]
        return name if len(keys) != len(set(map(json.dumps, keys))) else None
    raise ValueError(f"openapi.yaml names a rule the fuzzer does not know: {name}")


def broken_rules(value, schema):
    """Every `x-aitasks-rules` entry that `value` breaks, anywhere under `schema`."""
    broken = [b for rule in schema.get("x-aitasks-rules", []) if (b := broken_rule(rule, value))]
    for branch in schema.get("oneOf", []):
        if jsonschema_rs.Draft202012Validator(branch).is_valid(value):
            broken += broken_rules(value, branch)
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                broken += broken_rules(value[key], sub)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            broken += broken_rules(item, schema["items"])
    return broken


def instant(text):
    """An RFC 3339 date-time as the server reads it, or None."""
    try:
        at = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


def broken_window(spec, query):
    """`from` and `to` (optional instants; `to` defaults to now, `from` to `defaultDays` before
    `to`) make a window that is not empty and at most `maxDays` long."""
    given = {key: (query or {}).get(spec[key]) for key in ("from", "to")}
    ends = {key: instant(value) if value is not None else None for key, value in given.items()}
    if any(given[key] is not None and ends[key] is None for key in ends):
        return False  # a malformed instant is the schema's business, not this rule's
    try:
        to = ends["to"] or datetime.datetime.now(datetime.timezone.utc)
        start = ends["from"] or to - datetime.timedelta(days=spec["defaultDays"])
        return not (start < to and to - start <= datetime.timedelta(days=spec["maxDays"]))
    except OverflowError:
        return True


def broken_bucketed_window(spec, query, margin=datetime.timedelta(seconds=10)):
    """The activity read's window (docs/api.md, "Activity"; ActivityWindow in the contracts
    crate): `bucket` seconds (default `defaultBucket`); `to` (default now) moved up and `from`
    moved down to a bucket's edge, `from` defaulting to a day before `to` (30 days for a bucket of
    a day), and for a bucket under an hour to no earlier than `minuteWindowHours` back. Not
    empty, at most `maxDays` long and `maxBuckets` buckets; a bucket under an hour only within
    the last `minuteWindowHours`. A case within `margin` of that edge counts as broken: the
    server's clock reads it a moment later."""
    query = query or {}
    given = {key: query.get(spec[key]) for key in ("from", "to")}
    ends = {key: instant(value) if value is not None else None for key, value in given.items()}
    if any(given[key] is not None and ends[key] is None for key in ends):
        return False  # a malformed instant is the schema's business, not this rule's
    try:
        bucket = int(query.get(spec["bucket"], spec["defaultBucket"]))
    except (TypeError, ValueError):
        return False  # the schema's business too
    utc = datetime.timezone.utc
    now = datetime.datetime.now(utc)
    step = datetime.timedelta(seconds=bucket)
    minutes_back = datetime.timedelta(hours=spec["minuteWindowHours"])

    def down(at):
        return datetime.datetime.fromtimestamp(int(at.timestamp()) // bucket * bucket, utc)

    def up(at):
        edge = down(at)
        return edge if edge == at else edge + step

    try:
        to = up(ends["to"] or now)
        if ends["from"] is not None:
            start = down(ends["from"])
        else:
            default = to - (datetime.timedelta(days=30) if bucket >= 86400 else datetime.timedelta(hours=24))
            earliest = now - minutes_back if bucket < 3600 else None
            start = up(earliest) if earliest is not None and default < earliest else down(default)
        return not (
            start < to
            and to - start <= datetime.timedelta(days=spec["maxDays"])
            and (to - start) // step <= spec["maxBuckets"]
            and (bucket >= 3600 or start >= now - minutes_back - step + margin)
        )
    except (OverflowError, ValueError, OSError):
        return True


def broken_query_rules(rules, query):
    present = {name for name, value in (query or {}).items() if value is not None}
    broken = []
    for rule in rules:
        (name, spec), = rule.items()
        if name == "exactlyOneOf" and len(present & set(spec)) != 1:
            broken.append(name)
        elif name == "requires" and spec["parameter"] in present and spec["with"] not in present:
            broken.append(name)
        elif name == "onlyWith" and present & set(spec["parameters"]) and not present & set(spec["anyOf"]):
            broken.append(name)
        elif name == "window" and broken_window(spec, query):
            broken.append(name)
        elif name == "bucketedWindow" and broken_bucketed_window(spec, query):
            broken.append(name)
        elif name not in ("exactlyOneOf", "requires", "onlyWith", "window", "bucketedWindow", "sameBodyPerHeader"):
            raise ValueError(f"openapi.yaml names a rule the fuzzer does not know: {name}")
    return broken


BODIES = {}
RULES = {}
for path, item in DOCUMENT["paths"].items():
    for method, operation in item.items():
        key = (method.upper(), path)
        RULES[key] = operation.get("x-aitasks-rules", [])
        content = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if content:
            BODIES[key] = deref(content["schema"])


# `sameBodyPerHeader`: a header whose value names one resource of the tenant (a run create's
# Idempotency-Key) is valid again only with the body it was first sent with: the same key with
# another body is refused (422). The bodies each value went with in positive cases so far.
BODY_OF_HEADER = {}


def header_value(headers, name):
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def reuses_header(rules, case, body):
    """Whether a `sameBodyPerHeader` header's value was sent before with another body; else
    remember this one's."""
    for rule in rules:
        (name, header), = rule.items()
        if name != "sameBodyPerHeader":
            continue
        value = header_value(case.headers, header)
        if value is None:
            continue
        seen = BODY_OF_HEADER.setdefault((case.operation.path, header, value), json.dumps(body, sort_keys=True))
        if seen != json.dumps(body, sort_keys=True):
            return True
    return False


@schemathesis.hook
def filter_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    key = (case.operation.method.upper(), case.operation.path)
    if broken_query_rules(RULES.get(key, []), case.query):
        return False
    schema = BODIES.get(key)
    body = case.body if not isinstance(case.body, type(None)) else None
    if schema is not None and broken_rules(body, schema):
        return False
    return not reuses_header(RULES.get(key, []), case, body)
