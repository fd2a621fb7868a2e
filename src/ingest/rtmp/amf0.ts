/**
 * AMF0 (Action Message Format 0, Adobe's AMF0 specification, 2006): the encoding of RTMP command
 * and data messages. Decoding is pure and total: malformed input throws `Amf0Error`, never reads
 * past the buffer, and nesting is bounded so a hostile peer cannot exhaust the stack.
 */

/** A decoded AMF0 value. Objects and ECMA arrays both decode to plain records. */
export type Amf0Value = number | boolean | string | null | undefined | Date | Amf0Object | Amf0Value[];
export interface Amf0Object {
  [key: string]: Amf0Value;
}

export class Amf0Error extends Error {
  override readonly name = 'Amf0Error';
}

const NUMBER = 0x00;
const BOOLEAN = 0x01;
const STRING = 0x02;
const OBJECT = 0x03;
const NULL = 0x05;
const UNDEFINED = 0x06;
const ECMA_ARRAY = 0x08;
const OBJECT_END = 0x09;
const STRICT_ARRAY = 0x0a;
const DATE = 0x0b;
const LONG_STRING = 0x0c;

/** Deeper nesting than any encoder sends; the bound keeps recursion away from the stack limit. */
const MAX_DEPTH = 32;

/** Decodes every value in `buffer`, in order (a command: name, transaction id, object, args…). */
export function decodeAmf0(buffer: Buffer): Amf0Value[] {
  const reader = { buffer, offset: 0 };
  const values: Amf0Value[] = [];
  while (reader.offset < buffer.length) values.push(readValue(reader, 0));
  return values;
}

interface Reader {
  buffer: Buffer;
  offset: number;
}

function need(reader: Reader, bytes: number): void {
  if (reader.offset + bytes > reader.buffer.length) {
    throw new Amf0Error(`truncated value at byte ${reader.offset}`);
  }
}

function readValue(reader: Reader, depth: number): Amf0Value {
  if (depth > MAX_DEPTH) throw new Amf0Error(`nesting deeper than ${MAX_DEPTH}`);
  need(reader, 1);
  const marker = reader.buffer[reader.offset++] as number;
  switch (marker) {
    case NUMBER:
      need(reader, 8);
      reader.offset += 8;
      return reader.buffer.readDoubleBE(reader.offset - 8);
    case BOOLEAN:
      need(reader, 1);
      return reader.buffer[reader.offset++] !== 0;
    case STRING:
      return readString(reader, 2);
    case LONG_STRING:
      return readString(reader, 4);
    case OBJECT:
      return readProperties(reader, depth);
    case ECMA_ARRAY:
      need(reader, 4);
      reader.offset += 4; // the count is advisory; the object-end marker ends the list
      return readProperties(reader, depth);
    case STRICT_ARRAY: {
      need(reader, 4);
      const count = reader.buffer.readUInt32BE(reader.offset);
      reader.offset += 4;
      // Every element takes at least one byte: a count larger than the rest is a lie.
      if (count > reader.buffer.length - reader.offset) throw new Amf0Error(`array of ${count} elements`);
      const items: Amf0Value[] = [];
      for (let index = 0; index < count; index++) items.push(readValue(reader, depth + 1));
      return items;
    }
    case DATE: {
      need(reader, 10);
      const ms = reader.buffer.readDoubleBE(reader.offset);
      reader.offset += 10; // the time-zone field is reserved and ignored
      return new Date(ms);
    }
    case NULL:
      return null;
    case UNDEFINED:
      return undefined;
    default:
      throw new Amf0Error(`unsupported marker 0x${marker.toString(16)} at byte ${reader.offset - 1}`);
  }
}

function readString(reader: Reader, lengthBytes: 2 | 4): string {
  need(reader, lengthBytes);
  const length =
    lengthBytes === 2 ? reader.buffer.readUInt16BE(reader.offset) : reader.buffer.readUInt32BE(reader.offset);
  reader.offset += lengthBytes;
  need(reader, length);
  const text = reader.buffer.toString('utf8', reader.offset, reader.offset + length);
  reader.offset += length;
  return text;
}

function readProperties(reader: Reader, depth: number): Amf0Object {
  // No prototype: a key named `__proto__` from the wire stays an ordinary key.
  const object = Object.create(null) as Amf0Object;
  for (;;) {
    const key = readString(reader, 2);
    if (key === '') {
      need(reader, 1);
      if (reader.buffer[reader.offset] === OBJECT_END) {
        reader.offset++;
        return object;
      }
    }
    object[key] = readValue(reader, depth + 1);
  }
}

/** Encodes values in order. Records become AMF0 objects; `undefined` becomes AMF0 undefined. */
export function encodeAmf0(values: readonly Amf0Value[]): Buffer {
  const parts: Buffer[] = [];
  for (const value of values) writeValue(parts, value);
  return Buffer.concat(parts);
}

function writeValue(parts: Buffer[], value: Amf0Value): void {
  if (typeof value === 'number') {
    const buffer = Buffer.allocUnsafe(9);
    buffer[0] = NUMBER;
    buffer.writeDoubleBE(value, 1);
    parts.push(buffer);
  } else if (typeof value === 'boolean') {
    parts.push(Buffer.from([BOOLEAN, value ? 1 : 0]));
  } else if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    const long = text.length > 0xffff;
    const head = Buffer.allocUnsafe(long ? 5 : 3);
    head[0] = long ? LONG_STRING : STRING;
    if (long) head.writeUInt32BE(text.length, 1);
    else head.writeUInt16BE(text.length, 1);
    parts.push(head, text);
  } else if (value === null) {
    parts.push(Buffer.from([NULL]));
  } else if (value === undefined) {
    parts.push(Buffer.from([UNDEFINED]));
  } else if (value instanceof Date) {
    const buffer = Buffer.alloc(11);
    buffer[0] = DATE;
    buffer.writeDoubleBE(value.getTime(), 1);
    parts.push(buffer);
  } else if (Array.isArray(value)) {
    const head = Buffer.allocUnsafe(5);
    head[0] = STRICT_ARRAY;
    head.writeUInt32BE(value.length, 1);
    parts.push(head);
    for (const item of value) writeValue(parts, item);
  } else {
    parts.push(Buffer.from([OBJECT]));
    for (const [key, item] of Object.entries(value)) {
      const name = Buffer.from(key, 'utf8');
      const length = Buffer.allocUnsafe(2);
      length.writeUInt16BE(Math.min(name.length, 0xffff), 0);
      parts.push(length, name.subarray(0, 0xffff));
      writeValue(parts, item);
    }
    parts.push(Buffer.from([0, 0, OBJECT_END]));
  }
}
