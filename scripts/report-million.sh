#!/usr/bin/env bash
# The page of a 1,000,000-item run: its size, and how fast headless Chromium opens it.
# A benchmark to run by hand (it prints figures; nothing is asserted):
#   cargo build --release && scripts/report-million.sh target/release/rubricate
# Needs python3, chromium and chromedriver (Debian: apt install chromium chromium-driver).
set -euo pipefail
bin=$(realpath "${1:-target/release/rubricate}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"; pkill -f "chromedriver --port=9517" || true' EXIT
cd "$dir"
"$bin" init . >/dev/null
python3 - <<'PY'
import json
with open("items.jsonl", "w") as f:
    for i in range(1_000_000):
        said = ("yes really " if i % 3 == 0 else "yes " if i % 3 == 1 else "no ") + "answer number " + str(i)
        f.write(json.dumps({"id": f"i{i:07d}", "submission": said}) + "\n")
PY
cat > r.yaml <<'YAML'
id: m
name: Million
criteria:
  - { id: yes, requirement: Says yes, method: { check: contains, args: { text: "yes" } } }
  - { id: long, requirement: Says enough, method: { check: contains, args: { text: really } } }
YAML
"$bin" grade items.jsonl -r r.yaml --save --name million --format jsonl >/dev/null 2>&1 || true
/usr/bin/time -f "report written in %e s, peak RSS %M KB" "$bin" report million -o million.html
echo "page: $(stat -c %s million.html) bytes"
chromedriver --port=9517 >/dev/null 2>&1 &
sleep 1
python3 - "$dir/million.html" <<'PY'
import json, sys, time, urllib.request
base = "http://127.0.0.1:9517"
def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, method=method, data=data, headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
s = call("POST", "/session", {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
    "binary": "/usr/bin/chromium", "args": ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"]}}}})
sid = s["value"]["sessionId"]
for n in range(5):
    call("POST", f"/session/{sid}/url", {"url": "file://" + sys.argv[1]})
    end, rows = call("POST", f"/session/{sid}/execute/sync", {"script":
        "return [performance.getEntriesByType('navigation')[0].loadEventEnd, document.querySelectorAll('#items tbody tr').length]", "args": []})["value"]
    print(f"open {n + 1}: load event after {end:.0f} ms, {rows} rows drawn")
call("DELETE", f"/session/{sid}")
PY
