/**
 * What writing one access-log line costs the event loop, by destination: pino's sonic-boom
 * buffering by itself (`minLength: 4096`, what the service used before) and the service's
 * `bufferedStdout` (src/buffered-stdout.ts). The lines are made by pino from the fields the
 * service logs, as in the service: pino builds a line by appending its parts, which leaves a rope
 * of them that the destination flattens (a line made by one `JSON.stringify` costs a destination
 * half as much). Only the time in the destination's `write` is counted. Lines go to standard
 * output: run it as
 *   npx tsx bench/micro/log-destination.ts > /dev/null
 * Results go to standard error; rounds alternate, 20 lines per event-loop turn as under load.
 */
import pino from 'pino';
import { bufferedStdout } from '../../src/http/observability/log-destination.js';

const destinations = {
  'sonic-boom minLength 4096': pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  bufferedStdout: bufferedStdout(250, 8 * 1024 * 1024),
};
const LINES = 200_000;

async function microsecondsPerLine(destination: pino.DestinationStream): Promise<number> {
  let spent = 0n;
  const timed = {
    write(line: string) {
      const start = process.hrtime.bigint();
      destination.write(line);
      spent += process.hrtime.bigint() - start;
    },
  };
  const log = pino({ level: 'info' }, timed);
  let written = 0;
  await new Promise<void>((resolve) => {
    const turn = () => {
      for (let i = 0; i < 20 && written < LINES; i++, written++) {
        const ms = Math.round(Math.random() * 100) / 100;
        log.info({ requestId: `J2zIBcgmmchA-${written.toString(36)}`, method: 'POST', url: '/api/isEven', route: '/api/isEven', status: 200, ms }, 'request');
      }
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
