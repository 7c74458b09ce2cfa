"""Exchange rates from the treasury desk's daily snapshot (supplied by a person: the
sandbox has no network, so the model cannot fetch them)."""

import json
import re

SNAPSHOT = {"EUR": 1.0, "USD": 1.0842, "GBP": 0.8571, "JPY": 162.31, "CHF": 0.9412,
            "AUD": 1.6477, "NZD": 1.7925, "CAD": 1.4733}


def run(request):
    pair = re.search(r"\b([A-Z]{3}) to ([A-Z]{3})\b", request["goal"])
    if pair is None or pair.group(1) not in SNAPSHOT or pair.group(2) not in SNAPSHOT:
        return {"artifact_type": "data", "format": "text", "content": "unknown pair",
                "metrics": {"rate": 0}}
    rate = round(SNAPSHOT[pair.group(2)] / SNAPSHOT[pair.group(1)], 6)
    return {"artifact_type": "data", "format": "json",
            "content": json.dumps({f"{pair.group(1)}/{pair.group(2)}": rate}),
            "metrics": {"rate": rate}}
