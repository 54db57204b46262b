/**
 * What writing one access-log line costs the event loop, by destination: pino's sonic-boom
 * buffering by itself (`minLength: 4096`, what the service used before) and the service's
 * `bufferedStdout` (src/buffered-stdout.ts). Lines go to standard output: run it as
 *   npx tsx bench/micro/log-destination.ts > /dev/null
 * Results go to standard error; rounds alternate, 20 lines per event-loop turn as under load.
 */
import pino from 'pino';
import { bufferedStdout } from '../../src/buffered-stdout.js';

const line = `${JSON.stringify({ level: 30, time: Date.now(), pid: 1234, hostname: 'host-abc', requestId: 'J2zIBcgmmchA-1f3', method: 'POST', url: '/api/isEven', route: '/api/isEven', status: 200, ms: 0.42, msg: 'request' })}\n`;
const destinations = {
  'sonic-boom minLength 4096': pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  bufferedStdout: bufferedStdout(250, 8 * 1024 * 1024),
};
const LINES = 200_000;

async function microsecondsPerLine(destination: pino.DestinationStream): Promise<number> {
  let written = 0;
  let spent = 0n;
  await new Promise<void>((resolve) => {
    const turn = () => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < 20 && written < LINES; i++, written++) destination.write(line);
      spent += process.hrtime.bigint() - start;
      if (written < LINES) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  return Number(spent) / LINES / 1000;
}

for (let round = 1; round <= 5; round++) {
  const figures: string[] = [];
  for (const [name, destination] of Object.entries(destinations)) figures.push(`${name} ${(await microsecondsPerLine(destination)).toFixed(3)} µs`);
  process.stderr.write(`round ${round}: ${figures.join(', ')} per line\n`);
}
