// The lightship peer. lightship's /ready answers from a state the service
// sets (signalReady / signalNotReady); it runs no checks per request. The
// equivalent of the same probes is therefore a loop that runs them every
// second and sets the state, which is what zb-health's ready tier does
// with a 1 s cache on each probe; the report compares the two.
// An ES module: lightship 9's CommonJS build does not load on Node 20.
import net from 'node:net';
import { createRequire } from 'node:module';
import { createLightship } from 'lightship';

// lightship 9 binds its server to 0.0.0.0 with no option to change it; the
// benchmark must expose nothing, so the one listen call is rewritten to
// loopback before lightship makes it (inside createLightship, below). Nothing on the request path changes.
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (options, ...rest) {
  if (options && typeof options === 'object' && options.host === '0.0.0.0') {
    options = { ...options, host: '127.0.0.1' };
  }
  return listen.call(this, options, ...rest);
};

const { runProbes, announce } = createRequire(import.meta.url)('./probes.cjs');

async function main() {
  // detectKubernetes off so lightship neither waits nor logs for a cluster;
  // port 0 lets the OS choose; no signals: the driver kills the process.
  const lightship = await createLightship({ detectKubernetes: false, port: 0, signals: [] });
  const refresh = async () => {
    const entries = await runProbes();
    const healthy = Object.values(entries).every((r) => r.status === 'Healthy');
    if (healthy) lightship.signalReady();
    else lightship.signalNotReady();
  };
  await refresh();
  setInterval(refresh, 1000);
  announce(lightship.server);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
