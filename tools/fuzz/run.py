"""Run schemathesis against a running aitasks server (`scripts/fuzz.sh` starts one).

    run.py BASE_URL SECRET MODEL_ID[,MODEL_ID...] [schemathesis options]

Writes this server's copy of openapi.yaml (modelId pinned to its profiles: the one value set
the document cannot know ahead of the deployment), mints a dev token (HS256, as the dev
server's authorizer checks), and runs every check (tools/fuzz/schemathesis.toml), every phase, stateful links included.
"""

import base64
import hashlib
import hmac
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def token(secret, app_id):
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    now = int(time.time())
    signing = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": "fuzzer", "app_id": app_id, "iat": now, "exp": now + 7200})
    signature = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return signing + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def main():
    base_url, secret, models, *options = sys.argv[1:]
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    document["components"]["schemas"]["ModelId"]["enum"] = models.split(",")
    document["servers"] = [{"url": base_url}]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="aitasks-fuzz-"))
    schema = folder / "openapi.yaml"
    schema.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    env = dict(os.environ, AITASK_FUZZ_SCHEMA=str(schema), SCHEMATHESIS_HOOKS="hooks",
               PYTHONPATH=str(pathlib.Path(__file__).parent))
    command = [
        str(pathlib.Path(sys.executable).parent / "st"),
        "--config-file", str(pathlib.Path(__file__).parent / "schemathesis.toml"),
        "run", str(schema), "--url", base_url,
        # Every check (schemathesis.toml: `checks.enabled = true`; there, not as `--checks all`,
        # which would also override the one operation-specific exception the file makes).
        "--phases", "examples,coverage,fuzzing,stateful",
        "-H", f"Authorization: Bearer {token(secret, 'fuzz-app')}",
        "--report", "junit", "--report-dir", str(folder),
        *options,
    ]
    print(f"[fuzz] {' '.join(c if 'Bearer' not in c else 'Authorization: Bearer …' for c in command)}", flush=True)
    # Run in the temporary folder: schemathesis keeps a cache of past failures in its working
    # directory, which would otherwise land in the clone and replay one run's history in the next.
    sys.exit(subprocess.call(command, env=env, cwd=folder))


if __name__ == "__main__":
    main()
