"""Runs registered tools inside the sandbox (copied into the workspace as _harness.py).

Reads request.json, calls each step module's run() in order (a step after the first
also sees the previous result as request["previous"]) and prints the last result as JSON.
The tool modules themselves never read stdin or files: this harness does it for them.
"""

import importlib
import json
import sys

sys.path.insert(0, ".")
with open("request.json") as handle:
    envelope = json.load(handle)
request = envelope["request"]
result = None
for step in envelope["steps"]:
    module = importlib.import_module(step)
    result = module.run(dict(request, previous=result) if result is not None else request)
    if not isinstance(result, dict):
        sys.exit(f"{step}.run() returned {type(result).__name__}, not a dict")
print(json.dumps(result))
