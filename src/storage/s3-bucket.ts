import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Storage } from '../config/index.js';
import { ApiError } from '../http/index.js';

/** Bounds on waiting for the S3 endpoint (docs/storage.md#s3-filesystems). */
export interface S3Timeouts {
  /** Until the TCP (and TLS) connection is up, milliseconds. */
  connectMs: number;
  /** Until a request's answer headers arrived (a whole answer for listings and deletes), milliseconds. */
  requestMs: number;
  /** A socket silent this long mid-transfer (an upload part, a body being read) is given up, milliseconds. */
  idleMs: number;
}

/** Metadata of one object. */
export interface ObjectInfo {
  key: string;
  sizeBytes: number;
  lastModifiedMs: number;
}

/** Size of one part of a multipart upload, bytes; held in memory while it is sent (two at a time). */
export const PART_BYTES = 8 * 1024 * 1024;

/**
 * One bucket on an S3-compatible endpoint: the few calls the S3 filesystem needs, each bounded in
 * time, failures turned into the API's 502 (the endpoint failed or refused) or 504 (it did not
 * answer in time) naming the filesystem. The SDK's default request checksums are off
 * (`WHEN_REQUIRED`): since @aws-sdk/client-s3 3.729 it otherwise sends every upload as
 * `aws-chunked` with a CRC32 trailer, which many S3-compatible servers store inside the object
 * or refuse.
 */
export class S3Bucket {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(
    private readonly storage: S3Storage,
    private readonly timeouts: S3Timeouts,
  ) {
    const agentOptions = { keepAlive: true, maxSockets: 64 };
    this.client = new S3Client({
      endpoint: `${storage.use_ssl ? 'https' : 'http'}://${storage.endpoint}`,
      region: storage.region === '' ? 'us-east-1' : storage.region,
      forcePathStyle: true,
      credentials: { accessKeyId: storage.access_key_id, secretAccessKey: storage.secret_access_key },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Retries would multiply the wait past the bound; a viewer or the encoder asks again anyway.
      maxAttempts: 1,
      requestHandler: {
        connectionTimeout: timeouts.connectMs,
        requestTimeout: timeouts.idleMs,
        httpAgent: new HttpAgent(agentOptions),
        httpsAgent: new HttpsAgent(agentOptions),
      },
    });
    this.bucket = storage.bucket;
  }

  /** Creates the bucket when it does not exist (docs/storage.md#s3-filesystems). */
  async ensureBucket(): Promise<'existed' | 'created'> {
    try {
      await this.send((o) => this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), o));
      return 'existed';
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    await this.send((o) => this.client.send(new CreateBucketCommand({ Bucket: this.bucket }), o));
    return 'created';
  }

  /** The object's metadata; undefined when there is none. */
  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const answer = await this.send((o) =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), o),
      );
      return {
        key,
        sizeBytes: answer.ContentLength ?? 0,
        lastModifiedMs: answer.LastModified?.getTime() ?? 0,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Bytes `start..end` (inclusive) as a stream; the wait is bounded until the answer starts. */
  async read(key: string, start: number, end: number): Promise<Readable> {
    const answer = await this.send((o) =>
      this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end}` }),
        o,
      ),
    );
    return answer.Body as Readable;
  }

  /** The whole object in memory (small objects only); undefined when there is none. */
  async readAll(key: string): Promise<{ info: ObjectInfo; data: Buffer } | undefined> {
    try {
      const answer = await this.send((o) =>
        this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), o),
      );
      const data = await readBody(answer.Body as Readable, this.timeouts.idleMs);
      return {
        info: { key, sizeBytes: data.length, lastModifiedMs: answer.LastModified?.getTime() ?? 0 },
        data,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw this.failure(error);
    }
  }

  /** Stores a body held in memory with one request. */
  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    await this.send((o) =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data, ContentType: contentType }),
        o,
      ),
    );
  }

  /**
   * Streams `body` into the object as a multipart upload of `PART_BYTES` parts, two in flight:
   * memory stays flat whatever the size. Bounded by the idle time-out per part, not as a whole.
   */
  async putStream(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw this.failure(error);
    }
  }

  async remove(key: string): Promise<void> {
    await this.send((o) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), o));
  }

  /** Every object whose key starts with `prefix`, page by page. */
  async list(prefix: string): Promise<ObjectInfo[]> {
    const objects: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const input = {
        Bucket: this.bucket,
        ...(prefix === '' ? {} : { Prefix: prefix }),
        ...(token === undefined ? {} : { ContinuationToken: token }),
      };
      const page = await this.send((o) => this.client.send(new ListObjectsV2Command(input), o));
      for (const item of page.Contents ?? []) {
        if (item.Key === undefined) continue;
        objects.push({
          key: item.Key,
          sizeBytes: item.Size ?? 0,
          lastModifiedMs: item.LastModified?.getTime() ?? 0,
        });
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return objects;
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.client.destroy();
  }

  /** Sends one command within `requestMs`; its failure as the API error to answer. */
  private async send<T>(run: (options: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    // A timer of our own, not `AbortSignal.timeout`: the SDK keeps listening to the signal while a
    // body streams, and a long range read must not be cut once its answer has started.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new TimeoutError()), this.timeouts.requestMs);
    try {
      return await run({ abortSignal: controller.signal });
    } catch (error) {
      throw this.failure(controller.signal.aborted ? new TimeoutError() : error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** An S3 not-found passes as it is (callers turn it into "no such file"); anything else becomes 502 or 504. */
  private failure(error: unknown): unknown {
    if (error instanceof ApiError || isNotFound(error)) return error;
    const name = this.storage.name;
    if (isTimeout(error)) {
      return new ApiError(
        'GATEWAY_TIMEOUT',
        `s3 filesystem "${name}": ${this.storage.endpoint} did not answer in time`,
        {
          message: 'S3 endpoint timed out',
        },
      );
    }
    const reason =
      error instanceof S3ServiceException
        ? `${error.name} (HTTP ${error.$metadata.httpStatusCode ?? '?'})`
        : (error as Error).message || String(error);
    return new ApiError('BAD_GATEWAY', `s3 filesystem "${name}": ${this.storage.endpoint}: ${reason}`, {
      message: 'S3 endpoint failed',
    });
  }
}

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** A small body read whole; given up when it stalls for `idleMs`. */
async function readBody(body: Readable, idleMs: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let timer: NodeJS.Timeout | undefined;
  const stalled = (): void => {
    body.destroy(new TimeoutError());
  };
  try {
    timer = setTimeout(stalled, idleMs);
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      timer.refresh();
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks);
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound';
}

/**
 * Our own time-out, or the SDK handler's connection and socket time-outs ("timed out"). Not the
 * SDK's error name: it calls a reset connection a `TimeoutError` too.
 */
function isTimeout(error: unknown): boolean {
  if (error instanceof TimeoutError) return true;
  const err = error as { code?: string; message?: string };
  return err.code === 'ETIMEDOUT' || /timed out/i.test(err.message ?? '');
}
