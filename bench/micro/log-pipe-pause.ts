/**
 * How a pause of whatever reads the service's standard output turns into dropped log lines: a
 * child writes access-log-sized lines through `logDestination` (src/http/observability/log-destination.ts, an 8 MiB
 * backlog) into a pipe, LINES_PER_TICK lines each turn of a 1 ms timer, as requests would come;
 * this process reads the pipe, stops reading once for PAUSE_SECONDS after the first MiB, then reads
 * on. Prints the rate reached and the lines dropped.
 *   npx tsx bench/micro/log-pipe-pause.ts [LINES_PER_TICK] [PAUSE_SECONDS] [LINES]
 * With an 8 MiB backlog, a pause that produces less than 8 MiB of lines should drop none; sonic-boom
 * retrying a full pipe only every 100 ms is what can make it drop some (docs/operations.md, Logs).
 */
import { once } from 'node:events';
import { spawnLoggingChild } from './logging-child.js';

const [perTick = 40, pauseSeconds = 1.5, lines = 300_000] = process.argv.slice(2).map(Number);
const child = spawnLoggingChild(
  `let n = 0; const started = Date.now();
     const tick = () => {
       for (let i = 0; i < ${perTick} && n < ${lines}; i++, n++)
         logger.info({ requestId: 'J2zIBcgmmchA-' + n.toString(36), method: 'GET', url: '/api/isOdd/12345', route: '/api/isOdd/:number', status: 200, ms: 0.12 }, 'request');
       if (n < ${lines}) setTimeout(tick, 1);
       else setTimeout(() => process.stderr.write(JSON.stringify({ seconds: (Date.now() - started) / 1000, dropped: droppedLogLines() })), 3000);
     };
     tick();`,
  { flushMs: 250, backlogBytes: 8 * 1024 * 1024 },
);
let read = 0;
let paused = false;
child.stdout?.on('data', (chunk: Buffer) => {
  read += chunk.length;
  if (!paused && read > 1024 * 1024) {
    paused = true;
    child.stdout?.pause();
    setTimeout(() => child.stdout?.resume(), pauseSeconds * 1000);
  }
});
let report = '';
child.stderr?.on('data', (chunk: Buffer) => (report += chunk.toString()));
await once(child, 'exit');
const { seconds, dropped } = JSON.parse(report) as { seconds: number; dropped: number };
console.log(
  `${lines} lines at ${Math.round(lines / seconds)} a second, reader paused ${pauseSeconds} s: ${dropped} dropped, ${(read / 1024 / 1024).toFixed(1)} MiB read`,
);
