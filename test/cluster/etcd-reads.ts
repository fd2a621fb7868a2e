/** The ranges (reads) the etcd members at `endpoints` have served, from their `/metrics`. */
export async function etcdReads(endpoints: string[]): Promise<number> {
  let total = 0;
  for (const endpoint of endpoints) {
    const text = await (await fetch(`${endpoint}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    const line = /^etcd_mvcc_range_total (\S+)$/m.exec(text);
    if (line === null) throw new Error(`${endpoint}/metrics has no etcd_mvcc_range_total`);
    total += Number(line[1]);
  }
  return total;
}
