// The @godaddy/terminus peer: a plain Node http server whose /ready runs
// the three probes on every request (Promise.all), as zb-health's ready
// tier without a cache does. Listens on 127.0.0.1, port chosen by the OS.
'use strict';

const http = require('node:http');
const { createTerminus } = require('@godaddy/terminus');
const { runProbes, announce } = require('./probes.cjs');

const server = http.createServer((req, res) => {
  res.statusCode = 404;
  res.end();
});

createTerminus(server, {
  healthChecks: {
    // terminus answers 200 with {"status":"ok","info":…} when this
    // resolves, 503 when it throws.
    '/ready': async () => {
      const entries = await runProbes();
      for (const [name, result] of Object.entries(entries)) {
        if (result.status !== 'Healthy') throw new Error(`${name} is ${result.status}`);
      }
      return entries;
    },
    '/healthz': async () => ({}),
  },
  // The driver stops the process with SIGKILL; no drain to wait for.
  signals: [],
});

server.listen(0, '127.0.0.1', () => announce(server));
