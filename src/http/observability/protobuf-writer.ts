/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/) as otlp-protobuf.ts
 * needs it: varints, fixed64, length-delimited fields written in place, strings and hex ids by
 * Node's native writes.
 */

export const LENGTH_DELIMITED = 2;
export const VARINT = 0;
export const FIXED64 = 1;
export const FIXED32 = 5;

// A hex digit's value: 0-9, a-f or A-F.
const nibble = (code: number): number => (code <= 57 ? code - 48 : (code | 32) - 87);

/**
 * Protobuf's binary encoding, written into one growing buffer (otlp-protobuf.ts's only writer).
 *
 * @example
 * const writer = new Writer(Buffer.allocUnsafe(64)); writer.tag(1, LENGTH_DELIMITED); writer.string('span');
 */
export class Writer {
  pos = 0;
  constructor(public buffer: Buffer) {}

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  varint(value: number): void {
    this.ensure(10);
    const buffer = this.buffer;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 127) {
        buffer[this.pos++] = (v & 127) | 128;
        v >>>= 7;
      }
      buffer[this.pos++] = v;
      return;
    }
    // Past 32 bits, and negative numbers as 64-bit two's complement (protobuf's int64).
    const magnitude = Math.abs(value);
    let low = magnitude >>> 0;
    let high = (magnitude / 4294967296) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      buffer[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buffer[this.pos++] = low & 127;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  fixed64(low: number, high: number): void {
    this.ensure(8);
    this.buffer.writeUInt32LE(low >>> 0, this.pos);
    this.buffer.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(text: string): void {
    // Most strings are ASCII: their length is known and a loop copies them faster than a call into
    // Node's encoder does for a few dozen characters. The first other character starts again natively.
    const length = text.length;
    const start = this.pos;
    this.varint(length);
    this.ensure(length);
    const buffer = this.buffer;
    let pos = this.pos;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code > 127) {
        this.pos = start;
        const bytes = Buffer.byteLength(text, 'utf8');
        this.varint(bytes);
        this.ensure(bytes);
        this.pos += this.buffer.write(text, this.pos, bytes, 'utf8');
        return;
      }
      buffer[pos++] = code;
    }
    this.pos = pos;
  }

  /** A trace or span id, given in hex, as its bytes. */
  hex(id: string): void {
    const bytes = id.length >>> 1;
    this.varint(bytes);
    this.ensure(bytes);
    const buffer = this.buffer;
    for (let i = 0; i < bytes; i++) buffer[this.pos++] = (nibble(id.charCodeAt(2 * i)) << 4) | nibble(id.charCodeAt(2 * i + 1));
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buffer.set(value, this.pos);
    this.pos += value.length;
  }

  /** Opens a length-delimited message: one byte is kept for its length, most messages being under 128 bytes. */
  open(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the message opened at `at`, moving its bytes when the length needs more than one byte. */
  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buffer[at] = length;
      return;
    }
    let size = 2;
    while (length >= 2 ** (7 * size)) size++;
    this.ensure(size - 1);
    this.buffer.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = length;
    for (let i = 0; i < size - 1; i++) {
      this.buffer[at + i] = (v & 127) | 128;
      v = Math.floor(v / 128);
    }
    this.buffer[at + size - 1] = v;
  }
}
