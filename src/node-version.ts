import { ENGINES } from './version.js';

/**
 * Why this Node.js cannot run the service, in one line naming the version and the fix, or
 * undefined when `engines` accepts it (each alternative is a caret range: same major, at least
 * that minor and patch).
 *
 * @example
 * unsupportedNode('v20.20.2') //=> 'json-utility-service needs Node.js ^22.12.0 || ^24.11.0 || ^26.0.0 (package.json engines); this is v20.20.2. ...'
 * unsupportedNode('v22.23.3') //=> undefined
 */
export function unsupportedNode(version: string, engines: string = ENGINES): string | undefined {
  const [major = NaN, minor = NaN, patch = NaN] = version.replace(/^v/, '').split('.').map(Number);
  const accepted = engines.split('||').some((alternative) => {
    const [wantMajor = NaN, wantMinor = NaN, wantPatch = NaN] = alternative.trim().replace(/^\^/, '').split('.').map(Number);
    return major === wantMajor && (minor > wantMinor || (minor === wantMinor && patch >= wantPatch));
  });
  if (accepted) return undefined;
  const majors = [...new Set(engines.split('||').map((alternative) => alternative.trim().replace(/^\^/, '').split('.')[0]))];
  const lines = majors.length > 1 ? `${majors.slice(0, -1).join(', ')} or ${majors.at(-1)}` : (majors[0] ?? '');
  return (
    `json-utility-service needs Node.js ${engines} (package.json engines); this is ${version}. ` +
    `Run it with Node.js ${lines} first on PATH; in a checkout of the repository: export PATH="$(bash scripts/node.sh 22):$PATH"`
  );
}

/**
 * Exits with 1 and the line on standard error when this Node.js is outside `engines`; the entries
 * call it before they load anything else.
 *
 * @example
 * refuseUnsupportedNode(); // then: await import('./server.js')
 */
export function refuseUnsupportedNode(): void {
  const problem = unsupportedNode(process.version);
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
