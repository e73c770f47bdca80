#!/usr/bin/env bash
# The grid and /metrics of a 1,000-host mesh, timed and sized: /grid must
# render in chromium in under 2 s, one daemon's /metrics must be under
# 1 MB. The tests build the synthetic data and measure; this script holds
# the time limit, which tests do not assert.
set -euo pipefail
cd "$(dirname "$0")/.."
limit_ms=${GRID_LIMIT_MS:-2000}
out=$(go test ./internal/grid/ -count=1 -run '^TestThousandHostGridInChromium$' -v)
ms=$(sed -n 's/.*grid of 1,000 hosts rendered in \([0-9]*\) ms.*/\1/p' <<<"$out")
if [[ -z $ms ]]; then
	echo "grid-scale: the test printed no render time" >&2
	echo "$out" >&2
	exit 1
fi
go test ./internal/meshmetrics/ -count=1 -run '^TestScrapeOfAThousandHostMesh$' -v | grep -o 'scrape of one daemon.*'
echo "grid of 1,000 hosts rendered in ${ms} ms (limit ${limit_ms} ms)"
if ((ms >= limit_ms)); then
	echo "grid-scale: ${ms} ms is over the limit of ${limit_ms} ms" >&2
	exit 1
fi
