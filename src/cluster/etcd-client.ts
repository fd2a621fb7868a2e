/**
 * etcd v3 through its JSON gateway (`/v3/kv/range`, `/v3/kv/txn`, `/v3/lease/*`) over HTTP(S)
 * (etcd-transport.ts, with the CA and client certificate for etcd's TLS): no gRPC stack, and each call has its own deadline, so a lost quorum shows as a failed call within
 * a second rather than a stream that hangs. Keys and values are base64 on the wire; here they are
 * strings. A member that does not answer is skipped for the next one.
 */

import { etcdTransport, type EtcdAnswer, type EtcdTlsFiles, type EtcdTransport } from './etcd-transport.js';

/** One key as etcd holds it. */
export interface EtcdKv {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  lease: string;
}

/** A condition of a transaction (etcd `Compare`). */
export type EtcdCompare =
  | { key: string; target: 'CREATE'; createRevision: number }
  | { key: string; target: 'MOD'; modRevision: number }
  | { key: string; target: 'VALUE'; value: string };

/** An operation of a transaction. */
export type EtcdOp =
  | { put: { key: string; value: string; lease?: string } }
  | { delete: { key: string } }
  | { range: { key: string; prefix?: boolean } };

export interface EtcdTxnResult {
  succeeded: boolean;
  revision: number;
  /** The keys each range operation returned, in order of the operations. */
  ranges: EtcdKv[][];
}

/** etcd could not be asked (no member answered, or none has a leader): the cluster's 503. */
export class EtcdUnavailable extends Error {}

export interface EtcdClientOptions {
  endpoints: readonly string[];
  username?: string;
  password?: string;
  /** CA and client certificate for `https://` members. */
  tls?: EtcdTlsFiles;
  /** Deadline of one call to one member, ms. */
  timeoutMs?: number;
}

const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const decode = (text: string | undefined): string => Buffer.from(text ?? '', 'base64').toString('utf8');

/** The key just past every key that starts with `prefix` (etcd's `range_end` of a prefix). */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) + 1;
  return bytes.toString('base64');
}

export class EtcdClient {
  private readonly endpoints: string[];
  private current = 0;
  private token: string | undefined;
  private readonly timeoutMs: number;
  private readonly transport: EtcdTransport;

  constructor(private readonly options: EtcdClientOptions) {
    if (options.endpoints.length === 0)
      throw new Error('cluster.etcd.endpoints: at least one URL is required');
    this.endpoints = options.endpoints.map((url) => url.replace(/\/+$/, ''));
    this.timeoutMs = options.timeoutMs ?? 1500;
    this.transport = etcdTransport(this.endpoints, options.tls);
  }

  /** Closes the pooled connections to the members. */
  close(): void {
    this.transport.close();
  }

  async range(key: string, prefix = false): Promise<{ kvs: EtcdKv[]; revision: number }> {
    const body: Record<string, unknown> = { key: encode(key) };
    if (prefix) body.range_end = prefixEnd(key);
    const answer = (await this.call('/v3/kv/range', body)) as RangeAnswer;
    return { kvs: (answer.kvs ?? []).map(readKv), revision: Number(answer.header?.revision ?? 0) };
  }

  async txn(compare: EtcdCompare[], success: EtcdOp[], failure: EtcdOp[] = []): Promise<EtcdTxnResult> {
    const answer = (await this.call('/v3/kv/txn', {
      compare: compare.map(wireCompare),
      success: success.map(wireOp),
      failure: failure.map(wireOp),
    })) as { header?: { revision?: string }; succeeded?: boolean; responses?: TxnResponse[] };
    return {
      succeeded: answer.succeeded === true,
      revision: Number(answer.header?.revision ?? 0),
      ranges: (answer.responses ?? []).flatMap((response) =>
        response.response_range === undefined ? [] : [(response.response_range.kvs ?? []).map(readKv)],
      ),
    };
  }

  /** A new lease of `ttlSeconds`; its id as etcd writes it (a decimal string). */
  async grant(ttlSeconds: number): Promise<string> {
    const answer = (await this.call('/v3/lease/grant', { TTL: ttlSeconds })) as { ID?: string };
    if (answer.ID === undefined) throw new EtcdUnavailable('etcd granted no lease');
    return answer.ID;
  }

  /** Renews the lease; false when etcd no longer knows it (it expired). */
  async keepAlive(lease: string): Promise<boolean> {
    const answer = (await this.call('/v3/lease/keepalive', { ID: lease })) as {
      result?: { TTL?: string };
    };
    return Number(answer.result?.TTL ?? 0) > 0;
  }

  async revoke(lease: string): Promise<void> {
    await this.call('/v3/lease/revoke', { ID: lease });
  }

  /** Asks the members in turn, starting with the last that answered. */
  private async call(path: string, body: unknown): Promise<unknown> {
    let lastError: unknown;
    for (let tried = 0; tried < this.endpoints.length; tried++) {
      const endpoint = this.endpoints[this.current] as string;
      try {
        return await this.callOne(endpoint, path, body);
      } catch (error) {
        lastError = error;
        this.current = (this.current + 1) % this.endpoints.length;
      }
    }
    throw new EtcdUnavailable(`etcd did not answer: ${(lastError as Error)?.message ?? lastError}`);
  }

  private async callOne(endpoint: string, path: string, body: unknown, retried = false): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.username) {
      this.token ??= await this.authenticate(endpoint);
      headers.authorization = this.token;
    }
    const response = await this.transport.post(
      endpoint + path,
      JSON.stringify(body),
      headers,
      this.timeoutMs,
    );
    const answer = readAnswer(response) as { error?: string; message?: string; code?: number };
    if (response.status === 200 && answer.error === undefined) return answer;
    const message = answer.message ?? answer.error ?? `HTTP ${response.status}`;
    // An expired auth token is renewed once.
    if (!retried && this.options.username && /token/i.test(message)) {
      this.token = undefined;
      return this.callOne(endpoint, path, body, true);
    }
    // etcd says the lease is gone: an answer, not an outage.
    if (/requested lease not found/.test(message)) return {};
    throw new Error(message);
  }

  private async authenticate(endpoint: string): Promise<string> {
    const response = await this.transport.post(
      endpoint + '/v3/auth/authenticate',
      JSON.stringify({ name: this.options.username, password: this.options.password ?? '' }),
      { 'content-type': 'application/json' },
      this.timeoutMs,
    );
    const answer = readAnswer(response) as { token?: string; message?: string };
    if (answer.token === undefined)
      throw new Error(`etcd login failed: ${answer.message ?? response.status}`);
    return answer.token;
  }
}

/** The gateway's JSON; anything else (a proxy's page, plain HTTP sent to a TLS port) as an error. */
function readAnswer(response: EtcdAnswer): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    // etcd 3.4's gateway cannot take the user from a certificate, and says so in plain text.
    if (/CommonName of client/.test(response.text))
      throw new Error(
        'etcd has authentication on and refuses a client certificate with a CommonName through its JSON gateway: use one without CN (the user is cluster.etcd.username)',
      );
    throw new Error(`HTTP ${response.status}, not etcd's JSON: ${response.text.slice(0, 100).trim()}`);
  }
}

interface WireKv {
  key?: string;
  value?: string;
  create_revision?: string;
  mod_revision?: string;
  lease?: string;
}
interface RangeAnswer {
  header?: { revision?: string };
  kvs?: WireKv[];
}
interface TxnResponse {
  response_range?: { kvs?: WireKv[] };
}

function readKv(kv: WireKv): EtcdKv {
  return {
    key: decode(kv.key),
    value: decode(kv.value),
    createRevision: Number(kv.create_revision ?? 0),
    modRevision: Number(kv.mod_revision ?? 0),
    lease: kv.lease ?? '0',
  };
}

function wireCompare(compare: EtcdCompare): Record<string, unknown> {
  const base = { key: encode(compare.key), target: compare.target, result: 'EQUAL' };
  switch (compare.target) {
    case 'CREATE':
      return { ...base, create_revision: String(compare.createRevision) };
    case 'MOD':
      return { ...base, mod_revision: String(compare.modRevision) };
    case 'VALUE':
      return { ...base, value: encode(compare.value) };
  }
}

function wireOp(op: EtcdOp): Record<string, unknown> {
  if ('put' in op) {
    const put: Record<string, unknown> = { key: encode(op.put.key), value: encode(op.put.value) };
    if (op.put.lease !== undefined) put.lease = op.put.lease;
    return { request_put: put };
  }
  if ('delete' in op) return { request_delete_range: { key: encode(op.delete.key) } };
  const range: Record<string, unknown> = { key: encode(op.range.key) };
  if (op.range.prefix === true) range.range_end = prefixEnd(op.range.key);
  return { request_range: range };
}
