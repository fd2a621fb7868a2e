import { CATALOG, METRIC_INDEX } from '../store/index.js';
import { ByteReader, ByteWriter } from './byte-buffer.js';
import { describeSeries, type SeriesInfo } from './series-kind.js';

/**
 * The series of a segment file, in the order of its sections: a string table (metric names and
 * label values, each once), then per series its metric name and label values as numbers in the
 * table. Consecutive windows of a tier usually hold the same series, so their tables are byte for
 * byte the same: `SeriesTables` parses each distinct table once and hands the same `SeriesInfo`s
 * to every file that has it (parsing names and labels was most of the cost of reading an index).
 */
export function encodeSeriesTable(series: readonly SeriesInfo[]): Uint8Array {
  const strings = new Map<string, number>();
  const idOf = (text: string): number => strings.get(text) ?? strings.set(text, strings.size).size - 1;
  const refs = series.map((info) => [idOf(CATALOG[info.metricIndex]!.name), ...info.labelValues.map(idOf)]);
  const table = new ByteWriter(1024);
  table.varint(strings.size);
  for (const text of strings.keys()) table.string(text);
  table.varint(series.length);
  for (const [name, ...labels] of refs) {
    table.varint(name!);
    table.varint(labels.length);
    for (const label of labels) table.varint(label);
  }
  return table.finish().slice();
}

/** Parses a series table; `undefined` for a series whose metric is no longer in the catalog. */
function decodeSeriesTable(bytes: Uint8Array): (SeriesInfo | undefined)[] {
  const reader = new ByteReader(bytes);
  const strings: string[] = [];
  for (let i = reader.varint(); i > 0; i--) strings.push(reader.string());
  const text = (id: number): string => {
    const value = strings[id];
    if (value === undefined) throw new RangeError(`string ${id} not in the table`);
    return value;
  };
  const series: (SeriesInfo | undefined)[] = [];
  for (let i = reader.varint(); i > 0; i--) {
    const metricIndex = METRIC_INDEX.get(text(reader.varint()));
    const labels: string[] = [];
    for (let l = reader.varint(); l > 0; l--) labels.push(text(reader.varint()));
    series.push(metricIndex === undefined ? undefined : describeSeries(metricIndex, labels));
  }
  if (!reader.done) throw new RangeError('series table: bytes after the last series');
  return series;
}

/** Parsed series tables by their bytes, the most recently used kept (bounded: a few per tier). */
export class SeriesTables {
  private readonly tables = new Map<string, (SeriesInfo | undefined)[]>();
  private readonly capacity: number;

  constructor(capacity = 8) {
    this.capacity = capacity;
  }

  decode(bytes: Uint8Array): (SeriesInfo | undefined)[] {
    // Latin-1 maps every byte to one character: the bytes as a Map key.
    const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let series = this.tables.get(key);
    if (series !== undefined) {
      this.tables.delete(key);
    } else {
      series = decodeSeriesTable(bytes);
      if (this.tables.size >= this.capacity) this.tables.delete(this.tables.keys().next().value!);
    }
    this.tables.set(key, series);
    return series;
  }
}
