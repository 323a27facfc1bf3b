#!/bin/sh
# screenshot.sh runs dashdemo and saves a headless Chromium screenshot of its page to $1.
set -eu
out=${1:-docs/dashboard.png}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/dashdemo" ./breakerdebug/internal/dashdemo
"$dir/dashdemo" >"$dir/url" &
pid=$!
for _ in $(seq 50); do [ -s "$dir/url" ] && break; sleep 0.1; done
url=$(cat "$dir/url")
chromium=$(command -v chromium || command -v chromium-browser)
mkdir -p "$(dirname "$out")"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$dir/profile" \
	--timeout=3000 --window-size=1400,1250 --screenshot="$(pwd)/$out" "$url" 2>"$dir/err" ||
	{ cat "$dir/err"; exit 1; }
echo "wrote $out"
