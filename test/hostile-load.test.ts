import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { before, describe, test } from 'node:test';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompressSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { startServer } from './process.js';

// Issue: legal requests must not take the service down. The built service, MEMORY_LIMIT=768MiB;
// 24 connections send bodies at BODY_LIMIT to the costliest operations and batches of them, and
// 6 streams send lines without end, none of them reading the answers, while probes and small
// requests keep coming every 100 ms; some bodies come gzip-coded asking for coded answers, and
// some are decompression bombs. Linux only (/proc).

const MIB = 1024 * 1024;
const LIMIT = 768 * MIB;
const BODY_LIMIT = 16 * MIB;
const HOSTILE_CONNECTIONS = 24;
const HOSTILE_STREAMS = 6;
const HOSTILE_MS = 12_000;
const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Bodies just under BODY_LIMIT for the three costliest kinds of work, some gzip-coded with their
 * answers asked for in br; and decompression bombs: 64 KiB or less that would inflate to 64 MiB.
 */
function hostileBodies(): Array<[string, Buffer, Record<string, string>?]> {
  const fill = (head: string, unit: string, tail: string): Buffer => {
    const count = Math.floor((BODY_LIMIT - head.length - tail.length) / unit.length);
    return Buffer.from(head + unit.repeat(count).slice(0, -1) + tail);
  };
  const strings = Array.from({ length: 1_000_000 }, (_, i) => `"${String((i * 7919) % 1_000_003).padStart(13, 'k')}"`).join(',');
  const batchOf = (item: string, bytes: number): Buffer => {
    const count = Math.floor((bytes - 32) / (item.length + 1));
    return Buffer.from(`{"operations":[${Array.from({ length: count }, () => item).join(',')}]}`);
  };
  const sortItem = `{"operation":"sort","input":[${strings.slice(0, 64 * 1024)}]}`;
  return [
    ['/api/batch', batchOf(sortItem, BODY_LIMIT)],
    ['/api/batch', batchOf(`{"operation":"toString","input":[${'{"k":1},'.repeat(8 * 1024)}1]}`, 4 * MIB)],
    ['/api/stringSplit', Buffer.from(`{"input":{"seperator":"","string":"${'ab'.repeat((BODY_LIMIT - 64) / 2)}"}}`)],
    ['/api/toString', fill('{"input":[', '{"k":1},', ']}')],
    ['/api/sort', Buffer.from(`{"input":[${strings}]}`)],
    ['/api/sort', gzipSync(`{"input":[${strings}]}`), { 'content-encoding': 'gzip', 'accept-encoding': 'br' }],
    ['/api/batch', gzipSync(batchOf(sortItem, BODY_LIMIT)), { 'content-encoding': 'gzip', 'accept-encoding': 'zstd, gzip' }],
    ['/api/sort', gzipSync(Buffer.alloc(64 * MIB, 0x20), { level: 9 }), { 'content-encoding': 'gzip' }],
    ['/api/batch', brotliCompressSync(Buffer.alloc(64 * MIB, 0x20)), { 'content-encoding': 'br' }],
    ...(typeof zstdCompressSync === 'function'
      ? [['/api/toString', zstdCompressSync(Buffer.alloc(64 * MIB, 0x20)), { 'content-encoding': 'zstd' }] as [string, Buffer, Record<string, string>]]
      : []),
  ];
}

/** Resident memory of every process in the process group, in bytes. */
function groupRss(group: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== group) continue; // pgrp
      total += Number(fields[21]) * 4096; // rss, in pages
    } catch {
      // the process ended while it was read
    }
  }
  return total;
}

interface Answer {
  status: number;
  retryAfter: boolean;
  /** The problem's `detail`, when the first chunk of the answer holds it. */
  detail: string | undefined;
}

/** Sends one request and reads only the start of its answer, then nothing more. */
function hostileRequest(port: number, path: string, body: Buffer, headers: Record<string, string>, sockets: Socket[], answers: Answer[]): void {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra.join('')}\r\n`);
  socket.write(body);
  socket.once('data', (chunk: Buffer) => {
    const head = chunk.toString('utf8', 0, 2048);
    answers.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
      retryAfter: /\r\nretry-after: \d+\r\n/i.test(head),
      detail: /"detail":"((?:[^"\\]|\\.)*)"/.exec(head)?.[1],
    });
    socket.pause();
  });
}

/** A stream that sends lines as fast as the service takes them and never reads an answer. */
function hostileStream(port: number, sockets: Socket[], answers: Answer[]): void {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.write('POST /api/stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n');
  const lines = '{"operation":"sort","input":["b","a",3,1,null,{"k":[1,2]}]}\n{"operation":"toString","input":{"b":1,"a":[1.0,"é"]}}\n'.repeat(500);
  const chunk = `${Buffer.byteLength(lines).toString(16)}\r\n${lines}\r\n`;
  const send = (): void => {
    while (!socket.destroyed && socket.write(chunk));
  };
  socket.on('drain', send);
  send();
  socket.once('data', (head: Buffer) => {
    answers.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head.toString('latin1', 0, 64))?.[1]),
      retryAfter: /\r\nretry-after: \d+\r\n/i.test(head.toString('latin1', 0, 2048)),
      detail: undefined,
    });
    socket.pause();
  });
}

describe('hostile load within MEMORY_LIMIT', () => {
  before(async () => {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
  });
  const bodies = hostileBodies();

  for (const workers of (process.env.HOSTILE_WORKERS ?? '1,2').split(',').map(Number)) {
    test(`WORKERS=${workers}: RSS stays within the limit, probes and small requests are answered within 1 s, memory is given back`, async (t) => {
      const server = await startServer(t, { MEMORY_LIMIT: '768MiB', WORKERS: String(workers), LOG_LEVEL: 'warn' });
      const group = server.child.pid as number;
      // Where the processes start: with WORKERS=2 on Node 24, three idle processes are already near LIMIT / 2.
      const idle = groupRss(group);
      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, groupRss(group))), 50);

      const probes: Array<{ path: string; status: number; ms: number }> = [];
      let probing = true;
      const probeLoop = (async () => {
        for (let i = 0; probing; i++) {
          const started = performance.now();
          const small = i % 2 === 1;
          const path = small ? '/api/isEven' : '/healthz';
          const init: RequestInit = small ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":4}' } : {};
          const status = await fetch(`${server.base}${path}`, { ...init, signal: AbortSignal.timeout(1000) }).then(
            async (response) => (await response.arrayBuffer(), response.status),
            () => 0,
          );
          probes.push({ path, status, ms: performance.now() - started });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();

      // The longest the service's event loop took to turn (prom-client's gauge; reading /metrics starts it again).
      const loopDelayMs = async () =>
        1000 * Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(await (await fetch(`${server.base}/metrics`)).text())?.[1]);
      await loopDelayMs();
      const sockets: Socket[] = [];
      const answers: Answer[] = [];
      for (let i = 0; i < HOSTILE_CONNECTIONS; i++) {
        const [path, body, headers = {}] = bodies[i % bodies.length] as [string, Buffer, Record<string, string>?];
        hostileRequest(server.port, path, body, headers, sockets, answers);
      }
      for (let i = 0; i < HOSTILE_STREAMS; i++) hostileStream(server.port, sockets, answers);
      await new Promise((resolve) => setTimeout(resolve, HOSTILE_MS));
      for (const socket of sockets) socket.destroy();
      const hostilePeak = peak;
      const loopDelay = await loopDelayMs();

      // After the hostile clients have gone: memory comes back, and a real sort is served.
      const settled = Date.now();
      let rss = groupRss(group);
      // Given back: within 40% of the limit of where the group started (the allocator keeps some; Node 24 about 240 MiB).
      const givenBack = (bytes: number) => bytes - idle < LIMIT * 0.4;
      while (!givenBack(rss) && Date.now() - settled < 15_000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        rss = groupRss(group);
      }
      const settleMs = Date.now() - settled;
      probing = false;
      await probeLoop;
      clearInterval(sampler);
      const input = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_003);
      const sorted = await fetch(`${server.base}/api/sort`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input }),
      });
      assert.equal(sorted.status, 200);
      assert.deepEqual(
        ((await sorted.json()) as { sortedArray: number[] }).sortedArray,
        input.toSorted((a, b) => a - b),
      );

      const statuses = answers.map((a) => a.status).sort();
      const slowest = Math.max(...probes.map((p) => p.ms));
      t.diagnostic(
        `peak RSS ${(hostilePeak / MIB).toFixed(0)} MiB of ${LIMIT / MIB}; answered ${answers.length} of ${HOSTILE_CONNECTIONS + HOSTILE_STREAMS}: ${JSON.stringify(Object.fromEntries(statuses.map((s) => [s, statuses.filter((x) => x === s).length])))}; ` +
          `${probes.length} probes, slowest ${slowest.toFixed(0)} ms; the event loop's longest turn ${loopDelay.toFixed(0)} ms; RSS ${(rss / MIB).toFixed(0)} MiB ${settleMs} ms after the clients left (${(idle / MIB).toFixed(0)} MiB idle)`,
      );
      // What the 413s say one request may have, per process (README's hostile-load row quotes it).
      const ceilings = new Set(answers.map((a) => /may have (at most .* memory limit)/.exec(a.detail ?? '')?.[1]).filter((c) => c !== undefined));
      if (ceilings.size > 0) t.diagnostic(`the 413s: one request may have ${[...ceilings].join('; ')}`);
      if (process.env.HOSTILE_DEBUG) t.diagnostic(JSON.stringify(probes.map((p) => Math.round(p.ms))));
      assert.equal(server.child.exitCode, null, 'the service is still running');
      assert.doesNotMatch(server.errors(), /worker died/);
      assert.ok(hostilePeak <= LIMIT * 1.15, `peak RSS ${(hostilePeak / MIB).toFixed(0)} MiB`);
      for (const probe of probes) assert.ok(probe.status === 200 && probe.ms < 1000, `${probe.path}: ${probe.status} in ${probe.ms.toFixed(0)} ms`);
      assert.ok(probes.length >= 30);
      for (const answer of answers) {
        assert.ok([200, 413, 503].includes(answer.status), `status ${answer.status}`);
        if (answer.status === 503) assert.ok(answer.retryAfter, '503 carries Retry-After');
      }
      assert.ok(answers.length > 0);
      assert.ok(givenBack(rss), `RSS ${(rss / MIB).toFixed(0)} MiB ${settleMs} ms after the clients left, ${(idle / MIB).toFixed(0)} MiB idle`);
    });
  }
});

describe('decompression bombs (docs/behaviour.md §3, BODY_LIMIT)', () => {
  const bombs = Object.entries({
    gzip: gzipSync(Buffer.alloc(64 * MIB, 0x20), { level: 9 }),
    br: brotliCompressSync(Buffer.alloc(64 * MIB, 0x20)),
    ...(typeof zstdCompressSync === 'function' ? { zstd: zstdCompressSync(Buffer.alloc(64 * MIB, 0x20)) } : {}),
  });
  test('90 bombs of at most 64 KiB, each inflating to 64 MiB: each 413, never inflated past BODY_LIMIT: a few ms of CPU each, RSS bounded', async (t) => {
    const server = await startServer(t, { BODY_LIMIT: '1048576', LOG_LEVEL: 'warn' });
    const rssMiB = () => (Number(readFileSync(`/proc/${server.child.pid}/statm`, 'utf8').split(' ')[1]) * 4096) / MIB;
    const cpuMs = () => {
      const fields = readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) * 10;
    };
    const send = async (coding: string, bomb: Buffer) => {
      const answer = await fetch(`${server.base}/api/sort`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        body: bomb,
      });
      const text = await answer.text();
      assert.equal(answer.status, 413, `${coding}: ${text}`);
      assert.match(text, /decoded from \w+, is larger than the limit of 1048576 bytes \(BODY_LIMIT\)/);
    };
    // A plain body a little over the limit, sent chunked: refused as soon as it passes it, as a bomb is.
    const plain = Buffer.alloc(1024 * 1024 + 64 * 1024, 0x20);
    const sendPlain = async () => {
      const answer = await fetch(`${server.base}/api/sort`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Readable.from([plain]),
        duplex: 'half',
      });
      assert.equal(answer.status, 413, await answer.text());
    };
    for (const [coding, bomb] of bombs) await send(coding, bomb); // the code paths warmed up
    await sendPlain();
    const idle = rssMiB();
    const peakOf = async (requests: () => Promise<void>) => {
      let peak = 0;
      for (let round = 0; round < 30; round++) {
        await requests();
        peak = Math.max(peak, rssMiB());
      }
      return peak;
    };
    const plainPeak = await peakOf(async () => {
      for (let i = 0; i < bombs.length; i++) await sendPlain();
    });
    const cpuBefore = cpuMs();
    const bombPeak = await peakOf(async () => {
      for (const [coding, bomb] of bombs) await send(coding, bomb);
    });
    const cpu = (cpuMs() - cpuBefore) / (30 * bombs.length);
    t.diagnostic(
      `${30 * bombs.length} bombs: ${cpu.toFixed(1)} ms of CPU each; RSS ${idle.toFixed(0)} MiB before, at most ${bombPeak.toFixed(0)} MiB (after as many plain bodies over the limit: at most ${plainPeak.toFixed(0)} MiB)`,
    );
    // Inflating one whole bomb takes 200-300 ms of CPU here (docs/performance.md, Earlier measurements).
    assert.ok(cpu < 60, `${cpu.toFixed(1)} ms of CPU a bomb`);
    // What bombs leave is their decoded MiB each, garbage until V8 collects it (V8 lets up to about 64 MiB
    // of such buffers wait), and the decoders' windows the allocator keeps after they are freed (br 4 MiB
    // and zstd up to 8 MiB here): bounded, whatever the bombs would inflate to. 90 bombs inflated whole would be 5.6 GiB.
    assert.ok(bombPeak - idle < 128, `RSS rose ${(bombPeak - idle).toFixed(0)} MiB`);
  });
});
