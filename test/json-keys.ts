/**
 * The keys a JSON text gives twice within one object, with their path: `JSON.parse` keeps the last
 * and says nothing, so a log line like `{"pid":1,"pid":2}` reads as one pid to every log reader.
 * Throws on text that is not JSON.
 *
 * @example
 * duplicateKeys('{"pid":1,"a":{"b":1,"b":2},"pid":3}') //=> ['a.b', 'pid']
 */
export function duplicateKeys(text: string): string[] {
  let at = 0;
  const found: string[] = [];
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const fail = (): never => {
    throw new Error(`not JSON at ${at}: ${text.slice(0, 200)}`);
  };
  const string = (): string => {
    // eslint-disable-next-line no-control-regex -- JSON allows no raw control character in a string
    const end = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(at))?.[0] ?? fail();
    at += end.length;
    return JSON.parse(end) as string;
  };
  const value = (path: string): void => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const seen = new Set<string>();
      space();
      if (text[at] === '}') return void at++;
      for (;;) {
        space();
        const key = string();
        const keyPath = path === '' ? key : `${path}.${key}`;
        if (seen.has(key)) found.push(keyPath);
        seen.add(key);
        space();
        if (text[at++] !== ':') fail();
        value(keyPath);
        space();
        const next = text[at++];
        if (next === '}') return;
        if (next !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      space();
      if (text[at] === ']') return void at++;
      for (let i = 0; ; i++) {
        value(`${path}[${i}]`);
        space();
        const next = text[at++];
        if (next === ']') return;
        if (next !== ',') fail();
      }
    }
    if (c === '"') return void string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at))?.[0] ?? fail();
    at += literal.length;
  };
  value('');
  space();
  if (at !== text.length) fail();
  return found;
}
