/** Any value that JSON can express, as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A location inside a value: object keys and array indexes from the outside in. */
export type JsonPath = ReadonlyArray<string | number>;
