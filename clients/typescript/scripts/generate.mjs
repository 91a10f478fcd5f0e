// Generate src/generated/openapi.ts from the repository's openapi.yaml (`npm run generate`), or,
// with --check, regenerate it into a temporary file and fail when it differs from the committed
// one (`npm run check:drift`, part of `make client-ts`): the contract and the client's types
// cannot drift apart.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// AITASKS_OPENAPI_SPEC: another document (the drift check's own test uses a changed copy).
const spec = process.env.AITASKS_OPENAPI_SPEC ?? resolve(root, "../../openapi.yaml");
const committed = join(root, "src/generated/openapi.ts");
// --default-non-nullable false: a property with a default is optional in a request, as the API takes it.
// --empty-objects-unknown: `{type: object}` without properties is any object, not an empty one.
const FLAGS = ["--default-non-nullable", "false", "--empty-objects-unknown"];
const cli = join(root, "node_modules/openapi-typescript/bin/cli.js");

function generate(output) {
  const run = spawnSync(process.execPath, [cli, spec, "--output", output, ...FLAGS], { encoding: "utf8" });
  if (run.status !== 0) {
    process.stderr.write(run.stdout + run.stderr);
    process.exit(run.status ?? 1);
  }
}

if (!process.argv.includes("--check")) {
  generate(committed);
  console.log(`generated ${committed}`);
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), "aitasks-openapi-"));
try {
  const fresh = join(scratch, "openapi.ts");
  generate(fresh);
  const want = readFileSync(fresh, "utf8");
  const have = readFileSync(committed, "utf8");
  if (want !== have) {
    const wantLines = want.split("\n");
    const haveLines = have.split("\n");
    const first = wantLines.findIndex((line, i) => line !== haveLines[i]);
    console.error(
      `src/generated/openapi.ts is out of date with openapi.yaml (first difference at line ${first + 1}:\n` +
        `  committed: ${haveLines[first] ?? "<end of file>"}\n  generated: ${wantLines[first] ?? "<end of file>"})\n` +
        "Run `npm run generate` in clients/typescript and commit the result (then fix what no longer type-checks).",
    );
    process.exit(1);
  }
  console.log("drift check: src/generated/openapi.ts matches openapi.yaml");
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
