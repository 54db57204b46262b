import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isEven, isNumber, sort, stringSplit, toString, type JsonValue } from '../../src/core/index.js';
import { assertOk, assertProblem, post, sharedApp } from './helper.js';

const NOT_A_NUMBER = 'must be a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"';

describe('POST /api/sort', () => {
  const shared = sharedApp();
  const OK: Array<[string, string]> = [
    ['{"input":[3,1,2]}', '{"sortedArray":[1,2,3]}'],
    ['{"input":[]}', '{"sortedArray":[]}'],
    ['{"input":[10,9,1.0,-0,1e21]}', '{"sortedArray":[-0,1,9,10,1e+21]}'.replace('-0', '0')],
    ['{"input":["b","a","B","😀","\\uff01"]}', '{"sortedArray":["B","a","b","！","😀"]}'],
    ['{"input":["b","a","B"],"locale":"en"}', '{"sortedArray":["a","b","B"]}'],
    ['{"input":[1,3,2],"order":"desc"}', '{"sortedArray":[3,2,1]}'],
    ['{"input":[{"b":1,"a":2},[1],"a",3,null,true,false]}', '{"sortedArray":[null,false,true,3,"a",[1],{"b":1,"a":2}]}'],
    ['{"input":[{"__proto__":1},{"constructor":0}],"extra":"ignored"}', '{"sortedArray":[{"__proto__":1},{"constructor":0}]}'],
  ];
  for (const [body, expected] of OK) {
    test(`${body} → ${expected}`, async () => {
      const app = await shared();
      const response = await post(app, '/api/sort', body);
      assertOk(response, JSON.parse(expected));
      assert.equal(response.body, expected);
    });
  }

  const BAD: Array<[string, string, string]> = [
    ['{"input":3}', '/input', '/input must be an array of JSON values'],
    ['{"input":"[1,2]"}', '/input', '/input must be an array of JSON values'],
    ['{"input":null}', '/input', '/input must be an array of JSON values'],
    ['{"array":[1]}', '/input', '/input is required; the body has "array", which is not one of its fields'],
    ['{"input":[1e400]}', '/input/0', '/input/0 is a number beyond the range of a double'],
    ['{"input":[1,{"a":[-1e400]}]}', '/input/1/a/0', '/input/1/a/0 is a number beyond the range of a double'],
    ['{"input":[1],"order":"up"}', '/order', '/order must be "asc" or "desc"'],
    ['{"input":[1],"order":null}', '/order', '/order must be "asc" or "desc"'],
    ['{"input":[1],"locale":null}', '/locale', '/locale must be a BCP 47 language tag such as "en" or "de-DE"'],
    ['{"input":[1],"locale":"not a tag!"}', '/locale', '/locale must be a well-formed BCP 47 language tag, such as "en", "de-DE" or "sv"'],
  ];
  for (const [body, pointer, detail] of BAD) {
    test(`${body} is 400 at ${pointer}`, async () => {
      const app = await shared();
      assertProblem(await post(app, '/api/sort', body), 400, detail, [pointer]);
    });
  }
});

describe('POST /api/isEven and POST /api/isOdd', () => {
  const shared = sharedApp();
  // [body, isEven's answer]
  const OK: Array<[string, boolean]> = [
    ['{"input":4}', true],
    ['{"input":-3}', false],
    ['{"input":0}', true],
    ['{"input":-0}', true],
    ['{"input":4.0}', true],
    ['{"input":9007199254740993}', false], // rounds to the even double 9007199254740992
    ['{"input":9007199254740993.0}', false],
    ['{"input":1e400}', true],
    ['{"input":123456789012345678901234567891}', false],
    ['{"input":"9007199254740993"}', false],
    ['{"input":"123456789012345678901234567890"}', true],
    ['{"input":" 12 "}', true],
    ['{"input":"4.0"}', true],
    ['{"input":"1e3"}', true],
    ['{"input":"0x1F"}', false],
    ['{"input":"0b10"}', true],
    ['{ "input" : 7 , "input2": 8}', false],
    ['{"input":8,"input":7}', false], // the last duplicate wins, as in JSON.parse
    ['{"\\u0069nput":7}', false],
    ['{"other":{"input":2},"input":3}', false],
  ];
  for (const [body, even] of OK) {
    test(`${body}: isEven ${even}, isOdd ${!even}`, async () => {
      const app = await shared();
      assertOk(await post(app, '/api/isEven', body), { ret: even });
      assertOk(await post(app, '/api/isOdd', body), { ret: !even });
    });
  }

  const BAD: Array<[string, string]> = [
    ['{"input":2.5}', '/input must be an integer'],
    ['{"input":1.9999999999999999}', '/input must be an integer'],
    ['{"input":"2.5"}', '/input must be an integer'],
    ['{"input":1e-400}', '/input must be an integer'],
    ['{"input":true}', `/input ${NOT_A_NUMBER}`],
    ['{"input":null}', `/input ${NOT_A_NUMBER}`],
    ['{"input":"abc"}', `/input ${NOT_A_NUMBER}`],
    ['{"input":"Infinity"}', `/input ${NOT_A_NUMBER}`],
    ['{"input":""}', `/input ${NOT_A_NUMBER}`],
    ['{"input":[2]}', `/input ${NOT_A_NUMBER}`],
    ['{"input":{"value":2}}', `/input ${NOT_A_NUMBER}`],
    ['{"number":2}', '/input is required; the body has "number", which is not one of its fields'],
  ];
  for (const [body, detail] of BAD) {
    test(`${body} is 400`, async () => {
      const app = await shared();
      assertProblem(await post(app, '/api/isEven', body), 400, detail, ['/input']);
      assertProblem(await post(app, '/api/isOdd', body), 400, detail, ['/input']);
    });
  }
});

describe('a number written as a JSON number is answered as its text, every digit of it', () => {
  const shared = sharedApp();
  // JSON number literals (RFC 8259 §6): integers of up to 25 digits, fractions, exponents, signs.
  const digits = (min: number, max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max, size: 'max' }).map((d) => d.join(''));
  const literal = fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(
        fc.constant('0'),
        fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 24)).map(([first, rest]) => `${first}${rest}`),
      ),
      fc.oneof(
        fc.constant(''),
        digits(1, 22).map((d) => `.${d}`),
      ),
      fc.oneof(
        fc.constant(''),
        fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3)).map((parts) => parts.join('')),
      ),
    )
    .map((parts) => parts.join(''));

  test('isEven and isOdd of a number literal answer as of the same text in a string, which is never rounded', async () => {
    const app = await shared();
    await fc.assert(
      fc.asyncProperty(literal, fc.constantFrom('/api/isEven', '/api/isOdd'), async (text, path) => {
        const asNumber = await post(app, path, `{"input":${text}}`);
        const asString = await post(app, path, `{"input":"${text}"}`);
        assert.equal(asNumber.statusCode, asString.statusCode, text);
        if (asString.statusCode === 200) assert.equal(asNumber.body, asString.body, text);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('GET /api/isEven/{number} and GET /api/isOdd/{number}', () => {
  const shared = sharedApp();
  const OK: Array<[string, boolean]> = [
    ['4', true],
    ['-3', false],
    ['9007199254740993', false],
    ['123456789012345678901234567890', true],
    ['1e400', true],
    ['0x1F', false],
    ['4.0', true],
    ['%2012%20', true],
    ['%2B7', false],
    ['1'.repeat(10_000), false],
  ];
  for (const [segment, even] of OK) {
    test(`${segment.slice(0, 40)}: isEven ${even}, isOdd ${!even}`, async () => {
      const app = await shared();
      assertOk(await app.inject({ method: 'GET', url: `/api/isEven/${segment}` }), { ret: even });
      assertOk(await app.inject({ method: 'GET', url: `/api/isOdd/${segment}` }), { ret: !even });
    });
  }

  const BAD: Array<[string, string]> = [
    ['abc', `The path value "abc" ${NOT_A_NUMBER}`],
    ['2.5', 'The path value "2.5" must be an integer'],
    ['1.9999999999999999', 'The path value "1.9999999999999999" must be an integer'],
    ['Infinity', `The path value "Infinity" ${NOT_A_NUMBER}`],
    ['%20', `The path value " " ${NOT_A_NUMBER}`],
  ];
  for (const [segment, detail] of BAD) {
    test(`${segment} is 400`, async () => {
      const app = await shared();
      assertProblem(await app.inject({ method: 'GET', url: `/api/isEven/${segment}` }), 400, detail);
      assertProblem(await app.inject({ method: 'GET', url: `/api/isOdd/${segment}` }), 400, detail);
    });
  }
});

describe('POST /api/isNumber and GET /api/isNumber/{number}', () => {
  const shared = sharedApp();
  const OK: Array<[string, boolean]> = [
    ['{"input":12}', true],
    ['{"input":1e400}', true],
    ['{"input":-0}', true],
    ['{"input":"12"}', true],
    ['{"input":" -1.5e3 "}', true],
    ['{"input":"0x1F"}', true],
    ['{"input":".5"}', true],
    ['{"input":"\\u00a012\\ufeff"}', true],
    ['{"input":"Infinity"}', false],
    ['{"input":"12px"}', false],
    ['{"input":""}', false],
    ['{"input":true}', false],
    ['{"input":null}', false],
    ['{"input":[1]}', false],
    ['{"input":{"a":1}}', false],
  ];
  for (const [body, expected] of OK) {
    test(`POST ${body} → ${expected}`, async () => {
      const app = await shared();
      assertOk(await post(app, '/api/isNumber', body), { ret: expected });
    });
  }
  const PATHS: Array<[string, boolean]> = [
    ['12', true],
    ['-1.5e3', true],
    ['%20-1.5e3%20', true],
    ['0x1F', true],
    ['1e400', true],
    ['9'.repeat(10_000), true],
    ['abc', false],
    ['NaN', false],
    ['1_000', false],
    ['%C2%A0', false],
  ];
  for (const [segment, expected] of PATHS) {
    test(`GET ${segment.slice(0, 40)} → ${expected}`, async () => {
      const app = await shared();
      assertOk(await app.inject({ method: 'GET', url: `/api/isNumber/${segment}` }), { ret: expected });
    });
  }
  test('POST {} is 400: input is required', async () => {
    const app = await shared();
    assertProblem(await post(app, '/api/isNumber', {}), 400, '/input is required', ['/input']);
  });
});

describe('POST /api/toString', () => {
  const shared = sharedApp();
  const OK: Array<[string, string]> = [
    ['{"input":"héllo"}', 'héllo'],
    ['{"input":"\\ud800"}', '\ud800'],
    ['{"input":1e21}', '1e+21'],
    ['{"input":0.1}', '0.1'],
    ['{"input":-0}', '0'],
    ['{"input":1.0}', '1'],
    ['{"input":true}', 'true'],
    ['{"input":null}', 'null'],
    ['{"input":[1, "a", {}]}', '[1,"a",{}]'],
    ['{"input":{"b":[1.0,1e21],"a":"\\u20ac"}}', '{"a":"€","b":[1,1e+21]}'],
    ['{"input":{"__proto__":{"x":1},"constructor":2}}', '{"__proto__":{"x":1},"constructor":2}'],
  ];
  for (const [body, expected] of OK) {
    test(`${body} → ${JSON.stringify(expected)}`, async () => {
      const app = await shared();
      const response = await post(app, '/api/toString', body);
      assertOk(response, { ret: expected });
    });
  }
  test('a lone surrogate in a string survives the response as a \\u escape', async () => {
    const app = await shared();
    assert.equal((await post(app, '/api/toString', '{"input":"\\ud800"}')).body, '{"ret":"\\ud800"}');
  });
  test('{"input":1e400} is 400: no canonical form', async () => {
    const app = await shared();
    assertProblem(await post(app, '/api/toString', '{"input":1e400}'), 400, '/input is a number beyond the range of a double, which has no canonical form', [
      '/input',
    ]);
  });
  test('a lone surrogate inside an object is 400 at its pointer', async () => {
    const app = await shared();
    assertProblem(await post(app, '/api/toString', '{"input":{"a/b":["\\udc00"]}}'), 400, /^\/input\/a~1b\/0 contains a lone surrogate/, ['/input/a~1b/0']);
  });
});

describe('POST /api/stringSplit', () => {
  const shared = sharedApp();
  const OK: Array<[unknown, string[]]> = [
    [{ string: 'a,b,,c', seperator: ',' }, ['a', 'b', '', 'c']],
    [{ string: 'a.b.c', seperator: '.' }, ['a', 'b', 'c']],
    [{ string: 'a.b.c', separator: '.' }, ['a', 'b', 'c']],
    [{ string: 'a.b.c', seperator: '.', separator: '.' }, ['a', 'b', 'c']],
    [{ string: 'a b' }, ['a b']],
    [{ string: '👍🏽e\u0301', seperator: '' }, ['👍🏽', 'e\u0301']],
    [{ string: '', seperator: '' }, []],
    [{ string: '', seperator: ',' }, ['']],
    [{ string: 'a\ud800,b', seperator: ',' }, ['a\ud800', 'b']],
  ];
  for (const [input, expected] of OK) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, async () => {
      const app = await shared();
      assertOk(await post(app, '/api/stringSplit', { input }), { ret: expected });
    });
  }
  const BAD: Array<[unknown, string, string]> = [
    [{ input: 'a,b' }, '/input', '/input must be an object with a "string" field and an optional "seperator"'],
    [{ input: {} }, '/input/string', '/input/string is required'],
    [{ input: { string: 5 } }, '/input/string', '/input/string must be a string'],
    [{ input: { string: 'a', seperator: null } }, '/input/seperator', '/input/seperator must be a string'],
    [{ input: { string: 'a', separator: 1 } }, '/input/separator', '/input/separator must be a string'],
    [
      { input: { string: 'a', seperator: ',', separator: ';' } },
      '/input/separator',
      '/input/separator differs from /input/seperator; send one of them, or both equal',
    ],
  ];
  for (const [body, pointer, detail] of BAD) {
    test(`${JSON.stringify(body)} is 400 at ${pointer}`, async () => {
      const app = await shared();
      assertProblem(await post(app, '/api/stringSplit', body), 400, detail, [pointer]);
    });
  }
});

describe('every operation answers as its core function does (property)', () => {
  const shared = sharedApp();
  test('random JSON inputs', async () => {
    const app = await shared();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        const input = value as JsonValue;
        assert.deepEqual((await post(app, '/api/isNumber', { input })).json(), { ret: isNumber(input) });
        const canonical = await post(app, '/api/toString', { input });
        assert.deepEqual(canonical.json(), { ret: toString(input) });
        if (Array.isArray(input))
          assert.deepEqual((await post(app, '/api/sort', { input })).json(), { sortedArray: JSON.parse(JSON.stringify(sort(input))) as unknown });
        if (typeof input === 'string')
          assert.deepEqual((await post(app, '/api/stringSplit', { input: { string: input, seperator: '' } })).json(), { ret: stringSplit(input, '') });
        if (typeof input === 'number' && Number.isInteger(input)) assert.deepEqual((await post(app, '/api/isEven', { input })).json(), { ret: isEven(input) });
      }),
      { numRuns: 200 },
    );
  });
});
