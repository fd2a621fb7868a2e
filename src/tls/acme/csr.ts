import { createPublicKey, sign, type KeyObject } from 'node:crypto';

// Just enough DER (X.690) for a PKCS#10 request: node:crypto makes keys and signs, but writes no
// certificate requests.

function length(size: number): Buffer {
  if (size < 0x80) return Buffer.from([size]);
  const bytes: number[] = [];
  for (let rest = size; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);
const set = (...content: Buffer[]): Buffer => tlv(0x31, ...content);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let value = arc; ; value = Math.floor(value / 128)) {
      groups.unshift((value % 128) | (groups.length === 0 ? 0 : 0x80));
      if (value < 128) break;
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const OID_COMMON_NAME = '2.5.4.3';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';

/**
 * A certificate signing request (RFC 2986) for `names`, DER, signed with the certificate's ECDSA
 * P-256 key: the first name as the subject's common name, all of them as DNS subjectAltNames
 * (what ACME issues for, RFC 8555 §7.4).
 */
export function certificateRequest(names: readonly string[], certificateKey: KeyObject): Buffer {
  const [commonName = ''] = names;
  const subject = sequence(set(sequence(oid(OID_COMMON_NAME), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
  const altNames = sequence(...names.map((name) => tlv(0x82, Buffer.from(name, 'ascii'))));
  const extensions = sequence(sequence(oid(OID_SUBJECT_ALT_NAME), tlv(0x04, altNames)));
  const attributes = tlv(0xa0, sequence(oid(OID_EXTENSION_REQUEST), set(extensions)));
  const info = sequence(
    tlv(0x02, Buffer.from([0])),
    subject,
    createPublicKey(certificateKey).export({ type: 'spki', format: 'der' }),
    attributes,
  );
  const signature = sign('sha256', info, certificateKey);
  return sequence(
    info,
    sequence(oid(OID_ECDSA_WITH_SHA256)),
    tlv(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
}
