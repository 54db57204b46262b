import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { TestContext } from 'node:test';

/** A server that takes connections and never answers; its base URL. Closed when the test ends. */
export async function silentServer(t: TestContext): Promise<string> {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  return `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
}
