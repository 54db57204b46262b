// Generated from the service's OpenAPI document by scripts/generate-client.ts. Do not edit:
// run `npm run generate:client` after changing a schema.

/** Each operation's input (the JSON body, or the path parameters) and its 200 response. */
export interface Operations {
  /** Sort an array */
  sort: {
    input: {
      "input": Array<unknown>;
      "order"?: "asc" | "desc";
      "locale"?: string;
    };
    output: {
      "sortedArray": Array<unknown>;
    };
  };
  /** Tell whether a number is even */
  isEven: {
    input: {
      "input": number | string;
    };
    output: {
      "ret": boolean;
    };
  };
  /** Tell whether the number in the path is even */
  isEvenByPath: {
    input: { number: string };
    output: {
      "ret": boolean;
    };
  };
  /** Tell whether a number is odd */
  isOdd: {
    input: {
      "input": number | string;
    };
    output: {
      "ret": boolean;
    };
  };
  /** Tell whether the number in the path is odd */
  isOddByPath: {
    input: { number: string };
    output: {
      "ret": boolean;
    };
  };
  /** Tell whether a value is a number */
  isNumber: {
    input: {
      "input": unknown;
    };
    output: {
      "ret": boolean;
    };
  };
  /** Tell whether the path segment is a number */
  isNumberByPath: {
    input: { number: string };
    output: {
      "ret": boolean;
    };
  };
  /** Convert a value to its string form */
  toString: {
    input: {
      "input": unknown;
    };
    output: {
      "ret": string;
    };
  };
  /** Split a string */
  stringSplit: {
    input: {
      "input": {
        "string": string;
        "seperator"?: string;
        "separator"?: string;
      };
    };
    output: {
      "ret": Array<string>;
    };
  };
  /** Sort an array (earlier revision) @deprecated */
  legacySort: {
    input: {
      "array": Array<unknown>;
    };
    output: {
      "sortedArray": Array<unknown>;
    };
  };
  /** Tell whether a number is odd (earlier revision) @deprecated */
  legacyIsOdd: {
    input: {
      "number": number | string;
    };
    output: {
      "number": number | string;
      "isOdd": boolean;
    };
  };
  /** Tell whether a number is even (earlier revision) @deprecated */
  legacyIsEven: {
    input: {
      "number": number | string;
    };
    output: {
      "number": number | string;
      "isEven": boolean;
    };
  };
  /** Convert a value to its string form (earlier revision) @deprecated */
  legacyToString: {
    input: {
      "number": unknown;
    };
    output: {
      "ret": string;
    };
  };
}

/** How each operation is called. */
export const OPERATIONS = {
  sort: { method: 'POST', path: '/api/sort', input: 'body', deprecated: false },
  isEven: { method: 'POST', path: '/api/isEven', input: 'body', deprecated: false },
  isEvenByPath: { method: 'GET', path: '/api/isEven/{number}', input: 'path', deprecated: false },
  isOdd: { method: 'POST', path: '/api/isOdd', input: 'body', deprecated: false },
  isOddByPath: { method: 'GET', path: '/api/isOdd/{number}', input: 'path', deprecated: false },
  isNumber: { method: 'POST', path: '/api/isNumber', input: 'body', deprecated: false },
  isNumberByPath: { method: 'GET', path: '/api/isNumber/{number}', input: 'path', deprecated: false },
  toString: { method: 'POST', path: '/api/toString', input: 'body', deprecated: false },
  stringSplit: { method: 'POST', path: '/api/stringSplit', input: 'body', deprecated: false },
  legacySort: { method: 'POST', path: '/sort', input: 'body', deprecated: true },
  legacyIsOdd: { method: 'POST', path: '/is-odd', input: 'body', deprecated: true },
  legacyIsEven: { method: 'POST', path: '/is-even', input: 'body', deprecated: true },
  legacyToString: { method: 'POST', path: '/toString', input: 'body', deprecated: true },
} as const satisfies Record<keyof Operations, { method: string; path: string; input: 'body' | 'path'; deprecated: boolean }>;
