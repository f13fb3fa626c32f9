#!/usr/bin/env node
// Container healthcheck: GET http://127.0.0.1:<port>/readyz, exit 0 on a 2xx within 3 s, else 1.
// The port is the argument, else METRICS_PORT (every role serves /readyz there), else 9464.
//   node bin/readyz.mjs [port]
const port = process.argv[2] || process.env.METRICS_PORT || "9464";
try {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) });
  await res.arrayBuffer();
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
