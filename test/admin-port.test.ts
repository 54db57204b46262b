import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { startServer } from './process.js';

// ADMIN_PORT (docs/operations.md, Observability): the probes and /metrics leave the API port for a
// second listener; with WORKERS > 1 the primary serves it, with every worker's metrics summed.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const get = (url: string) => fetch(url, { headers: { connection: 'close' } });

for (const workers of ['1', '2']) {
  describe(`ADMIN_PORT with WORKERS=${workers}`, () => {
    test('the probes and metrics answer on the admin port only; the metrics count every worker; readiness goes at SIGTERM', async (t) => {
      const server = await startServer(t, { WORKERS: workers, ADMIN_PORT: '0', DRAIN_DELAY_MS: '1500', LOG_LEVEL: 'info' });
      const admin = /"admin":"(http:\/\/[^"]+)"/.exec(server.output())?.[1];
      assert.ok(admin !== undefined && admin !== server.base, server.output());

      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const off = await get(`${server.base}${path}`);
        assert.equal(off.status, 404, path);
        assert.equal(((await off.json()) as { detail: string }).detail, `There is no GET ${path}; the operations are listed at /api/docs`);
        assert.equal((await get(`${admin}${path}`)).status, 200, path);
      }
      const notHere = await get(`${admin}/api/isEven/4`);
      assert.equal(notHere.status, 404);
      assert.equal(
        ((await notHere.json()) as { detail: string }).detail,
        'There is no GET /api/isEven/4 on the admin port; it serves /healthz, /readyz and /metrics',
      );

      // Fresh connections, so that the primary's round robin spreads them over the workers.
      for (let i = 0; i < 10; i++) assert.deepEqual(await (await get(`${server.base}/api/isEven/${i}`)).json(), { ret: i % 2 === 0 });
      const metrics = await (await get(`${admin}/metrics`)).text();
      assert.match(metrics, /^http_requests_total\{method="GET",route="\/api\/isEven\/:number",status="200"\} 10$/m);
      // The API port's 404s for the probes are counted; the admin port's own requests are not.
      assert.match(metrics, /^http_requests_total\{method="GET",route="unmatched",status="404"\} 3$/m);

      assert.deepEqual(await (await get(`${admin}/readyz`)).json(), { status: 'ready' });
      server.child.kill('SIGTERM');
      let readiness = 200;
      for (const deadline = Date.now() + 1_000; readiness === 200 && Date.now() < deadline; await sleep(25)) readiness = (await get(`${admin}/readyz`)).status;
      assert.equal(readiness, 503);
      // The API still answers during the drain delay: the load balancer is still moving away.
      assert.equal((await get(`${server.base}/api/isOdd/3`)).status, 200);
      assert.equal(await server.exited, 0, `${server.output()}\n${server.errors()}`);
    });

    test('an admin port in use: exit 1, naming the address and ADMIN_PORT', async (t) => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      t.after(() => taken.close());
      const port = (taken.address() as AddressInfo).port;
      await assert.rejects(startServer(t, { WORKERS: workers, ADMIN_PORT: String(port) }), (error: Error) => {
        assert.match(
          error.message,
          new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use by another process; set ADMIN_PORT or HOST to another \\(EADDRINUSE\\)`),
        );
        return true;
      });
    });
  });
}
