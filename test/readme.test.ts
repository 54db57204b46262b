import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { SETTINGS } from '../src/config.js';
import { GENERATED, withTables } from '../scripts/readme-tables.js';
import { build } from './http/helper.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const usage = readFileSync(new URL('../docs/usage.md', import.meta.url), 'utf8');
// The curl examples of the README and of the earlier revision's page, checked alike.
const documents = readme + readFileSync(new URL('../docs/earlier-revision.md', import.meta.url), 'utf8');

interface Example {
  command: string;
  method: string;
  url: string;
  body: string | undefined;
  contentType: string;
  output: string;
}

/** Every `$ curl …` line of the documents with the output line under it. */
function examples(): Example[] {
  const lines = documents.split('\n');
  const found: Example[] = [];
  lines.forEach((line, index) => {
    // A piped example (coded bytes) is run by a shell instead: the test of the compressed-body examples.
    if (!line.startsWith('$ curl ') || line.includes(' | ')) return;
    const url = /localhost:3000(\/\S*)/.exec(line)?.[1];
    // curl sends the bytes as typed; the shell leaves single-quoted text alone, and turns \n in $'…' into a line break.
    const data = /-d '([^']*)'/.exec(line)?.[1] ?? /--data-binary \$'([^']*)'/.exec(line)?.[1]?.replaceAll('\\n', '\n');
    const method = /-X (\w+)/.exec(line)?.[1] ?? (data === undefined ? 'GET' : 'POST');
    const contentType = /-H 'content-type: ([^']+)'/.exec(line)?.[1] ?? 'application/json';
    assert.ok(url, line);
    // The output is every line up to the next command or the end of the block.
    const end = lines.findIndex((next, at) => at > index && (next.startsWith('$ ') || next.startsWith('```')));
    found.push({ command: line, method, url, body: data, contentType, output: lines.slice(index + 1, end).join('\n') });
  });
  return found;
}

test('the README shows at least one curl example per operation', () => {
  const urls = examples().map((e) => `${e.method} ${e.url.replace(/\/api\/(isEven|isOdd|isNumber)\/.+/, '/api/$1/{number}')}`);
  for (const operation of [
    'POST /api/sort',
    'POST /api/isEven',
    'GET /api/isEven/{number}',
    'POST /api/isOdd',
    'GET /api/isOdd/{number}',
    'POST /api/isNumber',
    'GET /api/isNumber/{number}',
    'POST /api/toString',
    'POST /api/stringSplit',
    'POST /api/batch',
    'POST /api/stream',
  ]) {
    assert.ok(urls.includes(operation), operation);
  }
});

for (const example of examples()) {
  test(`README: ${example.command.slice(2, 130)}`, async (t) => {
    const app = await build(t);
    const response = await app.inject({
      method: example.method as 'GET',
      url: example.url,
      ...(example.body === undefined ? {} : { headers: { 'content-type': example.contentType }, payload: example.body }),
    });
    assert.equal(response.body.trimEnd(), example.output);
  });
}

// The examples with coded bytes go through a shell and a real socket: gzip, gunzip and curl as a user types them.
test('README: the compressed-body examples print what the README shows, run by bash against the service', async (t) => {
  const app = await build(t);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const lines = readme.split('\n');
  const piped = lines.flatMap((line, index) =>
    line.startsWith('$ ') && /\| g(un)?zip/.test(line) ? [{ command: line.slice(2), output: lines[index + 1] }] : [],
  );
  assert.equal(piped.length, 2);
  for (const { command, output } of piped) {
    // Asynchronously: the service answering it runs in this process.
    const { stdout } = await promisify(execFile)('bash', ['-c', command.replaceAll('localhost:3000', base.replace('http://', ''))], { encoding: 'utf8' });
    assert.equal(stdout.trimEnd(), output, command);
  }
});

test('the generated tables (configuration in docs/operations.md, migration in README) are those of the code (npm run readme:tables)', () => {
  for (const file of Object.keys(GENERATED)) {
    const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
    assert.equal(text, withTables(file, text), file);
  }
  const operations = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
  for (const setting of Object.values(SETTINGS)) assert.ok(operations.includes(`| \`${setting.env}\` |`), setting.env);
});

test('README names nothing that exists only where it was built', () => {
  assert.doesNotMatch(readme, /these machines|CI's run of [0-9a-f]{7}/);
  for (const doc of ['docs/usage.md', 'docs/operations.md', 'docs/performance.md', 'docs/behaviour.md', 'docs/development.md', 'docs/earlier-revision.md'])
    assert.ok(readme.includes(`(${doc}`), doc);
});

test("the Architecture section's stages name files that exist and the functions in them", () => {
  const section = readme.slice(readme.indexOf('## Architecture'));
  const stages = [...section.matchAll(/^\w* +([\w/-]+\.ts) +(\w+):/gm)];
  assert.ok(stages.length >= 10 && stages.length <= 15, `${stages.length} stages`);
  for (const [line, file, name] of stages as unknown as Array<[string, string, string]>) {
    const path = new URL(`../src/${file}`, import.meta.url);
    assert.ok(existsSync(path), `${line}: no src/${file}`);
    assert.match(readFileSync(path, 'utf8'), new RegExp(`\\b${name}\\b`), `${line}: src/${file} has no ${name}`);
  }
  // The batch's walk names its files too.
  for (const [, file] of section.matchAll(/\(([\w/-]+\.ts)\)/g)) assert.ok(existsSync(new URL(`../src/${file}`, import.meta.url)), file);
});

/** Splits a shell line the way the README writes them: words and single-quoted strings. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? (match[2] as string));
}

test('every `$ json-utility` example of README and docs/usage.md prints what they show', () => {
  execFileSync('npm', ['run', 'build'], { cwd: new URL('..', import.meta.url).pathname, stdio: 'ignore' });
  const cli = new URL('../dist/cli.js', import.meta.url).pathname;
  const lines = `${readme}\n${usage}`.split('\n');
  let checked = 0;
  lines.forEach((line, index) => {
    const match = /^\$ (?:echo '([^']*)' \| )?json-utility (.*?)(; echo "exit \$\?")?$/.exec(line);
    if (match === null || match[2]?.startsWith('serve')) return;
    const [, stdin, command, showsExit] = match;
    let output: string;
    let code = 0;
    try {
      output = execFileSync(process.execPath, [cli, ...words(command as string)], {
        input: stdin === undefined ? '' : `${stdin}\n`,
        encoding: 'utf8',
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      const failed = error as { status: number; stdout: string; stderr: string };
      code = failed.status;
      output = failed.stdout + failed.stderr;
    }
    if (showsExit !== undefined) output += `exit ${code}\n`;
    const expected = lines.slice(index + 1, index + 1 + output.trimEnd().split('\n').length).join('\n');
    assert.equal(output.trimEnd(), expected, line);
    checked++;
  });
  assert.ok(checked >= 4, `${checked} examples checked`);
});
