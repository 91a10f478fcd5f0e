// The drift check fails when openapi.yaml says something the committed types do not.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const script = new URL("../../scripts/generate.mjs", import.meta.url).pathname;
const spec = new URL("../../../../openapi.yaml", import.meta.url).pathname;

function check(specPath) {
  return spawnSync(process.execPath, [script, "--check"], { encoding: "utf8", env: { ...process.env, AITASKS_OPENAPI_SPEC: specPath } });
}

test("the committed types match openapi.yaml", () => {
  const run = check(spec);
  assert.equal(run.status, 0, run.stderr);
});

test("a changed contract fails the check and names the difference", () => {
  const dir = mkdtempSync(join(tmpdir(), "drift-"));
  try {
    const changed = readFileSync(spec, "utf8").replace("kind: {const: classify}", "kind: {const: categorize}");
    assert.notEqual(changed, readFileSync(spec, "utf8"));
    const path = join(dir, "openapi.yaml");
    writeFileSync(path, changed);
    const run = check(path);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /out of date with openapi\.yaml/);
    assert.match(run.stderr, /categorize/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
