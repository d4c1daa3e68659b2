// The three probes every ready tier of the benchmark answers for, as the
// zb-health and bare servers define them (examples/bench/src/probes.rs):
// trivially fast async checks that resolve healthy with a description.
// Equal probe work on every side is what makes the comparison fair.
'use strict';

const check = (description) => async () => ({ status: 'Healthy', description });

/** The probes, by name, in the zb-health registry's order. */
const PROBES = {
  database: check('database reachable'),
  'disk-space': check('disk space above threshold'),
  cache: check('cache reachable'),
};

/** Runs every probe concurrently; resolves to { name: result }. */
async function runProbes() {
  const names = Object.keys(PROBES);
  const results = await Promise.all(names.map((name) => PROBES[name]()));
  return Object.fromEntries(names.map((name, i) => [name, results[i]]));
}

/** Tells the driver where the server listens: one line on stdout. */
function announce(server) {
  const { address, port } = server.address();
  process.stdout.write(`listening ${address}:${port}\n`);
}

module.exports = { runProbes, announce };
