import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { test } from 'node:test';
import { startServer, type RunningServer } from './process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BODY = JSON.stringify({ input: Array.from({ length: 2000 }, (_, i) => (i * 7919) % 2000) });

type Outcome = { ok: true } | { ok: false; code: string };

function sortOnce(server: RunningServer, agent: Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(`${server.base}/api/sort`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const whole = res.statusCode === 200 && (JSON.parse(body) as { sortedArray: number[] }).sortedArray.length === 2000;
        resolve(whole ? { ok: true } : { ok: false, code: `status ${res.statusCode}` });
      });
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, code: `cut: ${error.code ?? error.message}` }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code ?? error.message }));
    req.end(BODY);
  });
}

for (const workers of ['1', '2']) {
  test(`SIGTERM under load (WORKERS=${workers}): every request the server took is answered whole, exit 0`, async (t) => {
    const server = await startServer(t, { WORKERS: workers, LOG_LEVEL: 'info', ACCESS_LOG: 'all', DRAIN_DELAY_MS: '300', SHUTDOWN_TIMEOUT_MS: '15000' });
    const outcomes: Outcome[] = [];
    let stop = false;
    const loops = Array.from({ length: 16 }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (!stop) {
        const outcome = await sortOnce(server, agent);
        outcomes.push(outcome);
        // Once the server no longer accepts connections, the load is over.
        if (!outcome.ok && outcome.code === 'ECONNREFUSED') break;
      }
      agent.destroy();
    });
    await sleep(1000);
    const sentBeforeSignal = outcomes.length;
    server.child.kill('SIGTERM');
    const code = await server.exited;
    stop = true;
    await Promise.all(loops);

    // The server logs one line per response it completed: each must have arrived whole.
    const answered = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"request"') && line.includes('/api/sort')).length;
    const whole = outcomes.filter((o) => o.ok).length;
    const failures = outcomes.filter((o): o is { ok: false; code: string } => !o.ok).map((o) => o.code);
    t.diagnostic(
      `requests ${outcomes.length} (before SIGTERM ${sentBeforeSignal}), answered by the server ${answered}, arrived whole ${whole}, refused ${failures.length}: ${[...new Set(failures)].join(', ')}`,
    );
    assert.equal(code, 0, server.errors());
    assert.ok(sentBeforeSignal > 50, 'the load was running');
    assert.equal(whole, answered, 'every response the server completed arrived whole');
    // Whatever failed never reached the server: refused connections after it closed.
    for (const failure of failures) assert.match(failure, /^(ECONNREFUSED|ECONNRESET|EPIPE|socket hang up)$/);
    assert.ok(!failures.some((f) => f.startsWith('cut') || f.startsWith('status')), failures.join(','));
  });
}
