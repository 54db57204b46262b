import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const BIN = `${root}dist/cli.js`;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the compiled binary, as `npx json-utility` would, with `stdin` as its standard input. */
async function cli(args: string[], stdin?: string): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdin.end(stdin ?? '');
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** `json-utility serve` with these flags and environment, once it says where it listens. */
async function serve(flags: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'serve', ...flags], {
    env: { ...process.env, DRAIN_DELAY_MS: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const LISTENING = /listening on (http:\/\/[^\s"]+)/;
  while (!LISTENING.test(output)) await new Promise((resolve) => setTimeout(resolve, 25));
  return { child, exited, stdout: () => output, base: LISTENING.exec(output)?.[1] as string };
}

describe('the json-utility binary', () => {
  before(async () => {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: root });
  });

  const CALLS: Array<[string[], string | undefined, string]> = [
    [['isEven', '9007199254740993'], undefined, '{"ret":false}'],
    [['isOdd', '0x1F'], undefined, '{"ret":true}'],
    [['isOdd', '--', '-7'], undefined, '{"ret":true}'],
    [['isOdd', '-7'], undefined, '{"ret":true}'],
    [['isEven', '-.5e1', '--desc'], undefined, '{"ret":false}'],
    [['toString', '-0'], undefined, '{"ret":"0"}'],
    [['isEven'], '12\n', '{"ret":true}'],
    [['isNumber'], ' -1.5e3 ', '{"ret":true}'],
    [['isNumber', ' -1.5e3 '], undefined, '{"ret":true}'],
    [['isNumber', '12px'], undefined, '{"ret":false}'],
    [['sort'], '[3,1,2]', '{"sortedArray":[1,2,3]}'],
    [['sort', '["b","a","B"]', '--locale', 'en', '--desc'], undefined, '{"sortedArray":["B","b","a"]}'],
    [['toString', '{"b":[1.0,1e21],"a":"é"}'], undefined, '{"ret":"{\\"a\\":\\"é\\",\\"b\\":[1,1e+21]}"}'],
    [['toString'], '"text"', '{"ret":"text"}'],
    [['stringSplit', 'a,b,,c', ','], undefined, '{"ret":["a","b","","c"]}'],
    [['stringSplit', '👍🏽e\u0301', ''], undefined, '{"ret":["👍🏽","e\u0301"]}'],
  ];
  for (const [args, stdin, expected] of CALLS) {
    test(`${[...args].map((a) => JSON.stringify(a)).join(' ')}${stdin === undefined ? '' : ` < ${stdin}`} prints ${expected}`, async () => {
      assert.deepEqual(await cli(args, stdin), { code: 0, stdout: `${expected}\n`, stderr: '' });
    });
  }

  // In the command line's words: the argument, standard input, a place inside them, an option.
  const BAD: Array<[string[], string | undefined, string]> = [
    [['isEven', '2.5'], undefined, 'isEven: the argument must be an integer'],
    [['isOdd', 'abc'], undefined, 'isOdd: the argument must be a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"'],
    [['sort'], '{"not":"an array"}', 'sort: standard input must be an array of JSON values'],
    [['sort'], '[1,', 'sort: standard input is not valid JSON: Unexpected end of JSON input'],
    [['toString', '[1e400]'], undefined, 'toString: [0] of the argument is a number beyond the range of a double, which has no canonical form'],
    [['sort', '[1]', '--locale', 'xx-!!'], undefined, 'sort: the --locale option must be a well-formed BCP 47 language tag, such as "en", "de-DE" or "sv"'],
  ];
  for (const [args, stdin, detail] of BAD) {
    test(`${args.join(' ')}${stdin === undefined ? '' : ` < ${stdin}`} exits 1 with: ${detail}`, async () => {
      assert.deepEqual(await cli(args, stdin), { code: 1, stdout: '', stderr: `${detail}\n` });
    });
  }

  test('--version prints the package version; --help the usage', async () => {
    assert.deepEqual(await cli(['--version']), { code: 0, stdout: '1.0.0\n', stderr: '' });
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^json-utility 1\.0\.0: /);
    for (const command of ['serve', 'isEven', 'isOdd', 'isNumber', 'sort', 'toString', 'stringSplit'])
      assert.match(help.stdout, new RegExp(`json-utility ${command}\\b`));
  });

  // A usage error is two lines on standard error, exit 2: what is wrong, then the usage and where the help is; never the whole help.
  const USAGE: Array<[string[], string]> = [
    [
      [],
      'json-utility: missing a command: serve or an operation (sort, isEven, isOdd, isNumber, toString, stringSplit)\nusage: json-utility <command> [value] (json-utility --help for more)',
    ],
    [['frobnicate'], 'json-utility: unknown command "frobnicate"\nusage: json-utility <command> [value] (json-utility --help for more)'],
    [['isEven', '--nope', '2'], 'json-utility: unknown option --nope\nusage: json-utility <command> [value] (json-utility --help for more)'],
    [['stringSplit'], 'stringSplit: missing <string>\nusage: json-utility stringSplit <string> [separator] (json-utility --help for more)'],
    [['isEven', '1', '2'], 'isEven: takes at most 1 argument, not 2\nusage: json-utility isEven [number] (json-utility --help for more)'],
    [
      ['stringSplit', 'a', 'b', 'c'],
      'stringSplit: takes at most 2 arguments, not 3\nusage: json-utility stringSplit <string> [separator] (json-utility --help for more)',
    ],
    [['isOdd', '--url', 'http://127.0.0.1:1'], 'isOdd: --url works with --lines\nusage: json-utility isOdd [number] (json-utility --help for more)'],
  ];
  for (const [args, stderr] of USAGE) {
    test(`${args.join(' ') || '(no arguments)'}: a usage error in two lines, exit 2`, async () => {
      assert.deepEqual(await cli(args), { code: 2, stdout: '', stderr: `${stderr}\n` });
    });
  }

  // Nothing on standard input (or a lone line break) is called empty, not judged as a value.
  for (const command of ['isEven', 'isOdd', 'isNumber', 'sort', 'toString']) {
    for (const stdin of ['', '\n']) {
      test(`${command} < ${JSON.stringify(stdin)}: standard input is empty, exit 1`, async () => {
        const result = await cli([command], stdin);
        assert.deepEqual(result, { code: 1, stdout: '', stderr: `${command}: standard input is empty: give the value as an argument or on standard input\n` });
      });
    }
  }

  test('serve: flags override the environment; SIGTERM stops it cleanly', async () => {
    const { child, stdout, exited, base } = await serve(['--port', '0', '--host', '127.0.0.1', '--workers', '1'], {
      PORT: '1',
      HOST: '192.0.2.1',
      WORKERS: '4',
    });
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.doesNotMatch(stdout(), /workers/);
    assert.deepEqual(await (await fetch(`${base}/api/isOdd/7`)).json(), { ret: true });
    child.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null]);
  });

  const LINES_IN = '4\n7\nx\n9007199254740993\n0x1F';
  const LINES_OUT = [
    '{"status":200,"result":{"ret":true}}',
    '{"status":200,"result":{"ret":false}}',
    /^\{"status":400,"problem":\{.*"detail":"\/input must be a number, or a string in numeric notation/,
    '{"status":200,"result":{"ret":false}}',
    '{"status":200,"result":{"ret":false}}',
  ];
  function assertLines(result: Result, expected: Array<string | RegExp>): void {
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, expected.length, result.stdout);
    for (const [index, line] of lines.entries()) {
      const wanted = expected[index] as string | RegExp;
      if (typeof wanted === 'string') assert.equal(line, wanted);
      else assert.match(line, wanted);
    }
  }

  test('--lines: one input per line of stdin, one answer line per line, exit 1 when any was a problem', async () => {
    const result = await cli(['isEven', '--lines'], LINES_IN);
    assert.equal(result.code, 1);
    assertLines(result, LINES_OUT);
    assert.deepEqual(await cli(['stringSplit', '--lines', ','], 'a,b\nc\n'), {
      code: 0,
      stdout: '{"status":200,"result":{"ret":["a","b"]}}\n{"status":200,"result":{"ret":["c"]}}\n',
      stderr: '',
    });
    assertLines(await cli(['sort', '--lines', '--desc'], '[1,3]\n[1,\n'), [
      '{"status":200,"result":{"sortedArray":[3,1]}}',
      /"detail":"The line is not valid JSON/,
    ]);
    assert.match((await cli(['isEven', '--url', 'http://127.0.0.1:1'])).stderr, /^isEven: --url works with --lines\n/);
  });

  test('--lines --url: the same answers, from a service', async () => {
    const { child, exited, base } = await serve(['--port', '0', '--host', '127.0.0.1'], {});
    try {
      const result = await cli(['isEven', '--lines', '--url', base], LINES_IN);
      assert.equal(result.code, 1);
      assertLines(result, LINES_OUT);
      assert.deepEqual(await cli(['isOdd', '--lines', '--url', base], '1\n3\n'), {
        code: 0,
        stdout: '{"status":200,"result":{"ret":true}}\n{"status":200,"result":{"ret":true}}\n',
        stderr: '',
      });
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    // A port nothing listens on (not port 1, which fetch refuses as a bad port before connecting).
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    const unreachable = await cli(['isOdd', '--lines', '--url', `http://127.0.0.1:${port}`], '1\n');
    assert.equal(unreachable.code, 1);
    assert.equal(
      unreachable.stderr,
      `Cannot reach POST http://127.0.0.1:${port}/api/stream: connect ECONNREFUSED 127.0.0.1:${port} (the service was not reached)\n`,
    );
  });
});
